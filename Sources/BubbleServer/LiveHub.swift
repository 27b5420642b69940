import BubbleCore
import BubbleStore
import Foundation
import Synchronization

/// Who is watching which conversation, and what they are told: every committed change (from the
/// store's `ChangeFeed`, in revision order, encoded once for all of them) and who is typing.
///
/// A broadcast is a hint: each connection's forwarder checks that revisions follow on from the
/// last it sent and reads what is missing from the store (a full buffer drops events, the store
/// never does).
final class LiveHub: Sendable {
    enum Event: Sendable {
        case change(rev: Int64, json: EncodedChange)
        /// `from`: the connection it came from (not sent back to it).
        case typing(json: String, from: UInt64)
        /// A frame for every watcher (a member's read marks moved).
        case note(json: String)
    }

    /// Events a slow connection may have waiting before the newest are dropped (and then read
    /// from the store when it catches up).
    static let buffer = 4_096

    let store: any ConversationReading & LiveStore
    /// Read marks: told to the watchers as they move (nil: no receipts).
    let reads: ReadMarks?
    private struct State {
        var subscribers: [Int64: [UInt64: AsyncStream<Event>.Continuation]] = [:]
        /// The id of the last stream made (of either kind).
        var next: UInt64 = 0
        /// The newest revision handed to the watchers of each conversation.
        var published: [Int64: Int64] = [:]
        /// Participant names per conversation (filled off the writer, before a change is made).
        var names: [Int64: [String: String]] = [:]
        /// Whether each conversation is live (made on the server) rather than an imported archive.
        var live: [Int64: Bool] = [:]
        /// Sockets waiting on their user's access changes, by user.
        var access: [Int64: [UInt64: AsyncStream<AccessChange>.Continuation]] = [:]
    }
    private let state = Mutex(State())

    init(store: any ConversationReading & LiveStore, reads: ReadMarks? = nil) {
        self.store = store
        self.reads = reads
        store.feed.listenReads { [weak self] mark in
            guard let self, let reads, self.watchers(of: mark.conversation) > 0 else { return }
            Task {
                let json = await reads.receipt(mark)
                for c in self.state.withLock({ $0.subscribers[mark.conversation].map { Array($0.values) } ?? [] }) { c.yield(.note(json: json)) }
            }
        }
        store.feed.listen { [weak self] change in self?.publish(change) }
        // Someone typing on another server of the same store: told to everyone watching here.
        store.feed.listenTyping { [weak self] conversation, sender, rev in
            self?.tell(conversation, sender: sender, after: rev, from: 0)
        }
        // Someone's access changed (here, on another server, by `bubbles users …`): their sockets ask again.
        store.feed.listenAccess { [weak self] change in
            guard let self else { return }
            for c in state.withLock({ $0.access[change.user].map { Array($0.values) } ?? [] }) { c.yield(change) }
        }
    }

    /// The access changes of `user` from now on (`SocketRevocation`).
    func watchAccess(of user: Int64) -> (token: UInt64, changes: AsyncStream<AccessChange>) {
        register(user, in: \.access, buffering: .bufferingNewest(16))
    }

    func unwatchAccess(of user: Int64, _ token: UInt64) { unregister(user, token, in: \.access) }

    /// Events of `conversation` from now on (`id` says who to skip for one's own typing).
    func subscribe(_ conversation: Int64) -> (id: UInt64, events: AsyncStream<Event>) {
        register(conversation, in: \.subscribers, buffering: .bufferingOldest(Self.buffer))
    }

    func unsubscribe(_ conversation: Int64, _ id: UInt64) { unregister(conversation, id, in: \.subscribers) }

