import BubbleTestSupport
import Foundation
import Hummingbird
import HummingbirdWebSocket

// MARK: live conversations (issue 22)

/// Issue 22's goals at 50 clients.
let liveRateGoal = 5_000.0, liveP99GoalMs = 20.0

/// Clients and the messages each sends, per round.
let liveRounds = [(clients: 1, each: 2_000), (clients: 10, each: 500), (clients: 50, each: 200)]

/// `bubbles serve` (release, a store of its own, no rate limit) against the ceiling — a bare
/// hummingbird-websocket server speaking the same protocol with nothing behind it (no store,
/// no validation: a counter, an ack, the frame to everyone) — with 1, 10 and 50 clients each
/// sending its messages one after the other (the next once the last is acknowledged), every
/// client reading everything. Committed messages a second, and send → delivery latency over
/// every (message, client) pair.
func liveCase() throws -> Figures {
    let folder = NSTemporaryDirectory() + "bubblekit-bench-live-\(getpid())"
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var figures: [String: Double] = [:]
    var notes: [String: String] = [:]

    let ours = try BenchServer.start(["serve", "--db", folder + "/live.sqlite", "--port", "0", "--rate", "0"])
    defer { ours.stop() }
    let ceiling = try BenchServer.start(["--baseline-ws-server"], binary: CommandLine.arguments[0])
    defer { ceiling.stop() }
    for round in liveRounds {
        // A new conversation per round on ours (nobody else watching it); the ceiling has one.
        let created = try HTTP.request(
            port: ours.port, method: "POST", path: "/api/v1/conversations",
            body: try JSONSerialization.data(withJSONObject: ["participants": ["Me", "Ann"]]))
        guard created.status == 201, let id = (try created.json() as? [String: Any])?["id"] as? Int else {
            throw BenchError("no conversation: \(created.status) \(created.text)")
        }
        for (server, port, conversation) in [("ours", ours.port, id), ("ceiling", ceiling.port, 1)] {
            let r = try liveRound(ports: [port], conversation: conversation, clients: round.clients, each: round.each)
            let key = "\(server) \(round.clients)"
            figures["\(key) msg/s"] = r.rate
            figures["\(key) p50 ms"] = r.p50
            figures["\(key) p99 ms"] = r.p99
        }
        if let stored = try? HTTP.request(port: ours.port, method: "GET", path: "/api/v1/conversations/\(id)").json() as? [String: Any] {
            notes["stored \(round.clients)"] = String(stored["messageCount"] as? Int ?? -1)
        }
    }
    if let peak = processMemoryMB(ours.pid).peak { figures["server peak RSS MB"] = peak }
    return Figures(
        name: "live-ws", messages: liveRounds.reduce(0) { $0 + $1.clients * $1.each }, microsPerMessage: figures,
        peakMemoryMB: peakMemoryMB(), notes: notes)
}

