import BubbleTestSupport
import Foundation
import Testing

/// `bubbles render` on real-looking chat exports (the importer fixtures), end to end: the bubbles
/// that come out — side, sender, text — read back from the HTML output and from PDF text.
@Suite("bubbles render on chat exports", .serialized)
struct ImportCLITests {
    static let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")

    struct Bubble: Equatable, CustomStringConvertible {
        var outgoing: Bool
        var author: String
        var text: String
        var description: String { "\(outgoing ? "out" : "in ") \(author): \(text)" }
    }

    /// The bubbles of an HTML page in order. Each starts `<div class="b o|i [t] [g] [p]"`, with a
    /// `title` (the author) on the first bubble of a group (`g` marks the ones that follow).
    static func bubbles(_ html: String) -> [Bubble] {
        let start = #/<div class="b (i|o)([^"]*)"(?: title="([^"]*)")?>/#
        let marks = html.matches(of: start)
        var bubbles: [Bubble] = []
        for (k, m) in marks.enumerated() {
            // The bubble's markup runs to the next bubble, day or system line, or the page's end.
            let rest = html[m.range.upperBound..<(k + 1 < marks.count ? marks[k + 1].range.lowerBound : html.endIndex)]
            let end = rest.firstMatch(of: #/<div class="(d|s|n|st)[" ]|<blockquote|</main>|</body>/#)?.range.lowerBound ?? rest.endIndex
            // Text only: drop the time shown on hover (`tt`), the markup of times, links and
            // photos, decode the entities we escape.
            let text = String(rest[..<end]).replacing(#/<time class="tt"[^>]*>[^<]*</time>/#, with: "").replacing(#/<[^>]*>/#, with: "")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
                .replacingOccurrences(of: "&amp;", with: "&")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let author = m.3.map(String.init) ?? bubbles.last?.author ?? "?"
            bubbles.append(Bubble(outgoing: m.1 == "o", author: author, text: text))
        }
        return bubbles
    }

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-import-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("SMS backup: one chat picked with --chat; sides from `type`; the broken surrogate is a warning naming line and column")
    func sms() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("sms.html").path
        let r = try Tool.run([
            "render", Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path,
            "--chat", "Ann Lee", "-o", out, "--tz", "UTC"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("sms-backup.xml: line 10, column 106: character reference &#55357;"), "\(r.stderr)")
        #expect(r.stderr.contains("SMS Backup & Restore XML: read 7 messages"), "\(r.stderr)")
        let bubbles = Self.bubbles(try String(contentsOfFile: out, encoding: .utf8))
        #expect(bubbles.count == 7, "\(bubbles)")
        #expect(bubbles.first == Bubble(outgoing: false, author: "Ann Lee", text: "Are you still coming tonight?"))
        #expect(bubbles.dropFirst().first == Bubble(outgoing: true, author: "Me", text: "Yes! Running late 👌"))
        #expect(bubbles.contains(Bubble(outgoing: false, author: "Ann Lee", text: "Parking is \u{FFFD} full")))
        #expect(bubbles.contains(Bubble(outgoing: false, author: "Ann Lee", text: "No rush.\nWe saved you a seat & a drink")))
        #expect(bubbles.filter(\.outgoing).count == 3)
    }

    @Test("SMS backup with several chats and no --chat: one error listing them, nothing written")
    func smsAmbiguous() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["render", Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path, "-o", "out.pdf"], in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.contains("sms-backup.xml: holds 3 conversations; pick one with --chat"), "\(r.stderr)")
        #expect(r.stderr.contains("Ann Lee (+15550102000): 7 messages"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("WhatsApp export folder to PDF: --me decides the sides; the attached photo and the text are on the page")
    func whatsappPDF() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = Self.fixtures.appendingPathComponent("whatsapp-android-us").path
        let html = dir.appendingPathComponent("wa.html").path
        let r = try Tool.run(["render", input, "--me", "Ben Ode", "-o", html, "--tz", "UTC", "--theme", "whatsapp"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        let bubbles = Self.bubbles(page)
        #expect(bubbles.map(\.outgoing) == [false, true, false, true, false, true], "\(bubbles)")
        #expect(bubbles[1].text.hasPrefix("Thanks! Same to you\nand your family"), "\(bubbles[1])")
        #expect(page.contains("data:image/jpeg;base64,"), "the attached photo is embedded")
        #expect(page.contains("Messages and calls are end-to-end encrypted."), "system line kept")

        let pdf = dir.appendingPathComponent("wa.pdf").path
        let p = try Tool.run(["render", input, "--me", "Ben Ode", "-o", pdf, "--tz", "UTC"])
        #expect(p.status == 0, "\(p.stderr)")
        let text = try pdftotext(pdf)
        for expected in ["Merry Christmas Eve!", "The tree this year", "Did Santa come?", "He did", "Tuesday, 24 December 2019"] {
            #expect(text.contains(expected), "missing \(expected) in \(text)")
        }
    }

    @Test(
        "WhatsApp placeholders (media omitted, deleted, a video and a document named) are labelled bubbles in HTML, PDF, SVG and PNG; no link inside them; hour 00 with a.m. is midnight"
    )
    func whatsappPlaceholders() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let chat = dir.appendingPathComponent("chat.txt")
        try Data(
            """
            06/13/2020, 09:05 a.m. - Ann: Hi, did you get the photos?
            06/13/2020, 09:06 a.m. - Ben: <Media omitted>
            06/13/2020, 09:07 a.m. - Ann: VID-20211014-WA0003.mp4 (file attached)
            06/13/2020, 09:08 a.m. - Ben: This message was deleted
            06/13/2020, 09:09 a.m. - Ann: Trip plan.pdf (file attached)
            Plan for Saturday
            06/14/2020, 00:08 a.m. - Ben: late

            """.utf8
        ).write(to: chat)
        let html = dir.appendingPathComponent("p.html").path
        let r = try Tool.run(["render", chat.path, "--me", "Ben", "-o", html, "--tz", "UTC", "--theme", "whatsapp"])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        let bubbles = Self.bubbles(page).map { $0.text.replacing(#/\s*\d\d:\d\d$/#, with: "") }
        #expect(
            bubbles == [
                "Hi, did you get the photos?", "📎 Media omitted", "🎬 Video: VID-20211014-WA0003.mp4 (not in the export)",
                "🚫 This message was deleted", "📄 Document: Trip plan.pdf (not in the export)\nPlan for Saturday", "late"
            ], "\(bubbles)")
        #expect(!page.contains("href=\"tel:"), "the date inside a file name is no phone number")

        let pdf = dir.appendingPathComponent("p.pdf").path
        #expect(try Tool.run(["render", chat.path, "--me", "Ben", "-o", pdf, "--tz", "UTC"]).status == 0)
        let text = try pdftotext(pdf)
        for expected in ["Media omitted", "Video: VID-20211014-", "This message was deleted", "Document: Trip plan.pdf", "Sunday, 14 June 2020"] {
            #expect(text.contains(expected), "missing \(expected) in \(text)")
        }
        #expect(!text.contains("<Media omitted>"))

        // SVG and PNG draw the same bubbles: as many bubble shapes as messages, the same height as the PDF's page.
        let svg = dir.appendingPathComponent("p.svg").path
        #expect(try Tool.run(["render", chat.path, "--me", "Ben", "-o", svg, "--tz", "UTC"]).status == 0)
        let png = dir.appendingPathComponent("p.png")
        #expect(try Tool.run(["render", chat.path, "--me", "Ben", "-o", png.path, "--tz", "UTC"]).status == 0)
        let pixels = try PNGPixels(png)
        let svgText = try String(contentsOfFile: svg, encoding: .utf8)
        let svgHeight = try #require(svgText.firstMatch(of: #/height="([0-9.]+)(pt)?"/#).flatMap { Double($0.1) })
        #expect(abs(Double(pixels.height) / 2 - svgHeight) <= 1, "PNG at 2× and SVG are the same layout")
    }

    @Test(
        "every importer fixture rendered to PDF through `bubbles render`: pdftotext finds its messages",
        arguments: [
            (
                "sms/sms-backup.xml", ["--chat", "Ann Lee"],
                ["Are you still coming tonight?", "Yes! Running late", "We saved you a seat & a drink", "The view from here"]
            ),
            ("sms/sms-backup.xml", ["--chat", "Ann Lee, Ben Ode"], ["Ben Ode"]),
            ("whatsapp-android-us", ["--me", "Ben Ode"], ["Merry Christmas Eve!", "The tree this year", "He did"]),
            ("whatsapp-android-de.txt", ["--me", "Jonas"], ["Hallo! Wie geht's?", "Treffen wir uns am Samstag?", "3 August 2021"]),
            ("whatsapp-android-es.txt", ["--me", "Diego"], ["¿Vienes mañana?", "Ya estoy aquí", "28 March 2025"]),
            ("whatsapp-android-en-ca.txt", ["--me", "Marc"], ["Are we still on for dinner?", "Made it home, thanks!", "20 December 2023"]),
            ("whatsapp-ios", ["--me", "Kai"], ["Landed!", "How was the flight?", "Coffee later?"]),
            ("whatsapp-ios-group.txt", ["--me", "Sam Rivera"], ["Hi all", "Bus leaves at 8", "Sam Rivera created group"]),
            ("telegram-single/result.json", ["--me", "Leo Park"], ["Did you see the eclipse photos?", "Not yet, send them!"]),
            ("telegram-account/result.json", ["--chat", "Climbing crew"], ["Sunday at 10?", "Works for me"]),
            ("imessage/chat.db", ["--chat", "+15550102000", "--me", "Leo"], ["Hey, are you free Saturday?", "Yes — what's up?", "Sent as SMS", "Look at this"]),
            ("imessage/chat.db", ["--chat", "Weekend plans"], ["Count me in", "named the conversation"]),
            ("meta-facebook", ["--chat", "Hiking Club ⛰️"], ["Wanderung am Sonntag? Größe egal", "Zoë Martin added Kai Weber", "Missed call"]),
            ("meta-facebook-old", [], ["Schöne Grüße aus Köln", "Bis morgen!"]),
            ("meta-instagram", [], ["Sunset at the lake", "I reacted to your message, it was funny"]),
            ("meta-messenger-e2ee", [], ["Grüße"]),
            ("discord", ["--chat", "general"], ["Trail report: muddy", "Thanks!", "Kai joined the server", "Ann started a thread: Gear talk"]),
            ("native.json", [], [])
        ] as [(String, [String], [String])])
    func everyFixtureToPDF(fixture: String, arguments: [String], expected: [String]) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pdf = dir.appendingPathComponent("out.pdf").path
        let r = try Tool.run(["render", Self.fixtures.appendingPathComponent(fixture).path, "-o", pdf, "--tz", "UTC"] + arguments)
        #expect(r.status == 0, "\(r.stderr)")
        let text = try pdftotext(pdf).replacingOccurrences(of: "\n", with: " ")
        var wanted = expected
        if fixture == "native.json" {
            // The native fixture's own texts, read back from the file.
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixtures.appendingPathComponent(fixture))) as! [String: Any]
            wanted = (json["messages"] as! [[String: Any]]).compactMap { $0["text"] as? String }.filter { !$0.contains("\n") }
            #expect(!wanted.isEmpty)
        }
        for line in wanted {
            #expect(text.contains(line), "\(fixture): \(line) not in \(text)")
        }
    }

    @Test("--since/--until keep one day; what was left out is counted on stderr")
    func dateRange() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = dir.appendingPathComponent("day.html").path
        let r = try Tool.run([
            "render", Self.fixtures.appendingPathComponent("whatsapp-android-us").path, "--me", "Ben Ode",
            "--since", "2019-12-25", "--until", "2019-12-26", "--tz", "UTC", "-o", html
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.bubbles(try String(contentsOfFile: html, encoding: .utf8)).map(\.text) == ["Did Santa come?", "He did 😄"])
        #expect(r.stderr.contains("left out 5 messages outside --since/--until"), "\(r.stderr)")
    }

    @Test("Telegram JSON through standard input to HTML on standard output")
    func telegramPipe() throws {
        let json = try Data(contentsOf: Self.fixtures.appendingPathComponent("telegram-account/result.json"))
        let r = try Tool.run(["render", "-", "--chat", "Climbing crew", "-o", "-", "--format", "html", "--tz", "UTC"], stdin: json)
        #expect(r.status == 0, "\(r.stderr)")
        let page = String(decoding: r.stdout, as: UTF8.self)
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(
            Self.bubbles(page) == [
                Bubble(outgoing: false, author: "Ola Berg", text: "Sunday at 10?"),
                Bubble(outgoing: true, author: "Leo Park", text: "Works for me")
            ])
        #expect(page.contains("Leo Park created group «Climbing crew»"))
    }

    @Test("--assets folder copies the photo next to the page and links it by a relative path")
    func assetsFolder() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(
            [
                "render", Self.fixtures.appendingPathComponent("whatsapp-ios").path, "--me", "Sam Rivera",
                "-o", "chat.html", "--assets", "folder", "--tz", "UTC"
            ], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: dir.appendingPathComponent("chat.html").path, encoding: .utf8)
        let photos = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("chat_files").path).filter { $0.hasSuffix(".jpg") }
        #expect(photos.count == 1, "\(photos)")
        #expect(page.contains("src=\"chat_files/\(photos.first ?? "?")\""), "page links the copied photo")
        #expect(!page.contains("data:image/jpeg"))
    }

    @Test(
        "bad import arguments and inputs: one clear error each, non-zero exit, nothing written",
        arguments: [
            (
                ["--input-format", "xml"],
                "The value 'xml' is invalid for '--input-format <input-format>'. Please provide one of the following:\n  - native\n  - sms"
            ),
            (["--since", "2024-13-01"], "--since '2024-13-01' is not a valid date or time"),
            (["--since", "yesterday"], "--since 'yesterday' is not a date; expected YYYY-MM-DD"),
            (["--since", "2024-02-01", "--until", "2024-01-01"], "--since 2024-02-01 is not before --until 2024-01-01"),
            (["--tz", "Mars/Olympus"], "--tz 'Mars/Olympus' is not a time zone"),
            (["--input-format", "telegram"], "sms-backup.xml: line 1, column 1: ")
        ])
    func badInput(arguments: [String], message: String) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(
            ["render", Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path, "--chat", "Ann Lee", "-o", "out.png"] + arguments, in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.hasPrefix("Error: "), "one error, not a trace: \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("a text that is no chat export names the file and what was expected")
    func notAChat() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["render", Self.fixtures.appendingPathComponent("not-a-chat.txt").path, "-o", "out.png"], in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.contains("not-a-chat.txt"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }
}

func pdftotext(_ path: String) throws -> String { try poppler("pdftotext", [path, "-"]) }

/// What one of poppler's tools (pdftotext, pdfinfo, pdffonts, pdfimages…) prints.
func poppler(_ tool: String, _ args: [String]) throws -> String {
    try Command.run("/usr/bin/" + tool, args).stdoutText
}
