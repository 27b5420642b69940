import BubbleCore
import Foundation

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

/// A search: words, "phrases", prefix*, -excluded, with filters.
public struct StoreSearch: Hashable, Sendable {
    public var query: String
    public var conversation: Int64?
    /// A participant id or name.
    public var sender: String?
    public var since: Date?
    public var until: Date?
    public var limit: Int
    public init(_ query: String, conversation: Int64? = nil, sender: String? = nil, since: Date? = nil, until: Date? = nil,
                limit: Int = 50) {
        self.query = query; self.conversation = conversation; self.sender = sender
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

/// What the rest of BubbleKit needs from a conversation store. `SQLiteStore` (GRDB) is the
/// embedded default.
public protocol ConversationStore: AnyObject, Sendable {
    /// Adds `conversation` (as an importer produced it) in one transaction: messages already
    /// present (same source identity) are skipped, new ones appended after the last sequence
    /// number; `sourceFormat` and `chatKey` say which stored conversation it is the newer export
    /// of. Pictures and files are copied into the store. Either all of it is stored or nothing.
    func add(_ conversation: Conversation, sourceFormat: String, chatKey: String, title: String?,
             mediaFolder: String) throws -> StoreImportSummary
    func conversations() throws -> [StoredConversation]
    func conversation(id: Int64) throws -> StoredConversation?
    /// Up to `limit` messages after `seq` (exclusive), in order; `seq` 0 starts at the first.
    func messages(in conversation: Int64, after seq: Int64, limit: Int) throws -> [StoredMessage]
    /// Up to `limit` messages before `seq` (exclusive), in order.
    func messages(in conversation: Int64, before seq: Int64, limit: Int) throws -> [StoredMessage]
    /// The sequence number of the first message at or after `date`, nil after the last.
    func seq(in conversation: Int64, atOrAfter date: Date) throws -> Int64?
    func bounds(of conversation: Int64) throws -> (first: Int64, last: Int64)?
    func count(of conversation: Int64) throws -> Int
    func dayCounts(of conversation: Int64, timeZone: TimeZone) throws -> [StoreDayCount]
    func search(_ search: StoreSearch) throws -> [StoreHit]
    /// The whole conversation as the model, for every renderer (photo paths absolute).
    func load(_ conversation: Int64) throws -> Conversation
}