    /// A new stream kept under `key` in one of the state's tables, and its id.
    private func register<Value>(
        _ key: Int64, in table: WritableKeyPath<State, [Int64: [UInt64: AsyncStream<Value>.Continuation]]>,
        buffering: AsyncStream<Value>.Continuation.BufferingPolicy
    ) -> (UInt64, AsyncStream<Value>) {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: buffering)
        let id = state.withLock { s in
            s.next += 1
            s[keyPath: table][key, default: [:]][s.next] = continuation
            return s.next
        }
        return (id, stream)
    }

    /// Ends the stream `id` under `key` (a key without streams goes).
    private func unregister<Value>(_ key: Int64, _ id: UInt64, in table: WritableKeyPath<State, [Int64: [UInt64: AsyncStream<Value>.Continuation]]>) {
        let c = state.withLock { s in
            let c = s[keyPath: table][key]?.removeValue(forKey: id)
            if s[keyPath: table][key]?.isEmpty == true { s[keyPath: table][key] = nil }
            return c
        }
        c?.finish()
    }

    /// Every member's read marks in `conversation`, as `receipt` frames (none without marks).
    func receipts(_ conversation: Int64) async -> [String] {
        guard let reads, let marks = try? await reads.accounts.marks(of: conversation) else { return [] }
        var frames: [String] = []
        for m in marks { frames.append(await reads.receipt(m)) }
        return frames
    }

    /// How many connections watch `conversation`.
    func watchers(of conversation: Int64) -> Int {
        state.withLock { $0.subscribers[conversation]?.count ?? 0 }
    }

    /// How many connections watch any conversation (`/metrics`).
    var sockets: Int { state.withLock { $0.subscribers.values.reduce(0) { $0 + $1.count } } }

    /// The names of a conversation's participants (read once from the store).
    func participantNames(_ conversation: Int64) async throws -> [String: String] {
        if let known = state.withLock({ $0.names[conversation] }) { return known }
        guard let c = try await store.conversation(id: conversation) else { throw APIError.notFound("no conversation \(conversation)") }
        var found: [String: String] = [:]
        for p in c.participants where found[p.id] == nil { found[p.id] = p.name }
        state.withLock {
            $0.names[conversation] = found; $0.live[conversation] = c.sourceFormat == "live"
        }
        return found
    }

    /// Whether a conversation takes live writes: one made on the server does; an imported
    /// archive is read-only. A 404 when there is none.
    func isLive(_ conversation: Int64) async throws -> Bool {
        if let known = state.withLock({ $0.live[conversation] }) { return known }
        forget(conversation)
        _ = try await participantNames(conversation)
        return state.withLock { $0.live[conversation] ?? false }
    }

    /// The names of a conversation's participants, read again when `sender` is not among them
    /// (someone who joined since, perhaps on another server).
    func participantNames(_ conversation: Int64, including sender: String) async throws -> [String: String] {
        let known = try await participantNames(conversation)
        guard known[sender] == nil else { return known }
        forget(conversation)
        return try await participantNames(conversation)
    }

    /// Forgets a conversation's names (its members changed).
    func forget(_ conversation: Int64) {
        state.withLock { $0.names[conversation] = nil }
    }

    /// Called by the store's writer right after a commit: encoded once, handed to every watcher.
    private func publish(_ change: StoredChange) {
        let (watching, known) = state.withLock { s in
            s.published[change.conversation] = max(s.published[change.conversation] ?? 0, change.rev)
            return (s.subscribers[change.conversation].map { Array($0.values) } ?? [], s.names[change.conversation] ?? [:])
        }
        guard !watching.isEmpty else { return }
        // Encoded by the first connection that sends it, not here on the store's writer.
        let json = EncodedChange(change, names: known, media: store.mediaFolder)
        for c in watching { c.yield(.change(rev: change.rev, json: json)) }
    }

    /// `sender` is typing in `conversation` (told to everyone else watching it, and to the other
    /// servers of the store). `rev` is the newest revision the typist's connection had made or
    /// been sent: a page hides the indicator for the typist's changes after it only, so the
    /// message before the one being typed (whose change may reach a page after this frame) does
    /// not hide it.
    func typing(_ conversation: Int64, sender: String, after rev: Int64, from id: UInt64) async {
        let rev = max(rev, state.withLock { $0.published[conversation] ?? 0 })
        tell(conversation, sender: sender, after: rev, from: id)
        await store.broadcastTyping(conversation, sender: sender, after: rev)
    }

    /// Tells the watchers of `conversation` here (all but connection `id`) that `sender` types.
    private func tell(_ conversation: Int64, sender: String, after rev: Int64, from id: UInt64) {
        let (watching, name) = state.withLock { s in
            (s.subscribers[conversation].map { $0.filter { $0.key != id }.map(\.value) } ?? [], s.names[conversation]?[sender])
        }
        let json = JSONWriter.string(["type": "typing", "sender": sender, "name": name ?? sender, "rev": rev])
        for c in watching { c.yield(.typing(json: json, from: id)) }
    }

    /// A change as the socket and `GET …/changes` give it: `{"type":"change","kind","rev","message"}`.
    static func encode(_ change: StoredChange, names: [String: String], media: String) -> String {
        ChangeJSON.frame(change, names: names, media: media)
    }
}

/// A change and its JSON, written once by whichever connection needs it first.
final class EncodedChange: Sendable {
    private let change: StoredChange
    private let names: [String: String]
    private let media: String
    private let text = Mutex<String?>(nil)

    init(_ change: StoredChange, names: [String: String], media: String) {
        self.change = change; self.names = names; self.media = media
    }

    var json: String {
        text.withLock { text in
            if let text { return text }
            let made = LiveHub.encode(change, names: names, media: media)
            text = made
            return made
        }
    }
}
