import BubbleStore
import Foundation
import Hummingbird
import NIOEmbedded
import Testing
@testable import BubbleServer

/// Access as an attacker tries it (issue: access decided by the router): every route has a
/// declared rule; every route that names a conversation refuses a stranger whatever the spelling
/// of its URL; the member's own URL has one spelling.
@Suite("bubbles serve in-process: who reaches what, by route group")
struct AccessTests {
    /// A route template made concrete: `{id}` → `id`, the other parameters → values that exist.
    static func path(_ template: String, id: String, seq: String = "1") -> String {
        template.replacingOccurrences(of: "{id}", with: id).replacingOccurrences(of: "{seq}", with: seq)
            .replacingOccurrences(of: "{name}", with: "carol").replacingOccurrences(of: "{token}", with: "1")
            .replacingOccurrences(of: "{file}", with: "x.png").replacingOccurrences(of: "{*}", with: "x")
    }

    /// What a write carries, so a refusal is the access check's and not the body's.
    static func body(_ method: HTTPRequest.Method, _ template: String) -> Any? {
        guard method != .get, method != .delete else { return nil }
        if template.hasSuffix("/reactions") { return ["emoji": "👍"] }
        if template.hasSuffix("/members") { return ["name": "carol", "access": "write"] }
        if template.hasSuffix("/invites") { return [String: Any]() }
        return ["clientId": UUID().uuidString, "text": "let me in", "sender": "carol"]
    }

    static func routes(_ table: AccessTable) -> [(method: HTTPRequest.Method, template: String, rule: AccessRule)] {
        table.all.map { entry in
            let parts = entry.route.split(separator: " ", maxSplits: 1)
            return (HTTPRequest.Method(String(parts[0]))!, String(parts[1]), entry.rule)
        }
    }

