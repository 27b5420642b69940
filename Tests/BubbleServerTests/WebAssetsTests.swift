import BubbleTestSupport
import Foundation
import Hummingbird
import Testing
@testable import BubbleServer

/// The web app's files as static assets (issue 62): hashed names that follow the content (and
/// the content of what a module imports), a year's immutable caching, ETag and 304, gzip.
@Suite("web assets: hashed, cached, compressed")
struct WebAssetsTests {
    static func files(_ leaf: String = "export const x = 1;\n") -> [String: [UInt8]] {
        [
            "app.js": Array("import { y } from \"./mid.js\";\nimport \"./side.js\";\ny();\n".utf8),
            "mid.js": Array("import {\n  x,\n} from \"./leaf.js\";\nexport const y = () => x;\n".utf8),
            "leaf.js": Array(leaf.utf8),
            "side.js": Array("export {};\n".utf8),
            "app.css": Array("body{margin:0}\n".utf8)
        ]
    }

    static func gunzip(_ data: Data) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/gzip")
        p.arguments = ["-dc"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        try p.run()
        input.fileHandleForWriting.write(data)
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw TestFailure("gzip -dc exited \(p.terminationStatus)") }
        return out
    }

    @Test(
        "names carry a hash of the bytes; imports (one or several lines) point at the hashed names; a change in a module renames it and every module that imports it, nothing else"
    )
    func hashing() throws {
        let a = try WebAssets(files: Self.files())
        for name in ["app.js", "mid.js", "leaf.js", "side.js", "app.css"] {
            let url = a.url(name)
            let stem = String(name.split(separator: ".")[0]), ext = String(name.split(separator: ".")[1])
            #expect(url.wholeMatch(of: try Regex("/assets/\(stem)\\.[0-9a-f]{16}\\.\(ext)")) != nil, "\(name) → \(url)")
        }
        let app = try #require(a.byName[String(a.url("app.js").dropFirst(8))])
        let text = String(buffer: app.plain)
        #expect(text.contains("from \"./\(a.url("mid.js").dropFirst(8))\"") && text.contains("import \"./\(a.url("side.js").dropFirst(8))\""), "\(text)")
        let mid = String(buffer: try #require(a.byName[String(a.url("mid.js").dropFirst(8))]).plain)
        #expect(mid.contains("} from \"./\(a.url("leaf.js").dropFirst(8))\""), "\(mid)")
        // Everything app.js loads, for modulepreload: each once.
        #expect(Set(a.imports["app.js"] ?? []) == Set(["mid.js", "leaf.js", "side.js"].map(a.url)) && a.imports["app.js"]?.count == 3)

        let b = try WebAssets(files: Self.files("export const x = 2;\n"))
        for name in ["leaf.js", "mid.js", "app.js"] { #expect(a.url(name) != b.url(name), "\(name) kept its URL after leaf.js changed") }
        for name in ["side.js", "app.css"] { #expect(a.url(name) == b.url(name), "\(name) changed URL though its bytes did not") }
        #expect(try WebAssets(files: Self.files()).urls == a.urls, "the same bytes give the same names")
    }

    @Test("a module that imports a file that is not there, or modules that import each other, stop the server at start-up with the names")
    func brokenImports() throws {
        var missing = Self.files()
        missing["mid.js"] = Array("import { x } from \"./gone.js\";\n".utf8)
        #expect(throws: WebAssets.LoadError.self) { try WebAssets(files: missing) }
        do { _ = try WebAssets(files: missing) } catch { #expect("\(error)".contains("mid.js imports ./gone.js")) }
        var cycle = Self.files()
        cycle["leaf.js"] = Array("import { y } from \"./mid.js\";\nexport const x = 1;\n".utf8)
        do { _ = try WebAssets(files: cycle); Issue.record("a cycle was accepted") } catch {
            #expect("\(error)".contains("mid.js → leaf.js → mid.js"), "\(error)")
        }
    }

    @Test("the bundled Web folder: every module's imports resolve, the pages' entry preloads every module, and no file is served under its plain name")
    func bundled() throws {
        let a = try WebAssets(folder: Pages.webFolder)
        let modules = try FileManager.default.contentsOfDirectory(atPath: Pages.webFolder.path).filter { $0.hasSuffix(".js") }
        #expect(modules.count >= 10 && modules.contains("app.js"))
        #expect(Set(a.imports["app.js"] ?? []) == Set(modules.filter { $0 != "app.js" }.map(a.url)), "app.js does not reach every module")
        for m in modules { #expect(a.response(m, headers: [:]) == nil, "\(m) served under its plain name") }
    }

    @Test(
        "over HTTP: a year's immutable cache, an ETag, 304 for If-None-Match (strong, weak, in a list, *), gzip when accepted (not with q=0), 404 for other names"
    )
    func served() async throws {
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        let page = try await server.request(.get, "/")
        let urls = page.text.matches(of: #/(?:href|src)="(/assets/[a-z-]+\.[0-9a-f]{16}\.(?:js|css))"/#).map { String($0.output.1) }
        #expect(urls.count >= 12, "\(urls)")
        #expect(urls.contains { $0.hasPrefix("/assets/app.") && $0.hasSuffix(".js") } && urls.contains { $0.hasPrefix("/assets/theme-") })
        for url in urls {
            let r = try await server.request(.get, url)
            #expect(r.status == 200 && r.header("Cache-Control") == "public, max-age=31536000, immutable", "\(url): \(r.status)")
            let etag = try #require(r.header("ETag"))
            #expect(r.header("Content-Type")?.hasPrefix(url.hasSuffix(".js") ? "text/javascript" : "text/css") == true)
            for tags in [etag, "W/" + etag, "\"other\", " + etag, "*"] {
                let again = try await server.request(.get, url, headers: ["If-None-Match": tags])
                #expect(again.status == 304 && again.body.isEmpty && again.header("ETag") == etag, "\(url) If-None-Match: \(tags) → \(again.status)")
            }
            let stale = try await server.request(.get, url, headers: ["If-None-Match": "\"app.0000000000000000.js\""])
            #expect(stale.status == 200 && stale.body == r.body)
            let zipped = try await server.request(.get, url, headers: ["Accept-Encoding": "br, gzip;q=0.8"])
            if r.body.count > 1_000 {
                #expect(zipped.header("Content-Encoding") == "gzip" && zipped.body.count < r.body.count, "\(url)")
                #expect(try Self.gunzip(zipped.body) == r.body, "\(url): gzip does not give the bytes back")
            }
            #expect(zipped.header("Vary") == "Accept-Encoding")
            let refused = try await server.request(.get, url, headers: ["Accept-Encoding": "gzip;q=0, identity"])
            #expect(refused.header("Content-Encoding") == nil && refused.body == r.body)
        }
        for bad in [
            "/assets/app.js", "/assets/viewer.js", "/assets/style.css", "/assets/app.0000000000000000.js", "/assets/..%2Fapp.js",
            "/assets/%00", "/assets/APP.js", "/assets/app.%E2%80%AE.js", "/assets/app.\(String(repeating: "a", count: 5_000)).js"
        ] {
            let r = try await server.request(.get, bad)
            #expect(r.status == 404 && r.json["error"] is String, "\(bad.prefix(60)) → \(r.status)")
        }
        #expect(try await server.request(.get, "/healthz").status == 200, "the server keeps serving")
    }

    @Test("pages escape by default: hostile titles, names, messages and search words come out as text on every page, with the one script of this server")
    func escapedPages() async throws {
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        let evil = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>&amp;"
        let made = try await server.request(.post, "/api/v1/conversations", body: InProcessServer.json(["title": evil, "participants": [evil, "ann"]]))
        let id = try #require(made.json["id"] as? Int, "\(made.status) \(made.text)")
        let sent = try await server.request(
            .post, "/api/v1/conversations/\(id)/messages",
            body: InProcessServer.json(["clientId": UUID().uuidString, "sender": "ann", "text": evil + " findme"]))
        #expect(sent.status == 201, "\(sent.text)")
        let q = evil.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        for path in [
            "/", "/c/\(id)", "/c/\(id)?theme=whatsapp&hl=\(q)&date=\(q)", "/c/\(id)/stats?tz=UTC", "/c/\(id)/gallery", "/people", "/search?q=findme",
            "/search?q=\(q)",
            "/login?next=\(q)", "/invite/\(q)"
        ] {
            let r = try await server.request(.get, path)
            #expect(r.status == 200 || r.status == 400, "\(path): \(r.status)")
            guard r.status == 200 else { continue }
            let scripts = r.text.components(separatedBy: "<script").dropFirst()
            #expect(scripts.allSatisfy { $0.hasPrefix(" type=\"module\" src=\"/assets/app.") }, "\(path): a script that is not the page's own")
            #expect(scripts.count == (path.hasPrefix("/invite/") ? 0 : 1), "\(path): \(scripts.count) scripts")
            #expect(!r.text.contains("<img src=x") && !r.text.contains("\"'><img") && !r.text.contains("<script>alert"), "\(path) echoes markup")
            #expect(!r.text.contains("&amp;amp;amp;"), "\(path) escapes twice")
        }
        let page = try await server.request(.get, "/c/\(id)")
        #expect(
            page.text.contains("<h1>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img src=x onerror=alert(2)&gt;&amp;amp;</h1>"),
            "the title is not shown as text")
    }

    @Test("HTML: strings interpolated are escaped (text and quoted attributes), numbers and HTML kept, literals are markup")
    func builder() {
        let name = "Ann \"<b>\" & 'co'", n: Int64 = 42
        let inner: HTML = "<i>\(name)</i>"
        let page: HTML = "<a title=\"\(name)\" data-n=\"\(n)\">\(inner)\(true)</a>"
        #expect(
            page.text == "<a title=\"Ann &quot;&lt;b&gt;&quot; &amp; &#39;co&#39;\" data-n=\"42\"><i>Ann &quot;&lt;b&gt;&quot; &amp; &#39;co&#39;</i>true</a>")
        #expect(([inner, "<br>", HTML(escaping: "<")] as [HTML]).joined(separator: " ").text == inner.text + " <br> &lt;")
        #expect(HTML(trusted: "<b>kept</b>").text == "<b>kept</b>")
        // Text that is not valid UTF-8 arrives as replacement characters and stays text.
        let bytes = String(decoding: [0x3C, 0xFF, 0x73, 0x63, 0x72, 0x69, 0x70, 0x74, 0x3E] as [UInt8], as: UTF8.self)
        #expect(HTML("<p>\(bytes)</p>").text == "<p>&lt;\u{FFFD}script&gt;</p>")
    }
}
