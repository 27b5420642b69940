import BubbleCore
import BubbleTestSupport
import Foundation
import Testing

/// `bubbles stats`: JSON with known answers, a WhatsApp export counted by the test itself, the
/// charts read back (pixels, PDF text, SVG, HTML), bad options.
@Suite("bubbles stats", .serialized)
struct StatsCLITests {
    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-stats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Ann, Ben and Me over four months (2026-01-30 is a Friday); the answers are in the test.
    static let conversation = """
        {"format": "bubblekit-conversation", "version": 1, "title": "Stats", "me": "me",
         "participants": [{"id": "me", "name": "Me"}, {"id": "ann", "name": "Ann Lee"}, {"id": "ben", "name": "<b>Ben</b>"}],
         "messages": [
          {"from": "ann", "date": "2026-01-30T23:30:00Z", "text": "Hello there, see you at the station 🎉"},
          {"from": "ben", "date": "2026-01-30T23:40:00Z", "text": "Das ist gut und ich komme morgen"},
          {"from": "ann", "date": "2026-01-31T00:10:00Z", "text": "明天见 https://example.com 42 ok"},
          {"from": "me", "date": "2026-01-31T09:00:00Z", "text": "on my way"},
          {"from": "ben", "date": "2026-02-02T12:00:00Z", "text": "station station 🎉🎉"},
          {"from": "ann", "date": "2026-04-01T08:00:00Z", "text": "back"},
          {"from": "ann", "date": "2026-04-01T08:05:00Z", "text": "ok"}
         ]}
        """

    func json(_ args: [String], in dir: URL) throws -> [String: Any] {
        let r = try Tool.run(["stats"] + args + ["--json"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
    }

    @Test("--json: counts per person and month, the weekday × hour table in two zones, streak, reply times")
    func knownAnswers() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.conversation.utf8).write(to: dir.appendingPathComponent("chat.json"))
        let utc = try json(["chat.json", "--tz", "UTC"], in: dir)
        #expect(utc["messages"] as? Int == 7)
        let people = try #require(utc["people"] as? [[String: Any]])
        #expect(people.map { $0["name"] as? String } == ["Ann Lee", "<b>Ben</b>", "Me"])
        #expect(people.map { $0["messages"] as? Int } == [4, 2, 1])
        #expect(people.map { $0["averageReplySeconds"] as? Double } == [1_800, 600, 31_800])
        let months = try #require(utc["months"] as? [[String: Any]])
        #expect(months.map { "\($0["month"]!)=\($0["messages"]!)" } == ["2026-01=4", "2026-02=1", "2026-03=0", "2026-04=2"])
        let hours = try #require(utc["hours"] as? [[Int]])
        #expect(hours[4][23] == 2 && hours[5][0] == 1 && hours[5][9] == 1 && hours[0][12] == 1 && hours[2][8] == 2)
        #expect(hours.joined().reduce(0, +) == 7)
        #expect(utc["longestStreakDays"] as? Int == 2)
        #expect(utc["firstDate"] as? String == "2026-01-30T23:30:00+00:00")

        let ny = try json(["chat.json", "--tz", "America/New_York"], in: dir)
        let nyHours = try #require(ny["hours"] as? [[Int]])
        #expect(nyHours[4][18] == 2 && nyHours[4][19] == 1 && nyHours[5][4] == 1 && nyHours[0][7] == 1 && nyHours[2][4] == 2)
        #expect(ny["lastDate"] as? String == "2026-04-01T04:05:00-04:00")
    }

