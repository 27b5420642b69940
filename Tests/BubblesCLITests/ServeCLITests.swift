import Foundation
import BubbleTestSupport
import Testing

/// `bubbles serve` started as a user starts it (a free port, a store of our own), asked over
/// HTTP, stopped with SIGINT — also when a check fails.
final class ServedStore {
    let process = Process()
    let port: Int
    let folder: URL
    private let output = Pipe()

    /// Imports `exports` into a new store and serves it with `arguments`.
    init(exports: [String], arguments: [String] = []) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("bk-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let db = folder.appendingPathComponent("s.sqlite").path
        if !exports.isEmpty {
            let imported = try Tool.run(["import"] + exports + ["--db", db, "--tz", "UTC"])
            guard imported.status == 0 else { throw BrowserlessError("import failed: \(imported.stderr)") }
        }
        process.executableURL = URL(fileURLWithPath: Tool.binary)
        process.arguments = ["serve", "--db", db, "--port", "0"] + arguments
        var env = ProcessInfo.processInfo.environment
        env["FONTCONFIG_FILE"] = Tool.root.appendingPathComponent("Sources/BubbleText/Fonts/fonts.conf").path
        process.environment = env
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line names the URL (and the port the system chose).
        var seen = Data()
        let deadline = Date().addingTimeInterval(30)
        var found: Int?
        while found == nil, Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += chunk
            if let m = String(decoding: seen, as: UTF8.self).firstMatch(of: #/http://[^:]+:(\d+)//#) { found = Int(m.1) }
        }
        guard let found else {
            process.terminate()
            throw BrowserlessError("bubbles serve printed no URL: \(String(decoding: seen, as: UTF8.self))")
        }
        port = found
    }

    deinit { stop() }

    /// SIGINT, as Ctrl-C; the status it ended with.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGINT)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { process.terminate(); process.waitUntilExit() }
        }
        try? FileManager.default.removeItem(at: folder)
        return process.terminationStatus
    }

    func get(_ path: String, headers: [String: String] = [:]) throws -> HTTP.Reply {
        try HTTP.request(port: port, method: "GET", path: path, headers: headers)
    }
}

@Suite("bubbles serve: the JSON API and the pages", .serialized)
struct ServeCLITests {
    static let telegram = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures/telegram-single/result.json").path

