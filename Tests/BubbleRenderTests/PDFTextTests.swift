import BubbleCore
import Foundation
import BubbleTestSupport
import Testing
@testable import BubbleRender
@testable import BubbleText

/// The text a PDF reader extracts (and searches) is the messages' own, in every script and with
/// both text engines; the SVG's `<text>` too.
@Suite("PDF and SVG text in every script", .serialized)
struct PDFTextTests {
    static let scripts: [(name: String, texts: [String])] = [
        (
            "Chinese",
            [
                "今天我们在火车站见面", "明日月曜日，日本的日和月",
                String(repeating: "我们明天早上九点在火车站的出口见面吧", count: 4)
            ]
        ),
        (
            "Japanese",
            [
                "今日は火曜日です", "日本語の文章を検索できますか？",
                String(repeating: "明日の朝九時に駅の改札口で会いましょう。", count: 3)
            ]
        ),
        (
            "Arabic",
            [
                "مرحبا بالعالم", "كيف حالك اليوم؟ أنا بخير، شكرا",
                String(repeating: "سنلتقي غدا في محطة القطار في الساعة التاسعة صباحا ", count: 3)
                    .trimmingCharacters(in: .whitespaces)
            ]
        ),
        // (No ASCII comma between Hebrew words: pdftotext's own bidi reordering treats it as
        // left-to-right and moves the word after it to the line's start — in any PDF.)
        (
            "Hebrew",
            [
                "שלום עולם", "מה שלומך היום? אני בסדר תודה",
                String(repeating: "נפגש מחר בבוקר בתחנת הרכבת ", count: 4)
                    .trimmingCharacters(in: .whitespaces)
            ]
        ),
        (
            "emoji",
            [
                "Family 👨‍👩‍👧 and flags 🇯🇵🇫🇷 then 👍🏽 and ❤️ office",
                "😀😃😄 three in a row", "👩🏽‍💻 codes; 🏳️‍🌈 waves"
            ]
        ),
        ("Latin ligatures", ["office affluent waffle fjord", "Ünïcödé ß æ œ ﬁ stays as written"])
    ]

    static let cases: [(engine: TextEngineKind, script: Int)] =
        [TextEngineKind.fast, .pango].flatMap { e in scripts.indices.map { (e, $0) } }

    /// What a reader's text is compared on: whitespace runs as one space, none beside CJK
    /// characters (lines break inside CJK text, where there is no space) or punctuation (a reader
    /// re-orders right-to-left text from the glyphs' places and may put a comma on either side of
    /// its space), no bidi marks (pdftotext wraps right-to-left lines in U+202B…U+202C). A space
    /// between two letters stays: "با لعالم" is not "بالعالم".
    static func normalised(_ s: String) -> String {
        func joins(_ u: Unicode.Scalar?) -> Bool {
            guard let u else { return true }
            if (0x3000...0x9FFF).contains(u.value) || (0xFF00...0xFFEF).contains(u.value) { return true }
            switch u.properties.generalCategory {
            case .otherPunctuation, .initialPunctuation, .finalPunctuation, .openPunctuation, .closePunctuation, .dashPunctuation: return true
            default: return false
            }
        }
        var scalars: [Unicode.Scalar] = []
        for u in s.unicodeScalars where !(0x200E...0x200F).contains(u.value) && !(0x202A...0x202E).contains(u.value) {
            if u.properties.isWhitespace {
                if let last = scalars.last, last != " " { scalars.append(" ") }
            } else {
                if scalars.last == " ", joins(u) || joins(scalars.dropLast().last) { scalars.removeLast() }
                scalars.append(u)
            }
        }
        if scalars.last == " " { scalars.removeLast() }
        return String(String.UnicodeScalarView(scalars))
    }

    func render(_ texts: [String], engine: TextEngineKind, format: OutputFormat) throws -> (URL, String) {
        TestFonts.pin()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-pdftext-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let (theme, folder) = try ThemeLibrary.load("imessage")
        let r = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/", engine: engine.makeDrawingEngine())
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)
        let conv = Conversation(
            title: "Scripts", participants: [Participant(id: "me", name: "Me"), Participant(id: "yu", name: "Yu")],
            messages: texts.enumerated().map { i, text in
                Message(
                    sender: i % 2 == 0 ? "yu" : "me", direction: i % 2 == 0 ? .incoming : .outgoing,
                    date: t0.addingTimeInterval(Double(i) * 60), text: text)
            })
        var options = RenderOptions(format: format)
        options.timeZone = TimeZone(identifier: "UTC")!
        let path = dir.appendingPathComponent("chat.\(format.rawValue)").path
        try r.render(conv, to: path, options: options)
        return (dir, path)
    }

    @Test("pdftotext finds every message as written", arguments: cases)
    func pdf(_ c: (engine: TextEngineKind, script: Int)) throws {
        let script = Self.scripts[c.script]
        let (dir, path) = try render(script.texts, engine: c.engine, format: .pdf)
        defer { try? FileManager.default.removeItem(at: dir) }
        let extracted = Self.normalised(try run("/usr/bin/pdftotext", [path, "-"]))
        for text in script.texts {
            #expect(
                extracted.contains(Self.normalised(text)),
                "\(c.engine) \(script.name): \(text) not in the PDF's text: \(extracted)")
        }
    }

    @Test("the SVG's text is every message as written", arguments: cases)
    func svg(_ c: (engine: TextEngineKind, script: Int)) throws {
        let script = Self.scripts[c.script]
        let (dir, path) = try render(script.texts, engine: c.engine, format: .svg)
        defer { try? FileManager.default.removeItem(at: dir) }
        let probe = SVGProbe(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(probe.parsed)
        let texts = probe.texts.map(Self.normalised)
        for text in script.texts {
            #expect(texts.contains(Self.normalised(text)), "\(c.engine) \(script.name): \(text) not an SVG text")
        }
    }
}
