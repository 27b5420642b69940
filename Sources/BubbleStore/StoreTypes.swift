import BubbleCore
import Foundation
import NIOPosix
import ServiceLifecycle

/// A failure of the store, naming the database file and what was expected.
public struct StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public init(path: String, reason: String) { self.path = path; self.reason = reason }
    public var description: String { "\(path): \(reason)" }
}

/// A conversation in the store: its id, title, where it came from, its size and date range.
public struct StoredConversation: Hashable, Sendable, Codable {
    public var id: Int64
    public var title: String
    public var sourceFormat: String
    public var participants: [Participant]
    public var messageCount: Int
    public var first: Date?
    public var last: Date?
}

/// A message with its place in its conversation.
public struct StoredMessage: Hashable, Sendable {
    /// Per conversation, starts at 1 and only grows.
    public var seq: Int64
    public var message: Message
}

/// What an import added and skipped.
public struct StoreImportSummary: Hashable, Sendable {
    public var conversationID: Int64
    public var conversationsAdded = 0
    public var messagesAdded = 0
    /// Messages already in the store (the same source identity).
    public var messagesSkipped = 0
    public var attachmentsAdded = 0
    public var attachmentsSkipped = 0
}

/// An import of a whole export (`bubbles import` of a phone's backup, an upload of one): what
/// each conversation got, or why it failed (the others are kept: each is one transaction).
public struct WholeImportReport: Sendable {
    public struct Stored: Sendable {
        public var title: String
        public var summary: StoreImportSummary
        public init(title: String, summary: StoreImportSummary) { self.title = title; self.summary = summary }
        /// New to the store; grown (messages added to one it had); unchanged.
        public var isNew: Bool { summary.conversationsAdded > 0 }
        public var grew: Bool { !isNew && summary.messagesAdded > 0 }
    }
    public struct Failure: Sendable {
        public var name: String
        public var reason: String
        public init(name: String, reason: String) { self.name = name; self.reason = reason }
    }
    public var stored: [Stored] = []
    public var failed: [Failure] = []
    public init() {}

    /// "3 conversations: 1 new, 1 grown, 1 unchanged, 1 failed; 120 messages added, 4 already
    /// there; 3 attachments".
    public var line: String {
        func n(_ v: Int, _ one: String, _ many: String? = nil) -> String { "\(v) \(v == 1 ? one : (many ?? one + "s"))" }
        let new = stored.filter(\.isNew).count, grown = stored.filter(\.grew).count
        var parts = ["\(new) new", "\(grown) grown", "\(stored.count - new - grown) unchanged"]
        if !failed.isEmpty { parts.append("\(failed.count) failed") }
        let added = stored.reduce(0) { $0 + $1.summary.messagesAdded }, skipped = stored.reduce(0) { $0 + $1.summary.messagesSkipped }
        let files = stored.reduce(0) { $0 + $1.summary.attachmentsAdded }
        return n(stored.count + failed.count, "conversation") + ": " + parts.joined(separator: ", ") + "; "
            + n(added, "message") + " added, \(skipped) already there; " + n(files, "attachment")
    }
}

/// A search: words, "phrases", prefix*, -excluded, with filters.
public struct StoreSearch: Hashable, Sendable {
    public var query: String
    public var conversation: Int64?
    /// Only these conversations (those the one searching reaches); nil: all.
    public var within: Set<Int64>?
    /// A participant id or name.
    public var sender: String?
    public var since: Date?
    public var until: Date?
    public var limit: Int
    public init(_ query: String, conversation: Int64? = nil, sender: String? = nil, since: Date? = nil, until: Date? = nil,
                limit: Int = 50, within: Set<Int64>? = nil) {
        self.query = query; self.conversation = conversation; self.sender = sender; self.within = within
        self.since = since; self.until = until; self.limit = limit
    }
}

/// One search result, best first.
public struct StoreHit: Hashable, Sendable, Codable {
    public var conversation: Int64
    public var seq: Int64
    public var date: Date
    /// The sender's participant id, and their name when the conversation has it.
    public var sender: String?
    public var senderName: String?
    public var text: String
    /// The text around the first match, matches between `[` and `]`, cut with "…".
    public var snippet: String
    /// The same snippet in three parts (before the match, the match, after it), for a page that
    /// marks the match itself (the text may hold brackets of its own).
    public var snippetParts: [String]
}

/// One day of a conversation and how many messages it has (a calendar or a scrubber).
public struct StoreDayCount: Hashable, Sendable {
    /// Days since 1970-01-01 in the zone asked for.
    public var day: Int
    public var count: Int
}

