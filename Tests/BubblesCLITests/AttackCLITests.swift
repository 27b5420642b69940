import BubbleTestSupport
import Foundation
import Synchronization
import Testing

/// The attacks on `bubbles serve` that need a real process: bytes on a socket, WebSockets,
/// another process changing the store, the log it writes (issue: access decided by the router).
@Suite("bubbles serve: attacks on the real server", .serialized)
struct AttackCLITests {
    /// A server of `store` (with `arguments`), alice (an admin) signed in on it, the `others`
    /// made (password NAME-password), and alice's live conversation of `participants`, holding
    /// "secret plan" when `secret`.
    static func aliceConversation(
        _ store: AccountsStore, others: [String] = ["carol"], participants: [String] = ["alice"],
        arguments: [String] = [], secret: Bool = true
    ) throws -> (server: LiveServer, alice: UserClient, conversation: Int) {
        try store.addUser("alice", "alice-password", admin: true)
        for name in others { try store.addUser(name, name + "-password") }
        let s = try store.serve(arguments)
        let alice = try UserClient.signIn(s.port, "alice", "alice-password")
        let c = try #require(try alice.call("POST", "/api/v1/conversations", ["title": "Plans", "participants": participants]).json["id"] as? Int)
        if secret { #expect(try alice.send(c, "secret plan").status == 201) }
        return (s, alice, c)
    }

    @Test(
        "request lines that are not ASCII HTTP (invalid UTF-8, control bytes, garbage) get 400 and a closed connection at once; a head that never ends is closed by the header time-out whatever its bytes; the server keeps serving"
    )
    func badRequestLines() throws {
        let store = try AccountsStore(.sqlite)
        defer { store.stop() }
        let s = try store.serve(["--header-timeout", "2"])
        let bad: [[UInt8]] = [
            Array("GET /c/".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8),
            Array("GET /api/v1/conversations/".utf8) + [0xC3, 0x28] + Array("/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8),
            Array("GET /c/1".utf8) + [0x01] + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8),
            [0xFF, 0xFE, 0xFD, 0x0D, 0x0A, 0x0D, 0x0A],
            Array("GET /healthz HTTP/9.9\r\n\r\n".utf8),
            Array("get /healthz HTTP/1.1\r\n\r\n".utf8)
        ]
        for bytes in bad {
            let r = try HTTP.raw(port: s.port, bytes, limit: 5)
            #expect(r.reply.hasPrefix("HTTP/1.1 400"), "\(bytes.prefix(30)): \(r.reply.prefix(80).debugDescription)")
            #expect(r.closed && r.seconds < 1.5, "closed \(r.closed) after \(r.seconds) s")
        }
        // Never-ending heads with bytes that are not UTF-8: closed by the 2-s header time-out.
        let slow: [[UInt8]] = [
            Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ".utf8) + [0xFF, 0xFE],
            [0xFF, 0xFE, 0xFD],
            Array("GET /c/".utf8) + [0xFF]
        ]
        for bytes in slow {
            let r = try HTTP.raw(port: s.port, bytes, limit: 6)
            #expect(r.closed && r.seconds < 4, "closed \(r.closed) after \(r.seconds) s: \(r.reply.prefix(60).debugDescription)")
        }
        // Fifty at once hold nothing: all closed, and the server answers.
        let closed = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 50) { k in
            if let r = try? HTTP.raw(port: s.port, Array("GET /c/\(k)".utf8) + [0xFF] + Array(" HTTP/1.1\r\n\r\n".utf8), limit: 5), r.closed {
                closed.withLock { $0 += 1 }
            }
        }
        #expect(closed.withLock { $0 } == 50)
        #expect(try HTTP.request(port: s.port, method: "GET", path: "/healthz").status == 200)
    }

    @Test("the WebSocket of a conversation, in every spelling, refuses a stranger; the member's canonical one opens", arguments: AccountsStore.Backend.allCases)
    func webSocketSpellings(backend: AccountsStore.Backend) throws {
        let store = try AccountsStore(backend)
        defer { store.stop() }
        let (s, alice, c) = try Self.aliceConversation(store)
        let carol = try UserClient.signIn(s.port, "carol", "carol-password")
        for path in [
            "/api/v1/conversations/\(c)/live?since=0", "/api/v1/conversations/+\(c)/live?since=0", "/api/v1/conversations/0\(c)/live?since=0",
            "//api/v1/conversations/\(c)/live?since=0", "/api/v1//conversations/\(c)/live?since=0",
            "/api/v1/conversations//\(c)/live?since=0", "/api/v1/conversations/%2B\(c)/live?since=0"
        ] {
            var heard = ""
            do {
                let socket = try WebSocketClient(port: s.port, path: path, headers: carol.headers)
                socket.setTimeout(seconds: 2)
                while let frame = try? socket.receive() { heard += frame }
            } catch {}
            #expect(heard.isEmpty, "carol heard on \(path): \(heard.prefix(120))")
            #expect(try carol.get(path).status == 404, "\(path)")
        }
        let socket = try WebSocketClient(port: s.port, path: "/api/v1/conversations/\(c)/live?since=0", headers: alice.headers)
        socket.setTimeout(seconds: 5)
        var seen = ""
        while let frame = try socket.receive() {
            seen += frame
            if frame.contains("\"ready\"") { break }
        }
        #expect(seen.contains("secret plan"))
    }

