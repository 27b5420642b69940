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
            // Group chats whose owner the export does not name are kept as read.
            let imported = try Tool.run(["import"] + exports + ["--db", db, "--tz", "UTC", "--all-incoming"])
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
        // The viewer's windows: the layout engine's geometry, rows numbered by sequence number.
        let view = try #require(try server.get("/c/1/view?width=400&at=4&wait=1").json() as? [String: Any])
        let tops = try #require(view["tops"] as? [Double])
        #expect(view["count"] as? Int == 7 && view["target"] as? Int == 4 && view["first"] as? Int == 1 && view["last"] as? Int == 7)
        #expect(tops.count == 7 && zip(tops, tops.dropFirst()).allSatisfy { $0 < $1 } && (view["bottom"] as? Double ?? 0) == (view["height"] as? Double ?? -1))
        let html = view["html"] as? String ?? ""
        #expect((1...7).allSatisfy { html.contains("<b hidden data-n=\"\($0)\"></b>") })
        // A band of the layout: the messages whose rows meet it.
        let band = try #require(try server.get("/c/1/view?width=400&y=\(Int(tops[3]) + 1)&h=1").json() as? [String: Any])
        #expect(band["first"] as? Int == 4 && band["last"] as? Int == 4, "\(band)")
        let wider = try #require(try server.get("/c/1/view?width=700&at=4").json() as? [String: Any])
        #expect((wider["height"] as? Double ?? 0) < (view["height"] as? Double ?? 0), "a wider column is shorter")
        let scriptURL = try #require(
            try server.get("/c/1").text.firstMatch(of: #/<script type="module" src="(/assets/app\.[0-9a-f]{16}\.js)"></script>/#).map { String($0.output.1) })
        let script = try server.get(scriptURL)
        #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        let hits = try #require((try server.get("/api/v1/search?q=eclipse").json() as? [String: Any])?["hits"] as? [[String: Any]])
        #expect(Set(hits.compactMap { $0["seq"] as? Int }) == [1, 4])
        #expect(hits.allSatisfy { ($0["snippet"] as? String)?.contains("[eclipse]") == true })
    }

    @Test(
        "bad requests: a JSON error naming what is wrong, a 4xx, nothing changed, and the server keeps serving",
        arguments: [
            ("/api/v1/conversations/1/messages?limit=-1", 400, "limit"),
            ("/api/v1/conversations/1/messages?limit=100000", 400, "limit"),
            ("/api/v1/conversations/1/messages?after=1&before=5", 400, "give one of"),
            ("/api/v1/conversations/1/messages?after=x", 400, "after"),
            ("/api/v1/conversations/1/messages?date=tomorrow", 400, "date"),
            ("/api/v1/conversations/99/messages", 404, "no conversation 99"),
            ("/api/v1/conversations/abc/days", 404, "no conversation \"abc\"; expected its number"),
            ("/api/v1/conversations/+1/days", 404, "no conversation \"+1\""),
            ("/api/v1/conversations/1/days?tz=Mars/Olympus", 400, "tz"),
            ("/api/v1/search", 400, "q is missing"),
            ("/api/v1/search?q=-only", 400, "at least one word"),
            ("/api/v1/search?q=x&conversation=0", 400, "conversation"),
            ("/../../etc/passwd", 404, "no such page"),
            ("/api/v2/anything", 404, "no such page"),
            ("/c/1/view", 400, "width"),
            ("/c/1/view?width=400&y=-5", 400, "y"),
            ("/c/1/view?width=400&y=10&h=99999999", 400, "h"),
            ("/c/1/view?width=400&at=1&date=2021-03-05", 400, "give one of"),
            ("/c/1/view?width=400&theme=nope", 400, "theme"),
            ("/c/9/view?width=400", 404, "no conversation 9"),
            ("/api/v1/attachments/..%2F..%2Fs.sqlite", 400, "attachment id"),
            ("/api/v1/attachments/" + String(repeating: "a", count: 64) + ".jpg", 404, "no attachment"),
            ("/api/v1/conversations/1/export?format=exe", 400, "format"),
            ("/api/v1/conversations/1/export?format=pdf&since=soon", 400, "since"),
            ("/api/v1/conversations/5/export?format=pdf", 404, "no conversation 5")
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
        #expect(library.text.contains("<a class=\"chat\" href=\"/c/1\" data-id=\"1\">") && library.text.contains("<span class=\"t\">Mira Chen</span>"))
        #expect(library.text.contains("&lt;script&gt;window.pwned=1&lt;/script&gt;"))
        let theScript = #/<script type="module" src="/assets/app\.[0-9a-f]{16}\.js"></script>/#
        #expect(library.text.components(separatedBy: "<script").count == 2 && library.text.contains(theScript))
        let page = try server.get("/c/1")
        #expect(page.text.contains("<div class=\"b i") && page.text.contains("Did you see the eclipse photos?"))
        let sheetURL = try #require(
            page.text.firstMatch(of: #/<link rel="stylesheet" href="(/assets/theme-imessage\.[0-9a-f]{16}\.css)">/#).map { String($0.output.1) })
        let hostilePage = try server.get("/c/2")
        // The one script is the viewer's own, from this server.
        #expect(
            hostilePage.text.components(separatedBy: "<script").count == 2
                && hostilePage.text.contains(theScript))
        #expect(!hostilePage.text.contains("<img src=x"))
        #expect(hostilePage.text.contains("&lt;img src=x onerror=alert(2)&gt;") && !hostilePage.text.contains("href=\"javascript:"))
        let brackets = try server.get("/search?q=bracketword")
        #expect(brackets.text.contains("[not a mark] then <mark>bracketword</mark> here"), "\(brackets.text)")
        let search = try server.get("/search?q=findme")
        #expect(search.text.contains("<mark>findme</mark>") && !search.text.contains("<img src=x"))
        #expect(search.text.contains("<a class=\"rhit\" href=\"/c/2?at=1&amp;q=findme&amp;hl=findme\">"))
        let css = try server.get(sheetURL)
        #expect(css.status == 200 && css.headers["content-type"]?.hasPrefix("text/css") == true && css.text.contains("@font-face"))
        // Fonts by URL: the style sheet that blocks the first paint stays small; each font is served.
        #expect(css.body.count < 200_000, "\(css.body.count) bytes of CSS")
        let fontURL = try #require(css.text.firstMatch(of: #/url\((/assets/fonts/[A-Za-z0-9._-]+)\)/#).map { String($0.output.1) })
        let font = try server.get(fontURL)
        #expect(font.status == 200 && font.headers["content-type"]?.hasPrefix("font/") == true && font.body.count > 10_000)
        #expect(try server.get("/assets/fonts/x-DejaVuSans.ttf").status == 404)
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

    @Test(
        "uploads: an export is imported through `bubbles import`'s code; not an export, no file field, not multipart, over the limit: a 4xx naming why, the store unchanged"
    )
    func uploads() throws {
        let server = try ServedStore(exports: [Self.telegram], arguments: ["--max-upload", "1"])
        defer { server.stop() }
        func form(_ name: String, _ field: String, _ content: Data) -> (Data, String) {
            let boundary = "bk\(UUID().uuidString)"
            var body = Data(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(name)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                    .utf8)
            body += content + Data("\r\n--\(boundary)--\r\n".utf8)
            return (body, "multipart/form-data; boundary=\(boundary)")
        }
        func post(_ body: Data, _ type: String) throws -> HTTP.Reply {
            try HTTP.request(port: server.port, method: "POST", path: "/api/v1/imports", body: body, contentType: type)
        }
        func count() throws -> Int { (try server.get("/api/v1/conversations").json() as? [Any])?.count ?? -1 }
        let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")
        let bad: [(Data, String, Int, String)] = [
            {
                let (b, t) = form("notes.txt", "file", try! Data(contentsOf: fixtures.appendingPathComponent("not-a-chat.txt")));
                return (b, t, 422, "notes.txt: line 1")
            }(),
            {
                let (b, t) = form("x.txt", "other", Data("hello".utf8)); return (b, t, 400, "the form has no field")
            }(),
            (Data("file=x".utf8), "application/x-www-form-urlencoded", 400, "multipart/form-data"),
            {
                let (b, t) = form("big.txt", "file", Data(count: (1 << 20) + 10)); return (b, t, 413, "at most")
            }()
        ]
        for (body, type, status, words) in bad {
            let r = try post(body, type)
            #expect(r.status == status && r.text.contains(words), "\(status) \(words): \(r.status) \(r.text)")
            #expect(try count() == 1)
        }
        let (body, type) = form("WhatsApp Chat with Sam.txt", "file", try Data(contentsOf: fixtures.appendingPathComponent("whatsapp-ios-group.txt")))
        let r = try post(body, type)
        #expect(r.status == 201, "\(r.text)")
        let o = try #require(try r.json() as? [String: Any])
        #expect(o["id"] as? Int == 2 && (o["added"] as? Int ?? 0) > 3 && o["new"] as? Bool == true)
        // The same export again adds nothing (the store's identities, as `bubbles import`).
        let again = try #require(try post(body, type).json() as? [String: Any])
        #expect(again["id"] as? Int == 2 && again["added"] as? Int == 0)
        #expect(try server.get("/healthz").status == 200)
    }

    @Test("attachments by id with their type, inline or as a download, byte ranges; exports of the conversation or a date range as downloads")
    func attachmentsAndExports() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-serve-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")
        for name in ["_chat.txt", "00000012-PHOTO-2021-10-14-15-34-09.jpg"] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent("whatsapp-ios/" + name), to: dir.appendingPathComponent(name))
        }
        let server = try ServedStore(exports: [dir.path])
        defer { server.stop() }
        let messages = try #require(
            (try server.get("/api/v1/conversations/1/messages?after=0&limit=50").json() as? [String: Any])?["messages"] as? [[String: Any]])
        let photo = try #require(messages.flatMap { ($0["attachments"] as? [[String: Any]]) ?? [] }.first { $0["url"] != nil })
        let url = try #require(photo["url"] as? String)
        let original = try Data(contentsOf: dir.appendingPathComponent("00000012-PHOTO-2021-10-14-15-34-09.jpg"))
        let whole = try server.get(url)
        #expect(whole.status == 200 && whole.body == original && whole.headers["content-type"] == "image/jpeg")
        #expect(whole.headers["content-disposition"] == "inline" && whole.headers["accept-ranges"] == "bytes")
        let part = try server.get(url, headers: ["Range": "bytes=2-9"])
        #expect(part.status == 206 && part.body == original[2...9] && part.headers["content-range"] == "bytes 2-9/\(original.count)")
        let tail = try server.get(url, headers: ["Range": "bytes=-4"])
        #expect(tail.status == 206 && tail.body == original.suffix(4))
        #expect(try server.get(url, headers: ["Range": "bytes=\(original.count)-"]).status == 416)
        #expect(try server.get(url + "?download=1").headers["content-disposition"]?.hasPrefix("attachment") == true)
        // Exports: what the renderers write, as a download named after the conversation.
        let pdf = try server.get("/api/v1/conversations/1/export?format=pdf")
        #expect(pdf.status == 200 && pdf.body.starts(with: Data("%PDF".utf8)) && pdf.headers["content-type"] == "application/pdf")
        #expect(pdf.headers["content-disposition"]?.hasPrefix("attachment; filename=") == true)
        // CSV with a photo: the table and the photo beside it, in one .zip; no path of the server's.
        let csv = try server.get("/api/v1/conversations/1/export?format=csv")
        #expect(csv.status == 200 && csv.headers["content-type"] == "application/zip" && csv.body.starts(with: Data("PK".utf8)))
        #expect(!csv.text.contains(server.folder.path) && !csv.text.contains("bk-serve-"))
        let day = try server.get("/api/v1/conversations/1/export?format=json&since=2021-10-15")
        let kept = try #require((try day.json() as? [String: Any])?["messages"] as? [[String: Any]])
        #expect(day.status == 200 && kept.count == 1 && kept.first?["text"] as? String == "Coffee later?", "\(day.text)")
        let all = try server.get("/api/v1/conversations/1/export?format=json")
        #expect((try all.json() as? [String: Any])?["messages"].map { ($0 as? [Any])?.count } == messages.count)
        #expect(!all.text.contains(server.folder.path) && !all.text.contains("bk-serve-") && all.text.contains("data:image/jpeg;base64,"))
        let png = try server.get("/api/v1/conversations/1/export?format=png")
        #expect(png.status == 200 && png.body.starts(with: Data([0x89, 0x50, 0x4E, 0x47])))
        let html = try server.get("/api/v1/conversations/1/export?format=html")
        #expect(html.status == 200 && html.text.hasPrefix("<!DOCTYPE html>"))
    }
}
