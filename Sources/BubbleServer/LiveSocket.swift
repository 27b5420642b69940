import BubbleCore
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import ServiceLifecycle
import Synchronization

/// One WebSocket connection to a live conversation (`/api/v1/conversations/{id}/live?since=REV`).
///
/// Sent to the client, in order: every change after `since` (read from the store), then
/// `{"type":"ready","rev"}`, then each change as it is committed — revisions always follow on:
/// a gap (a dropped broadcast) is filled from the store before anything newer — and
/// `{"type":"typing"}` of the others. A frame holds one object, or an array of them when several
/// were waiting (changes come faster than the connection takes them). Taken from the client (JSON text frames, each with an
/// optional `ref` echoed in its answer): `send` (as `POST …/messages`), `edit`, `delete`,
/// `react`, `typing`; answered `{"type":"ack","ref","seq","rev","duplicate"}` after the commit
/// or `{"type":"error","ref","status","error"}` — a refused frame stores nothing and the
/// connection stays open.
struct LiveSocket {
    let live: LiveAPI
    let conversation: Int64
    let since: Int64
    /// The signed-in user who writes on this socket (nil: single-owner mode, frames name a sender).
    var speaker: String?
    /// Whether the connection may write (the owner, or a member who writes); a reader's writes
    /// are answered 403.
    var writes: Bool
    /// How a signed-in user's socket learns it must close (nil: the single owner's never does).
    var revocation: SocketRevocation?

    /// Each outgoing frame goes through one writer, so acks and changes never interleave badly.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let hub = live.hub
        let (me, events) = hub.subscribe(conversation)
        defer { hub.unsubscribe(conversation, me) }
        let post = Outbox()
        let conversation = self.conversation, since = self.since, live = self.live, speaker = self.speaker
        let gate = WriteGate()
        try await withThrowingTaskGroup(of: Role.self) { group in
            // A graceful stop (SIGTERM, Ctrl-C): no new writes are taken; the one being answered
            // finishes and its acknowledgement is sent; then the outbox ends and the handler
            // returns (the framework closes the socket, waiting at most its close timeout for
            // the client's answer). A write a client saw acknowledged is stored.
            group.addTask {
                try? await gracefulShutdown()
                await gate.close()
                post.finish()
                return .shutdown
            }
            if let revocation {
                // Signed out, a token revoked, disabled, removed or access changed — on this server
                // or any other of the store — the socket closes as soon as the store says so.
                group.addTask { await revocation.wait(hub: hub, conversation: conversation) }
            }
            group.addTask {
                // What has piled up goes in one frame (a JSON array) — under load a connection
                // gets a few frames rather than one per change.
                try await post.batches { texts in
                    try await outbound.write(.text(texts.count == 1 ? texts[0] : "[" + texts.joined(separator: ",") + "]"))
                }
                return .writer
            }
            group.addTask {
                // What the client missed, then what is committed from now on, without gaps.
                var last = try await Self.catchUp(live, conversation, after: since, post: post)
                post.yield(#"{"rev":\#(last),"type":"ready"}"#)
                // Each member's read marks (the ticks), then each as it moves (`.note`).
                for frame in await hub.receipts(conversation) { post.yield(frame) }
                for await event in events {
                    switch event {
                    case let .change(rev, json):
                        if rev <= last { continue }
                        if rev > last + 1 { last = try await Self.catchUp(live, conversation, after: last, post: post); continue }
                        post.yield(json.json)
                        last = rev
                    case let .typing(json, from):
                        if from != me { post.yield(json) }
                    case let .note(json):
                        post.yield(json)
                    }
                }
                return .events
            }
            group.addTask {
                var bucket = TokenBucket(rate: live.limits.rate, burst: live.limits.burst)
                let longAgo = ContinuousClock.now - .seconds(1)
                var lastTyping = longAgo
                // The newest revision this connection committed: its typing frames come after it.
                var ownRev: Int64 = 0
                for try await message in inbound.messages(maxSize: live.limits.maxText * 2 + 16_384) {
                    guard case .text(let text) = message else {
                        post.yield(Self.error(nil, 400, "expected JSON text frames"))
                        continue
                    }
                    let frame = Data(text.utf8)
                    let head = try? LiveAPI.decode(FrameHead.self, from: frame)
                    let ref = (head?.ref ?? head?.clientId)?.any
                    guard let head, let type = head.type else {
                        post.yield(Self.error(ref, 400, "expected a JSON object with a \"type\": send, edit, delete, react or typing"))
                        continue
                    }
                    if type == "typing" {
                        // At most a few a second are passed on; the others are dropped quietly.
                        // The first after a message is always passed on: it is about the next one.
                        let now = ContinuousClock.now
                        if now - lastTyping > .milliseconds(300), let sender = speaker ?? head.sender?.string,
                            (try? await hub.participantNames(conversation, including: sender))?[sender] != nil
                        {
                            lastTyping = now
                            await hub.typing(conversation, sender: sender, after: ownRev, from: me)
                        }
                        continue
                    }
                    guard bucket.take() else {
                        post.yield(
                            Self.error(
                                ref, 429,
                                "too many messages: at most \(Int(live.limits.rate)) a second (\(Int(live.limits.burst)) at once) on one connection; send it again in a moment"
                            ))
                        continue
                    }
                    guard writes else {
                        post.yield(Self.error(ref, 403, "you can read conversation \(conversation) but not write to it"))
                        continue
                    }
                    guard gate.enter() else {
                        post.yield(Self.error(ref, 503, "the server is stopping; send it again once it is back"))
                        continue
                    }
                    let (answer, rev) = await Self.answer(live, conversation, type: type, frame: frame, ref: ref, speaker: speaker)
                    post.yield(answer)
                    gate.leave()
                    if let rev {
                        ownRev = max(ownRev, rev)
                        lastTyping = longAgo
                    }
                }
                post.finish()
                return .inbound
            }
            // The client went away, or the writer ended (a stop: the outbox drained; or a write
            // failed): everything else stops. A stop alone waits for the writer to drain.
            defer { post.finish(); group.cancelAll() }
            while let role = try await group.next(), role == .shutdown {}
        }
    }

