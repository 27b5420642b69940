import BubbleCore
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Synchronization

/// Unread and read on the server, per user (issue 63), as the peers keep them: the list's
/// unread counts, "read on every device", and the ticks under one's last message.
///
/// - `POST /api/v1/conversations/{id}/read {"seq"}`: the reader has seen the conversation up
///   to `seq` (never back, at most its last message) → `{"conversation", "read", "delivered", "unread"}`.
/// - `GET /api/v1/conversations/{id}/reads`: every member's marks, `{"reads": [{"user", "read", "delivered"}]}`
///   (`user`: their participant id; "" for the owner of a server without accounts).
/// - `GET /api/v1/feed` (WebSocket): the signed-in user's list as it changes — `{"type":"message",
///   "conversation", "seq", "date", "preview", "unread"}` for each new message in a conversation
///   they read (it is then delivered to them), `{"type":"read", "conversation", "read", "unread"}`
///   when they read one on any device.
///
/// The conversation's own socket tells its watchers each member's marks (`{"type":"receipt",
/// "user", "read", "delivered"}`, and all of them after `ready`).
struct ReadRoutes {
    let reads: ReadMarks

    func register(_ groups: RouteGroups) {
        let reads = self.reads
        let read = groups.conversationAPI(.read)
        read.post("read") { request, context in
            let body = try await LiveAPI.decode(ReadRequest.self, request, limit: 4_096)
            guard let seq = body.seq, seq >= 0 else {
                throw APIError.badRequest("seq: expected the number of the newest message read (an integer ≥ 0)")
            }
            return try await reads.markRead(try id(context), seq: seq, by: context.identity)
        }
        read.get("reads") { _, context in try await reads.readsJSON(try id(context)) }
    }
}

/// Read marks for the routes, the feed and the live hub: who a mark's user is, and each user's
/// unread counts.
struct ReadMarks: Sendable {
    let store: any ConversationReading & LiveStore
    let accounts: any AccountStore
    let names: UserKeys

    /// The account a mark is kept under (0: the owner of a server without accounts).
    static func account(_ identity: Identity) -> Int64 { identity.user?.id ?? 0 }

    func markRead(_ conversation: Int64, seq: Int64, by identity: Identity) async throws -> Response {
        let user = Self.account(identity)
        let mark = try await accounts.mark(conversation, user: user, read: seq, delivered: nil)
        let unread = try await accounts.unread([conversation], user: user, own: identity.speaker)[conversation] ?? 0
        return Pages.json { out in
            out.field("conversation", conversation); out.field("read", mark.read); out.field("delivered", mark.delivered); out.field("unread", unread)
        }
    }

    func readsJSON(_ conversation: Int64) async throws -> Response {
        let marks = try await accounts.marks(of: conversation)
        var list: [[String: Any]] = []
        for m in marks { list.append(["user": await names.key(m.user), "read": m.read, "delivered": m.delivered]) }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: JSONWriter.string(["reads": list]))))
    }

    /// `{"type":"receipt","user","read","delivered"}` for a conversation's watchers.
    func receipt(_ mark: ReadMark) async -> String {
        JSONWriter.string(["type": "receipt", "user": await names.key(mark.user), "read": mark.read, "delivered": mark.delivered])
    }
}

/// Account id → participant id (the user's key), read from the store once and again on a miss.
final class UserKeys: Sendable {
    let accounts: any AccountStore
    private let known = Mutex<[Int64: String]>([:])

    init(accounts: any AccountStore) { self.accounts = accounts }

    /// "" for the owner (0) and for a user the store no longer has.
    func key(_ user: Int64) async -> String {
        guard user != 0 else { return "" }
        if let k = known.withLock({ $0[user] }) { return k }
        let all = (try? await accounts.users()) ?? []
        known.withLock { k in for u in all { k[u.id] = u.key } }
        return known.withLock { $0[user] } ?? ""
    }
}

/// The signed-in users' list feeds (`/api/v1/feed`): each user's connections, told of new
/// messages in the conversations they read and of their own reads on any device.
final class UserFeed: Sendable {
    let store: any ConversationReading & LiveStore
    let accounts: any AccountStore
    private struct Reader: Sendable {
        var user: StoredUser?
        var connections: [UInt64: AsyncStream<String>.Continuation]
    }
    private struct State {
        var readers: [Int64: Reader] = [:]
        var next: UInt64 = 0
    }
    private let state = Mutex(State())

    init(store: any ConversationReading & LiveStore, accounts: any AccountStore) {
        self.store = store
        self.accounts = accounts
        store.feed.listen { [weak self] change in
            guard let self, change.kind == .message, self.state.withLock({ !$0.readers.isEmpty }) else { return }
            Task { await self.message(change) }
        }
        store.feed.listenReads { [weak self] mark in
            guard let self, self.state.withLock({ $0.readers[mark.user] != nil }) else { return }
            Task { await self.read(mark) }
        }
    }

    /// A connection of `identity` (the owner or a signed-in user): its frames from now on.
    func connect(_ identity: Identity) -> (id: UInt64, frames: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let account = ReadMarks.account(identity)
        let id = state.withLock { s in
            s.next += 1
            s.readers[account, default: Reader(user: identity.user, connections: [:])].connections[s.next] = continuation
            return s.next
        }
        return (id, stream)
    }

    func disconnect(_ identity: Identity, _ id: UInt64) {
        let account = ReadMarks.account(identity)
        let c = state.withLock { s -> AsyncStream<String>.Continuation? in
            let c = s.readers[account]?.connections.removeValue(forKey: id)
            if s.readers[account]?.connections.isEmpty == true { s.readers[account] = nil }
            return c
        }
        c?.finish()
    }

    /// How many users have the feed open (`/metrics`, tests).
    var readers: Int { state.withLock { $0.readers.count } }

    private func send(_ frame: String, to account: Int64) {
        for c in state.withLock({ $0.readers[account].map { Array($0.connections.values) } ?? [] }) { c.yield(frame) }
    }

    /// A new message: each connected reader of its conversation gets it with their unread count,
    /// and it counts as delivered to them (their list shows it).
    private func message(_ change: StoredChange) async {
        let readers = state.withLock { $0.readers.map { ($0.key, $0.value.user) } }
        guard !readers.isEmpty else { return }
        let m = change.message.message
        // As the list writes it: in a group, who wrote it first.
        let participants = (try? await store.conversation(id: change.conversation))?.participants ?? []
        let preview = Pages.previewLine(m, participants: participants)
        for (account, user) in readers {
            if let user, (try? await accounts.access(of: user, to: change.conversation)) == nil { continue }
            let own = user?.key
            let mine = own.map { m.sender == $0 } ?? (m.direction == .outgoing)
            if !mine { _ = try? await accounts.mark(change.conversation, user: account, read: nil, delivered: change.message.seq) }
            let unread = (try? await accounts.unread([change.conversation], user: account, own: own))?[change.conversation] ?? 0
            send(
                JSONWriter.string([
                    "type": "message", "conversation": change.conversation, "seq": change.message.seq,
                    "date": API.iso(m.date), "preview": preview, "unread": unread, "mine": mine
                ]), to: account)
        }
    }

    /// The user read a conversation (here or on another device): their lists clear its badge.
    private func read(_ mark: ReadMark) async {
        let user = state.withLock { $0.readers[mark.user]?.user }
        let unread = (try? await accounts.unread([mark.conversation], user: mark.user, own: user?.key))?[mark.conversation] ?? 0
        send(JSONWriter.string(["type": "read", "conversation": mark.conversation, "read": mark.read, "unread": unread]), to: mark.user)
    }
}
