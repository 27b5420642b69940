import BubbleCore
@testable import BubbleHTML
import BubbleMedia
@testable import BubbleRender
import BubbleTestSupport
@testable import BubbleText
import Foundation
import Testing

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

private func escapedText(_ s: String, links: Bool = true) -> String {
    var b = HTMLBuffer()
    var faces: UInt32 = 0
    b.appendText(s, links: links, coverage: .empty, faces: &faces)
    return String(decoding: b.bytes, as: UTF8.self)
}

private func chat(_ count: Int, spacing: Double = 60, image: ImageAttachment? = nil) -> Conversation {
    var messages: [Message] = []
    for i in 0..<count {
        let outgoing = i % 3 == 0
        let date = t0.addingTimeInterval(Double(i) * spacing)
        messages.append(
            Message(
                sender: outgoing ? "me" : "ana", direction: outgoing ? .outgoing : .incoming,
                date: date, text: "message \(i)", image: i == 1 ? image : nil))
    }
    return Conversation(
        title: "Test", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")],
        messages: messages)
}

private func exporter(_ theme: String = "imessage", photos: String = "/", _ configure: (inout HTMLOptions) -> Void = { _ in }) throws -> HTMLExporter {
    TestFonts.pin()
    let (t, folder) = try ThemeLibrary.load(theme)
    var options = HTMLOptions()
    options.timeZone = utc
    configure(&options)
    return HTMLExporter(theme: t, themeFolder: folder, photosFolder: photos, options: options, pictures: PhotoDecoder())
}

private func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

/// Everything in `dir`, recursively, hidden files included.
private func listing(_ dir: URL) -> [String] {
    (FileManager.default.enumerator(atPath: dir.path)?.allObjects as? [String] ?? []).sorted()
}

@Suite("HTML export: the text of the pages")
struct HTMLExportTests {
    @Test(
        "message text is escaped and sanitised like Pango's input",
        arguments: [
            ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
            ("a & b \"q\" 'x'", "a &amp; b \"q\" 'x'"),
            ("&lt;b&gt; &#60; &amp", "&amp;lt;b&amp;gt; &amp;#60; &amp;amp"),
            ("one\r\ntwo\rthree\u{85}four\u{2028}five", "one\ntwo\nthree\nfour\nfive"),
            ("bell\u{07}nul\u{0}del\u{7F}c1\u{9B}tab\tok", "bellnuldelc1tab\tok"),
            ("\u{202E}gpj.exe", "\u{202E}gpj.exe")
        ])
    func escaping(input: String, expected: String) {
        #expect(escapedText(input) == expected)
    }