    enum Role { case shutdown, writer, events, inbound, revoked }

    /// Posts the changes after `rev` in order; the last revision posted (`rev` when none).
    static func catchUp(_ live: LiveAPI, _ conversation: Int64, after rev: Int64, post: Outbox) async throws -> Int64 {
        var last = rev
        let names = try await live.hub.participantNames(conversation)
        while true {
            let changes = try await live.store.changes(in: conversation, since: last, limit: 1_000)
            for c in changes { post.yield(LiveHub.encode(c, names: names, media: live.store.mediaFolder)) }
            guard let newest = changes.last else { return last }
            last = newest.rev
            if changes.count < 1_000 { return last }
        }
    }

    /// The answer to a frame, and the revision of the change it committed (nil when refused).
    static func answer(
        _ live: LiveAPI, _ conversation: Int64, type: String, frame: Data, ref: Any?,
        speaker: String?
    ) async -> (String, Int64?) {
        do {
            let change: StoredChange
            var duplicate = false
            switch type {
            case "send":
                let added = try await live.send(conversation, try LiveAPI.decode(SendRequest.self, from: frame), as: speaker)
                change = added.change
                duplicate = added.existed
            case "edit":
                change = try await live.edit(conversation, try seq(frame), try LiveAPI.decode(EditRequest.self, from: frame), as: speaker)
            case "delete":
                let body = try LiveAPI.decode(DeleteRequest.self, from: frame)
                change = try await live.delete(conversation, try seq(frame), sender: body.sender, as: speaker)
            case "react":
                let body = try LiveAPI.decode(ReactRequest.self, from: frame)
                change = try await live.react(
                    conversation, try seq(frame), emoji: try LiveAPI.required(body.emoji, "emoji"),
                    sender: body.sender, as: speaker, on: body.on ?? true)
            default:
                return (error(ref, 400, "type \"\(type)\" is not one of send, edit, delete, react, typing"), nil)
            }
            var o: [String: Any] = ["type": "ack", "seq": change.message.seq, "rev": change.rev, "duplicate": duplicate]
            if let ref { o["ref"] = ref }
            return (JSONWriter.string(o), change.rev)
        } catch let e as APIError {
            return (error(ref, Int(e.status.code), e.message), nil)
        } catch let e as StoreError {
            return (error(ref, e.outOfSpace ? 507 : 500, e.reason), nil)
        } catch {
            return (Self.error(ref, 500, "\(error)"), nil)
        }
    }

    static func seq(_ frame: Data) throws -> Int64 {
        guard case .integer(let n)? = try LiveAPI.decode(FrameHead.self, from: frame).seq, n >= 1 else {
            throw APIError.badRequest("seq: expected a sequence number ≥ 1")
        }
        return n
    }

    static func error(_ ref: Any?, _ status: Int, _ message: String) -> String {
        var o: [String: Any] = ["type": "error", "status": status, "error": message]
        if let ref { o["ref"] = ref }
        return JSONWriter.string(o)
    }
}

