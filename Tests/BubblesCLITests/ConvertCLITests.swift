import BubbleRender
import Foundation
import Testing

/// A PNG's decoded pixels (Cairo's reader), to compare pictures rather than files.
struct PNGPixels {
    var width: Int, height: Int, pixels: [UInt8]
    init(_ url: URL) throws {
        let image = try ImageSurface(pngFile: url.path).rgbaImage()
        width = image.width; height = image.height; pixels = image.bytes
    }
}

/// `bubbles convert` on every importer fixture: the JSON holds exactly the expected messages,
/// converts again to the same bytes, renders to the same picture; the CSV parses back (RFC 4180)
/// to the same rows; `--tz` and `--locale` change what is shown, and only that.
@Suite("bubbles convert", .serialized)
struct ConvertCLITests {
    static let fixtures = ImportCLITests.fixtures

    /// One message as the tests compare it: kind, author's name, side, date as written (an
    /// instant ending in Z, or a wall-clock time without offset), text, photo file names.
    struct Row: Equatable, CustomStringConvertible {
        var kind: String, author: String, direction: String, date: String, text: String, attachments: String
        /// The placeholder's kind ("media", "photo"…), "" for none.
        var media: String
        init(
            _ kind: String, _ author: String, _ direction: String, _ date: String, _ text: String, _ attachments: String = "",
            media: String = ""
        ) {
            self.kind = kind; self.author = author; self.direction = direction; self.date = date
            self.text = text; self.attachments = attachments; self.media = media
        }
        var description: String { "\(kind)|\(author)|\(direction)|\(date)|\(text)|\(attachments)|\(media)" }
    }