/// The reader an import hands its messages from: called once, it calls `add` with every message
/// of the export in order and returns the conversation's header (title, participants; its
/// messages are ignored) and its chat key.
public typealias StoreImportReader = (_ add: (Message) throws -> Void) throws -> (header: Conversation, chatKey: String)

/// What the rest of BubbleKit needs from a conversation store. `SQLiteStore` (GRDB) is the
/// embedded default; `PostgresStore` (postgres-nio) is shared by several servers.
///
/// Async end to end: every call suspends its task while the database works (GRDB's async reads
/// and writes on SQLite's own threads; postgres-nio's `PostgresClient` on its event loops), so
/// a server's handlers never hold a thread. A store is a `Service`: `run()` keeps its
/// connections and background work (PostgreSQL's pool and change feed) until the service group
/// shuts down; `bubbles serve` runs it in its `ServiceGroup`, commands and tests use
/// `PostgresStore.start()`.
public protocol ConversationStore: AnyObject, Sendable, Service {
    /// Where it is: a file path, or a `postgres://` URL without its password (errors name it;
    /// `--db` takes it back).
    var path: String { get }
    /// Where its pictures and files are (`media/…` store paths are relative to it).
    var mediaFolder: String { get }
    /// Every committed live change, in revision order per conversation (on PostgreSQL also the
    /// ones other servers made).
    var feed: ChangeFeed { get }
    /// Waits until the store can be used (its schema up to date, its server answering): a
    /// `StoreError` naming it when it cannot.
    func prepare() async throws
    /// Imports messages as `read` hands them over, in one transaction (see `SQLiteStore`). `read`
    /// runs once, off Swift's cooperative threads (it parses files and copies pictures).
    func importStream(sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
                      read: @escaping StoreImportReader) async throws -> StoreImportSummary
    func createConversation(title: String, participants: [Participant]) async throws -> StoredConversation
    func add(_ new: NewMessage, to conversation: Int64) async throws -> AddedMessage
    func edit(_ seq: Int64, in conversation: Int64, text: String, spans: [TextSpan], by sender: String) async throws -> StoredChange
    func delete(_ seq: Int64, in conversation: Int64, by sender: String) async throws -> StoredChange
    func react(_ seq: Int64, in conversation: Int64, emoji: String, sender: String, on: Bool) async throws -> StoredChange
    func changes(in conversation: Int64, since rev: Int64, limit: Int) async throws -> [StoredChange]
    func lastRev(of conversation: Int64) async throws -> Int64?
    func people(of conversation: Int64) async throws -> (owner: String?, ids: Set<String>)
    /// Tells the other servers of the store that `sender` is typing in `conversation`, after
    /// revision `rev` (what they had seen: their earlier messages do not hide it). Nothing is
    /// stored. Required, with no default: a backend shared by several servers that left it out
    /// would silently stop typing from crossing them.
    func broadcastTyping(_ conversation: Int64, sender: String, after rev: Int64) async

    func conversations() async throws -> [StoredConversation]
    func conversation(id: Int64) async throws -> StoredConversation?
    /// Up to `limit` messages after `seq` (exclusive), in order; `seq` 0 starts at the first.
    func messages(in conversation: Int64, after seq: Int64, limit: Int) async throws -> [StoredMessage]
    /// Up to `limit` messages before `seq` (exclusive), in order.
    func messages(in conversation: Int64, before seq: Int64, limit: Int) async throws -> [StoredMessage]
    /// The sequence number of the first message at or after `date`, nil after the last.
    func seq(in conversation: Int64, atOrAfter date: Date) async throws -> Int64?
    func bounds(of conversation: Int64) async throws -> (first: Int64, last: Int64)?
    func count(of conversation: Int64) async throws -> Int
    func dayCounts(of conversation: Int64, timeZone: TimeZone) async throws -> [StoreDayCount]
    func search(_ search: StoreSearch) async throws -> [StoreHit]
    /// The whole conversation as the model, for every renderer (photo paths absolute).
    func load(_ conversation: Int64) async throws -> Conversation

