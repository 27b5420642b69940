import BubbleCore
import Foundation
import NIOPosix
import ServiceLifecycle

/// A failure of the store, naming the database file and what was expected.
public struct StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database file, or the PostgreSQL URL without its password.
    public var path: String
    /// What was wrong and what was expected.
    public var reason: String
    /// An error about the store at `path`.
    public init(path: String, reason: String) { self.path = path; self.reason = reason }
    /// The disk (or the process's file-size limit) refused a write: nothing more can be stored
    /// until there is room, so a whole import stops at the first.
    package var outOfSpace = false
    package init(path: String, reason: String, outOfSpace: Bool) { self.init(path: path, reason: reason); self.outOfSpace = outOfSpace }
    public var description: String { "\(path): \(reason)" }
}

/// A conversation in the store: its id, title, where it came from, its size and date range.
public struct StoredConversation: Hashable, Sendable, Codable {
    /// The conversation's number in the store.
    public var id: Int64
    /// Its title (contacts applied).
    public var title: String
    /// The format it was imported from ("sms-backup", "whatsapp", "live"…).
    public var sourceFormat: String
    /// Its participants (contacts applied).
    public var participants: [Participant]
    /// How many messages it has.
    public var messageCount: Int
    /// Its first message's date.
    public var first: Date?
    /// Its last message's date.
    public var last: Date?
}

/// A message with its place in its conversation.
public struct StoredMessage: Hashable, Sendable {
    /// Per conversation, starts at 1 and only grows.
    public var seq: Int64
    /// The message, its pictures' paths absolute.
    public var message: Message
}

/// What an import added and skipped.
public struct StoreImportSummary: Hashable, Sendable {
    /// The conversation the messages went into.
    public var conversationID: Int64
    /// 1 when the conversation was new to the store, else 0.
    public var conversationsAdded = 0
    /// Messages added.
    public var messagesAdded = 0
    /// Messages already in the store (the same source identity).
    public var messagesSkipped = 0
    /// Pictures and files copied into the store.
    public var attachmentsAdded = 0
    /// Pictures and files the export names but does not hold.
    public var attachmentsSkipped = 0
}

/// An import of a whole export (`bubbles import` of a phone's backup, an upload of one): what
/// each conversation got, or why it failed (the others are kept: each is one transaction).
public struct WholeImportReport: Sendable {
    /// A conversation stored, and what its import added.
    public struct Stored: Sendable {
        /// Its title.
        public var title: String
        /// What was added and skipped.
        public var summary: StoreImportSummary
        /// A stored conversation's report.
        public init(title: String, summary: StoreImportSummary) { self.title = title; self.summary = summary }
        /// New to the store; grown (messages added to one it had); unchanged.
        public var isNew: Bool { summary.conversationsAdded > 0 }
        /// True when messages were added to a conversation the store had.
        public var grew: Bool { !isNew && summary.messagesAdded > 0 }
    }
    /// A conversation that could not be stored.
    public struct Failure: Sendable {
        /// Its name in the export.
        public var name: String
        /// Why, naming the file and the line or field.
        public var reason: String
        /// A failure of `name` for `reason`.
        public init(name: String, reason: String) { self.name = name; self.reason = reason }
    }
    /// The conversations stored, in the export's order.
    public var stored: [Stored] = []
    /// The conversations that failed.
    public var failed: [Failure] = []
    /// An empty report.
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
    /// Words, "phrases", prefix*, and -excluded words.
    public var query: String
    /// Only this conversation; nil: every one.
    public var conversation: Int64?
    /// Only these conversations (those the one searching reaches); nil: all.
    public var within: Set<Int64>?
    /// A participant id or name.
    public var sender: String?
    /// Only messages from this date on.
    public var since: Date?
    /// Only messages before this date.
    public var until: Date?
    /// The most hits returned.
    public var limit: Int
    /// A search for `query`; every other parameter is the property of the same name.
    public init(
        _ query: String, conversation: Int64? = nil, sender: String? = nil, since: Date? = nil, until: Date? = nil,
        limit: Int = 50, within: Set<Int64>? = nil
    ) {
        self.query = query; self.conversation = conversation; self.sender = sender; self.within = within
        self.since = since; self.until = until; self.limit = limit
    }
}

