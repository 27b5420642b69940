import Foundation
import Testing

/// What a new user trips on (issue 48): broken pictures, `--strict` on missing media of every
/// importer, errors that say what to do, empty date ranges, `--update` after a format change.
@Suite("bubbles: pictures checked, --strict that means it, errors a user can act on", .serialized)
struct NewUserCLITests {
    static let fixtures = ImportCLITests.fixtures

    static func folder() throws -> URL { try ImportCLITests.folder() }

    static func conversation(_ messages: [(text: String, photo: String?)]) -> Data {
        let lines = messages.enumerated().map { i, m in
            let photo = m.photo.map { ", \"image\": {\"path\": \"\($0)\"}" } ?? ""
            let minute = String(format: "%02d", i % 60), hour = String(format: "%02d", 8 + i / 60)
            return "{\"from\": \"\(i % 2 == 0 ? "ann" : "me")\", \"date\": \"2024-05-01T\(hour):\(minute):00Z\", \"text\": \"\(m.text)\"\(photo)}"
        }
        return Data(
            """
            {"format": "bubblekit-conversation", "version": 1, "title": "Pictures", "me": "me",
             "participants": [{"id": "me", "name": "Me"}, {"id": "ann", "name": "Ann"}],
             "messages": [\(lines.joined(separator: ",\n"))]}
            """.utf8)
    }

    @Test("a PNG and a JPEG cut short are labelled placeholders, each named in a warning and counted; --strict: an error naming the first, nothing written")
    func truncatedPictures() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A real PNG (a render of its own) and a real JPEG, each whole and cut in the middle.
        try Self.conversation([("whole", nil)]).write(to: dir.appendingPathComponent("seed.json"))
        let seed = try Tool.run(["render", "seed.json", "-o", "whole.png"], in: dir)
        #expect(seed.status == 0, "\(seed.stderr)")
        let png = try Data(contentsOf: dir.appendingPathComponent("whole.png"))
        try png.prefix(png.count / 2).write(to: dir.appendingPathComponent("cut.png"))
        let jpeg = try Data(contentsOf: MediaCLITests.media.appendingPathComponent("orientation-1.jpg"))
        try jpeg.write(to: dir.appendingPathComponent("whole.jpg"))
        try jpeg.prefix(jpeg.count * 3 / 4).write(to: dir.appendingPathComponent("cut.jpg"))
        try Self.conversation([("png", "whole.png"), ("jpeg", "whole.jpg"), ("cut png", "cut.png"), ("cut jpeg", "cut.jpg")])
            .write(to: dir.appendingPathComponent("chat.json"))

        for format in ["png", "pdf", "html"] {
            let r = try Tool.run(["render", "chat.json", "-o", "chat.\(format)"], in: dir)
            #expect(r.status == 0, "\(format): \(r.stderr)")
            #expect(r.stderr.contains("cut.png: image/png cut short"), "\(format): \(r.stderr)")
            #expect(r.stderr.contains("cut.jpg: image/jpeg cut short: no end-of-image marker"), "\(format): \(r.stderr)")
            #expect(r.stderr.contains("2 of 4 attachments could not be read (--strict makes this an error)"), "\(format): \(r.stderr)")
        }
        let text = try pdftotext(dir.appendingPathComponent("chat.pdf").path)
        #expect(text.contains("Photo: cut.png (could not be"), "\(text)")
        #expect(text.contains("Photo: cut.jpg (could not be"), "\(text)")
        #expect(!text.contains("Photo: whole"), "whole pictures are drawn: \(text)")