    /// A WhatsApp (Android, en-GB) export of 1,200 messages over five months: some over several
    /// lines, some media, system lines between them.
    static func whatsAppExport() -> String {
        var rng = SplitMix64(seed: 44)
        let names = ["Ann Lee", "Ben Ode", "Zoë Martin"]
        var lines = ["01/11/2025, 09:00 - Messages and calls are end-to-end encrypted. No one outside of this chat can read them."]
        var t = 0
        for i in 0..<1_200 {
            t += Int.random(in: 60...21_600, using: &rng)
            let day = 1 + t / 86_400, minute = t % 86_400 / 60
            // November has 30 days, December and January 31, February 28 (2026).
            var d = day, month = 11, year = 2025
            for length in [30, 31, 31, 28, 31] where d > length { d -= length; month += 1; if month > 12 { month = 1; year += 1 } }
            let stamp = String(format: "%02d/%02d/%04d, %02d:%02d", d, month, year, minute / 60, minute % 60)
            if i % 97 == 0 { lines.append("\(stamp) - Ann Lee added Zoë Martin") }
            let who = names[Int.random(in: 0..<3, using: &rng)]
            switch i % 11 {
            case 0: lines.append("\(stamp) - \(who): <Media omitted>")
            case 5: lines.append("\(stamp) - \(who): first line of \(i)\nsecond line: still the same message\nthird")
            default: lines.append("\(stamp) - \(who): message \(i) see you at the station")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("a WhatsApp export: per-person and per-month counts equal the test's own count of its lines")
    func whatsApp() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let export = Self.whatsAppExport()
        try Data(export.utf8).write(to: dir.appendingPathComponent("WhatsApp Chat with Ann.txt"))
        // The test's own count: a line starting with a stamp and "Name: " starts a message.
        let start = try NSRegularExpression(pattern: #"^(\d{2})/(\d{2})/(\d{4}), \d{2}:\d{2} - ([^:\n]+): "#, options: .anchorsMatchLines)
        var perPerson: [String: Int] = [:], perMonth: [String: Int] = [:]
        for m in start.matches(in: export, range: NSRange(export.startIndex..., in: export)) {
            let s = { (i: Int) in String(export[Range(m.range(at: i), in: export)!]) }
            perPerson[s(4), default: 0] += 1
            perMonth["\(s(3))-\(s(2))", default: 0] += 1
        }
        #expect(perPerson.values.reduce(0, +) == 1_200)
        let stats = try json(["WhatsApp Chat with Ann.txt", "--tz", "UTC", "--me", "Ann Lee"], in: dir)
        #expect(stats["messages"] as? Int == 1_200)
        let people = try #require(stats["people"] as? [[String: Any]])
        var theirs: [String: Int] = [:]
        for p in people { theirs[p["name"] as! String] = p["messages"] as? Int }
        // The owner is "Me" in the conversation (--me Ann Lee).
        theirs["Ann Lee"] = theirs.removeValue(forKey: "Me") ?? theirs["Ann Lee"]
        #expect(theirs == perPerson)
        let counts = people.map { $0["messages"] as! Int }
        #expect(counts == counts.sorted(by: >), "most first")
        let months = try #require(stats["months"] as? [[String: Any]])
        #expect(Dictionary(uniqueKeysWithValues: months.map { ($0["month"] as! String, $0["messages"] as! Int) }) == perMonth)
        #expect(months.map { $0["month"] as! String } == months.map { $0["month"] as! String }.sorted())
    }

    @Test("charts: PNG pixels (bars, dark background), PDF and SVG text with month names in --locale, HTML escaped, JSON file")
    func charts() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.whatsAppExport().utf8).write(to: dir.appendingPathComponent("chat.txt"))
        try Data(Self.conversation.utf8).write(to: dir.appendingPathComponent("small.json"))
        for (name, extra) in [
            ("light.png", [String]()), ("dark.png", ["--dark"]), ("de.pdf", ["--locale", "de_DE"]),
            ("de.svg", ["--locale", "de_DE"]), ("stats.json", [])
        ] {
            let r = try Tool.run(["stats", "chat.txt", "--tz", "UTC", "-o", name] + extra, in: dir)
            #expect(r.status == 0, "\(name): \(r.stderr)")
        }
        func pixel(_ p: PNGPixels, _ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (y * p.width + x) * 4
            return (Int(p.pixels[i]), Int(p.pixels[i + 1]), Int(p.pixels[i + 2]))
        }
        let light = try PNGPixels(dir.appendingPathComponent("light.png"))
        let dark = try PNGPixels(dir.appendingPathComponent("dark.png"))
        #expect(light.width == 1_440, "720 pt at scale 2")
        #expect(pixel(light, 4, 4) == (255, 255, 255) && pixel(dark, 4, 4) == (0, 0, 0))
        // The month bars are the accent blue: many pixels of it in the chart's band.
        var blue = 0
        for y in stride(from: 200, to: min(light.height, 800), by: 2) {
            for x in stride(from: 150, to: light.width - 70, by: 4) where pixel(light, x, y) == (0, 122, 255) { blue += 1 }
        }
        #expect(blue > 2_000, "bar pixels: \(blue)")

        let pdf = try pdftotext(dir.appendingPathComponent("de.pdf").path)
        for text in ["Messages per month", "Who writes", "Zoë Martin", "März", "Mo.", "So."] { #expect(pdf.contains(text), "de.pdf lacks \(text)") }
        let svg = try String(contentsOf: dir.appendingPathComponent("de.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<?xml") && svg.contains("März") && svg.contains("Zoë Martin"))
        let saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("stats.json"))) as? [String: Any])
        #expect(saved["messages"] as? Int == 1_200)