    // People: names for numbers. Every read above names participants and titles conversations
    // through them (`PeopleDirectory.name`), so contacts imported later apply at once.
    /// Every person with its identities, and the region numbers are read in.
    func peopleSnapshot() async throws -> PeopleSnapshot
    /// Keeps contact cards as persons (a card seen before is updated); identities linked by
    /// hand stay where they are. `region`, when given, is kept for reading numbers.
    func saveCards(_ cards: [PersonCard], region: String?) async throws -> ContactsImportSummary
    func createPerson(name: String) async throws -> Int64
    /// Links `keys` to `person` by hand; nil leaves them to nobody (no card takes them back).
    func setIdentities(_ keys: [String], person: Int64?) async throws
    /// Moves every identity of `source` to `target` (by hand); `source` is hidden, not deleted,
    /// so its card read again does not bring it back.
    func mergePerson(_ source: Int64, into target: Int64) async throws
    /// Every conversation's participants as imported, with its app and owner.
    func rawParticipants() async throws -> [RawParticipants]
}

extension ConversationStore {
    /// Adds `conversation` (as an importer produced it) in one transaction: messages already
    /// present (same source identity) are skipped, new ones appended after the last sequence
    /// number; `sourceFormat` and `chatKey` say which stored conversation it is the newer export
    /// of. Pictures and files are copied into the store. Either all of it is stored or nothing.
    public func add(_ conversation: Conversation, sourceFormat: String, chatKey: String, title: String?,
                    mediaFolder exportFolder: String) async throws -> StoreImportSummary {
        var header = conversation
        header.messages = []
        return try await importStream(sourceFormat: sourceFormat, title: title, mediaFolder: exportFolder, sortByDate: false) { add in
            for m in conversation.messages { try add(m) }
            return (header, chatKey)
        }
    }

    public func owner(of conversation: Int64) async throws -> String? { try await people(of: conversation).owner }
    public func mediaPath(_ stored: String) -> String {
        stored.hasPrefix("media/") ? mediaFolder + "/" + stored.dropFirst("media/".count) : stored
    }

    /// An absolute path inside the media folder as the store keeps it (`media/…`).
    func relative(_ path: String) -> String {
        path.hasPrefix(mediaFolder + "/") ? "media/" + path.dropFirst(mediaFolder.count + 1) : path
    }

    /// A message's pictures with absolute paths (as every read gives them).
    func resolvingImages(_ m: Message) -> Message {
        var m = m
        m.images = m.images.map { var i = $0; i.path = i.path.map(mediaPath); return i }
        return m
    }

    /// Copies the file at `file` into the store's media (by its SHA-256, once) and gives its
    /// store path (`media/ab/<sha256>.<ext>`, `ext` taken from `name`).
    public func storeMedia(file: String, name: String) async throws -> String {
        // Hashing and copying a file block: off Swift's cooperative threads.
        try await NIOThreadPool.singleton.runIfActive { [mediaFolder] in
            var summary = StoreImportSummary(conversationID: 0)
            var copier = MediaCopier(mediaFolder: mediaFolder, exportFolder: "/")
            guard let stored = try copier.store(file, summary: &summary, extensionFrom: name) else {
                throw StoreError(path: file, reason: "cannot be read")
            }
            return stored
        }
    }
    public func changes(in conversation: Int64, since rev: Int64) async throws -> [StoredChange] {
        try await changes(in: conversation, since: rev, limit: 1_000)
    }
    public func edit(_ seq: Int64, in conversation: Int64, text: String, by sender: String) async throws -> StoredChange {
        try await edit(seq, in: conversation, text: text, spans: [], by: sender)
    }
}

/// The most a live change's text may be (UTF-8 bytes) unless the server says otherwise.
public let defaultMaxLiveText = 64 * 1024

/// Opens the store `location` names: a `postgres://` (or `postgresql://`) URL, else an SQLite
/// file path. `media` is the folder a PostgreSQL store keeps its files in (every server of it
/// must see the same folder); an SQLite store keeps them beside its file.
///
/// A PostgreSQL store runs in a task of its own (`PostgresStore.start()`), for a command or a
/// test, and is ready when this returns (`prepare()`).
public func openStore(_ location: String, media: String? = nil) async throws -> any ConversationStore & AccountStore {
    let store = try makeStore(location, media: media)
    if let postgres = store as? PostgresStore {
        postgres.start()
        do { try await postgres.prepare() } catch { postgres.stop(); throw error }
    }
    return store
}

/// The store `location` names, as `openStore`, with nothing started: for a `ServiceGroup` that
/// runs it (`bubbles serve`), which then waits for `prepare()`.
public func makeStore(_ location: String, media: String? = nil) throws -> any ConversationStore & AccountStore {
    if PostgresLocation.isPostgres(location) { return try PostgresStore(url: location, mediaFolder: media) }
    return try SQLiteStore(path: location)
}