/// One round: every client connected first, then all sending at once.
/// With several `ports` (servers of one store), client k talks to `ports[k % ports.count]`.
func liveRound(ports: [Int], conversation: Int, clients count: Int, each: Int) throws -> (rate: Double, p50: Double, p99: Double) {
    let clients = (0..<count).map { LiveClient(port: ports[$0 % ports.count], conversation: conversation, sender: $0 % 2 == 0 ? "me" : "ann") }
    for c in clients {
        try c.reconnect(until: Date().addingTimeInterval(30))
        c.recordArrivals = true
    }
    final class Shared: @unchecked Sendable {
        let lock = NSLock()
        var sent: [String: UInt64] = [:]
        var failures: [String] = []
    }
    let shared = Shared()
    let total = count * each
    let start = DispatchGroup(), done = DispatchGroup()
    let gate = DispatchSemaphore(value: 0)
    for (k, client) in clients.enumerated() {
        start.enter(); done.enter()
        let thread = Thread {
            start.leave()
            gate.wait()
            var mine: [String: UInt64] = [:]
            do {
                let deadline = Date().addingTimeInterval(300)
                for i in 0..<each {
                    let id = UUID().uuidString.lowercased()
                    mine[id] = DispatchTime.now().uptimeNanoseconds
                    try client.send("client \(k) message \(i): the quick brown fox", clientID: id, until: deadline)
                }
                // Then reads until it has been told of every message of the round.
                while client.arrivals.count < total, Date() < deadline { try client.drain(quiet: 0.5) }
            } catch { shared.lock.lock(); shared.failures.append("\(k): \(error)"); shared.lock.unlock() }
            shared.lock.lock(); shared.sent.merge(mine) { a, _ in a }; shared.lock.unlock()
            done.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    start.wait()
    let began = now()
    for _ in clients { gate.signal() }
    done.wait()
    // Committed: the last acknowledgement of the round (the clients' last sends).
    let elapsed = now() - began
    guard shared.failures.isEmpty else { throw BenchError("live round of \(count): \(shared.failures.prefix(3))") }
    var latencies: [Double] = []
    latencies.reserveCapacity(total * count)
    for c in clients {
        for (id, arrived) in c.arrivals {
            if let sent = shared.sent[id] { latencies.append(Double(arrived &- sent) / 1e6) }
        }
        c.drop()
    }
    guard latencies.count == total * count else { throw BenchError("live round of \(count): \(latencies.count) deliveries of \(total * count)") }
    let p = percentiles(latencies)
    return (Double(total) / elapsed, p.p50, p.p99)
}

/// `--baseline-ws-server`: hummingbird-websocket with the live protocol and nothing behind it —
/// a frame `send` gets the next number, an ack, and a `change` to every connection; `ready` on
/// connect. The ceiling of a live server on this machine.
func runBaselineWebSocketServer() async throws {
    final class Hub: @unchecked Sendable {
        let lock = NSLock()
        var next: UInt64 = 0
        var rev = 0
        var connections: [UInt64: AsyncStream<String>.Continuation] = [:]
        func add() -> (UInt64, AsyncStream<String>) {
            let (s, c) = AsyncStream<String>.makeStream()
            lock.lock(); defer { lock.unlock() }
            next += 1; connections[next] = c
            return (next, s)
        }
        func yield(_ id: UInt64, _ text: String) { lock.lock(); connections[id]?.yield(text); lock.unlock() }
        func remove(_ id: UInt64) { lock.lock(); connections[id]?.finish(); connections[id] = nil; lock.unlock() }
        /// The change to everyone, in order (under the lock), and the ack.
        func send(_ clientID: String, text: String, from id: UInt64) {
            lock.lock(); defer { lock.unlock() }
            rev += 1
            let change = #"{"kind":"message","message":{"clientId":"\#(clientID)","seq":\#(rev),"text":"\#(text)"},"rev":\#(rev),"type":"change"}"#
            for c in connections.values { c.yield(change) }
            connections[id]?.yield(#"{"duplicate":false,"ref":"\#(clientID)","rev":\#(rev),"seq":\#(rev),"type":"ack"}"#)
        }
    }
    let hub = Hub()
    let router = Router(context: BasicWebSocketRequestContext.self)
    router.ws("api/v1/conversations/:id/live") { inbound, outbound, _ in
        let (me, stream) = hub.add()
        defer { hub.remove(me) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for await text in stream { try await outbound.write(.text(text)) } }
            hub.yield(me, #"{"type":"ready","rev":0}"#)
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message,
                    let o = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                    let id = o["clientId"] as? String
                else { continue }
                hub.send(id, text: (o["text"] as? String ?? "").replacingOccurrences(of: "\"", with: ""), from: me)
            }
            hub.remove(me)
            group.cancelAll()
        }
    }
    let app = Application(
        router: Router(), server: .http1WebSocketUpgrade(webSocketRouter: router),
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            FileHandle.standardOutput.write(Data("baseline-ws: http://127.0.0.1:\(channel.localAddress?.port ?? 0)/\n".utf8))
        })
    try await app.runService()
}

func printLive(_ results: [String: Figures]) {
    guard let f = results["live-ws"]?.microsPerMessage, let n = results["live-ws"]?.notes else { return }
    func v(_ k: String) -> String { f[k].map { String(format: $0 >= 100 ? "%.0f" : "%.2f", $0) } ?? "—" }
    print("")
    print("Live conversation over WebSocket: committed messages/s and send → delivery latency to every client (ms);")
    print("ceiling = a bare hummingbird-websocket server speaking the same protocol with nothing behind it; ratio = ours ÷ ceiling")
    print(
        pad("clients", 9) + lpad("msg/s", 10) + lpad("ceiling", 10) + lpad("ratio", 8) + lpad("p50", 8) + lpad("p99", 8)
            + lpad("ceil. p50", 11) + lpad("ceil. p99", 11) + "  goal")
    for round in liveRounds {
        let k = round.clients
        let ratio = (f["ours \(k) msg/s"] ?? 0) / max(1e-9, f["ceiling \(k) msg/s"] ?? 0)
        var goal = ""
        if k == 50 {
            let met = (f["ours 50 msg/s"] ?? 0) >= liveRateGoal && (f["ours 50 p99 ms"] ?? .infinity) <= liveP99GoalMs
            goal = "≥ \(Int(liveRateGoal)) msg/s, p99 ≤ \(Int(liveP99GoalMs)) ms (\(met ? "met" : "not met"))"
        }
        print(
            pad("\(k)", 9) + lpad(v("ours \(k) msg/s"), 10) + lpad(v("ceiling \(k) msg/s"), 10) + lpad(String(format: "%.2f×", ratio), 8)
                + lpad(v("ours \(k) p50 ms"), 8) + lpad(v("ours \(k) p99 ms"), 8) + lpad(v("ceiling \(k) p50 ms"), 11)
                + lpad(v("ceiling \(k) p99 ms"), 11) + "  " + goal)
    }
    print(
        "stored per round: " + liveRounds.map { "\($0.clients) clients \(n["stored \($0.clients)"] ?? "?")" }.joined(separator: ", ")
            + "; server peak RSS \(v("server peak RSS MB")) MB")
}
