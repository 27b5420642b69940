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