    /// Each fixture with the options that pick its chat and owner, and what must come out.
    static let cases: [(String, [String], [Row])] = [
        (
            "sms/sms-backup.xml", ["--chat", "Ann Lee"],
            [
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:13:20Z", "Are you still coming tonight?"),
                Row("message", "Me", "outgoing", "2023-11-14T22:14:20Z", "Yes! Running late 👌"),
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:14:50Z", "Parking is \u{FFFD} full"),
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:15:20Z", "No rush.\nWe saved you a seat & a drink"),
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:16:20Z", "The view from here", "mms-1700000180000-1.png"),
                Row("message", "Me", "outgoing", "2023-11-14T22:17:20Z", "Can't wait"),
                Row("message", "Me", "outgoing", "2023-11-14T22:18:20Z", "See you s")
            ]
        ),
        (
            "sms/sms-backup.xml", ["--chat", "Ann Lee, Ben Ode"],
            [
                Row("message", "Ben Ode", "incoming", "2023-11-14T22:30:00Z", "Group hello 👋"),
                Row("message", "Me", "outgoing", "2023-11-14T22:31:00Z", "Hi both")
            ]
        ),
        (
            "whatsapp-android-us", ["--me", "Ben Ode"],
            [
                Row(
                    "system", "", "", "2019-12-24T23:23:00",
                    "Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more."
                ),
                Row("message", "Ann Lee", "incoming", "2019-12-24T23:23:00", "Merry Christmas Eve! 🎄"),
                Row("message", "Ben Ode", "outgoing", "2019-12-24T23:25:00", "Thanks! Same to you\nand your family"),
                Row("message", "Ann Lee", "incoming", "2019-12-24T23:26:00", "The tree this year", "IMG-20191224-WA0001.jpg"),
                Row("message", "Ben Ode", "outgoing", "2019-12-24T23:27:00", "", media: "media"),
                Row("message", "Ann Lee", "incoming", "2019-12-25T09:02:00", "Did Santa come?"),
                Row("message", "Ben Ode", "outgoing", "2019-12-25T12:15:00", "He did 😄")
            ]
        ),
        (
            "whatsapp-android-de.txt", ["--me", "Jonas"],
            [
                Row(
                    "system", "", "", "2021-08-03T12:30:00",
                    "Nachrichten und Anrufe sind Ende-zu-Ende-verschlüsselt. Niemand außerhalb dieses Chats kann sie lesen oder anhören, nicht einmal WhatsApp. Tippe, um mehr zu erfahren."
                ),
                Row("message", "Anna", "incoming", "2021-08-03T12:30:00", "Hallo! Wie geht's?"),
                Row("message", "Jonas", "outgoing", "2021-08-03T12:31:00", "Gut, danke 😊"),
                Row("message", "Anna", "incoming", "2021-08-15T18:05:00", "Treffen wir uns am Samstag?"),
                Row("message", "Jonas", "outgoing", "2021-08-15T18:07:00", "", media: "media")
            ]
        ),
        (
            "whatsapp-android-es.txt", ["--me", "Diego"],
            [
                Row(
                    "system", "", "", "2025-03-28T21:29:00",
                    "Los mensajes y las llamadas están cifrados de extremo a extremo. Nadie fuera de este chat, ni siquiera WhatsApp, puede leerlos ni escucharlos. Toca para obtener más información."
                ),
                Row("message", "Lucía", "incoming", "2025-03-28T21:29:00", "¿Vienes mañana?"),
                Row("message", "Diego", "outgoing", "2025-03-28T21:31:00", "Sí, a las 10"),
                Row("message", "Diego", "outgoing", "2025-03-29T10:02:00", "Ya estoy aquí"),
                Row("message", "Lucía", "incoming", "2025-03-30T03:30:00", "¿Ya cambió la hora?")
            ]
        ),
        (
            "whatsapp-android-en-ca.txt", ["--me", "Marc"],
            [
                Row(
                    "system", "", "", "2023-12-20T17:46:00",
                    "Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more."
                ),
                Row("message", "Priya", "incoming", "2023-12-20T17:46:00", "Are we still on for dinner?"),
                Row("message", "Marc", "outgoing", "2023-12-20T17:48:00", "Yes, 7 p.m. at the usual place"),
                Row("message", "Priya", "incoming", "2023-12-21T00:05:00", "Made it home, thanks!")
            ]
        ),
        (
            "whatsapp-ios", ["--me", "Kai"],
            [
                Row(
                    "system", "", "", "2021-10-14T15:34:09",
                    "Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them."),
                Row("message", "Sam Rivera", "incoming", "2021-10-14T15:34:09", "Landed! ✈️"),
                Row("message", "Kai", "outgoing", "2021-10-14T15:35:10", "Welcome back\nHow was the flight?"),
                Row("message", "Sam Rivera", "incoming", "2021-10-14T15:36:02", "", "00000012-PHOTO-2021-10-14-15-34-09.jpg"),
                Row("message", "Kai", "outgoing", "2021-10-14T15:36:40", "", media: "photo"),
                Row("message", "Kai", "outgoing", "2021-10-15T09:00:00", "Coffee later?")
            ]
        ),
        (
            "whatsapp-ios-group.txt", ["--me", "Sam Rivera"],
            [
                Row("system", "", "", "2022-01-03T18:20:11", "Sam Rivera created group “Trip 🏔”"),
                Row("system", "", "", "2022-01-03T18:20:11", "Sam Rivera added \u{202A}+44 7700 900123\u{202C}"),
                Row("message", "+44 7700 900123", "incoming", "2022-01-03T18:21:00", "Hi all"),
                Row("message", "Sam Rivera", "outgoing", "2022-01-13T07:05:59", "Bus leaves at 8")
            ]
        ),
        (
            "telegram-single/result.json", ["--me", "Leo Park"],
            [
                Row("message", "Mira Chen", "incoming", "2021-03-05T13:22:11Z", "Did you see the eclipse photos?"),
                Row("message", "Leo Park", "outgoing", "2021-03-05T13:23:20Z", "Not yet, send them!"),
                Row("message", "Mira Chen", "incoming", "2021-03-05T13:24:30Z", "Here", "photo_1@05-03-2021_14-24-30.jpg"),
                Row("message", "Leo Park", "outgoing", "2021-03-05T13:25:02Z", "Wow https://example.com/eclipse"),
                Row("system", "", "", "2021-03-05T13:30:00Z", "Leo Park called (2:05)"),
                Row("message", "Mira Chen", "incoming", "2021-03-05T13:33:20Z", "", media: "sticker"),
                Row("message", "Leo Park", "outgoing", "2021-03-05T13:35:00Z", "", media: "photo")
            ]
        ),
        (
            "telegram-account/result.json", ["--chat", "Climbing crew"],
            [
                Row("system", "", "", "2022-06-01T18:00:00", "Leo Park created group «Climbing crew»"),
                Row("message", "Ola Berg", "incoming", "2022-06-01T18:01:00", "Sunday at 10?"),
                Row("message", "Leo Park", "outgoing", "2022-06-01T18:02:30", "Works for me"),
                Row("system", "", "", "2022-06-01T18:03:00", "Leo Park added Kim Sato, Deleted Account")
            ]
        ),
        (
            "imessage/chat.db", ["--chat", "+15550102000", "--me", "Leo"],
            [
                Row("message", "+15550102000", "incoming", "2023-11-14T22:13:20Z", "Hey, are you free Saturday?"),
                Row("message", "Leo", "outgoing", "2023-11-14T22:14:20Z", "Yes — what's up?"),
                Row("message", "+15550102000", "incoming", "2023-11-14T22:15:00Z", "Sent as SMS"),
                Row("message", "+15550102000", "incoming", "2023-11-14T22:15:20Z", "Look at this", "IMG_0420.jpeg"),
                Row("message", "+15550102000", "incoming", "2023-11-14T22:15:40Z", "", media: "photo"),
                Row("message", "Leo", "outgoing", "2023-11-14T22:15:50Z", "", media: "photo")
            ]
        ),
        (
            "imessage/chat.db", ["--chat", "Weekend plans"],
            [
                Row("system", "", "", "2023-11-14T22:30:00Z", "Me named the conversation “Weekend plans”"),
                Row("system", "", "", "2023-11-14T22:30:01Z", "Me added ben@example.com to the conversation"),
                Row("message", "ben@example.com", "incoming", "2023-11-14T22:30:02Z", "Count me in")
            ]
        ),
        (
            "meta-facebook", ["--chat", "Ann Lee"],
            [
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:13:20Z", "Hi Zoë!"),
                Row("message", "Zoë Martin", "outgoing", "2023-11-14T22:13:21Z", "", "sticker.webp"),
                Row("message", "Zoë Martin", "outgoing", "2023-11-14T22:13:22Z", "", media: "document"),
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:13:23Z", "", media: "voice"),
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:13:24Z", "Café at 5?"),
                Row("message", "Zoë Martin", "outgoing", "2023-11-14T22:13:25Z", "Привет 👋 مرحبا"),
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:13:26Z", "", "orientation-6.jpg"),
                Row("system", "", "", "2023-11-14T22:13:27Z", "Call · 2:05"),
                Row("message", "Zoë Martin", "outgoing", "2023-11-14T22:13:28Z", "Look https://example.org/trip"),
                Row("message", "Ann Lee", "incoming", "2023-11-14T22:13:29Z", "", media: "deleted")
            ]
        ),
        (
            "meta-instagram", [],
            [
                Row("message", "kai.weber", "incoming", "2023-11-14T22:13:21Z", "", "photo.gif"),
                Row("message", "kai.weber", "incoming", "2023-11-14T22:13:22Z", "I reacted to your message, it was funny"),
                Row("message", "Zoë", "outgoing", "2023-11-14T22:13:23Z", "Sunset at the lake 🌅")
            ]
        ),
        (
            "discord/Direct Messages - ann [1001].json", [],
            [
                Row("message", "Ann", "incoming", "2024-02-29T20:20:31.490Z", "Hi Zoë, see the end now later really"),
                Row("message", "Zoë", "outgoing", "2024-02-29T20:21:00Z", "quoted line\nyes @Ann :)"),
                Row("message", "Ann", "incoming", "2024-02-29T20:22:00Z", "photo and a remote file", "orientation-1-9A1B.jpg", media: "document"),
                Row("message", "Zoë", "outgoing", "2024-02-29T21:23:00Z", "https://example.org/post\nA post title\nWhat the post says."),
                Row("system", "", "", "2024-02-29T20:30:00Z", "Call · 2:05 (started by Ann)"),
                Row("system", "", "", "2024-02-29T20:33:00Z", "Zoë pinned a message"),
                Row("message", "Zoë", "outgoing", "2024-02-29T20:34:00Z", "let x = 1")
            ]
        ),
        (
            "native.json", [],
            [
                Row("message", "Zoe", "incoming", "2026-11-22T09:40:00Z", "Plain JSON works too"),
                Row("message", "Me", "outgoing", "2026-11-22T09:41:00Z", "Nice")
            ]
        )
    ]

