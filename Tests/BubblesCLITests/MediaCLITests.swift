import Foundation
import Testing

/// `bubbles render` and `convert` on a WhatsApp export folder holding every kind of file real
/// phones put in one: a portrait photo turned by EXIF, a sticker, a HEIC photo, a video, a voice
/// note, an AMR, a document, a contact card, a corrupt photo (scripts/make-media-fixtures.sh).
@Suite("bubbles on real media", .serialized)
struct MediaCLITests {
    static let media = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures/media")

    /// The export folder: the files under WhatsApp's names, and the chat naming them.
    static func export() throws -> URL {
        let dir = try ImportCLITests.folder()
        let folder = dir.appendingPathComponent("WhatsApp Chat with Ann")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (source, name) in [
            ("orientation-6.jpg", "IMG-20211014-WA0001.jpg"), ("STK-20211014-WA0005.webp", "STK-20211014-WA0005.webp"),
            ("photo.heic", "IMG-20211014-WA0002.heic"), ("VID-20211014-WA0003.mp4", "VID-20211014-WA0003.mp4"),
            ("PTT-20211014-WA0004.opus", "PTT-20211014-WA0004.opus"), ("voice.amr", "AUD-20211014-WA0006.amr"),
            ("video.3gp", "VID-20211014-WA0007.3gp"), ("Trip plan.pdf", "Trip plan.pdf"),
            ("Ann Lee.vcf", "Ann Lee.vcf"), ("corrupt.jpg", "IMG-20211014-WA0009.jpg")
        ] {
            try FileManager.default.copyItem(at: media.appendingPathComponent(source), to: folder.appendingPathComponent(name))
        }
        try Data(
            """
            14/10/2021, 09:00 - Ann: IMG-20211014-WA0001.jpg (file attached)
            14/10/2021, 09:01 - Ben: STK-20211014-WA0005.webp (file attached)
            14/10/2021, 09:02 - Ann: IMG-20211014-WA0002.heic (file attached)
            14/10/2021, 09:03 - Ben: VID-20211014-WA0003.mp4 (file attached)
            14/10/2021, 09:04 - Ann: PTT-20211014-WA0004.opus (file attached)
            14/10/2021, 09:05 - Ann: AUD-20211014-WA0006.amr (file attached)
            14/10/2021, 09:06 - Ben: VID-20211014-WA0007.3gp (file attached)
            14/10/2021, 09:07 - Ann: Trip plan.pdf (file attached)
            Plan for Saturday
            14/10/2021, 09:08 - Ben: Ann Lee.vcf (file attached)
            14/10/2021, 09:09 - Ann: IMG-20211014-WA0009.jpg (file attached)
            14/10/2021, 09:10 - Ben: See you 20211014

            """.utf8
        ).write(to: folder.appendingPathComponent("WhatsApp Chat with Ann.txt"))
        return folder
    }