    @Test("only http(s) URLs become links, always with rel=\"noopener noreferrer\"")
    func links() {
        #expect(
            escapedText("see https://a.example/p?x=1&y=2.")
                == "see <a href=\"https://a.example/p?x=1&amp;y=2\" rel=\"noopener noreferrer\">https://a.example/p?x=1&amp;y=2</a>.")
        #expect(escapedText("(http://b.example/w_(x))") == "(<a href=\"http://b.example/w_(x)\" rel=\"noopener noreferrer\">http://b.example/w_(x)</a>)")
        #expect(escapedText("javascript:alert(1) data:text/html,x vbscript:x") == "javascript:alert(1) data:text/html,x vbscript:x")
        #expect(escapedText("xhttps://a.example nohttp://") == "xhttps://a.example nohttp://")
        // A quote ends the URL: it can never close the attribute.
        #expect(
            escapedText("https://a.example/\"onmouseover=\"x")
                == "<a href=\"https://a.example/\" rel=\"noopener noreferrer\">https://a.example/</a>\"onmouseover=\"x")
        #expect(escapedText("https://a.example", links: false) == "https://a.example")
    }

    @Test("attributes escape quotes; URL paths are percent-encoded")
    func attributes() {
        var b = HTMLBuffer()
        b.appendAttribute("A \"B\" <C> & 'D'\n")
        #expect(String(decoding: b.bytes, as: UTF8.self) == "A &quot;B&quot; &lt;C&gt; &amp; &#39;D&#39; ")
        var u = HTMLBuffer()
        u.appendURLPath("my chat #1/\"x\"<y>é.html")
        #expect(String(decoding: u.bytes, as: UTF8.self) == "my%20chat%20%231/%22x%22%3Cy%3E%C3%A9.html")
    }

    @Test("base64 matches Foundation's")
    func base64() {
        for n in [0, 1, 2, 3, 4, 5, 100, 1001] {
            let data = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            var b = HTMLBuffer()
            b.appendBase64(data)
            #expect(String(decoding: b.bytes, as: UTF8.self) == Data(data).base64EncodedString())
        }
    }

    @Test("day separators and times are ConversationLayouter's, in several zones")
    func clock() {
        for zoneName in ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"] {
            let zone = TimeZone(identifier: zoneName)!
            var clock = HTMLClock(zone: zone)
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = zone
            f.dateFormat = "EEEE, d MMMM yyyy|HH:mm"
            var rng = SplitMix64(seed: 7)
            var t = -400_000_000.0
            for _ in 0..<4000 {
                t += Double(rng.next() % 200_000)
                let date = Date(timeIntervalSince1970: t)
                let local = clock.local(date)
                let mine = HTMLClock.dayLabel(local.day) + "|" + String(format: "%02d:%02d", local.hour, local.minute)
                #expect(mine == f.string(from: date), "\(zoneName) \(date)")
                if mine != f.string(from: date) { return }
            }
        }
    }

    @Test("tails, groups and day separators follow ConversationLayouter")
    func grouping() throws {
        let conversation = SyntheticConversation.make(count: 3000, seed: 11)
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("g.html").path
        try exporter("sms", photos: dir.path) {
            $0.pageSize = .single; $0.assets = .reference
        }.export(conversation, to: path)
        let html = try read(path)
        let (theme, _) = try ThemeLibrary.load("sms")
        let layout = try ConversationLayouter(style: theme.layoutStyle, engine: MonospaceTextEngine(), timeZone: utc)
            .layout(conversation, width: 375)
        // Classes of the bubbles in order, and the rows' kinds in order.
        // Group chats get `<main class="c w">` (an avatar column); names and status lines are not rows.
        let body = String(html[html.range(of: "<main class=\"c")!.upperBound...])
        var rows: [String] = []
        for line in body.split(separator: "\n") where line.hasPrefix("<div class=\"") {
            let cls = line.dropFirst(12).prefix { $0 != "\"" }
            if cls == "n" || cls.hasPrefix("st") { continue }
            rows.append(String(cls))
        }
        var expected: [String] = []
        for row in layout.rows {
            switch row.content {
            case .daySeparator: expected.append("d")
            case .system: expected.append("s")
            case .message(_, let b):
                if b.labels.contains(where: { $0.kind == .time }) { expected.append("h") }
                expected.append("b \(b.direction == .incoming ? "i" : "o")\(b.hasTail ? " t" : "")")
            case .typing: expected.append("b i t")  // class "b i t ty"
            }
        }
        let mine = rows.map { r -> String in
            guard r.hasPrefix("b ") else { return r }
            return r.split(separator: " ").filter { ["b", "i", "o", "t"].contains($0) }.joined(separator: " ")
        }
        #expect(mine.count == expected.count)
        let firstDifference = zip(mine, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstDifference == nil, "row \(firstDifference?.offset ?? -1): \(firstDifference.map { "\($0.element)" } ?? "")")
    }

    @Test("a page: CSP meta, no script, every link noopener noreferrer, fonts embedded from Pango's files")
    func page() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("chat.html").path
        var conversation = chat(5)
        conversation.messages[2].text = "visit https://example.com and 今日は 😀 مرحبا"
        let files = try exporter().export(conversation, to: path)
        #expect(files == [path])
        let html = try read(path)
        #expect(
            html.contains(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data: 'self'; style-src 'unsafe-inline'; font-src data: 'self'; base-uri 'none'; form-action 'none'\">"
            ))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.lowercased().contains("javascript:"))
        #expect(!html.contains("script-src"))
        let anchors = html.components(separatedBy: "<a ").dropFirst()
        #expect(anchors.count == 1)
        #expect(anchors.allSatisfy { $0.prefix(while: { $0 != ">" }).contains("rel=\"noopener noreferrer\"") })
        // Liberation Sans, byte for byte, as the first face; the CJK and emoji fonts by local() name.
        let stack = HTMLFontStack.resolve(family: "BubbleKit Sans")
        let first = try #require(stack.regular.first)
        #expect(first.family == "Liberation Sans")
        let prefix = "@font-face{font-family:\"bk0\";font-weight:400;font-style:normal;src:url(data:font/ttf;base64,"
        let start = try #require(html.range(of: prefix))
        let b64 = html[start.upperBound...].prefix { $0 != ")" }
        #expect(Data(base64Encoded: String(b64)) == FileManager.default.contents(atPath: first.file))
        #expect(html.contains("local(\"Noto Sans CJK JP\")"))
        #expect(html.contains("local(\"Noto Color Emoji\")"))
        #expect(html.contains("<span class=\"f"))
    }

    @Test("dark palette under prefers-color-scheme when the theme has one")
    func dark() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (theme, dark, media, colour) in [
            ("imessage", nil as Bool?, true, "#262628"), ("whatsapp", nil, true, "#202c33"),
            ("classic", nil, false, "#f4f4f4"), ("imessage", true, false, "#262628"),
            ("imessage", false, false, "#e9e9eb")
        ] {
            let path = dir.appendingPathComponent("\(theme)-\(String(describing: dark)).html").path
            try exporter(theme) { $0.dark = dark }.export(chat(3), to: path)
            let html = try read(path)
            #expect(html.contains("@media (prefers-color-scheme:dark)") == media, "\(theme) dark=\(String(describing: dark))")
            #expect(html.contains(colour), "\(theme) dark=\(String(describing: dark))")
            if dark == true { #expect(!html.contains("--ib:#e9e9eb")) }
        }
    }

    @Test("pages of N messages: numbered files, an index, previous/next links")
    func pagination() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("chat.html").path
        let files = try exporter { $0.pageSize = .messages(10) }.export(chat(25), to: path)
        let names = files.map { ($0 as NSString).lastPathComponent }
        #expect(names == ["chat.html", "chat-001.html", "chat-002.html", "chat-003.html"])
        #expect(listing(dir) == ["chat-001.html", "chat-002.html", "chat-003.html", "chat.html"])
        let index = try read(path)
        for n in 1...3 { #expect(index.contains("<a href=\"chat-00\(n).html\" rel=\"noopener noreferrer\">")) }
        let p1 = try read(files[1]), p2 = try read(files[2]), p3 = try read(files[3])
        #expect(!p1.contains("rel=\"prev") && p1.contains("<a href=\"chat-002.html\" rel=\"next noopener noreferrer\">"))
        #expect(
            p2.contains("<a href=\"chat-001.html\" rel=\"prev noopener noreferrer\">")
                && p2.contains("<a href=\"chat-003.html\" rel=\"next noopener noreferrer\">"))
        #expect(p3.contains("<a href=\"chat-002.html\" rel=\"prev noopener noreferrer\">") && !p3.contains("rel=\"next"))
        for page in [p1, p2, p3] { #expect(page.contains("<a href=\"chat.html\" rel=\"noopener noreferrer\">Index</a>")) }
        // Every message once, in order, across the pages.
        let all = [p1, p2, p3].joined()
        for i in 0..<25 { #expect(all.components(separatedBy: ">message \(i)<").count == 2, "message \(i)") }
        #expect(p1.components(separatedBy: "<div class=\"b ").count - 1 == 10)
        #expect(p3.components(separatedBy: "<div class=\"b ").count - 1 == 5)
        // Each page starts with its day.
        for page in [p1, p2, p3] { #expect(page.contains("<main class=\"c\">\n<div class=\"d\">")) }
    }

    @Test("pages by month")
    func byMonth() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("m.html").path
        let files = try exporter { $0.pageSize = .byMonth }.export(chat(9, spacing: 86_400 * 12), to: path)
        // 14 Nov 2023 + 12-day steps: Nov (2), Dec (3), Jan (2), Feb (2).
        #expect(files.count == 5)
        let index = try read(path)
        for month in ["November 2023", "December 2023", "January 2024", "February 2024"] { #expect(index.contains(month)) }
    }

    @Test("one page when it fits: no index, no navigation")
    func single() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s.html").path
        #expect(try exporter { $0.pageSize = .messages(100) }.export(chat(30), to: path) == [path])
        #expect(!(try read(path)).contains("<nav>"))
        #expect(try exporter().export(Conversation(), to: path) == [path])
    }

    @Test("photos embedded as data URIs, sized like BubbleMeasurer, lazy unless printing")
    func embeddedPhotos() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let photo = BundledSamples.folder.appendingPathComponent("demo-photo.png").path  // 480×320
        let path = dir.appendingPathComponent("p.html").path
        try exporter().export(chat(3, image: ImageAttachment(path: photo, width: 0, height: 0)), to: path)
        let html = try read(path)
        #expect(html.contains("<img src=\"data:image/png;base64,iVBORw0KGgo"))
        #expect(html.contains("width=\"360\" height=\"240\" loading=\"lazy\""))
        try exporter { $0.lazyImages = false }.export(chat(3, image: ImageAttachment(path: photo, width: 0, height: 0)), to: path)
        #expect(!(try read(path)).contains("loading=\"lazy\""))
        #expect(listing(dir) == ["p.html"])
    }

    @Test("assets folder: photos and fonts copied into NAME_files with safe names, nothing outside")
    func assetsFolder() throws {
        let root = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("out"), photos = root.appendingPathComponent("photos/sub")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        // A real photo under a hostile name, reached through "..".
        let hostile = root.appendingPathComponent("photos/<img src=x onerror=alert(1)> ..&.png")
        try FileManager.default.copyItem(atPath: BundledSamples.folder.appendingPathComponent("demo-photo.png").path, toPath: hostile.path)
        let path = out.appendingPathComponent("my chat.html").path
        let files = try exporter(photos: photos.path) { $0.assets = .folder }
            .export(chat(3, image: ImageAttachment(path: "../<img src=x onerror=alert(1)> ..&.png", width: 0, height: 0)), to: path)
        #expect(files == [path, out.appendingPathComponent("my chat_files").path])
        let inside = listing(out)
        #expect(inside.contains("my chat_files/0001-_img_src_x_onerror_alert_1______.png"))
        #expect(inside.contains("my chat_files/fonts/LiberationSans-Regular.ttf"))
        #expect(inside.allSatisfy { $0 == "my chat.html" || $0.hasPrefix("my chat_files") })
        #expect(listing(root.appendingPathComponent("photos")) == ["<img src=x onerror=alert(1)> ..&.png", "sub"])
        let html = try read(path)
        #expect(html.contains("<img src=\"my%20chat_files/0001-_img_src_x_onerror_alert_1______.png\""))
        #expect(html.contains("url(my%20chat_files/fonts/LiberationSans-Regular.ttf) format(\"truetype\")"))
        #expect(!html.contains("onerror=alert"))
        #expect(!html.contains("base64,iVBORw0KGgo"))
    }

    @Test(
        "a photo that is not an image (../../etc/passwd) is never embedded: a labelled placeholder and a problem; strict: refused, nothing left behind",
        arguments: [
            HTMLOptions.Assets.embed, .folder
        ])
    func notAnImage(assets: HTMLOptions.Assets) throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let photos = dir.appendingPathComponent("a/b")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let levels = photos.path.split(separator: "/").count
        let passwd = String(repeating: "../", count: levels) + "etc/passwd"
        let path = dir.appendingPathComponent("chat.html").path
        var report = MediaReport()
        try exporter(photos: photos.path) {
            $0.assets = assets; $0.pageSize = .messages(2)
        }
        .export(chat(6, image: ImageAttachment(path: passwd, width: 100, height: 100)), to: path, media: &report)
        #expect(report.problems.map(\.file) == [photos.path + "/" + passwd])
        #expect(report.problems.first?.reason.contains("not an image") == true)
        #expect(report.summary == "1 of 1 attachment could not be read")
        let page = try read(dir.appendingPathComponent("chat-001.html").path)
        #expect(page.contains("Photo: passwd (could not be read)"))
        #expect(!page.contains("root:"), "the file's bytes are never embedded")
        for file in listing(dir) where file.hasSuffix(".html") || file.hasPrefix("chat_files") {
            try? FileManager.default.removeItem(at: dir.appendingPathComponent(file))
        }
        #expect {
            try exporter(photos: photos.path) {
                $0.assets = assets; $0.pageSize = .messages(2); $0.strictMedia = true
            }
            .export(chat(6, image: ImageAttachment(path: passwd, width: 100, height: 100)), to: path)
        } throws: { error in
            guard case RenderError.unreadableImage(let p, let reason)? = error as? RenderError else { return false }
            return p.hasSuffix("etc/passwd") && reason.contains("not an image") && reason.hasSuffix("(--strict)")
        }
        #expect(listing(dir) == ["a", "a/b"])
    }

    @Test("reference mode links relative paths and refuses ones that leave the folder")
    func reference() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("r.html").path
        try exporter { $0.assets = .reference }.export(chat(3, image: ImageAttachment(path: "media/IMG 1.jpg", width: 800, height: 600)), to: path)
        #expect(try read(path).contains("<img src=\"media/IMG%201.jpg\" alt=\"Photo\" width=\"320\" height=\"240\""))
        for bad in ["../secret.jpg", "/etc/passwd", "a/../../b.png", "javascript:alert(1)", "https://tracker.example/p.png", "~/x.png"] {
            #expect(throws: RenderError.self, "\(bad)") {
                try exporter { $0.assets = .reference }.export(chat(3, image: ImageAttachment(path: bad, width: 10, height: 10)), to: path)
            }
        }
    }

    @Test("bad output: one clear error, nothing written")
    func badOutput() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: RenderError.unwritable(path: dir.path + "/missing/x.html", reason: "folder \(dir.path)/missing does not exist")) {
            try exporter().export(chat(3), to: dir.path + "/missing/x.html")
        }
        #expect(throws: RenderError.self) { try exporter().export(chat(3), to: dir.path) }
        #expect(throws: LayoutError.self) { try exporter { $0.width = 40 }.export(chat(3), to: dir.path + "/n.html") }
        #expect(throws: LayoutError.self) { try exporter { $0.width = .nan }.export(chat(3), to: dir.path + "/n.html") }
        #expect(throws: LayoutError.self) { try exporter { $0.pageSize = .messages(0) }.export(chat(3), to: dir.path + "/n.html") }
        let photo = ImageAttachment(path: dir.path + "/no-such.png", width: 0, height: 0)
        #expect(throws: RenderError.unreadableImage(path: dir.path + "/no-such.png", reason: "no such file (--strict)")) {
            try exporter {
                $0.pageSize = .messages(1); $0.strictMedia = true
            }.export(chat(5, image: photo), to: dir.path + "/n.html")
        }
        #expect(listing(dir).isEmpty)
    }

    @Test("art themes: border-image from the theme's art at every resolution, mirrored in the pixels")
    func art() throws {
        let css = try exporter("classic").styleSheet()
        #expect(css.contains("--bk-i-image:image-set(url(data:image/png;base64,") && css.contains("border-image:var(--bk-i-image)"))
        #expect(css.contains(") 1x,url(data:image/png;base64,"))
        #expect(css.contains(") 3x) 13 17 16 24 fill / 13px 17px 16px 24px stretch"))  // incoming
        #expect(css.contains(") 3x) 13 24 16 17 fill / 13px 24px 16px 17px stretch"))  // outgoing, mirrored
        #expect(!css.contains("scaleX(-1)"))
        let vector = try exporter("imessage").styleSheet()
        #expect(vector.contains("--bk-i-tail-path:path(") && vector.contains("clip-path:var(--bk-i-tail-path)"))
        #expect(vector.contains("--bk-i-radius:17px") && vector.contains("--bk-i-image:none"))
        #expect(css.contains("--bk-i-tail-path:none") && !css.contains("path(\""), "art bubbles have no vector tail")
    }
}