/// Whether a connection may start a write: closed by a graceful stop, which then waits for the
/// write being answered (at most 4 s) — told by the last one leaving, not by polling.
final class WriteGate: Sendable {
    private let state = Mutex((closed: false, busy: 0))
    private let drained: AsyncStream<Void>
    private let drain: AsyncStream<Void>.Continuation

    init() {
        (drained, drain) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts a write; false once closed.
    func enter() -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            s.busy += 1
            return true
        }
    }

    func leave() {
        let last = state.withLock { s in
            s.busy -= 1
            return s.closed && s.busy == 0
        }
        if last { drain.yield() }
    }

    /// No more writes; returns once the ones in flight have left (or after 4 s).
    func close() async {
        let idle = state.withLock { s in
            s.closed = true
            return s.busy == 0
        }
        guard !idle else { return }
        let drained = self.drained
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in drained { return } }
            group.addTask { try? await Task.sleep(for: .seconds(4)) }
            await group.next()
            group.cancelAll()
        }
    }
}

/// A connection's outgoing texts: `yield` from anywhere; the one writer takes, at each wake-up,
/// everything waiting (`batches`), so under load a connection gets a few frames rather than one
/// per change. An `AsyncStream` wakes the writer; the texts wait under a lock.
final class Outbox: Sendable {
    private let waiting = Mutex((texts: [String](), finished: false))
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init() {
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func yield(_ text: String) {
        let taken = waiting.withLock { w in
            guard !w.finished else { return false }
            w.texts.append(text)
            return true
        }
        if taken { wake.yield() }
    }

    /// No more texts; the writer gets what is waiting, then `batches` ends.
    func finish() {
        waiting.withLock { $0.finished = true }
        wake.finish()
    }

    /// Calls `body` with each batch waiting, in order, until finished and drained (one caller).
    func batches(_ body: ([String]) async throws -> Void) async rethrows {
        for await _ in wakes {
            if let batch = grab() { try await body(batch) }
        }
        if let rest = grab() { try await body(rest) }
    }

    /// Everything waiting, nil when nothing is.
    private func grab() -> [String]? {
        waiting.withLock { w in
            guard !w.texts.isEmpty else { return nil }
            defer { w.texts = [] }
            return w.texts
        }
    }
}

/// Writes allowed on one connection: `rate` a second on average, `burst` at once.
struct TokenBucket {
    let rate: Double, burst: Double
    var tokens: Double
    var last = ContinuousClock.now
    init(rate: Double, burst: Double) { self.rate = rate; self.burst = max(1, burst); tokens = max(1, burst) }

    mutating func take() -> Bool {
        guard rate > 0 else { return true }
        let now = ContinuousClock.now
        let elapsed = now - last
        last = now
        tokens = min(burst, tokens + rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// A signed-in user's socket waits on the access changes of its user (`LiveHub.watchAccess`,
/// from the store's feed: this server, the other servers of a PostgreSQL store, `bubbles users …`)
/// and asks the store again on each; it closes once the store says the credential or the
/// membership is gone. A store that cannot answer is not a revocation: the question is asked again
/// a second later. Sessions that end by time are asked about once a minute.
struct SocketRevocation: Sendable {
    let user: Int64
    let check: @Sendable () async throws -> Bool
    var expiryCheck: Duration = .seconds(60)

    /// `conversation`: the one the socket watches (nil: the user's feed — any change of theirs).
    func wait(hub: LiveHub, conversation: Int64?) async -> LiveSocket.Role {
        let (token, changes) = hub.watchAccess(of: user)
        defer { hub.unwatchAccess(of: user, token) }
        return await withTaskGroup(of: Bool.self) { group in
            // A tick a minute (sessions that end by time); events as they come.
            let (ticks, tick) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: expiryCheck)
                    tick.yield()
                }
                return false
            }
            group.addTask {
                for await change in changes where conversation == nil || change.conversation == nil || change.conversation == conversation { tick.yield() }
                return false
            }
            group.addTask {
                for await _ in ticks {
                    if await !stillAllowed() { return true }
                }
                return false
            }
            while let revoked = await group.next() {
                if revoked { break }
            }
            group.cancelAll()
            tick.finish()
            return .revoked
        }
    }

    /// The store's answer; asked again until it gives one.
    private func stillAllowed() async -> Bool {
        while !Task.isCancelled {
            do { return try await check() } catch { try? await Task.sleep(for: .seconds(1)) }
        }
        return true
    }
}