    @Test(
        "render to PDF, SVG, PNG and HTML: every kind drawn or labelled, the corrupt photo a placeholder named as in the export, a summary, exit 0; --strict: exit 1, nothing written"
    )
    func render() throws {
        let folder = try Self.export()
        let dir = folder.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: dir) }
        for format in ["pdf", "svg", "png", "html"] {
            let r = try Tool.run(["render", folder.path, "--me", "Ben", "-o", "chat.\(format)", "--tz", "UTC"], in: dir)
            #expect(r.status == 0, "\(format): \(r.stderr)")
            #expect(r.stderr.contains("warning: \(folder.path): IMG-20211014-WA0009.jpg: "), "\(format): \(r.stderr)")
            #expect(r.stderr.contains("1 of 10 attachments could not be read (--strict makes this an error)"), "\(format): \(r.stderr)")
        }
        let text = try pdftotext(dir.appendingPathComponent("chat.pdf").path)
        for expected in [
            "Video · 0:02", "Voice message · 0:03", "AUD-20211014-WA0006.amr", "AMR · 0:02 · 3 KB", "Video · 0:01",
            "Trip plan.pdf", "PDF · 2 pages · 426 B", "Plan for Saturday", "Ann Lee", "Photo: IMG-20211014-WA0009.jpg (could not",
            "See you 20211014"
        ] {
            #expect(text.contains(expected), "missing \(expected) in \(text)")
        }
        // SVG: text as <text>, the pictures (turned photo, sticker, HEIC as JPEG) embedded, two play symbols.
        let svg = try String(contentsOfFile: dir.appendingPathComponent("chat.svg").path, encoding: .utf8)
        for expected in ["Voice message · 0:03", "PDF · 2 pages · 426 B", "Ann Lee"] {
            #expect(svg.contains(expected), "chat.svg lacks \(expected)")
        }
        #expect(svg.components(separatedBy: "<image ").count - 1 == 3, "photo, sticker, HEIC photo")
        #expect(svg.components(separatedBy: "data:image/jpeg;base64,").count - 1 == 2, "the turned JPEG and the HEIC, as JPEG")
        #expect(svg.components(separatedBy: "data:image/webp;base64,").count - 1 == 1, "the sticker as it is")
        let html = try String(contentsOfFile: dir.appendingPathComponent("chat.html").path, encoding: .utf8)
        #expect(html.contains("alt=\"Sticker\""), "the sticker is a picture")
        #expect(html.contains("class=\"b o e st"), "without a bubble")
        #expect(html.contains("width=\"40\" height=\"60\""), "the turned photo's displayed size")
        #expect(html.components(separatedBy: "class=\"vf\"").count == 3, "two video frames")
        #expect(!html.contains("href=\"tel:"), "neither a file name's date nor 20211014 is a phone number")

        let strict = try Tool.run(["render", folder.path, "--me", "Ben", "-o", "strict.pdf", "--tz", "UTC", "--strict"], in: dir)
        #expect(strict.status != 0)
        #expect(strict.stderr.contains("IMG-20211014-WA0009.jpg: cannot read image:") && strict.stderr.contains("(--strict)"), "\(strict.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("strict.pdf").path))
    }

    @Test("convert: the JSON keeps each attachment's kind, file, size, duration, pages and name; the CSV its kind; the JSON renders the same")
    func convert() throws {
        let folder = try Self.export()
        let dir = folder.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["convert", folder.path, "--me", "Ben", "-o", "chat.json", "--tz", "UTC"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("chat.json"))) as! [String: Any]
        let messages = root["messages"] as! [[String: Any]]
        let attachments = messages.compactMap { $0["attachment"] as? [String: Any] }
        #expect(attachments.map { $0["kind"] as? String } == ["video", "voice", "audio", "video", "document", "contact"])
        let video = attachments[0]
        #expect(video["fileName"] as? String == "VID-20211014-WA0003.mp4")
        #expect(abs((video["duration"] as? Double ?? 0) - 2.5) < 0.05)
        #expect(video["width"] as? Double == 64 && video["height"] as? Double == 36)
        #expect(video["mimeType"] as? String == "video/mp4")
        #expect((video["path"] as? String)?.hasSuffix("VID-20211014-WA0003.mp4") == true)
        #expect(abs((attachments[1]["duration"] as? Double ?? 0) - 3.2) < 0.1)
        #expect(attachments[4]["pageCount"] as? Int == 2 && attachments[4]["byteSize"] as? Int == 426)
        #expect(attachments[5]["title"] as? String == "Ann Lee")
        let sticker = messages[1]["image"] as? [String: Any]
        #expect(sticker?["sticker"] as? Bool == true && sticker?["name"] as? String == "STK-20211014-WA0005.webp")

        let csv = try Tool.run(["convert", folder.path, "--me", "Ben", "-o", "-", "--format", "csv", "--tz", "UTC"], in: dir)
        let rows = try CSVReader.parse(csv.stdout)
        #expect(rows.dropFirst().map { $0[4] } == ["", "", "", "video", "voice", "audio", "video", "document", "contact", "", ""])

        // The JSON draws what the export draws.
        let a = try Tool.run(["render", folder.path, "--me", "Ben", "-o", "a.png", "--tz", "UTC"], in: dir)
        let b = try Tool.run(["render", "chat.json", "-o", "b.png", "--tz", "UTC"], in: dir)
        #expect(a.status == 0 && b.status == 0, "\(a.stderr)\(b.stderr)")
        let pa = try PNGPixels(dir.appendingPathComponent("a.png")), pb = try PNGPixels(dir.appendingPathComponent("b.png"))
        #expect(pa.width == pb.width && pa.height == pb.height && pa.pixels == pb.pixels)
    }
}