        let strict = try Tool.run(["render", "chat.json", "-o", "strict.png", "--strict"], in: dir)
        #expect(strict.status != 0)
        #expect(strict.stderr.contains("cut.png: cannot read image: image/png cut short") && strict.stderr.contains("(--strict)"), "\(strict.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("strict.png").path))
    }

    @Test(
        "--strict and media missing from a Telegram or iMessage export: an error naming the message and file, nothing written; without it, placeholders and exit 0",
        arguments: [
            ("telegram-single/result.json", [] as [String], "messages[5].file: sticker stickers/sticker.webp: no such file in the export folder (and 1 more)"),
            ("imessage/chat.db", ["--chat", "+15550102000"], "message ROWID 5: photo ~/Library/Messages/Attachments/cd/12/77B1/IMG_0421.HEIC: no such file")
        ])
    func strictMissingMedia(fixture: String, options: [String], expected: String) throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = Self.fixtures.appendingPathComponent(fixture).path
        let lenient = try Tool.run(["render", input, "-o", "chat.pdf"] + options, in: dir)
        #expect(lenient.status == 0, "\(lenient.stderr)")
        #expect(lenient.stderr.contains("shown as a placeholder"), "\(lenient.stderr)")
        for (format, out) in [("pdf", "strict.pdf"), ("json", "strict.json")] {
            let command = format == "json" ? "convert" : "render"
            let strict = try Tool.run([command, input, "-o", out, "--strict"] + options, in: dir)
            #expect(strict.status != 0, "\(command)")
            #expect(strict.stderr.contains(expected), "\(command): \(strict.stderr)")
            #expect(strict.stderr.contains("--strict refuses missing media"), "\(strict.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(out).path), "\(command) wrote \(out)")
        }
    }

    @Test("--all --strict: the conversation with missing media fails by name, the others are written, exit non-zero")
    func strictAll() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["render", Self.fixtures.appendingPathComponent("imessage/chat.db").path, "--all", "-o", "out", "--strict"], in: dir)
        #expect(r.status != 0)
        #expect(r.stderr.contains("error: +15550102000: ") && r.stderr.contains("IMG_0421.HEIC: no such file"), "\(r.stderr)")
        #expect(r.stderr.contains("out: 1 conversation written, 1 failed"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/Weekend plans.pdf").path))
    }

    @Test(
        "a PNG taller than one image can be: numbered page images on their own, with a note; an explicit page height past the limit: an error naming the file and what to do, nothing written"
    )
    func tooTall() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.conversation((0..<500).map { ("Message number \($0) with a few words to wrap", nil) })
            .write(to: dir.appendingPathComponent("long.json"))
        let r = try Tool.run(["render", "long.json", "-o", "long.png"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("note: long.png: one image would be taller than a PNG can be (32,767 px); written as "), "\(r.stderr)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("long-") && $0.hasSuffix(".png") }
        #expect(pages.count > 10 && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("long.png").path), "\(pages)")
        // Standard output holds one image: an error, not a partial picture.
        let stdout = try Tool.run(["render", "long.json", "-o", "-", "--format", "png"], in: dir)
        #expect(stdout.status != 0 && stdout.stdout.isEmpty && stdout.stderr.contains("taller than one PNG can be"), "\(stdout.stderr)")

        let tall = try Tool.run(["render", "long.json", "-o", "tall.png", "--pages", "--page-height", "20000", "--scale", "2"], in: dir)
        #expect(tall.status != 0)
        #expect(
            tall.stderr.contains(
                "tall.png: cannot write: a page is 40,000 px tall at scale 2, more than one PNG image can be (32,767 px); use a smaller --page-height"),
            "\(tall.stderr)")
        #expect(!tall.stderr.contains("surface size"), "\(tall.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("tall") }.isEmpty)
    }

    @Test("a damaged zip: what is wrong in words, no ZIPFoundation case names")
    func damagedZip() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("PK\u{3}\u{4}not really a zip".utf8).write(to: dir.appendingPathComponent("WhatsApp Chat.zip"))
        let r = try Tool.run(["render", "WhatsApp Chat.zip", "-o", "c.pdf"], in: dir)
        #expect(r.status != 0)
        #expect(
            r.stderr.contains("WhatsApp Chat.zip: is not a readable zip archive (its end-of-directory record is missing: cut short or not a zip"),
            "\(r.stderr)")
        #expect(!r.stderr.contains("missingEndOfCentralDirectoryRecord") && !r.stderr.contains("ArchiveError"), "\(r.stderr)")
    }

    @Test("--since/--until that leave no message: an error, nothing written (render, convert); --all: a warning, no files, non-zero")
    func emptyRange() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.conversation([("one", nil), ("two", nil)]).write(to: dir.appendingPathComponent("chat.json"))
        for (command, out) in [("render", "c.png"), ("convert", "c.json")] {
            let r = try Tool.run([command, "chat.json", "-o", out, "--since", "2030-01-01"], in: dir)
            #expect(r.status != 0, "\(command)")
            #expect(r.stderr.contains("chat.json: none of its 2 messages are inside --since 2030-01-01; nothing written"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(out).path))
        }
        // Inside the range: written as before.
        let ok = try Tool.run(["render", "chat.json", "-o", "c.png", "--since", "2024-05-01T08:01"], in: dir)
        #expect(ok.status == 0, "\(ok.stderr)")
        let all = try Tool.run(
            [
                "render", Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path, "--all", "-o", "all",
                "--until", "2001-01-01"
            ], in: dir)
        #expect(all.status != 0)
        #expect(all.stderr.contains("warning: 3 conversations have no messages inside --since/--until; not written"), "\(all.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("all").path).filter { !$0.hasPrefix(".") && $0 != "index.html" }
                .isEmpty)
    }

    @Test("--all --update in another format removes the files of the format it replaced; the same format keeps them")
    func updateAfterFormatChange() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = Self.fixtures.appendingPathComponent("sms/sms-backup.xml").path
        func files() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("out").path).filter { !$0.hasPrefix(".") }.sorted()
        }
        #expect(try Tool.run(["render", input, "--all", "-o", "out", "--format", "pdf"], in: dir).status == 0)
        #expect(try files().filter { $0.hasSuffix(".pdf") }.count == 3)
        let again = try Tool.run(["render", input, "--all", "-o", "out", "--format", "pdf", "--update"], in: dir)
        #expect(again.status == 0 && !again.stderr.contains("removed"), "\(again.stderr)")
        #expect(try files().filter { $0.hasSuffix(".pdf") }.count == 3)
        let html = try Tool.run(["render", input, "--all", "-o", "out", "--format", "html", "--update"], in: dir)
        #expect(html.status == 0, "\(html.stderr)")
        #expect(html.stderr.contains("note: removed 3 files of the earlier run's other options (--update)"), "\(html.stderr)")
        let now = try files()
        #expect(now.filter { $0.hasSuffix(".pdf") }.isEmpty, "\(now)")
        #expect(now.filter { $0.hasSuffix(".html") && $0 != "index.html" }.count == 3, "\(now)")
    }
}