    /// The rows of a converted JSON file, read with JSONSerialization (not BubbleKit's decoder).
    static func rows(json data: Data) throws -> [Row] {
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(root["format"] as? String == "bubblekit-conversation")
        #expect(root["version"] as? Int == 2)
        var names: [String: String] = [:]
        for p in root["participants"] as? [[String: Any]] ?? [] { names[p["id"] as! String] = p["name"] as? String }
        let me = root["me"] as? String
        return (root["messages"] as? [[String: Any]] ?? []).map { m in
            let kind = m["type"] as? String ?? "message"
            let from = m["from"] as? String
            let direction = kind == "system" ? "" : (m["direction"] as? String ?? (from != nil && from == me ? "outgoing" : "incoming"))
            var photos: [[String: Any]] = []
            if let one = m["image"] as? [String: Any] { photos.append(one) }
            photos += m["images"] as? [[String: Any]] ?? []
            let attachments = photos.compactMap { ($0["path"] as? String).map { ($0 as NSString).lastPathComponent } }.joined(separator: ";")
            return Row(
                kind, from.map { names[$0] ?? $0 } ?? "", direction, m["date"] as? String ?? "?", m["text"] as? String ?? "", attachments,
                media: (m["attachment"] as? [String: Any])?["kind"] as? String ?? "")
        }
    }

