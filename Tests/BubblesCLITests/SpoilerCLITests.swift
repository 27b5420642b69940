import BubbleTestSupport
import Foundation
import Testing

/// A Telegram message with a spoiler and a reply quoting it: the hidden words are in no file a
/// user shares — the reply's quote in PNG/PDF/HTML, the PDF's text, CSV — unless `--reveal-spoilers`.
@Suite("Spoilers stay hidden wherever a text is repeated", .serialized)
struct SpoilerCLITests {
    static let export = #"""
        {"name": "Ana Ruiz", "type": "personal_chat", "id": 7, "messages": [
          {"id": 1, "type": "message", "date": "2024-03-05T14:22:11", "date_unixtime": "1709648531", "from": "Ana Ruiz", "from_id": "user7",
           "text": ["The killer is ", {"type": "spoiler", "text": "the butler"}, ", really"]},
          {"id": 2, "type": "message", "date": "2024-03-05T14:23:11", "date_unixtime": "1709648591", "from": "Ben", "from_id": "user8",
           "reply_to_message_id": 1, "text": "No way"}
        ]}
        """#

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-spoiler-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Self.export.write(to: dir.appendingPathComponent("result.json"), atomically: true, encoding: .utf8)
        return dir
    }

    func pdfText(_ pdf: URL) throws -> String {
        try pdftotext(pdf.path).split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test("PDF: neither the bubble nor the reply's quote holds the spoiler's text; --reveal-spoilers shows it")
    func pdf() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["render", "result.json", "-o", "hidden.pdf"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let hidden = try pdfText(dir.appendingPathComponent("hidden.pdf"))
        #expect(hidden.contains("No way") && hidden.contains("The killer is"), "\(hidden)")
        #expect(!hidden.contains("butler"), "\(hidden)")
        let shown = try Tool.run(["render", "result.json", "-o", "shown.pdf", "--reveal-spoilers"], in: dir)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(try pdfText(dir.appendingPathComponent("shown.pdf")).contains("the butler"))
    }

    @Test("HTML: the reply's quote masks the spoiler (the bubble keeps it behind a click)")
    func html() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Tool.run(["render", "result.json", "-o", "chat.html"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let html = try String(contentsOf: dir.appendingPathComponent("chat.html"), encoding: .utf8)
        let quotes = html.components(separatedBy: "<blockquote").dropFirst().map { $0.components(separatedBy: "</blockquote>")[0] }
        #expect(quotes.count == 1)
        #expect(quotes.allSatisfy { !$0.contains("butler") && $0.contains("░") }, "\(quotes)")
        // The bubble itself: the text only inside the spoiler element, revealed by a click.
        #expect(html.components(separatedBy: "butler").count == 2)
        #expect(html.contains("class=\"sp\""))
    }

    @Test("CSV: the spoiler is masked unless --reveal-spoilers")
    func csv() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try Tool.run(["convert", "result.json", "-o", "hidden.csv"], in: dir).status == 0)
        let hidden = try String(contentsOf: dir.appendingPathComponent("hidden.csv"), encoding: .utf8)
        #expect(hidden.contains("The killer is ░░░░░░░░░░, really") && !hidden.contains("butler"), "\(hidden)")
        #expect(try Tool.run(["convert", "result.json", "-o", "shown.csv", "--reveal-spoilers"], in: dir).status == 0)
        let shown = try String(contentsOf: dir.appendingPathComponent("shown.csv"), encoding: .utf8)
        #expect(shown.contains("The killer is the butler, really"))
        // JSON is lossless: the text and its span are kept.
        #expect(try Tool.run(["convert", "result.json", "-o", "all.json"], in: dir).status == 0)
        let json = try String(contentsOf: dir.appendingPathComponent("all.json"), encoding: .utf8)
        #expect(json.contains("the butler") && json.contains("\"spoiler\""))
    }
}
