import BubbleTestSupport
import Foundation
import Testing

/// A signed-in client of `bubbles serve`: its session cookie and CSRF token (or an API token).
struct UserClient {
    let port: Int
    var cookie: String?
    var csrf: String?
    var bearer: String?

    /// Signs in as `name`; the reply when it was refused.
    static func signIn(_ port: Int, _ name: String, _ password: String) throws -> UserClient {
        let r = try HTTP.request(
            port: port, method: "POST", path: "/api/v1/login",
            body: try JSONSerialization.data(withJSONObject: ["name": name, "password": password]))
        guard r.status == 200, let set = r.headers["set-cookie"], let json = try? r.json() as? [String: Any] else {
            throw BrowserlessError("sign-in of \(name): \(r.status) \(r.text)")
        }
        return UserClient(port: port, cookie: String(set.split(separator: ";")[0]), csrf: json["csrf"] as? String)
    }

    var headers: [String: String] {
        var h: [String: String] = [:]
        if let cookie { h["Cookie"] = cookie }
        if let bearer { h["Authorization"] = "Bearer " + bearer }
        return h
    }

    /// A JSON request (with the CSRF token on writes, unless `csrf: false`).
    @discardableResult
    func call(_ method: String, _ path: String, _ body: Any? = nil, csrf send: Bool = true, extra: [String: String] = [:]) throws -> (
        status: Int, json: [String: Any]
    ) {
        var h = headers
        if send, method != "GET", let csrf { h["X-CSRF-Token"] = csrf }
        for (k, v) in extra { h[k] = v }
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let r = try HTTP.request(port: port, method: method, path: path, headers: h, body: data)
        return (r.status, (try? r.json() as? [String: Any]) ?? [:])
    }

    func get(_ path: String) throws -> HTTP.Reply { try HTTP.request(port: port, method: "GET", path: path, headers: headers) }

    /// A new message; its status and sequence number.
    func send(_ conversation: Int, _ text: String, sender: String? = nil) throws -> (status: Int, seq: Int?) {
        var body: [String: Any] = ["clientId": UUID().uuidString, "text": text]
        if let sender { body["sender"] = sender }
        let r = try call("POST", "/api/v1/conversations/\(conversation)/messages", body)
        return (r.status, r.json["seq"] as? Int)
    }
}

/// A store with users, on SQLite or PostgreSQL, and the servers on it.
final class AccountsStore {
    enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    let folder: URL
    let db: String
    let media: String?
    let dumpDatabase: String?
    var servers: [LiveServer] = []