    @Test(
        "every importer fixture converts to JSON with exactly the expected messages; JSON → JSON is byte-identical; CSV from the export and from the JSON are the same",
        arguments: 0..<cases.count)
    func everyFixture(index: Int) throws {
        let (fixture, options, expected) = Self.cases[index]
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = Self.fixtures.appendingPathComponent(fixture).path
        let r = try Tool.run(["convert", input, "-o", "a.json", "--tz", "UTC"] + options, in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let a = try Data(contentsOf: dir.appendingPathComponent("a.json"))
        let rows = try Self.rows(json: a)
        #expect(rows == expected, "\(fixture)\n\(rows.map(\.description).joined(separator: "\n"))")

        // Every referenced photo is there, relative to the JSON file.
        let root = try JSONSerialization.jsonObject(with: a) as! [String: Any]
        // Formatting is kept: the Telegram fixture's bold piece and link are spans of the text.
        if fixture == "telegram-single/result.json" {
            let spans = (root["messages"] as! [[String: Any]]).compactMap { $0["spans"] as? [[String: Any]] }
            #expect(spans.count == 2)
            #expect(spans.first?.first?["style"] as? String == "bold")
            #expect(spans.first?.first?["start"] as? Int == 9 && spans.first?.first?["end"] as? Int == 18)
        }
        for m in root["messages"] as! [[String: Any]] {
            if let path = (m["image"] as? [String: Any])?["path"] as? String {
                #expect(!path.hasPrefix("/"), "relative: \(path)")
                #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(path).path), "\(path)")
            }
        }

        // Back in: the JSON converts to the same bytes, whatever --tz says (instants stay UTC,
        // wall-clock times stay as they were).
        let again = try Tool.run(["convert", "a.json", "-o", "b.json", "--tz", "Asia/Kolkata"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: dir.appendingPathComponent("b.json")) == a, "\(fixture): JSON → JSON differs")

        // The CSV of the export and of its JSON are the same rows.
        let csvA = try Tool.run(["convert", input, "-o", "-", "--format", "csv", "--tz", "UTC"] + options, in: dir)
        let csvB = try Tool.run(["convert", "a.json", "-o", "-", "--format", "csv", "--tz", "UTC"], in: dir)
        #expect(csvA.status == 0 && csvB.status == 0, "\(csvA.stderr)\(csvB.stderr)")
        #expect(try CSVReader.parse(csvA.stdout).map { Array($0.dropLast(2)) } == (try CSVReader.parse(csvB.stdout)).map { Array($0.dropLast(2)) })
    }

    @Test("CSV: RFC 4180 rows (CRLF, quoted multi-line text, doubled quotes) that a CSV reader gives back as the messages; timestamps carry the --tz offset")
    func csv() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("q.json")
        try Data(
            """
            {"format": "bubblekit-conversation", "version": 1, "me": "me",
             "participants": [{"id": "me", "name": "Me"}, {"id": "ann", "name": "Ann \\"A\\" Lee, Jr."}],
             "messages": [
               {"from": "ann", "date": "2026-01-15T09:40:00Z", "text": "She said \\"hi\\",\\nthen left"},
               {"from": "me", "date": "2026-07-15T09:41:00.250Z", "text": "ok", "image": {"path": "p.png", "width": 10, "height": 10}},
               {"type": "system", "date": "2026-07-15T09:42:00", "text": "Ann left"}
             ]}
            """.utf8
        ).write(to: input)
        let r = try Tool.run(["convert", input.path, "-o", "out.csv", "--tz", "America/New_York"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let bytes = try Data(contentsOf: dir.appendingPathComponent("out.csv"))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("timestamp,author,direction,message,media,attachments,kind\r\n"))
        #expect(text.contains("\"She said \"\"hi\"\",\nthen left\""), "quotes doubled, newline inside the field: \(text)")
        let rows = try CSVReader.parse(bytes)
        #expect(
            rows == [
                ["timestamp", "author", "direction", "message", "media", "attachments", "kind"],
                // Winter in New York: −05:00; summer: −04:00; the fraction of the instant is kept.
                ["2026-01-15T04:40:00-05:00", "Ann \"A\" Lee, Jr.", "incoming", "She said \"hi\",\nthen left", "", "", "message"],
                ["2026-07-15T05:41:00.250-04:00", "Me", "outgoing", "ok", "", "p.png", "message"],
                // A wall-clock time is written as it was, with the zone's offset then.
                ["2026-07-15T09:42:00-04:00", "", "", "Ann left", "", "", "system"]
            ])
        #expect(text.components(separatedBy: "\r\n").count == 5, "CRLF after every record")
    }

