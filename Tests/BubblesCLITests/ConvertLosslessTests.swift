import BubbleCore
import BubbleImport
import Foundation
import Testing

/// `bubbles convert` to native JSON keeps everything the model holds: every importer fixture and
/// the bundled samples, read back, give the same model field by field (files compared by their
/// bytes, wherever convert put them) and the same PNG pixel for pixel.
@Suite("bubbles convert is lossless", .serialized)
struct ConvertLosslessTests {
    static let cases: [(String, [String])] =
        ConvertCLITests.cases.map { ($0.0, $0.1) }
        + [("../../../Sources/BubbleCore/Samples/features.json", []), ("../../../Sources/BubbleCore/Samples/demo.json", [])]

    /// A file by its bytes (size and FNV-1a), so a photo copied elsewhere compares equal.
    static func content(_ path: String?, base: String) -> String? {
        guard let path else { return nil }
        let full = path.hasPrefix("/") ? path : (base as NSString).appendingPathComponent(path)
        guard let data = FileManager.default.contents(atPath: full) else { return "missing:" + (path as NSString).lastPathComponent }
        var h: UInt64 = 0xcbf29ce484222325
        for b in data { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return "file:\(data.count):\(String(h, radix: 16))"
    }

    static func normalised(_ c: Conversation, base: String) -> Conversation {
        var c = c
        for i in c.participants.indices { c.participants[i].avatar = content(c.participants[i].avatar, base: base) }
        for i in c.messages.indices {
            for j in c.messages[i].images.indices { c.messages[i].images[j].path = content(c.messages[i].images[j].path, base: base) }
            if c.messages[i].attachment != nil {
                c.messages[i].attachment!.path = content(c.messages[i].attachment!.path, base: base)
                c.messages[i].attachment!.poster = content(c.messages[i].attachment!.poster, base: base)
            }
        }
        return c
    }

    static func importOptions(_ args: [String]) -> ImportOptions {
        var options = ImportOptions(timeZone: TimeZone(identifier: "UTC")!)
        var i = 0
        while i + 1 < args.count {
            if args[i] == "--me" { options.me = args[i + 1] }
            if args[i] == "--chat" { options.chat = args[i + 1] }
            i += 2
        }
        return options
    }

    @Test("export → JSON → the same model and the same PNG", arguments: cases)
    func roundTrip(fixture: String, options: [String]) throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = URL(fileURLWithPath: ConvertCLITests.fixtures.appendingPathComponent(fixture).path).standardizedFileURL.path
        let c = try Tool.run(["convert", input, "-o", "a.json", "--tz", "UTC"] + options, in: dir)
        #expect(c.status == 0, "\(c.stderr)")

        let a = try Importer.load(path: input, options: Self.importOptions(options))
        let b = try Importer.load(path: dir.appendingPathComponent("a.json").path, options: ImportOptions(timeZone: TimeZone(identifier: "UTC")!))
        defer { for f in [a.attachmentsFolder, b.attachmentsFolder].compactMap({ $0 }) { try? FileManager.default.removeItem(atPath: f) } }
        let exportFolder = (input as NSString).deletingLastPathComponent
        let x = Self.normalised(a.conversation, base: exportFolder), y = Self.normalised(b.conversation, base: dir.path)
        #expect(x.title == y.title, "\(fixture): title")
        #expect(x.participants == y.participants, "\(fixture): participants \(x.participants) vs \(y.participants)")
        #expect(x.typing == y.typing, "\(fixture): typing \(x.typing) vs \(y.typing)")
        #expect(a.me == b.me, "\(fixture): me")
        #expect(x.messages.count == y.messages.count, "\(fixture): \(x.messages.count) vs \(y.messages.count) messages")
        for (i, (m, n)) in zip(x.messages, y.messages).enumerated() where m != n {
            Issue.record("\(fixture): message \(i) differs:\n  export: \(m)\n  JSON:   \(n)")
        }

        let direct = try Tool.run(["render", input, "-o", "direct.png", "--tz", "UTC"] + options, in: dir)
        let via = try Tool.run(["render", "a.json", "-o", "via.png", "--tz", "UTC"], in: dir)
        #expect(direct.status == 0 && via.status == 0, "\(direct.stderr)\(via.stderr)")
        let p = try PNGPixels(dir.appendingPathComponent("direct.png")), q = try PNGPixels(dir.appendingPathComponent("via.png"))
        #expect(p.width == q.width && p.height == q.height, "\(fixture): \(p.width)×\(p.height) vs \(q.width)×\(q.height)")
        #expect(p.pixels == q.pixels, "\(fixture): the pictures differ")
    }

    @Test("CSV: every attachment's column names the file convert copied (OUT_files/…), which is there")
    func csvPaths() throws {
        let folder = try MediaCLITests.export()
        let dir = folder.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["convert", folder.path, "--me", "Ben", "-o", "chat.csv", "--format", "csv", "--assets", "folder", "--tz", "UTC"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try CSVReader.parse(Data(contentsOf: dir.appendingPathComponent("chat.csv")))
        let files = rows.dropFirst().map { $0[5] }.filter { !$0.isEmpty }
        // Photo, sticker, HEIC, two videos, voice note, AMR, document, contact card, the corrupt photo.
        #expect(files.count == 10, "\(files)")
        for f in files {
            #expect(f.hasPrefix("chat_files/"), "\(f)")
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(f).path), "\(f) is not there")
        }
    }
}