    @Test(
        "every route of both routers has a declared access rule; one added past the groups is found; every route that names a conversation is decided per conversation"
    )
    func everyRouteHasARule() throws {
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        #expect(server.rules.unruled(server.router).isEmpty)
        #expect(server.router.routes.count == server.rules.all.count)
        #expect(server.router.routes.count > 40, "\(server.router.routes.count) routes")
        let (ws, wsRules) = server.server.webSocketRouterAndRules()
        #expect(wsRules.unruled(ws).isEmpty)
        #expect(wsRules.all.map(\.route) == ["GET /api/v1/conversations/{id}/live", "GET /api/v1/feed"])
        for (method, template, rule) in Self.routes(server.rules) {
            if template.contains("{id}") {
                guard case .conversation = rule else {
                    Issue.record("\(method) \(template) names a conversation but its rule is \(rule)")
                    continue
                }
            }
            if rule == .anyone {
                #expect(
                    ["/login", "/api/v1/login", "/healthz", "/invite/{token}", "/api/v1/invites/{token}/accept"].contains(template)
                        || template.hasPrefix("/assets/"), "\(method) \(template) is open to anyone")
            }
        }
        // A route added around the groups is caught (the server refuses to start with one).
        server.router.get("api/v1/conversations/:id/leak") { _, _ in "everything" }
        server.router.post("secret-admin") { _, _ in "ok" }
        #expect(server.rules.unruled(server.router).sorted() == ["GET /api/v1/conversations/{id}/leak", "POST /secret-admin"])
    }

    @Test(
        "a stranger gets 404 from every conversation route, HTTP and WebSocket, in every spelling (+N, 0N, //, empty segments, %2B, N;x); a member's non-canonical spellings are 404 too; a reader cannot write through any of them",
        arguments: Backend.allCases)
    func spellings(backend: Backend) async throws {
        let server = try InProcessServer(backend)
        defer { server.stop() }
        try await server.addUser("alice", admin: true)
        try await server.addUser("bob")
        try await server.addUser("carol")
        let alice = try await server.signIn("alice"), bob = try await server.signIn("bob"), carol = try await server.signIn("carol")
        let c = try await server.conversation(by: alice, members: [("bob", .read)])
        #expect(try await alice.call(.post, "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": "secret plan"]).status == 201)

        let spellings = ["\(c)", "+\(c)", "0\(c)", "00\(c)", "%2B\(c)", "\(c)%20", "%20\(c)", "\(c);x", "\(c).0", "-\(c)", "0x\(c)", "\(c)\u{0}"]
            .map { $0.replacingOccurrences(of: "\u{0}", with: "%00") }
        let routes = Self.routes(server.rules).filter { $0.template.contains("{id}") }
        #expect(routes.count >= 20, "\(routes.count) conversation routes")
        var tried = 0
        for (method, template, _) in routes {
            for spelling in spellings {
                for variant in Self.variants(Self.path(template, id: spelling)) {
                    let r = try await carol.call(method, variant, Self.body(method, template))
                    tried += 1
                    #expect(r.status == 404, "carol \(method) \(variant): \(r.status) \(r.text.prefix(120))")
                    #expect(!r.text.contains("secret plan"))
                    if spelling != "\(c)" {
                        let own = try await alice.call(method == .get ? .get : method, variant, Self.body(method, template))
                        #expect(own.status == 404, "alice \(method) \(variant) (not the canonical URL): \(own.status)")
                    }
                }
            }
        }
        #expect(tried > 1_000)
        // The member reads through the one spelling; the reader writes through none.
        #expect(try await alice.get("/api/v1/conversations/\(c)/messages").text.contains("secret plan"))
        #expect(try await bob.get("/api/v1/conversations/\(c)/messages").status == 200)
        for spelling in spellings {
            let r = try await bob.call(.post, "/api/v1/conversations/\(spelling)/messages", ["clientId": UUID().uuidString, "text": "bob writes"])
            #expect(r.status == (spelling == "\(c)" ? 403 : 404), "bob POST \(spelling): \(r.status)")
        }
        // Removed: nothing any more, in any spelling.
        #expect(try await alice.call(.delete, "/api/v1/conversations/\(c)/members/bob").status == 204)
        for spelling in spellings { #expect(try await bob.get("/api/v1/conversations/\(spelling)/messages").status == 404) }
        let messages = try await alice.get("/api/v1/conversations/\(c)/messages").json["messages"] as? [[String: Any]]
        #expect(messages?.compactMap { $0["text"] as? String } == ["secret plan"], "nothing written by a stranger or reader")
        // The WebSocket router: the same groups, the same answer.
        let (ws, _) = server.server.webSocketRouterAndRules()
        let wsResponder = ws.buildResponder()
        for spelling in spellings {
            for variant in Self.variants("/api/v1/conversations/\(spelling)/live?since=0") {
                let r = try await server.respond(wsResponder, .get, variant, headers: carol.headers)
                #expect(r.status == 404, "carol's socket \(variant): \(r.status)")
            }
        }
    }

    /// A path and the spellings the router reads as the same: doubled and empty segments.
    static func variants(_ path: String) -> [String] {
        var all = [path, "/" + path]
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for k in 1..<segments.count {
            var copy = segments
            copy.insert("", at: k)
            all.append(copy.joined(separator: "/"))
        }
        return all
    }

    @Test("eight accepts of one invitation at once, each making an account: one 200, seven 404, one account", arguments: Backend.allCases)
    func invitationRace(backend: Backend) async throws {
        let server = try InProcessServer(backend)
        defer { server.stop() }
        try await server.addUser("alice", admin: true)
        let alice = try await server.signIn("alice")
        let c = try await server.conversation(by: alice)
        let token = try #require(try await alice.call(.post, "/api/v1/conversations/\(c)/invites", [String: Any]()).json["token"] as? String)
        let statuses = await withTaskGroup(of: Int.self) { group in
            for k in 0..<8 {
                group.addTask {
                    (try? await server.request(
                        .post, "/api/v1/invites/\(token)/accept",
                        body: InProcessServer.json(["name": "new\(k)", "password": "new-password-\(k)"])
                    ).status) ?? 0
                }
            }
            var all: [Int] = []
            for await s in group { all.append(s) }
            return all.sorted()
        }
        #expect(statuses == [200] + Array(repeating: 404, count: 7))
        #expect(try await server.store.userCount() == 2)
        #expect(try await server.store.members(of: c).count == 2)
    }

    @Test("next after signing in is a path of this site: tab, CR, LF, //, /\\, schemes and spaces all become /")
    func nextIsLocal() async throws {
        for bad in [
            "/\t/evil.example/phish", "/\r/evil.example", "/\n/evil.example", "//evil.example", "/\\evil.example", "\\/evil.example",
            "https://evil.example", "javascript:alert(1)", "/ /evil.example", "/\u{7F}/evil", "/\u{85}/evil", "", "evil.example"
        ] {
            #expect(Pages.localPath(bad) == "/", "\(bad.debugDescription)")
        }
        for good in ["/", "/c/3", "/c/3?at=12&q=fox", "/search?q=%2F%2Fx"] { #expect(Pages.localPath(good) == good) }
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        try await server.addUser("alice")
        for (query, expected) in [
            ("/%09/evil.example/phish", "/"), ("/%0d/evil.example", "/"), ("%2F%2Fevil.example", "/"), ("/%5Cevil.example", "/"),
            ("https:%2F%2Fevil.example", "/"), ("/c/3", "/c/3")
        ] {
            let page = try await server.request(.get, "/login?next=" + query)
            #expect(page.status == 200)
            let shown = page.text.firstMatch(of: #/data-next="[^"]*"/#).map { String($0.0) } ?? "none"
            #expect(shown == "data-next=\"\(expected)\"", "next=\(query): \(shown)")
        }
    }

    @Test(
        "single-owner mode: another Host is 421 (DNS rebinding); a write from another site (Origin, Sec-Fetch-Site, text/plain) is 403 and stores nothing; the page's own writes and programs' pass"
    )
    func ownerModeFromWebPages() async throws {
        let server = try InProcessServer(.sqlite) { $0.publicHosts = ["chat.example.org"] }
        defer { server.stop() }
        for host in ["attacker.example", "attacker.example:8080", "127.0.0.1.attacker.example", "localhost.attacker.example", "[::2]:8080", ""] {
            let r = try await server.request(.get, "/api/v1/conversations", host: host)
            #expect(r.status == 421, "Host \(host): \(r.status)")
        }
        for host in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST", "[::1]:8080", "chat.example.org", "chat.example.org:443"] {
            #expect(try await server.request(.get, "/api/v1/conversations", host: host).status == 200, "Host \(host)")
        }
        let body = InProcessServer.json(["title": "x", "participants": ["me", "you"]])
        let foreign: [[String: String]] = [
            ["Origin": "http://attacker.example"], ["Origin": "null"], ["Sec-Fetch-Site": "cross-site"],
            ["Sec-Fetch-Site": "same-site"], ["Origin": "http://127.0.0.1:9999"]
        ]
        for headers in foreign {
            for type in ["text/plain", "application/json", "application/x-www-form-urlencoded"] {
                let r = try await server.request(.post, "/api/v1/conversations", headers: headers, body: body, contentType: type)
                #expect(r.status == 403, "\(headers) \(type): \(r.status)")
            }
            let imported = try await server.request(.post, "/api/v1/imports", headers: headers, body: Data("x".utf8), contentType: "text/plain")
            #expect(imported.status == 403)
        }
        #expect(try await server.store.conversations().isEmpty, "nothing made from another site")
        #expect(try await server.request(.post, "/api/v1/conversations", headers: ["Origin": "http://127.0.0.1:8080"], body: body).status == 201)
        #expect(try await server.request(.post, "/api/v1/conversations", headers: ["Sec-Fetch-Site": "same-origin"], body: body).status == 201)
        #expect(try await server.request(.post, "/api/v1/conversations", body: body).status == 201, "a program (no browser headers)")
    }

    @Test(
        "sign-in limits lock nobody else out: after bob's 10 failures from one address alice signs in from it; bob from a fresh address too; behind a trusted proxy each client counts alone; a forged X-Forwarded-For counts for nothing"
    )
    func signInLimits() async throws {
        let server = try InProcessServer(.sqlite) { $0.trustedProxies = ["10.0.0.0/8"] }
        defer { server.stop() }
        try await server.addUser("alice")
        try await server.addUser("bob")
        func login(_ name: String, _ password: String, from address: String, forwarded: String? = nil) async throws -> Int {
            try await server.request(
                .post, "/api/v1/login", headers: forwarded.map { ["X-Forwarded-For": $0] } ?? [:],
                body: InProcessServer.json(["name": name, "password": password]), address: address
            ).status
        }
        for _ in 0..<10 { #expect(try await login("bob", "wrong-password", from: "192.0.2.1") == 401) }
        #expect(try await login("bob", "bob-password", from: "192.0.2.1") == 429, "bob from the address that failed waits")
        #expect(try await login("alice", "alice-password", from: "192.0.2.1") == 200, "alice is not locked out by bob's failures")
        #expect(try await login("bob", "bob-password", from: "192.0.2.99") == 200, "bob from an address that has not failed")
        // Many addresses guessing one name: each that has failed is refused once the name has had its share.
        for k in 0..<10 { #expect(try await login("alice", "guess-\(k)", from: "198.51.100.\(k)") == 401) }
        #expect(try await login("alice", "guess-x", from: "198.51.100.3") == 429)
        #expect(try await login("alice", "alice-password", from: "198.51.100.200") == 200)
        // One address guessing many names: 100 failures, then 429 for any name.
        for k in 0..<100 { _ = try await login("user\(k)", "wrong-password", from: "203.0.113.9") }
        #expect(try await login("alice", "alice-password", from: "203.0.113.9") == 429)
        // Behind the trusted proxy, each client is its own address; from anywhere else the header is ignored.
        for _ in 0..<10 { _ = try await login("bob", "wrong-password", from: "10.1.2.3", forwarded: "203.0.113.50") }
        #expect(try await login("bob", "bob-password", from: "10.1.2.3", forwarded: "203.0.113.50") == 429)
        #expect(try await login("bob", "bob-password", from: "10.1.2.3", forwarded: "203.0.113.51") == 200, "another client behind the same proxy")
        // Failures counted just before (the limiter forgets after a minute, and under load the
        // sign-ins above can take longer than that).
        for _ in 0..<10 { _ = try await login("bob", "wrong-password", from: "192.0.2.7") }
        #expect(try await login("bob", "bob-password", from: "192.0.2.7", forwarded: "203.0.113.77") == 429, "an untrusted peer's header changes nothing")
    }

    @Test("tokens: made only from a signed-in session, never by a token; signing out everywhere ends the user's tokens", arguments: Backend.allCases)
    func tokens(backend: Backend) async throws {
        let server = try InProcessServer(backend)
        defer { server.stop() }
        try await server.addUser("bob")
        let bob = try await server.signIn("bob")
        let made = try await bob.call(.post, "/api/v1/tokens", ["name": "script"])
        #expect(made.status == 201)
        let token = try #require(made.json["token"] as? String)
        let script = Client(server: server, name: "bob", bearer: token)
        #expect(try await script.get("/api/v1/conversations").status == 200)
        let minted = try await script.call(.post, "/api/v1/tokens", ["name": "successor"])
        #expect(minted.status == 403, "a token makes no token: \(minted.status)")
        #expect((try await bob.get("/api/v1/tokens").json["tokens"] as? [Any])?.count == 1)
        // `bubbles users reset-password` and `sign-out` call this; so does "sign out everywhere".
        let other = try await server.signIn("bob")
        #expect(try await other.call(.post, "/api/v1/logout", ["everywhere": true]).status == 204)
        #expect(try await script.get("/api/v1/conversations").status == 401)
        #expect(try await bob.get("/api/v1/conversations").status == 401)
    }

    @Test("with users, nobody signed in reaches only the open routes: API 401, pages to the sign-in page, and lists are never everything")
    func anonymous() async throws {
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        try await server.addUser("alice", admin: true)
        let alice = try await server.signIn("alice")
        let c = try await server.conversation(by: alice)
        for (method, template, rule) in Self.routes(server.rules) where rule != .anyone {
            let path = Self.path(template, id: "\(c)")
            let r = try await server.request(method, path, body: Self.body(method, template).map(InProcessServer.json))
            if template.hasPrefix("/api/") || template == "/metrics" || method != .get {
                #expect(r.status == 401, "\(method) \(path): \(r.status)")
            } else {
                #expect(r.status == 303 && r.header("Location")?.hasPrefix("/login?next=") == true, "\(method) \(path): \(r.status)")
            }
        }
        #expect(try await server.request(.get, "/login").status == 200)
        #expect(try await server.request(.get, "/healthz").status == 200)
        // Past the routes too: nobody's lists and searches are empty, not everything.
        #expect(try await API.visible(server.store, server.store, .anonymous).isEmpty)
        #expect(try await API.visible(server.store, server.store, .owner).count == 1)
        #expect(try await API.within(server.store, .anonymous) == [])
        #expect(try await API.within(server.store, .owner) == nil)
    }
}

extension InProcessServer {
    /// A request to another responder of the server (the WebSocket router's).
    func respond(
        _ responder: some HTTPResponder<BubbleRequestContext>, _ method: HTTPRequest.Method, _ path: String,
        headers: [String: String]
    ) async throws -> Reply {
        var fields = HTTPFields()
        for (k, v) in headers { fields[HTTPFields.Element.Name(k)!] = v }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:8080", path: path, headerFields: fields),
            body: RequestBody(buffer: ByteBuffer()))
        let context = BubbleRequestContext(source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: logger))
        do {
            let response = try await responder.respond(to: request, context: context)
            return Reply(status: Int(response.status.code), headers: response.headers, body: Data())
        } catch let e as any HTTPResponseError {
            return Reply(status: Int(e.status.code), headers: [:], body: Data())
        }
    }
}