@Suite("HTML export: paragraph direction")
struct HTMLDirectionTests {
    @Test(
        "the last paragraph's first strong character decides",
        arguments: [
            ("hello", false), ("مرحبا", true), ("123 שלום", true), ("مرحبا\nhello", false), ("hello\nمرحبا!", true),
            ("hello\u{2029}  שלום", true), ("😀 ok", false), ("", false), ("!!!", false), ("x\r\n«مرحبا»", true)
        ])
    func direction(text: String, rtl: Bool) {
        #expect(ParagraphDirection.lastParagraphIsRightToLeft(text) == rtl)
    }

    @Test(
        "theme.css: comments and line breaks dropped, @mirror sections swapped only when mirrored, the time-inside section only for its themes, every variable it uses written by the sheet"
    )
    func themeTemplate() throws {
        let template = """
            /* a comment */
            .a{left:1px;
              right:2px}
            /*@mirror*/
            .b{margin-left:auto;text-align:right}
            /*@if time-inside*/
            .z{float:right}
            /*@end*/
            /*@end*/
            .q{border-left:1px solid}
            """
        #expect(
            HTMLStyleSheet.rules(template, mirrored: false, timeInside: true)
                == ".a{left:1px;right:2px}.b{margin-left:auto;text-align:right}.z{float:right}.q{border-left:1px solid}")
        #expect(
            HTMLStyleSheet.rules(template, mirrored: true, timeInside: true)
                == ".a{left:1px;right:2px}.b{margin-right:auto;text-align:left}.z{float:left}.q{border-left:1px solid}")
        #expect(
            HTMLStyleSheet.rules(template, mirrored: true, timeInside: false)
                == ".a{left:1px;right:2px}.b{margin-right:auto;text-align:left}.q{border-left:1px solid}")
        let whatsapp = try exporter("whatsapp").styleSheet(), imessage = try exporter("imessage").styleSheet()
        #expect(whatsapp.contains(".z{float:right;width:var(--bk-t-w)") && !imessage.contains(".z{"))
        // Every var(--bk-…) the rules use is defined by the sheet itself, in every bundled theme.
        for name in ThemeLibrary.bundledNames {
            let css = try exporter(name).styleSheet()
            let used = Set(css.matches(of: #/var\(--bk-([a-z0-9-]+)/#).map { String($0.output.1) })
            let defined = Set(css.matches(of: #/--bk-([a-z0-9-]+):/#).map { String($0.output.1) })
            #expect(used.subtracting(defined).isEmpty, "\(name): \(used.subtracting(defined).sorted())")
            #expect(!css.contains("/*") && !css.contains("\n"), "\(name): comments or line breaks left")
        }
    }

    @Test(
        "every message carries its moment in a <time datetime> (UTC, to the second), in every theme: on the bubble where the theme puts times, else shown on hover and focus",
        arguments: ["imessage", "whatsapp", "sms", "classic"])
    func everyMessageHasItsTime(theme: String) throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("chat.html").path
        var conversation = chat(40, spacing: 3_607.5)
        conversation.messages[7] = Message(kind: .system, sender: nil, direction: .incoming, date: conversation.messages[7].date, text: "Ana joined")
        _ = try exporter(theme) { $0.timeZone = TimeZone(identifier: "Asia/Kolkata")! }.export(conversation, to: path)
        let html = try read(path)
        let stamps = html.matches(of: #/<time[^>]* datetime="([0-9T:Z-]+)"/#).map { String($0.output.1) }
        let iso = ISO8601DateFormatter()
        #expect(
            stamps == conversation.messages.map { iso.string(from: Date(timeIntervalSince1970: $0.date.timeIntervalSince1970.rounded(.down))) },
            "\(theme): \(stamps.prefix(3))")
        let css = try exporter(theme).styleSheet()
        // WhatsApp puts the time in the bubble: only the system line has one shown on hover.
        if theme == "whatsapp" {
            #expect(html.components(separatedBy: "class=\"tt\"").count == 2)
        } else {
            #expect(css.contains(".b:hover>time.tt,.b:focus>time.tt,.b:focus-within>time.tt{display:block}"))
        }
    }
}