        let r = try Tool.run(["stats", "small.json", "-o", "stats.html"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let html = try String(contentsOf: dir.appendingPathComponent("stats.html"), encoding: .utf8)
        #expect(html.contains("Content-Security-Policy") && html.contains("<svg"))
        #expect(html.contains("&lt;b&gt;Ben&lt;/b&gt;") && !html.contains("<b>Ben</b>"))
    }

    @Test("bad options: one line naming the option, nothing written")
    func errors() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.conversation.utf8).write(to: dir.appendingPathComponent("chat.json"))
        let gif = try Tool.run(["stats", "chat.json", "-o", "stats.gif"], in: dir)
        #expect(gif.status != 0 && gif.stderr.contains("-o stats.gif: expected a name ending in .svg, .png, .pdf, .html or .json"))
        let same = try Tool.run(["stats", "chat.json", "-o", "chat.json"], in: dir)
        #expect(same.status != 0)
        let missing = try Tool.run(["stats", "nope.json"], in: dir)
        #expect(missing.status != 0 && missing.stderr.contains("nope.json"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["chat.json"])
    }
}

/// `bubbles render --gallery`: the contact sheet as PDF (text read back), PNG (pixels) and HTML.
@Suite("bubbles render --gallery", .serialized)
struct GalleryCLITests {
    @Test(
        "a contact sheet: months newest first, cells with day and sender, cards for a voice note and a PDF; PNG pixels; HTML with embedded thumbnails; bad combinations"
    )
    func sheet() throws {
        let dir = try StatsCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let media = MediaCLITests.media.path
        var messages: [String] = []
        for k in 0..<12 {
            let month = k < 5 ? "2026-01" : "2026-02"
            messages.append(
                #"{"from": "\#(k % 2 == 0 ? "ann" : "me")", "date": "\#(month)-\#(String(format: "%02d", 10 + k))T10:00:00Z", "images": [{"path": "\#(media)/orientation-\#(1 + k % 8).jpg", "width": 60, "height": 40}]}"#
            )
        }
        messages.append(#"{"from": "ann", "date": "2026-03-01T09:00:00Z", "attachment": {"kind": "voice", "path": "\#(media)/voice.amr", "duration": 2}}"#)
        messages.append(
            #"{"from": "me", "date": "2026-03-02T09:00:00Z", "attachment": {"kind": "document", "path": "\#(media)/Trip plan.pdf", "fileName": "Trip plan.pdf", "pageCount": 2}}"#
        )
        let json =
            #"{"format": "bubblekit-conversation", "version": 1, "title": "Sheet", "me": "me", "participants": [{"id": "me", "name": "Me"}, {"id": "ann", "name": "<i>Ann</i>"}], "messages": ["#
            + messages.joined(separator: ",") + "]}"
        try Data(json.utf8).write(to: dir.appendingPathComponent("chat.json"))
        for name in ["sheet.pdf", "sheet.png", "sheet.html"] {
            let r = try Tool.run(["render", "chat.json", "--gallery", "-o", name, "--tz", "UTC"], in: dir)
            #expect(r.status == 0 && r.stderr.contains("\(name): 14 photos, videos and files"), "\(name): \(r.stderr)")
        }
        let text = try pdftotext(dir.appendingPathComponent("sheet.pdf").path)
        for t in [
            "Sheet", "14 photos, videos and files", "March 2026", "February 2026", "January 2026", "Trip plan.pdf", "2 pages", "0:02", "Mar 1 · <i>Ann</i>"
        ] {
            #expect(text.contains(t), "sheet.pdf lacks \(t)")
        }
        let order = ["March 2026", "February 2026", "January 2026"].compactMap { text.range(of: $0)?.lowerBound }
        #expect(order.count == 3 && order == order.sorted(), "newest month first")
        #expect(
            text.components(separatedBy: "Jan 1").count - 1 == 5
                && text.components(separatedBy: "Feb 1").count - 1 + text.components(separatedBy: "Feb 2").count - 1 == 7)

        let png = try PNGPixels(dir.appendingPathComponent("sheet.png"))
        #expect(png.width == 1_190 && png.height == 1_684, "A4 at scale 2: \(png.width) × \(png.height)")
        // The first cell is the PDF's card, in the cards' light grey.
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { let i = (y * png.width + x) * 4; return Array(png.pixels[i..<(i + 3)]) }
        #expect(pixel(40 * 2, 112 * 2) == [229, 229, 234], "\(pixel(40 * 2, 112 * 2))")

        let html = try String(contentsOf: dir.appendingPathComponent("sheet.html"), encoding: .utf8)
        #expect(html.components(separatedBy: "<figure>").count - 1 == 14)
        #expect(html.components(separatedBy: "src=\"data:image/jpeg;base64,").count - 1 == 12)
        #expect(html.contains("&lt;i&gt;Ann&lt;/i&gt;") && !html.contains("<i>Ann</i>") && html.contains("Content-Security-Policy"))

        let all = try Tool.run(["render", "chat.json", "--gallery", "--all", "-o", "out"], in: dir)
        #expect(all.status != 0 && all.stderr.contains("--gallery makes one conversation's contact sheet"))
        let dash = try Tool.run(["render", "chat.json", "--gallery", "-o", "-", "--format", "pdf"], in: dir)
        #expect(dash.status != 0 && dash.stderr.contains("--gallery writes a file"))
    }
}