/// One search result, best first.
public struct StoreHit: Hashable, Sendable, Codable {
    /// The conversation of the hit.
    public var conversation: Int64
    /// The message's sequence number in it.
    public var seq: Int64
    /// The message's date.
    public var date: Date
    /// The sender's participant id, and their name when the conversation has it.
    public var sender: String?
    /// The sender's name, when the conversation names them.
    public var senderName: String?
    /// The message's whole text.
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
    /// How many messages that day.
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
    func importStream(
        sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
        read: @escaping StoreImportReader
    ) async throws -> StoreImportSummary
    /// A new live conversation of `participants`, titled `title`.
    func createConversation(title: String, participants: [Participant]) async throws -> StoredConversation
    /// Adds a live message: exactly once per `NewMessage.clientID` (a resend is `existed`).
    func add(_ new: NewMessage, to conversation: Int64) async throws -> AddedMessage
    /// Replaces the text of message `seq` (only its author may); the edit is a new revision.
    func edit(_ seq: Int64, in conversation: Int64, text: String, spans: [TextSpan], by sender: String) async throws -> StoredChange
    /// Deletes message `seq` (only its author may): its bubble then says it was deleted.
    func delete(_ seq: Int64, in conversation: Int64, by sender: String) async throws -> StoredChange
    /// Adds (`on`) or takes back `sender`'s reaction `emoji` to message `seq`.
    func react(_ seq: Int64, in conversation: Int64, emoji: String, sender: String, on: Bool) async throws -> StoredChange
    /// Up to `limit` changes of `conversation` after revision `rev`, in revision order.
    func changes(in conversation: Int64, since rev: Int64, limit: Int) async throws -> [StoredChange]
    /// The latest revision of `conversation`; nil when it has had no live change.
    func lastRev(of conversation: Int64) async throws -> Int64?
    /// The conversation's owner (whose messages are outgoing) and its participants' ids.
    func people(of conversation: Int64) async throws -> (owner: String?, ids: Set<String>)
    /// Tells the other servers of the store that `sender` is typing in `conversation`, after
    /// revision `rev` (what they had seen: their earlier messages do not hide it). Nothing is
    /// stored. Required, with no default: a backend shared by several servers that left it out
    /// would silently stop typing from crossing them.
    func broadcastTyping(_ conversation: Int64, sender: String, after rev: Int64) async

    /// Every conversation, with its participants named (contacts applied) and its counts.
    func conversations() async throws -> [StoredConversation]
    /// One conversation, as `conversations()` gives it; nil when there is none.
    func conversation(id: Int64) async throws -> StoredConversation?
    /// Up to `limit` messages after `seq` (exclusive), in order; `seq` 0 starts at the first.
    func messages(in conversation: Int64, after seq: Int64, limit: Int) async throws -> [StoredMessage]
    /// Up to `limit` messages before `seq` (exclusive), in order.
    func messages(in conversation: Int64, before seq: Int64, limit: Int) async throws -> [StoredMessage]
    /// The sequence number of the first message at or after `date`, nil after the last.
    func seq(in conversation: Int64, atOrAfter date: Date) async throws -> Int64?
    /// The first and last sequence numbers; nil for an empty conversation.
    func bounds(of conversation: Int64) async throws -> (first: Int64, last: Int64)?
    /// How many messages the conversation has.
    func count(of conversation: Int64) async throws -> Int
    /// How many messages each day has, days counted in `timeZone`.
    func dayCounts(of conversation: Int64, timeZone: TimeZone) async throws -> [StoreDayCount]
    /// Full-text search: the best hits first, at most `StoreSearch.limit`.
    func search(_ search: StoreSearch) async throws -> [StoreHit]
    /// Every message matching a search (its filters too; not `limit`), as each conversation's
    /// sequence numbers in order — how many hits there are, and where (in-conversation ↑/↓) —
    /// at most `cap` in all (the oldest first when there are more).
    func searchMatches(_ search: StoreSearch, cap: Int) async throws -> [Int64: [Int64]]
    /// The whole conversation as the model, for every renderer (photo paths absolute).
    func load(_ conversation: Int64) async throws -> Conversation

    // People: names for numbers. Every read above names participants and titles conversations
    // through them (`PeopleDirectory.name`), so contacts imported later apply at once.
    /// Every person with its identities, and the region numbers are read in.
    func peopleSnapshot() async throws -> PeopleSnapshot
    /// Keeps contact cards as persons (a card seen before is updated); identities linked by
    /// hand stay where they are. `region`, when given, is kept for reading numbers.
    func saveCards(_ cards: [PersonCard], region: String?) async throws -> ContactsImportSummary
    /// A person made by hand (no card), named `name`; its id.
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
    public func add(
        _ conversation: Conversation, sourceFormat: String, chatKey: String, title: String?,
        mediaFolder exportFolder: String
    ) async throws -> StoreImportSummary {
        var header = conversation
        header.messages = []
        return try await importStream(sourceFormat: sourceFormat, title: title, mediaFolder: exportFolder, sortByDate: false) { add in
            for m in conversation.messages { try add(m) }
            return (header, chatKey)
        }
    }

    /// The participant whose messages are outgoing; nil when there is none.
    public func owner(of conversation: Int64) async throws -> String? { try await people(of: conversation).owner }
    /// The absolute path of a store path (`media/…`); other paths as they are.
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
        m.images = m.images.map {
            var i = $0; i.path = i.path.map(mediaPath); return i
        }
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
    /// Up to 1,000 changes of `conversation` after revision `rev`.
    public func changes(in conversation: Int64, since rev: Int64) async throws -> [StoredChange] {
        try await changes(in: conversation, since: rev, limit: 1_000)
    }
    /// Replaces the text of message `seq`, without styled ranges.
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