    @Test("API: conversations, windows by sequence number and date, days, search; every response with its security headers")
    func api() throws {
        let server = try ServedStore(exports: [Self.telegram])
        defer { server.stop() }
        let health = try server.get("/healthz")
        #expect(health.status == 200 && health.text == #"{"status":"ok"}"#)
        #expect(health.headers["content-security-policy"]?.contains("default-src 'none'; script-src 'self'") == true)
        #expect(health.headers["x-content-type-options"] == "nosniff" && health.headers["referrer-policy"] == "no-referrer")
        let list = try #require(try server.get("/api/v1/conversations").json() as? [[String: Any]])
        #expect(list.count == 1 && list[0]["id"] as? Int == 1 && list[0]["title"] as? String == "Mira Chen")
        #expect(list[0]["messageCount"] as? Int == 7 && list[0]["first"] as? String == "2021-03-05T13:22:11Z")
        func seqs(_ query: String) throws -> [Int] {
            let o = try #require(try server.get("/api/v1/conversations/1/messages?" + query).json() as? [String: Any])
            return (o["messages"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
        }
        #expect(try seqs("after=0&limit=3") == [1, 2, 3])
        #expect(try seqs("before=3") == [1, 2])
        #expect(try seqs("at=5&limit=4") == [3, 4, 5, 6])
        #expect(try seqs("limit=2") == [6, 7])
        #expect(try seqs("date=2021-03-05T13:24:00Z&limit=2") == [3, 4])
        let first = try #require((try server.get("/api/v1/conversations/1/messages?after=0&limit=1").json() as? [String: Any])?["messages"] as? [[String: Any]])
        #expect(first[0]["text"] as? String == "Did you see the eclipse photos?" && first[0]["side"] as? String == "incoming")
        #expect(first[0]["senderName"] as? String == "Mira Chen")
        let days = try #require(try server.get("/api/v1/conversations/1/days").json() as? [String: Any])
        #expect((days["days"] as? [[String: Any]])?.first?["count"] as? Int == 7)
        // The viewer's rows: numbered by sequence number, in context.
        let rows = try #require(try server.get("/c/1/rows?after=3&limit=2").json() as? [String: Any])
        #expect(rows["first"] as? Int == 4 && rows["last"] as? Int == 5)
        let html = rows["html"] as? String ?? ""
        #expect(html.contains("<b hidden data-n=\"4\"></b>") && html.contains("<b hidden data-n=\"5\"></b>") && !html.contains("data-n=\"6\""))
        #expect(try server.get("/c/1/rows?limit=2").status == 400)
        let script = try server.get("/assets/viewer.js")
        #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        let hits = try #require((try server.get("/api/v1/search?q=eclipse").json() as? [String: Any])?["hits"] as? [[String: Any]])
        #expect(Set(hits.compactMap { $0["seq"] as? Int }) == [1, 4])
        #expect(hits.allSatisfy { ($0["snippet"] as? String)?.contains("[eclipse]") == true })
    }

    @Test("bad requests: a JSON error naming what is wrong, a 4xx, nothing changed, and the server keeps serving", arguments: [
        ("/api/v1/conversations/1/messages?limit=-1", 400, "limit"),
        ("/api/v1/conversations/1/messages?limit=100000", 400, "limit"),
        ("/api/v1/conversations/1/messages?after=1&before=5", 400, "give one of"),
        ("/api/v1/conversations/1/messages?after=x", 400, "after"),
        ("/api/v1/conversations/1/messages?date=tomorrow", 400, "date"),
        ("/api/v1/conversations/99/messages", 404, "no conversation 99"),
        ("/api/v1/conversations/abc/days", 400, "conversation id"),
        ("/api/v1/conversations/1/days?tz=Mars/Olympus", 400, "tz"),
        ("/api/v1/search", 400, "q is missing"),
        ("/api/v1/search?q=-only", 400, "at least one word"),
        ("/api/v1/search?q=x&conversation=0", 400, "conversation"),
        ("/../../etc/passwd", 404, "no such page"),
        ("/api/v2/anything", 404, "no such page"),
    ])
    func badRequests(path: String, status: Int, words: String) throws {
        let server = try ServedStore(exports: [Self.telegram])
        defer { server.stop() }
        let r = try server.get(path)
        #expect(r.status == status, "\(path): \(r.text)")
        #expect(r.headers["content-type"]?.hasPrefix("application/json") == true)
        let error = try #require((try r.json() as? [String: Any])?["error"] as? String)
        #expect(error.contains(words), "\(path): \(error)")
        #expect(try server.get("/api/v1/conversations/1").status == 200)
        #expect((try server.get("/api/v1/conversations").json() as? [[String: Any]])?.first?["messageCount"] as? Int == 7)
    }

    @Test("pages: the library, a conversation in the theme's bubbles, search with the match marked; what they echo is escaped")
    func pages() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-serve-xss-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let hostile = dir.appendingPathComponent("hostile.json")
        try """
        {"format": "bubblekit-conversation", "version": 1, "title": "<script>window.pwned=1</script>",
         "participants": [{"id": "me", "name": "Me"}, {"id": "x", "name": "\\"><img src=x onerror=alert(1)>"}],
         "messages": [
          {"from": "x", "date": "2026-01-01T10:00:00Z", "text": "<img src=x onerror=alert(2)> javascript:alert(3) findme"},
          {"from": "me", "date": "2026-01-01T10:01:00Z", "text": "</main><script>alert(4)</script>"},
          {"from": "x", "date": "2026-01-01T10:02:00Z", "text": "[not a mark] then bracketword here"}
         ]}
        """.write(to: hostile, atomically: true, encoding: .utf8)
        let server = try ServedStore(exports: [Self.telegram, hostile.path])
        defer { server.stop() }
        let library = try server.get("/")
        #expect(library.status == 200 && library.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(library.text.contains("<a href=\"/c/1\">Mira Chen</a>"))
        #expect(library.text.contains("&lt;script&gt;window.pwned=1&lt;/script&gt;") && !library.text.contains("<script"))
        let page = try server.get("/c/1")
        #expect(page.text.contains("<div class=\"b i") && page.text.contains("Did you see the eclipse photos?"))
        #expect(page.text.contains("<link rel=\"stylesheet\" href=\"/assets/style.css\">"))
        let hostilePage = try server.get("/c/2")
        // The one script is the viewer's own, from this server.
        #expect(hostilePage.text.components(separatedBy: "<script").count == 2
                && hostilePage.text.contains("<script src=\"/assets/viewer.js\" defer></script>"))
        #expect(!hostilePage.text.contains("<img src=x"))
        #expect(hostilePage.text.contains("&lt;img src=x onerror=alert(2)&gt;") && !hostilePage.text.contains("href=\"javascript:"))
        let brackets = try server.get("/search?q=bracketword")
        #expect(brackets.text.contains("[not a mark] then <mark>bracketword</mark> here"), "\(brackets.text)")
        let search = try server.get("/search?q=findme")
        #expect(search.text.contains("<mark>findme</mark>") && !search.text.contains("<img src=x"))
        #expect(search.text.contains("<a href=\"/c/2?at=1&amp;hl=findme\">"))
        let css = try server.get("/assets/style.css")
        #expect(css.status == 200 && css.headers["content-type"]?.hasPrefix("text/css") == true && css.text.contains("@font-face"))
    }

    @Test("a token: every request without it is refused; Ctrl-C stops the server cleanly")
    func tokenAndStop() throws {
        let token = "0123456789abcdef0123"
        let server = try ServedStore(exports: [Self.telegram], arguments: ["--token", token])
        #expect(try server.get("/api/v1/conversations").status == 401)
        #expect(try server.get("/api/v1/conversations?token=wrong-wrong-wrong-wr").status == 401)
        #expect(try server.get("/api/v1/conversations?token=\(token)").status == 200)
        #expect(try server.get("/healthz", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        #expect(server.stop() == 0)
    }
}