    init(_ backend: Backend) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("bk-accounts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if backend == .postgres {
            db = try TestPostgres.shared().createDatabase("accounts")
            dumpDatabase = String(db.split(separator: "/").last!)
            media = folder.appendingPathComponent("media").path
        } else {
            db = folder.appendingPathComponent("accounts.sqlite").path
            dumpDatabase = nil
            media = nil
        }
    }

    /// `bubbles users add NAME --password-stdin` (password on standard input).
    func addUser(_ name: String, _ password: String, admin: Bool = false, display: String? = nil) throws {
        var args = ["users", "add", name, "--password-stdin", "--db", db] + (admin ? ["--admin"] : [])
        if let display { args += ["--display-name", display] }
        let r = try Tool.run(args, stdin: Data((password + "\n").utf8))
        guard r.status == 0 else { throw BrowserlessError("users add \(name): \(r.stderr)") }
    }

    func serve(_ arguments: [String] = []) throws -> LiveServer {
        let s = try LiveServer(binary: Tool.binary, fontconfig: LiveCLITests.fonts, arguments: arguments, db: db, media: media)
        servers.append(s)
        return s
    }

    /// Everything the database holds, as bytes: the SQLite file and its journal, or `pg_dump`.
    func everything() throws -> String {
        if let dumpDatabase { return try TestPostgres.shared().dump(dumpDatabase) }
        var all = Data()
        for suffix in ["", "-wal", "-shm"] { all += (try? Data(contentsOf: URL(fileURLWithPath: db + suffix))) ?? Data() }
        return String(decoding: all, as: UTF8.self)
    }

    func stop() {
        for s in servers { s.stop() }
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Accounts against the real server: sign-in, sessions, CSRF, tokens, members, invitations, and
/// everything checked from the session (issue: people, not a shared token).
@Suite("bubbles serve: accounts and access per conversation", .serialized)
struct AccountsCLITests {
    static let onePixelPNG = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")!

    @Test(
        "who may do what: 401 before signing in, the session cookie, CSRF, sender from the session (forged → 403, nothing stored), someone else's message → 403, a non-member gets 404 for page, API, search, attachments and socket, a removed member's socket closes within 1 s, tokens revoked → 401, invitations single-use, no raw secret in the database",
        arguments: AccountsStore.Backend.allCases)
    func accessModel(backend: AccountsStore.Backend) throws {
        let store = try AccountsStore(backend)
        defer { store.stop() }
        try store.addUser("ann", "ann-password", admin: true, display: "Ann Lee")
        try store.addUser("Ben", "ben-password")
        try store.addUser("carl", "carl-password")
        // The command refuses what it cannot keep, in words.
        let taken = try Tool.run(["users", "add", "ben", "--password-stdin", "--db", store.db], stdin: Data("another-password\n".utf8))
        #expect(taken.status != 0 && taken.stderr.contains("exists already"), "\(taken.stderr)")
        let short = try Tool.run(["users", "add", "dan", "--password-stdin", "--db", store.db], stdin: Data("short\n".utf8))
        #expect(short.status != 0 && short.stderr.contains("at least 8"), "\(short.stderr)")
        let listed = String(decoding: try Tool.run(["users", "list", "--db", store.db]).stdout, as: UTF8.self)
        #expect(listed.contains("ann (Ann Lee) admin") && listed.contains("Ben member") && !listed.contains("dan"), "\(listed)")

        let s = try store.serve()
        let port = s.port
        // Nothing without signing in: the API says 401, a page sends to the sign-in page.
        #expect(try HTTP.request(port: port, method: "GET", path: "/api/v1/conversations").status == 401)
        let page = try HTTP.request(port: port, method: "GET", path: "/c/1")
        #expect(page.status == 303 && page.headers["location"] == "/login?next=%2Fc%2F1")
        #expect(try HTTP.request(port: port, method: "GET", path: "/login").status == 200)
        let wrong = try HTTP.request(port: port, method: "POST", path: "/api/v1/login", body: Data(#"{"name":"ann","password":"nope-nope"}"#.utf8))
        let unknown = try HTTP.request(port: port, method: "POST", path: "/api/v1/login", body: Data(#"{"name":"zed","password":"nope-nope"}"#.utf8))
        #expect(wrong.status == 401 && unknown.status == 401 && wrong.text == unknown.text, "the same answer for both")

        let annReply = try HTTP.request(port: port, method: "POST", path: "/api/v1/login", body: Data(#"{"name":"ANN","password":"ann-password"}"#.utf8))
        let cookie = annReply.headers["set-cookie"] ?? ""
        #expect(cookie.hasPrefix("bk_session=") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && !cookie.contains("Secure"), "\(cookie)")
        let secret = String(cookie.split(separator: ";")[0].dropFirst("bk_session=".count))
        #expect(secret.count >= 22, "at least 128 random bits")
        let proxied = try HTTP.request(
            port: port, method: "POST", path: "/api/v1/login", headers: ["X-Forwarded-Proto": "https"],
            body: Data(#"{"name":"ann","password":"ann-password"}"#.utf8))
        #expect(proxied.headers["set-cookie"]?.contains("; Secure") == true, "behind a TLS proxy the cookie is Secure")
        let ann = try UserClient.signIn(port, "ann", "ann-password")
        let ben = try UserClient.signIn(port, "ben", "ben-password")
        let carl = try UserClient.signIn(port, "carl", "carl-password")
        #expect((try ann.call("GET", "/api/v1/me").json["user"] as? [String: Any])?["displayName"] as? String == "Ann Lee")

        // A conversation of user names; the creator must be in it.
        let made = try ann.call("POST", "/api/v1/conversations", ["title": "Ann & Ben", "participants": ["ann", "ben"]])
        #expect(made.status == 201)
        let c = try #require(made.json["id"] as? Int)
        #expect(try carl.call("POST", "/api/v1/conversations", ["participants": ["ben"]]).status == 403)
        #expect(try carl.call("POST", "/api/v1/conversations", ["participants": ["carl", "nobody"]]).status == 400)

        // Cookie writes need the CSRF token and this site's Origin.
        let body: [String: Any] = ["clientId": UUID().uuidString, "text": "no token"]
        #expect(try ben.call("POST", "/api/v1/conversations/\(c)/messages", body, csrf: false).status == 403)
        #expect(try ben.call("POST", "/api/v1/conversations/\(c)/messages", body, extra: ["Origin": "http://evil.example"]).status == 403)

        // The sender is the signed-in user: no sender needed, another's refused.
        let hello = try ben.send(c, "hello from ben")
        #expect(hello.status == 201)
        let stored = try ben.call("GET", "/api/v1/conversations/\(c)/messages").json["messages"] as? [[String: Any]]
        #expect(stored?.map { $0["sender"] as? String } == ["ben"])
        #expect(try ben.send(c, "I am Ann", sender: "ann").status == 403)
        #expect(try ben.send(c, "I am Ben", sender: "BEN").status == 201, "one's own name in any case is fine")
        let annSaid = try ann.send(c, "hi ben")
        #expect(try ben.call("PATCH", "/api/v1/conversations/\(c)/messages/\(annSaid.seq ?? 0)", ["text": "edited by ben"]).status == 403)
        #expect(try ben.call("DELETE", "/api/v1/conversations/\(c)/messages/\(annSaid.seq ?? 0)").status == 403)
        #expect(try ann.call("PATCH", "/api/v1/conversations/\(c)/messages/\(annSaid.seq ?? 0)", ["text": "hi Ben!"]).status == 200)
        let afterForgery = try ann.call("GET", "/api/v1/conversations/\(c)/messages").json["messages"] as? [[String: Any]]
        #expect(afterForgery?.compactMap { $0["text"] as? String } == ["hello from ben", "I am Ben", "hi Ben!"], "nothing forged was stored")

        // A photo of the conversation: its members see it, nobody else.
        let upload = try HTTP.request(
            port: port, method: "POST", path: "/api/v1/conversations/\(c)/photos",
            headers: ben.headers.merging(["X-CSRF-Token": ben.csrf ?? ""]) { a, _ in a }, body: Self.onePixelPNG, contentType: "image/png")
        let photo = try #require((try? upload.json() as? [String: Any])?["photo"] as? String, "\(upload.status) \(upload.text)")
        #expect(try ann.get("/api/v1/attachments/\(photo)").status == 200)

        // carl is not a member: 404 everywhere, as for a conversation that does not exist.
        for path in [
            "/c/\(c)", "/c/\(c)/view?width=400", "/api/v1/conversations/\(c)", "/api/v1/conversations/\(c)/messages",
            "/api/v1/conversations/\(c)/days", "/api/v1/conversations/\(c)/changes", "/api/v1/conversations/\(c)/export?format=json",
            "/api/v1/attachments/\(photo)", "/api/v1/conversations/\(c)/live", "/api/v1/conversations/999/messages"
        ] {
            let r = try carl.get(path)
            #expect(r.status == 404, "\(path): \(r.status) \(r.text.prefix(200))")
        }
        #expect(try carl.send(c, "let me in").status == 404)
        let carlsList = try JSONSerialization.jsonObject(with: try carl.get("/api/v1/conversations").body) as? [Any]
        #expect(carlsList?.isEmpty == true)
        #expect((try carl.call("GET", "/api/v1/search?q=hello").json["hits"] as? [Any])?.isEmpty == true)
        #expect((try ann.call("GET", "/api/v1/search?q=hello").json["hits"] as? [Any])?.count == 1)
        #expect(try carl.get("/search?q=hello").text.contains("No messages match"))
        #expect(throws: (any Error).self) {
            _ = try WebSocketClient(port: port, path: "/api/v1/conversations/\(c)/live", headers: carl.headers)
        }

        // Ben's open socket closes within a second of his removal.
        let socket = try WebSocketClient(port: port, path: "/api/v1/conversations/\(c)/live", headers: ben.headers)
        socket.setTimeout(seconds: 5)
        while let frame = try socket.receiveJSON(), frame["type"] as? String != "ready" {}
        #expect(try ann.call("DELETE", "/api/v1/conversations/\(c)/members/ben").status == 204)
        let removed = Date()
        while (try? socket.receive()) != nil {}
        let closedAfter = Date().timeIntervalSince(removed)
        #expect(closedAfter < 1.0, "closed \(closedAfter) s after the removal")
        #expect(try ben.get("/api/v1/conversations/\(c)/messages").status == 404)

        // Invitations: single use; opened with a new account, it joins.
        let invite = try ann.call("POST", "/api/v1/conversations/\(c)/invites", [:])
        #expect(invite.status == 201)
        let token = try #require(invite.json["token"] as? String)
        #expect(try HTTP.request(port: port, method: "GET", path: "/invite/\(token)").text.contains("Ann &amp; Ben"))
        let joined = try HTTP.request(
            port: port, method: "POST", path: "/api/v1/invites/\(token)/accept",
            body: Data(#"{"name":"dora","password":"dora-password","displayName":"Dora"}"#.utf8))
        #expect(joined.status == 200, "\(joined.text)")
        let dora = UserClient(
            port: port, cookie: joined.headers["set-cookie"].map { String($0.split(separator: ";")[0]) },
            csrf: (try? joined.json() as? [String: Any])?["csrf"] as? String)
        #expect(try dora.send(c, "hi, I'm Dora").status == 201)
        let again = try HTTP.request(
            port: port, method: "POST", path: "/api/v1/invites/\(token)/accept",
            body: Data(#"{"name":"eve","password":"eve-password"}"#.utf8))
        #expect(again.status == 404)
        #expect(try UserClient.signIn(port, "dora", "dora-password").call("GET", "/api/v1/conversations/\(c)").status == 200)
        #expect((try? UserClient.signIn(port, "eve", "eve-password")) == nil, "a used invitation made no account")
        // Read-only sharing: carl reads, cannot write.
        #expect(try ann.call("POST", "/api/v1/conversations/\(c)/members", ["name": "carl", "access": "read"]).status == 200)
        #expect(try carl.get("/api/v1/conversations/\(c)/messages").status == 200)
        #expect(try carl.send(c, "can I?").status == 403)
        #expect(!(try carl.get("/c/\(c)").text.contains("id=\"composer\"")), "one who reads gets no composer")

        // API tokens: shown once, work without CSRF, revoked → 401.
        let made2 = try ann.call("POST", "/api/v1/tokens", ["name": "backup script"])
        let apiToken = try #require(made2.json["token"] as? String)
        let tokenID = try #require(made2.json["id"] as? Int)
        let bot = UserClient(port: port, bearer: apiToken)
        #expect(try bot.send(c, "from the script").status == 201)
        let listedTokens = try ann.call("GET", "/api/v1/tokens").json["tokens"] as? [[String: Any]]
        #expect(listedTokens?.first?["name"] as? String == "backup script" && listedTokens?.first?["token"] == nil)
        #expect(try ann.call("DELETE", "/api/v1/tokens/\(tokenID)").status == 204)
        #expect(try bot.get("/api/v1/conversations").status == 401)

        // No raw secret is kept: sessions, tokens and invitations are stored as their SHA-256.
        let everything = try store.everything()
        #expect(!everything.isEmpty)
        for (what, raw) in [("session", secret), ("API token", apiToken), ("invitation", token)] {
            #expect(!everything.contains(raw), "the raw \(what) is in the database")
        }

        // Signing out ends the session; "everywhere" ends the others too.
        let annElsewhere = try UserClient.signIn(port, "ann", "ann-password")
        #expect(try ann.call("POST", "/api/v1/logout", [:]).status == 204)
        #expect(try ann.get("/api/v1/conversations").status == 401)
        #expect(try annElsewhere.get("/api/v1/conversations").status == 200)
        let annThird = try UserClient.signIn(port, "ann", "ann-password")
        #expect(try annThird.call("POST", "/api/v1/logout", ["everywhere": true]).status == 204)
        #expect(try annElsewhere.get("/api/v1/conversations").status == 401)
        // A disabled user cannot sign in (the same 401).
        #expect(try Tool.run(["users", "disable", "carl", "--db", store.db]).status == 0)
        #expect(try carl.get("/api/v1/conversations").status == 401)
        #expect((try? UserClient.signIn(port, "carl", "carl-password")) == nil)
    }

    @Test(
        "brute force: the 11th failed sign-in for a name from an address within a minute is 429, even with the right password; another name from that address is not locked out",
        arguments: AccountsStore.Backend.allCases)
    func bruteForce(backend: AccountsStore.Backend) throws {
        let store = try AccountsStore(backend)
        defer { store.stop() }
        try store.addUser("ann", "ann-password")
        let s = try store.serve()
        let login = { (name: String, password: String) in
            try HTTP.request(
                port: s.port, method: "POST", path: "/api/v1/login",
                body: try JSONSerialization.data(withJSONObject: ["name": name, "password": password])
            ).status
        }
        let statuses = try (0..<10).map { _ in try login("ann", "wrong-password") }
        #expect(statuses == Array(repeating: 401, count: 10))
        #expect(try login("ann", "wrong-password") == 429)
        #expect(try login("ann", "ann-password") == 429, "the right password waits too")
        // Nobody else is locked out by ann's failures: a wrong password for another name is
        // checked (401), not refused (429) — the address's own ceiling is ten times higher.
        #expect(try login("nobody", "whatever-password") == 401)
    }

    @Test("timing: an unknown name and a wrong password take the same time (medians of 50 each within 20 %)")
    func timing() throws {
        let store = try AccountsStore(.sqlite)
        defer { store.stop() }
        try store.addUser("ann", "ann-password")
        let s = try store.serve(["--sign-in-limit", "1000"])
        func time(_ name: String) throws -> Double {
            let started = Date()
            let status = try HTTP.request(
                port: s.port, method: "POST", path: "/api/v1/login",
                body: try JSONSerialization.data(withJSONObject: ["name": name, "password": "wrong-password"])
            ).status
            #expect(status == 401)
            return Date().timeIntervalSince(started)
        }
        var unknown: [Double] = [], wrong: [Double] = []
        for k in 0..<50 {
            unknown.append(try time("nobody-\(k)"))
            wrong.append(try time("ann"))
        }
        let median = { (v: [Double]) in v.sorted()[v.count / 2] }
        let (u, w) = (median(unknown), median(wrong))
        #expect(abs(u - w) / max(u, w) < 0.2, "unknown \(u * 1000) ms, wrong password \(w * 1000) ms")
    }

    @Test("two nodes on one PostgreSQL: a session made on node 1 works on node 2; signing out on node 2 ends it on node 1")
    func twoNodes() throws {
        let store = try AccountsStore(.postgres)
        defer { store.stop() }
        try store.addUser("ann", "ann-password")
        let one = try store.serve(), two = try store.serve()
        var ann = try UserClient.signIn(one.port, "ann", "ann-password")
        #expect(try ann.get("/api/v1/conversations").status == 200)
        var onTwo = ann
        onTwo = UserClient(port: two.port, cookie: ann.cookie, csrf: ann.csrf)
        #expect(try onTwo.get("/api/v1/conversations").status == 200)
        let made = try onTwo.call("POST", "/api/v1/conversations", ["title": "Notes", "participants": ["ann"]])
        #expect(made.status == 201, "the CSRF token of node 1's session holds on node 2")
        #expect(try onTwo.call("POST", "/api/v1/logout", [:]).status == 204)
        ann = UserClient(port: one.port, cookie: ann.cookie, csrf: ann.csrf)
        #expect(try ann.get("/api/v1/conversations").status == 401)
    }
}