    @Test(
        "eight accepts of one invitation at once, each with a new name: one account, seven 404s; through `+N` and `//` a stranger reads and writes nothing",
        arguments: AccountsStore.Backend.allCases)
    func invitationRaceAndSpellings(backend: AccountsStore.Backend) throws {
        let store = try AccountsStore(backend)
        defer { store.stop() }
        let (s, alice, c) = try Self.aliceConversation(store)
        let token = try #require(try alice.call("POST", "/api/v1/conversations/\(c)/invites", [:]).json["token"] as? String)
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { k in
            let status =
                (try? HTTP.request(
                    port: s.port, method: "POST", path: "/api/v1/invites/\(token)/accept",
                    body: Data(#"{"name":"new\#(k)","password":"new-password-\#(k)"}"#.utf8)
                ).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0.sorted() } == [200] + Array(repeating: 404, count: 7))
        let listed = String(decoding: try Tool.run(["users", "list", "--db", store.db]).stdout, as: UTF8.self)
        #expect(listed.split(separator: "\n").filter { $0.hasPrefix("new") }.count == 1, "\(listed)")
        // The stranger, through the spellings wave 3's check missed.
        let carol = try UserClient.signIn(s.port, "carol", "carol-password")
        for path in [
            "/api/v1/conversations/+\(c)/messages", "//api/v1/conversations/\(c)/messages", "/api/v1//conversations/\(c)/messages",
            "/c/+\(c)", "//c/\(c)", "/api/v1/conversations/+\(c)/export?format=json", "/api/v1/conversations/+\(c)/stats",
            "/api/v1/conversations/+\(c)/media", "/api/v1/conversations/+\(c)/members", "/api/v1/conversations/0\(c)/messages"
        ] {
            let r = try carol.get(path)
            #expect(r.status == 404 && !r.text.contains("secret plan"), "\(path): \(r.status)")
        }
        for path in ["/api/v1/conversations/+\(c)/messages", "//api/v1/conversations/\(c)/messages"] {
            #expect(try carol.call("POST", path, ["clientId": UUID().uuidString, "text": "let me in"]).status == 404)
        }
        let stored = try alice.call("GET", "/api/v1/conversations/\(c)/messages").json["messages"] as? [[String: Any]]
        #expect(stored?.compactMap { $0["text"] as? String } == ["secret plan"])
    }

    @Test(
        "a password reset by `bubbles users reset-password` (another process) ends bob's sessions, his API token and his open socket at once",
        arguments: AccountsStore.Backend.allCases)
    func resetEndsEverything(backend: AccountsStore.Backend) throws {
        let store = try AccountsStore(backend)
        defer { store.stop() }
        let (s, _, c) = try Self.aliceConversation(store, others: ["bob"], participants: ["alice", "bob"], secret: false)
        let bob = try UserClient.signIn(s.port, "bob", "bob-password")
        let token = try #require(try bob.call("POST", "/api/v1/tokens", ["name": "script"]).json["token"] as? String)
        let script = UserClient(port: s.port, bearer: token)
        #expect(try script.get("/api/v1/conversations").status == 200)
        let socket = try WebSocketClient(port: s.port, path: "/api/v1/conversations/\(c)/live?since=0", headers: script.headers)
        socket.setTimeout(seconds: 10)
        while let frame = try socket.receiveJSON(), frame["type"] as? String != "ready" {}
        let reset = try Tool.run(["users", "reset-password", "bob", "--password-stdin", "--db", store.db], stdin: Data("new-bob-password\n".utf8))
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(String(decoding: reset.stdout, as: UTF8.self).contains("1 session and 1 API token"), "\(String(decoding: reset.stdout, as: UTF8.self))")
        let done = Date()
        while (try? socket.receive()) != nil {}
        let closedAfter = Date().timeIntervalSince(done)
        #expect(closedAfter < 1.5, "the token's socket closed \(closedAfter) s after the reset")
        #expect(try script.get("/api/v1/conversations").status == 401)
        #expect(try bob.get("/api/v1/conversations").status == 401)
        #expect(try UserClient.signIn(s.port, "bob", "new-bob-password").get("/api/v1/conversations").status == 200)
    }

    @Test("at --log-level info the log names every request but holds no invitation secret, no API token and no ?token= value")
    func logsHoldNoSecrets() throws {
        let store = try AccountsStore(.sqlite)
        defer { store.stop() }
        let (s, alice, c) = try Self.aliceConversation(store, others: [], arguments: ["--log-level", "info"], secret: false)
        let invite = try #require(try alice.call("POST", "/api/v1/conversations/\(c)/invites", [:]).json["token"] as? String)
        #expect(try HTTP.request(port: s.port, method: "GET", path: "/invite/\(invite)").status == 200)
        let joined = try HTTP.request(
            port: s.port, method: "POST", path: "/api/v1/invites/\(invite)/accept",
            body: Data(#"{"name":"dora","password":"dora-password"}"#.utf8))
        #expect(joined.status == 200)
        let token = try #require(try alice.call("POST", "/api/v1/tokens", ["name": "script"]).json["token"] as? String)
        #expect(try UserClient(port: s.port, bearer: token).get("/api/v1/conversations?token=\(token)").status == 200)

        // Single-owner mode with a token in the URL.
        let owner = try AccountsStore(.sqlite)
        defer { owner.stop() }
        let ownerToken = "owner-secret-token-0123456789"
        let o = try owner.serve(["--log-level", "info", "--token", ownerToken])
        #expect(try HTTP.request(port: o.port, method: "GET", path: "/api/v1/conversations?token=\(ownerToken)").status == 200)
        Thread.sleep(forTimeInterval: 0.3)
        let logs = s.log + o.log
        #expect(logs.contains("/api/v1/invites/…/accept") && logs.contains("/invite/…") && logs.contains("/api/v1/conversations"), "\(logs.suffix(2000))")
        for (what, secret) in [("invitation", invite), ("API token", token), ("server token", ownerToken)] {
            #expect(!logs.contains(secret), "the \(what) is in the log")
        }
    }
}
