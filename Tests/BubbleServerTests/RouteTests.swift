import BubbleCore
import BubbleStore
import Foundation
import HTTPTypes
import Testing
@testable import BubbleServer

/// `bubbles serve`'s routes in the test process (no socket, no `bubbles` process): one behaviour
/// each, by route group — the open pages and API, the signed-in API and pages, a conversation's
/// API and pages, the admin's — with the bodies an attacker or a broken client sends.
@Suite("bubbles serve in-process: every route group's behaviour")
struct RouteTests {
    /// A server with ann (admin) signed in and an imported conversation of 30 messages.
    static func server(_ backend: Backend = .sqlite) async throws -> (InProcessServer, Client, Int64) {
        let server = try InProcessServer(backend)
        try await server.addUser("ann", admin: true)
        let ann = try await server.signIn("ann")
        var messages: [Message] = []
        for i in 0..<30 {
            messages.append(
                Message(
                    sender: i % 2 == 0 ? "me" : "bo", direction: i % 2 == 0 ? .outgoing : .incoming,
                    date: Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 3_600), text: "message \(i) about lunch"))
        }
        let c = Conversation(title: "Bo", participants: [Participant(id: "me", name: "Me"), Participant(id: "bo", name: "Bo")], messages: messages)
        let added = try await server.store.add(c, sourceFormat: "native", chatKey: "bo", title: nil, mediaFolder: server.folder)
        return (server, ann, added.conversationID)
    }

    /// Raw bytes as a signed-in client's write.
    static func raw(_ client: Client, _ method: HTTPRequest.Method, _ path: String, _ bytes: [UInt8]) async throws -> InProcessServer.Reply {
        var h = client.headers
        h["X-CSRF-Token"] = client.csrf
        return try await client.server.request(method, path, headers: h, body: Data(bytes))
    }

    @Test("open routes: health, the sign-in page, a made-up asset or font is a JSON 404 and the server keeps serving")
    func openRoutes() async throws {
        let (server, _, _) = try await Self.server()
        defer { server.stop() }
        let health = try await server.request(.get, "/healthz")
        #expect(health.status == 200 && health.json["status"] as? String == "ok", "\(health.text)")
        let login = try await server.request(.get, "/login")
        #expect(login.status == 200 && login.text.contains("<form") && login.header("Content-Security-Policy") != nil)
        for path in ["/assets/fonts/..%2Fetc%2Fpasswd", "/assets/fonts/nope.ttf", "/assets/nope.js"] {
            let r = try await server.request(.get, path)
            #expect(r.status == 404 && r.json["error"] is String, "\(path): \(r.status) \(r.text)")
        }
        #expect(try await server.request(.get, "/healthz").status == 200)
    }

    @Test("a font the style sheet names is served as a font, read off the cooperative threads")
    func fonts() async throws {
        let (server, ann, c) = try await Self.server()
        defer { server.stop() }
        let page = try await ann.get("/c/\(c)")
        let sheet = try #require(page.text.firstMatch(of: #/href="(/assets/[^"]*theme[^"]*\.css)"/#)?.1)
        let css = try await ann.get(String(sheet)).text
        let font = try #require(css.firstMatch(of: #/url\(["']?(/assets/fonts/[^)"']+)/#)?.1, "\(css.prefix(300))")
        let r = try await server.request(.get, String(font))
        #expect(r.status == 200 && r.header("Content-Type")?.hasPrefix("font/") == true && r.body.count > 10_000, "\(font): \(r.status)")
    }

    @Test("sign-in bodies: wrong types, arrays, not JSON, bytes that are not UTF-8 — a 400 naming what is wrong, nobody signed in")
    func signInBodies() async throws {
        let (server, _, _) = try await Self.server()
        defer { server.stop() }
        let cases: [([UInt8], String)] = [
            (Array(#"{"name": 5, "password": "x"}"#.utf8), "name: expected a string"),
            (Array(#"{"name": "ann"}"#.utf8), "password: expected a string"),
            (Array(#"[{"name": "ann"}]"#.utf8), "expected a JSON object"),
            (Array("name=ann&password=ann-password".utf8), "expected a JSON object"),
            ([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], "expected a JSON object"),
            ([], "expected a JSON object")
        ]
        for (bytes, says) in cases {
            let r = try await server.request(.post, "/api/v1/login", body: Data(bytes))
            #expect(r.status == 400 && (r.json["error"] as? String ?? "").contains(says), "\(bytes.prefix(20)): \(r.status) \(r.text)")
            #expect(r.header("Set-Cookie") == nil)
        }
    }

    @Test("the signed-in API: the list, search with counts, people, the feed; signed out, each is a 401")
    func signedInAPI() async throws {
        let (server, ann, c) = try await Self.server()
        defer { server.stop() }
        let list = try await ann.get("/api/v1/conversations")
        #expect(list.status == 200 && list.text.contains("\"id\":\(c)"), "\(list.text)")
        let found = try await ann.get("/api/v1/search?q=lunch")
        #expect(found.status == 200 && found.text.contains("lunch"), "\(found.text.prefix(300))")
        #expect(try await ann.get("/api/v1/search?q=").status == 400)
        #expect(try await ann.get("/api/v1/people").status == 200)
        for path in ["/api/v1/conversations", "/api/v1/search?q=lunch", "/api/v1/people", "/api/v1/settings", "/api/v1/me", "/api/v1/feed"] {
            #expect(try await server.request(.get, path).status == 401, "\(path)")
        }
    }

    @Test("a conversation's windows: after, before, at, date; two at once, a negative or huge number, a word — 400s naming the parameter")
    func windows() async throws {
        let (server, ann, c) = try await Self.server()
        defer { server.stop() }
        func seqs(_ query: String) async throws -> [Int] {
            let r = try await ann.get("/api/v1/conversations/\(c)/messages?\(query)")
            #expect(r.status == 200, "\(query): \(r.text)")
            return (r.json["messages"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
        }
        #expect(try await seqs("after=0&limit=3") == [1, 2, 3])
        #expect(try await seqs("before=30&limit=2") == [28, 29])
        #expect(try await seqs("at=10&limit=4") == [8, 9, 10, 11])
        #expect(try await seqs("limit=2") == [29, 30])
        for bad in ["after=1&before=5", "after=-1", "after=99999999999999999999", "at=ten", "limit=0", "limit=1001", "date=yesterday"] {
            let r = try await ann.get("/api/v1/conversations/\(c)/messages?\(bad)")
            #expect(r.status == 400 && r.json["error"] is String, "\(bad): \(r.status) \(r.text)")
        }
        let days = try await ann.get("/api/v1/conversations/\(c)/days")
        #expect(days.status == 200 && days.text.contains("2023-11"), "\(days.text.prefix(200))")
    }

    @Test(
        "live writes with typed bodies: send, the same clientId again is the same message, edit, react, delete; each hostile body is a 400 that stores nothing")
    func liveWrites() async throws {
        let (server, ann, _) = try await Self.server()
        defer { server.stop() }
        let c = try await server.conversation(by: ann)
        let base = "/api/v1/conversations/\(c)"
        let id = UUID().uuidString
        let sent = try await ann.call(.post, base + "/messages", ["clientId": id, "text": "*hello*"])
        #expect(sent.status == 201, "\(sent.text)")
        let seq = try #require(sent.json["seq"] as? Int)
        let again = try await ann.call(.post, base + "/messages", ["clientId": id, "text": "*hello*"])
        #expect(again.status == 200 && again.json["seq"] as? Int == seq, "a retried write is stored once")
        let hostile: [(Any, String)] = [
            (["clientId": "not-a-uuid", "text": "x"], "clientId:"), (["text": "x"], "clientId:"),
            (["clientId": UUID().uuidString, "text": 5], "text: expected a string"),
            (["clientId": UUID().uuidString, "text": "x", "replyTo": "1"], "replyTo:"),
            (["clientId": UUID().uuidString, "text": "x", "replyTo": 0], "replyTo:"),
            (["clientId": UUID().uuidString, "text": "   "], "text:"),
            (["clientId": UUID().uuidString, "text": "x", "photo": "../../etc/passwd"], "photo"),
            (["clientId": UUID().uuidString, "text": "x", "sender": "somebody-else"], "is not you"),
            ([["text": "x"]], "expected a JSON object")
        ]
        for (body, says) in hostile {
            let r = try await ann.call(.post, base + "/messages", body)
            #expect([400, 403].contains(r.status) && (r.json["error"] as? String ?? "").contains(says), "\(body): \(r.status) \(r.text)")
        }
        let notUTF8 = try await Self.raw(ann, .post, base + "/messages", [0x7B, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D])
        #expect(notUTF8.status == 400, "\(notUTF8.text)")
        let tooBig = try await ann.call(.post, base + "/messages", ["clientId": UUID().uuidString, "text": String(repeating: "x", count: 200_000)])
        #expect(tooBig.status == 413, "\(tooBig.status)")
        let window = try await ann.get(base + "/messages?after=0")
        #expect((window.json["messages"] as? [Any])?.count == 1, "only the one message was stored: \(window.text)")

        #expect(try await ann.call(.patch, base + "/messages/\(seq)", ["text": "_bye_"]).status == 200)
        #expect(try await ann.call(.patch, base + "/messages/\(seq)", ["text": ["bye"]]).status == 400)
        #expect(try await ann.call(.post, base + "/messages/\(seq)/reactions", ["emoji": "❤️"]).status == 200)
        let badEmoji = try await ann.call(.post, base + "/messages/\(seq)/reactions", ["emoji": "<script>"])
        #expect(
            badEmoji.status == 400 && badEmoji.header("Content-Type")?.hasPrefix("application/json") == true
                && badEmoji.header("X-Content-Type-Options") == "nosniff", "what is echoed is JSON, never HTML: \(badEmoji.text)")
        #expect(try await ann.call(.post, base + "/messages/\(seq)/reactions", ["emoji": "❤️", "on": "yes"]).status == 400)
        #expect(try await ann.call(.delete, base + "/messages/\(seq)").status == 200)
        let changes = try await ann.get(base + "/changes?since=0")
        // Four commits (send, edit, react, delete) and none for the refused bodies; the message's latest state.
        #expect(changes.json["rev"] as? Int == 4, "\(changes.text.prefix(300))")
        let latest = (changes.json["changes"] as? [[String: Any]])?.map { $0["kind"] as? String }
        #expect(latest == ["delete"], "\(changes.text.prefix(300))")
    }

    @Test("read marks, members and invitations take typed bodies: a missing or wrong field is a 400, an empty invitation body means the defaults")
    func conversationBodies() async throws {
        let (server, ann, _) = try await Self.server()
        defer { server.stop() }
        try await server.addUser("ben")
        let c = try await server.conversation(by: ann)
        let base = "/api/v1/conversations/\(c)"
        _ = try await ann.call(.post, base + "/messages", ["clientId": UUID().uuidString, "text": "hi"])
        #expect(try await ann.call(.post, base + "/read", ["seq": 1]).status == 200)
        for bad: Any in [["seq": -1], ["seq": "1"], ["seq": 1.5], [:] as [String: Any]] {
            #expect(try await ann.call(.post, base + "/read", bad).status == 400, "\(bad)")
        }
        #expect(try await ann.call(.post, base + "/members", ["name": "ben", "access": "owner"]).status == 400)
        #expect(try await ann.call(.post, base + "/members", ["name": 7]).status == 400)
        #expect(try await ann.call(.post, base + "/members", ["name": "ben", "access": "read"]).status == 200)
        let invite = try await Self.raw(ann, .post, base + "/invites", [])
        #expect(invite.status == 201 && invite.json["access"] as? String == "write", "\(invite.text)")
        #expect(try await Self.raw(ann, .post, base + "/invites", Array("{not json".utf8)).status == 400, "a broken body is not taken for an empty one")
        let logout = try await Self.raw(ann, .post, "/api/v1/logout", Array(#"{"everywhere": "yes"}"#.utf8))
        #expect(logout.status == 400, "everywhere must be true or false: \(logout.text)")
    }

    @Test("a conversation's pages and insights: the page, its statistics (JSON, a chart at the asked width), the gallery; no exporter, a 501")
    func conversationPages() async throws {
        let (server, ann, c) = try await Self.server()
        defer { server.stop() }
        let page = try await ann.get("/c/\(c)")
        #expect(page.status == 200 && page.text.contains("Bo"))
        let stats = try await ann.get("/api/v1/conversations/\(c)/stats")
        #expect(stats.status == 200 && stats.text.contains("30"), "\(stats.text.prefix(200))")
        let chart = try await ann.get("/api/v1/conversations/\(c)/stats.svg?width=400")
        #expect(chart.status == 200 && chart.text.contains("<svg") && chart.text.contains("width=\"400"), "\(chart.text.prefix(200))")
        #expect(try await ann.get("/api/v1/conversations/\(c)/stats.svg?width=99999").status == 400)
        #expect(try await ann.get("/c/\(c)/gallery").status == 200)
        // Exports are made by the `bubbles` tool's exporter (ServeCLITests); a server without one says so.
        let export = try await ann.get("/api/v1/conversations/\(c)/export?format=json")
        #expect(export.status == 501 && (export.json["error"] as? String ?? "").contains("does not export"), "\(export.text.prefix(200))")
    }

    @Test("the admin's routes: metrics for an admin, 403 for a member, 401 signed out")
    func adminRoutes() async throws {
        let (server, ann, _) = try await Self.server()
        defer { server.stop() }
        try await server.addUser("ben")
        let ben = try await server.signIn("ben")
        let metrics = try await ann.get("/metrics")
        #expect([200, 404].contains(metrics.status), "\(metrics.status)")
        #expect(try await ben.get("/metrics").status == 403)
        #expect(try await server.request(.get, "/metrics").status == 401)
    }

    @Test("readers who wait for a layout being built are all answered when it is ready (no polling), with the same geometry")
    func waitersWoken() async throws {
        let (server, ann, c) = try await Self.server()
        defer { server.stop() }
        let replies = try await withThrowingTaskGroup(of: InProcessServer.Reply.self) { group in
            for _ in 0..<6 { group.addTask { try await ann.get("/c/\(c)/view?width=640&wait=1") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.count == 6)
        let heights = Set(replies.map { $0.json["height"] as? Double ?? -1 })
        #expect(replies.allSatisfy { $0.status == 200 }, "\(replies.map(\.status))")
        #expect(heights.count == 1 && (heights.first ?? 0) > 30 * 10, "\(heights)")
        // A conversation that does not exist: a 404 at once, nobody left waiting.
        #expect(try await ann.get("/c/\(c + 999)/view?width=640&wait=1").status == 404)
    }

    @Test("/metrics times the store's database rounds by call, accounts' calls too (the store's own timing, no wrapper)")
    func storeCallMetrics() async throws {
        let server = try InProcessServer(.sqlite, metrics: true)
        defer { server.stop() }
        try await server.addUser("ann", admin: true)
        let ann = try await server.signIn("ann")
        let c = try await server.conversation(by: ann)
        #expect(try await ann.call(.post, "/api/v1/conversations/\(c)/messages", ["text": "hi", "clientId": UUID().uuidString]).status == 201)
        _ = try await ann.get("/api/v1/conversations/\(c)/messages")
        let text = try await ann.get("/metrics").text
        for call in ["sessionUser", "access", "add", "messages"] {
            #expect(text.contains("bubbles_store_call_duration_count{call=\"\(call)\"}"), "\(call) in \(text.prefix(400))")
        }
        #expect(!text.contains("call=\"read\"") && !text.contains("call=\"write\"") && !text.contains("("), "labels are the store's calls")
    }
}
