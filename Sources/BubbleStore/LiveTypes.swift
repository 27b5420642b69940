import BubbleCore
import BubbleMarkup
import Foundation

/// What a live change did to a message.
public enum ChangeKind: String, Sendable, Hashable, Codable {
    /// A new message.
    case message
    /// A message's text changed.
    case edit
    /// A message deleted (its bubble says so).
    case delete
    /// A reaction added or taken back.
    case react
}

/// One committed change of a live conversation: its revision (per conversation, from 1, one
/// more for every change, assigned inside the change's write transaction: the order every
/// client sees) and the message as it is after it.
public struct StoredChange: Sendable, Hashable {
    /// The conversation changed.
    public var conversation: Int64
    /// The change's revision in its conversation.
    public var rev: Int64
    /// What the change did.
    public var kind: ChangeKind
    /// The message as it is after the change.
    public var message: StoredMessage
    /// The sender's own id of the message (`clientId`), when it was added live.
    public var clientID: String?
}

/// A message as a client adds it.
public struct NewMessage: Sendable, Hashable {
    /// The client's UUID: the same id again is the same message (a resend after a timeout or a
    /// reload), never a copy.
    public var clientID: String
    /// The message's text (nil for a photo without caption).
    public var text: String?
    /// A participant id of the conversation.
    public var sender: String
    /// A photo already in the store (`storeMedia`): its store path and size.
    public var photo: ImageAttachment?
    /// The sequence number of the message it answers.
    public var replyTo: Int64?
    /// When it was written.
    public var date: Date
    /// Styled ranges of `text` (`ChatMarkup.parse` of what was typed).
    public var spans: [TextSpan]
    /// A message; every parameter is the property of the same name.
    public init(
        clientID: String, text: String?, sender: String, photo: ImageAttachment? = nil, replyTo: Int64? = nil, date: Date = Date(),
        spans: [TextSpan] = []
    ) {
        self.clientID = clientID; self.text = text; self.sender = sender; self.photo = photo; self.replyTo = replyTo; self.date = date
        self.spans = spans
    }
}

/// What adding a message did: the stored message and whether it was there already (the same
/// client id).
public struct AddedMessage: Sendable {
    /// The stored message's change (its revision and sequence number).
    public var change: StoredChange
    /// True when the client id was stored before: nothing was added.
    public var existed: Bool
}

/// A refused live write: no such conversation or message, a sender who is not a participant,
/// a change by someone other than the author (`forbidden`), a change to a deleted message.
public struct LiveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why a write was refused.
    public enum Kind: Sendable, Hashable {
        /// No such conversation or message (a 404).
        case notFound
        /// A write that is not well formed: an empty text, a sender who is not a participant (a 400).
        case invalid
        /// A write that contradicts the stored state: a name taken, a deleted message changed (a 409).
        case conflict
        /// A change by someone other than the author, or without the access (a 403).
        case forbidden
    }
    /// Why the write was refused.
    public var kind: Kind
    /// What was wrong, as the client is told.
    public var reason: String
    /// A refusal of `kind` saying `reason`.
    public init(_ kind: Kind, _ reason: String) { self.kind = kind; self.reason = reason }
    public var description: String { reason }
}

/// Hands every committed change to whoever listens (the server's live hub), in revision order:
/// `emit` is called by the store's one writer right after the commit, so two changes are never
/// handed over out of order.
public final class ChangeFeed: @unchecked Sendable {
    private let lock = NSLock()
    private var listeners: [UInt64: @Sendable (StoredChange) -> Void] = [:]
    private var next: UInt64 = 0

    /// A feed without listeners.
    public init() {}

    /// Calls `listener` with every change from now on, on the writer's thread: it must return
    /// quickly (hand the change over, no waiting). The returned token removes it.
    @discardableResult
    public func listen(_ listener: @escaping @Sendable (StoredChange) -> Void) -> UInt64 {
        lock.lock(); defer { lock.unlock() }
        next += 1
        listeners[next] = listener
        return next
    }

    /// Stops calling the listener `listen` returned `token` for.
    public func remove(_ token: UInt64) {
        lock.lock(); defer { lock.unlock() }
        listeners[token] = nil
    }

    func emit(_ change: StoredChange) {
        lock.lock()
        let all = Array(listeners.values)
        lock.unlock()
        for l in all { l(change) }
    }

    private var accessListeners: [@Sendable (AccessChange) -> Void] = []

    /// Calls `listener` with every change of a user's access (credentials ended, membership
    /// removed or changed), from this server and — through the store — from every other
    /// process using it: other servers, `bubbles users …`.
    public func listenAccess(_ listener: @escaping @Sendable (AccessChange) -> Void) {
        lock.lock(); defer { lock.unlock() }
        accessListeners.append(listener)
    }

    func emitAccess(_ change: AccessChange) {
        lock.lock()
        let all = accessListeners
        lock.unlock()
        for l in all { l(change) }
    }

    private var readListeners: [@Sendable (ReadMark) -> Void] = []

    /// Calls `listener` with every read mark that moves, from this process and — through the
    /// store (PostgreSQL) — from every other server using it.
    public func listenReads(_ listener: @escaping @Sendable (ReadMark) -> Void) {
        lock.lock(); defer { lock.unlock() }
        readListeners.append(listener)
    }

    func emitRead(_ mark: ReadMark) {
        lock.lock()
        let all = readListeners
        lock.unlock()
        for l in all { l(mark) }
    }

    private var typingListeners: [@Sendable (_ conversation: Int64, _ sender: String, _ rev: Int64) -> Void] = []

    /// Calls `listener` when someone types on another server of the same store (PostgreSQL).
    /// `rev` is the revision the typist had seen (`broadcastTyping`'s `after`).
    public func listenTyping(_ listener: @escaping @Sendable (_ conversation: Int64, _ sender: String, _ rev: Int64) -> Void) {
        lock.lock(); defer { lock.unlock() }
        typingListeners.append(listener)
    }

    func emitTyping(_ conversation: Int64, _ sender: String, after rev: Int64) {
        lock.lock()
        let all = typingListeners
        lock.unlock()
        for l in all { l(conversation, sender, rev) }
    }
}