    @Test("the same export rendered with --tz UTC and --tz Asia/Kolkata: instants shift by 5:30 (and the day with them); WhatsApp's wall-clock times do not")
    func timeZonesShiftTimes() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sms = Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path
        func text(_ input: String, _ args: [String], zone: String) throws -> String {
            let out = dir.appendingPathComponent("t-\(zone.replacingOccurrences(of: "/", with: "-")).pdf").path
            let r = try Tool.run(["render", input, "-o", out, "--tz", zone, "--theme", "sms"] + args)
            #expect(r.status == 0, "\(r.stderr)")
            return try pdftotext(out)
        }
        let utc = try text(sms, ["--chat", "Ann Lee"], zone: "UTC")
        let india = try text(sms, ["--chat", "Ann Lee"], zone: "Asia/Kolkata")
        // 1700000000 s = 2023-11-14 22:13:20 UTC = 2023-11-15 03:43:20 in India.
        #expect(utc.contains("22:13") && utc.contains("Tuesday, 14 November 2023"), "\(utc)")
        #expect(india.contains("03:43") && india.contains("Wednesday, 15 November 2023"), "\(india)")
        #expect(!india.contains("22:13") && !utc.contains("03:43"))

        let wa = Self.fixtures.appendingPathComponent("whatsapp-android-us").path
        let waUTC = try text(wa, ["--me", "Ben Ode"], zone: "UTC")
        let waIndia = try text(wa, ["--me", "Ben Ode"], zone: "Asia/Kolkata")
        #expect(waUTC.contains("23:23") && waIndia.contains("23:23"), "the line said 11:23 PM")
        #expect(waUTC == waIndia, "wall-clock times are shown as written")
    }

    @Test("--locale writes day separators, weekday names and times in that locale (PDF and HTML)")
    func locales() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sms = Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path
        let pdf = dir.appendingPathComponent("de.pdf").path
        var r = try Tool.run(["render", sms, "--chat", "Ann Lee", "-o", pdf, "--tz", "UTC", "--theme", "sms", "--locale", "de_DE"])
        #expect(r.status == 0, "\(r.stderr)")
        let german = try pdftotext(pdf)
        #expect(german.contains("Dienstag, 14. November 2023"), "\(german)")
        #expect(german.contains("22:13"))
        let html = dir.appendingPathComponent("us.html").path
        r = try Tool.run(["render", sms, "--chat", "Ann Lee", "-o", html, "--tz", "UTC", "--theme", "whatsapp", "--locale", "en-US"])
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("Tuesday, November 14, 2023"))
        #expect(page.contains(#/<time datetime="2023-11-14T22:13:\d\dZ">10:13(\u{202F}| )PM</time>/#), "12-hour clock in en_US")
        // Without --locale: the fixed defaults.
        r = try Tool.run(["render", sms, "--chat", "Ann Lee", "-o", html, "--tz", "UTC", "--theme", "whatsapp"])
        let plain = try String(contentsOfFile: html, encoding: .utf8)
        #expect(plain.contains("Tuesday, 14 November 2023") && plain.contains(#/<time datetime="2023-11-14T22:13:\d\dZ">22:13</time>/#))
    }

    @Test("--now names today's and yesterday's separators (in the locale's words); other days keep their dates")
    func relativeDays() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wa = Self.fixtures.appendingPathComponent("whatsapp-android-us").path
        let pdf = dir.appendingPathComponent("n.pdf").path
        var r = try Tool.run(["render", wa, "--me", "Ben Ode", "-o", pdf, "--tz", "UTC", "--now", "2019-12-25T18:00"])
        #expect(r.status == 0, "\(r.stderr)")
        var text = try pdftotext(pdf)
        #expect(text.contains("Yesterday") && text.contains("Today") && !text.contains("Tuesday, 24 December 2019"), "\(text)")
        r = try Tool.run(["render", wa, "--me", "Ben Ode", "-o", pdf, "--tz", "UTC", "--now", "2019-12-26", "--locale", "de_DE"])
        #expect(r.status == 0, "\(r.stderr)")
        text = try pdftotext(pdf)
        #expect(text.contains("Dienstag, 24. Dezember 2019") && text.contains("Gestern") && !text.contains("Heute"), "\(text)")
        r = try Tool.run(["render", wa, "--me", "Ben Ode", "-o", pdf, "--now", "soon"])
        #expect(r.status != 0 && r.stderr.contains("--now 'soon' is not a date"), "\(r.stderr)")
    }

    @Test(
        "convert (in any zone), then render the JSON: the same PNG as rendering the export directly",
        arguments: [
            ("whatsapp-ios", ["--me", "Kai"]),
            ("sms/sms-backup.xml", ["--chat", "Ann Lee"]),
            ("telegram-single/result.json", ["--me", "Leo Park"]),
            ("whatsapp-android-es.txt", ["--me", "Diego"])
        ] as [(String, [String])])
    func convertThenRender(fixture: String, options: [String]) throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = Self.fixtures.appendingPathComponent(fixture).path
        for zone in ["UTC", "Europe/Madrid"] {
            let direct = try Tool.run(["render", input, "-o", "direct.png", "--tz", zone, "--theme", "whatsapp"] + options, in: dir)
            #expect(direct.status == 0, "\(direct.stderr)")
            // Converted in another zone than the one rendered in: instants are instants, and
            // wall-clock times stay wall-clock times, so the picture must not change.
            let c = try Tool.run(["convert", input, "-o", "chat.json", "--tz", "Pacific/Auckland"] + options, in: dir)
            #expect(c.status == 0, "\(c.stderr)")
            let via = try Tool.run(["render", "chat.json", "-o", "via.png", "--tz", zone, "--theme", "whatsapp"], in: dir)
            #expect(via.status == 0, "\(via.stderr)")
            let a = try PNGPixels(dir.appendingPathComponent("direct.png"))
            let b = try PNGPixels(dir.appendingPathComponent("via.png"))
            #expect(a.width == b.width && a.height == b.height && a.width > 0)
            #expect(a.pixels == b.pixels, "\(fixture) in \(zone): pictures differ")
        }
    }

    @Test("an SMS backup out of date order: the JSON lists the messages by date (runs merged, or sorted when there are many)", arguments: [3, 200])
    func outOfOrder(runs: Int) throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 200 messages; message k is dated k minutes after the start, written in `runs` ascending runs.
        let count = 200
        var order: [Int] = []
        for r in 0..<runs { order += stride(from: r, to: count, by: runs).map { $0 } }
        var xml = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"\(count)\">\n"
        for k in order {
            xml +=
                "<sms address=\"+15550102000\" date=\"\(1_700_000_000_000 + k * 60_000)\" type=\"\(k % 2 + 1)\" body=\"message \(k)\" contact_name=\"Ann\" />\n"
        }
        xml += "</smses>\n"
        try Data(xml.utf8).write(to: dir.appendingPathComponent("backup.xml"))
        let r = try Tool.run(["convert", "backup.xml", "-o", "out.json"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try Self.rows(json: Data(contentsOf: dir.appendingPathComponent("out.json")))
        #expect(rows.map(\.text) == (0..<count).map { "message \($0)" })
        #expect(rows.map(\.direction) == (0..<count).map { $0 % 2 == 0 ? "incoming" : "outgoing" })
    }

    @Test("--assets folder copies photos into OUT_files/; --assets embed puts data: URLs in the file, and render reads them")
    func assets() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = Self.fixtures.appendingPathComponent("whatsapp-ios").path
        var r = try Tool.run(["convert", input, "--me", "Kai", "-o", "chat.json", "--assets", "folder", "--tz", "UTC"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let folderJSON = try String(contentsOfFile: dir.appendingPathComponent("chat.json").path, encoding: .utf8)
        #expect(folderJSON.contains("\"path\": \"chat_files/00000012-PHOTO-2021-10-14-15-34-09.jpg\""))
        let copied = try Data(contentsOf: dir.appendingPathComponent("chat_files/00000012-PHOTO-2021-10-14-15-34-09.jpg"))
        #expect(copied == (try Data(contentsOf: URL(fileURLWithPath: input).appendingPathComponent("00000012-PHOTO-2021-10-14-15-34-09.jpg"))))

        r = try Tool.run(["convert", input, "--me", "Kai", "-o", "embedded.json", "--assets", "embed", "--tz", "UTC"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let embedded = try String(contentsOfFile: dir.appendingPathComponent("embedded.json").path, encoding: .utf8)
        #expect(embedded.contains("\"path\": \"data:image/jpeg;base64," + copied.base64EncodedString() + "\""))
        // Embedded → embedded is byte-identical too.
        r = try Tool.run(["convert", "embedded.json", "-o", "again.json", "--assets", "embed"], in: dir)
        #expect(try Data(contentsOf: dir.appendingPathComponent("again.json")) == Data(embedded.utf8))
        // Moved elsewhere alone, the embedded file still renders the photo: same pixels as the copy.
        let elsewhere = dir.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: dir.appendingPathComponent("embedded.json"), to: elsewhere.appendingPathComponent("e.json"))
        r = try Tool.run(["render", "elsewhere/e.json", "-o", "e.png", "--tz", "UTC"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        r = try Tool.run(["render", "chat.json", "-o", "f.png", "--tz", "UTC"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try PNGPixels(dir.appendingPathComponent("e.png")).pixels == PNGPixels(dir.appendingPathComponent("f.png")).pixels)
    }

    @Test(
        "bad arguments: one clear error each, non-zero exit, nothing written",
        arguments: [
            (["-o", "out.json", "--tz", "Mars/Olympus"], "--tz 'Mars/Olympus' is not a time zone; expected an IANA name such as UTC, Europe/Berlin"),
            (["-o", "out.txt"], "cannot tell the output format from 'out.txt'; use --format json|csv"),
            (["-o", "out.json", "--assets", "inline"], "--assets 'inline' is not an asset mode; expected reference, folder or embed"),
            (["-o", "-", "--format", "json", "--assets", "folder"], "--assets folder writes several files"),
            (["-o", "missing/out.json", "--assets", "folder"], "missing/out.json: its folder")
        ])
    func badArguments(arguments: [String], message: String) throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["convert", Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path, "--chat", "Ann Lee"] + arguments, in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.hasPrefix("Error: ") && r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("render: an unknown --locale or --tz is one error with examples")
    func badLocale() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sms = Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path
        var r = try Tool.run(["render", sms, "--chat", "Ann Lee", "-o", "x.pdf", "--locale", "xx_YY"], in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.hasPrefix("Error: --locale 'xx_YY' is not a locale; expected an identifier such as en_US, en_GB, de_DE"), "\(r.stderr)")
        r = try Tool.run(["render", sms, "--chat", "Ann Lee", "-o", "x.pdf", "--tz", "Europe/Atlantis"], in: dir)
        #expect(r.status != 0 && r.stderr.contains("--tz 'Europe/Atlantis' is not a time zone"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("convert never overwrites its input, and a failed conversion leaves no file behind")
    func safety() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let copy = dir.appendingPathComponent("chat.json")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("native.json"), to: copy)
        let before = try Data(contentsOf: copy)
        var r = try Tool.run(["convert", "chat.json", "-o", "./chat.json"], in: dir)
        #expect(r.status != 0 && r.stderr.contains("is the input file; refusing to overwrite it"), "\(r.stderr)")
        #expect(try Data(contentsOf: copy) == before)
        r = try Tool.run(["convert", Self.fixtures.appendingPathComponent("not-a-chat.txt").path, "-o", "out.json"], in: dir)
        #expect(r.status != 0 && r.stderr.contains("not-a-chat.txt"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["chat.json"])
    }
}

/// A small RFC 4180 reader: fields separated by commas, records by CRLF (a lone LF is accepted
/// too), quoted fields may hold commas, CR, LF and doubled quotes.
enum CSVReader {
    struct Malformed: Error, CustomStringConvertible { var description: String }

    static func parse(_ data: Data) throws -> [[String]] {
        let b = [UInt8](data)
        var records: [[String]] = []
        var record: [String] = []
        var field: [UInt8] = []
        var i = 0
        var quoted = false
        func endField() { record.append(String(decoding: field, as: UTF8.self)); field = [] }
        while i < b.count {
            let c = b[i]
            if quoted {
                if c == 0x22 {
                    if i + 1 < b.count, b[i + 1] == 0x22 { field.append(0x22); i += 2; continue }
                    quoted = false
                    i += 1
                    guard i == b.count || b[i] == 0x2C || b[i] == 0x0D || b[i] == 0x0A else {
                        throw Malformed(description: "byte \(i): text after a closing quote")
                    }
                    continue
                }
                field.append(c)
                i += 1
                continue
            }
            switch c {
            case 0x22:
                guard field.isEmpty else { throw Malformed(description: "byte \(i): quote inside an unquoted field") }
                quoted = true
            case 0x2C:
                endField()
            case 0x0D, 0x0A:
                endField()
                records.append(record)
                record = []
                if c == 0x0D, i + 1 < b.count, b[i + 1] == 0x0A { i += 1 }
            default:
                field.append(c)
            }
            i += 1
        }
        if quoted { throw Malformed(description: "end of data inside a quoted field") }
        if !field.isEmpty || !record.isEmpty { endField(); records.append(record) }
        return records
    }
}

extension ConvertCLITests {
    /// Telegram decides who "me" is from all the authors; convert streams it anyway (memory flat)
    /// and settles sides and reply quotes on the way out: the JSON is what a whole-file import
    /// gives — the inferred owner outgoing, a reply quoting its original (author and text, a
    /// spoiler masked), a reply to a message outside the export with its id only.
    @Test("convert streams Telegram: sides from the inferred owner and reply quotes settled as a whole import makes them")
    func telegramStreamed() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(
            #"""
            {"name": "Ana Ruiz", "type": "personal_chat", "id": 7, "messages": [
              {"id": 10, "type": "message", "date": "2024-03-05T14:22:11", "date_unixtime": "1709648531", "from": "Ana Ruiz", "from_id": "user7",
               "text": ["The killer is ", {"type": "spoiler", "text": "the butler"}]},
              {"id": 11, "type": "message", "date": "2024-03-05T14:23:11", "date_unixtime": "1709648591", "from": "Ben", "from_id": "user8",
               "reply_to_message_id": 10, "text": "No way"},
              {"id": 12, "type": "message", "date": "2024-03-05T14:24:11", "date_unixtime": "1709648651", "from": "Ana Ruiz", "from_id": "user7",
               "reply_to_message_id": 3, "text": "About that old one"},
              {"id": 13, "type": "message", "date": "2024-03-05T14:25:11", "date_unixtime": "1709648711", "from": "Ana Ruiz", "from_id": "user7",
               "reply_to_message_id": 11, "text": "Way"}
            ]}
            """#.utf8
        ).write(to: dir.appendingPathComponent("result.json"))
        let r = try Tool.run(["convert", "result.json", "-o", "out.json"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("me: \"Ben\""), "the inference is said: \(r.stderr)")
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("out.json"))) as! [String: Any]
        #expect(root["me"] as? String == "user8")
        let messages = root["messages"] as! [[String: Any]]
        #expect(messages.map { $0["from"] as? String } == ["user7", "user8", "user7", "user7"])
        #expect(messages.map { $0["direction"] as? String ?? "incoming" } == ["incoming", "outgoing", "incoming", "incoming"], "\(messages)")
        let replies = messages.map { $0["reply"] as? [String: Any] }
        #expect(replies[1]?["id"] as? String == "10" && replies[1]?["sender"] as? String == "user7")
        #expect(replies[1]?["text"] as? String == "The killer is ░░░░░░░░░░")
        #expect(replies[2]?["id"] as? String == "3" && replies[2]?["text"] == nil, "outside the export: its id only")
        #expect(replies[3]?["text"] as? String == "No way" && replies[3]?["sender"] as? String == "user8")
        // The same as rendering from a whole-file import: the JSON renders to the same picture.
        #expect(try Tool.run(["render", "result.json", "-o", "direct.png", "--tz", "UTC"], in: dir).status == 0)
        #expect(try Tool.run(["render", "out.json", "-o", "via.png", "--tz", "UTC"], in: dir).status == 0)
        let a = try PNGPixels(dir.appendingPathComponent("direct.png")), b = try PNGPixels(dir.appendingPathComponent("via.png"))
        #expect(a.width == b.width && a.height == b.height && a.pixels == b.pixels)
    }
}
