import BubbleCore
import Foundation
import BubbleTestSupport
import Testing
@testable import BubbleRender
@testable import BubbleText

/// Ordinary messages made up at random (seeded): words of several scripts, emoji at the start, in
/// the middle and at the end (skin tones, ZWJ families, flags), long words, URLs.
struct MessageGenerator {
    var state: UInt64

    static let latin = [
        "Ubrigens,", "das", "Meeting", "ist", "auf", "14", "Uhr", "verschoben", "The", "quick", "brown", "fox", "jumps", "over",
        "the", "lazy", "dog", "see", "you", "tomorrow", "at", "station", "Grüße", "aus", "München!", "ok", "yes!!", "well-known",
        "Wir", "treffen", "uns", "morgen", "um", "acht", "Sounds", "good", "to", "me.", "Can", "send", "file?", "¿Dónde", "está?",
        "I'm", "running", "late,", "sorry", "W", "Mm", "iiii"
    ]
    static let long = [
        "Donaudampfschifffahrtsgesellschaftskapitän", "Rindfleischetikettierungsüberwachungsaufgabenübertragungsgesetz",
        "Kraftfahrzeughaftpflichtversicherung", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    ]
    static let cjk = ["今天天气很好", "明天见", "我们在火车站见面吧", "駅で会いましょう", "ありがとうございます！", "안녕하세요", "谢谢你的帮助！", "カタカナ"]
    static let arabic = ["مرحبا", "كيف", "حالك", "أراك", "غدا", "في", "المحطة", "شكرا", "جزيلا"]
    static let hebrew = ["שלום", "מה", "נשמע", "נתראה", "מחר", "בתחנה", "תודה", "רבה"]
    static let emoji = ["📅", "👍🏽", "👨‍👩‍👧", "👨‍👩‍👧‍👦", "🇩🇪", "🇯🇵🇺🇸", "😀", "❤️", "🎉🎉", "👩🏽‍💻", "🏳️‍🌈", "✌🏿", "🙏", "😂😂😂", "👍"]
    static let urls = ["https://example.com/a/long/path?with=query&and=more", "www.bubblekit.dev/docs/text", "https://t.co/x"]

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func pick(_ list: [String]) -> String { list[below(list.count)] }

    mutating func message() -> String {
        let pool: [String]
        switch below(10) {
        case 0: pool = Self.cjk
        case 1: pool = Self.arabic
        case 2: pool = Self.hebrew
        case 3: pool = Self.latin + Self.cjk + Self.arabic + Self.hebrew
        default: pool = Self.latin
        }
        var words: [String] = (0..<(1 + below(14))).map { _ in pick(pool) }
        if below(8) == 0 { words.insert(pick(Self.long), at: below(words.count + 1)) }
        if below(10) == 0 { words.insert(pick(Self.urls), at: below(words.count + 1)) }
        let clusters = (0..<(1 + below(2))).map { _ in pick(Self.emoji) }.joined(separator: below(2) == 0 ? " " : "")
        switch below(20) {
        case 0..<8: words.append(clusters)  // at the end: the case that broke
        case 8..<11: words.insert(clusters, at: 0)
        case 11..<14: words.insert(clusters, at: below(words.count + 1))
        case 14: words = [clusters]
        case 15: words[words.count - 1] += clusters  // glued to the last word
        default: break
        }
        return words.joined(separator: " ")
    }

    static func messages(_ count: Int, seed: UInt64) -> [String] {
        var g = MessageGenerator(state: seed)
        return (0..<count).map { _ in g.message() }
    }
}

/// The seeds' one promise — a bubble wraps its text — checked on what is drawn, for messages
/// nobody wrote by hand (issue: an emoji drawn over the first word in 1 of 12). Each message text
/// in the scene the painters receive: every line inside the bubble's text rectangle and inside
/// the bubble's shape, no two lines on top of each other, as many lines as the measurer counted,
/// the bubble as tall as its lines; and in the PDF Cairo writes, no two words overlap.
/// `BUBBLEKIT_SWEEP=N` sweeps N messages instead of 2,000 (`make fuzz` runs 20,000).
@Suite("Every bubble fits its text: generated messages × widths × engines, checked on what is drawn", .serialized)
struct WrapPropertyTests {
    static var count: Int { Int(ProcessInfo.processInfo.environment["BUBBLEKIT_SWEEP"] ?? "") ?? 2_000 }
    static let widths: [Double] = [240, 300, 360, 414, 520, 700]
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func conversation(_ texts: [String]) -> Conversation {
        Conversation(
            title: "Sweep", participants: [Participant(id: "me", name: "Me"), Participant(id: "ann", name: "Ann")],
            messages: texts.enumerated().map { i, text in
                Message(
                    sender: i % 3 == 0 ? "me" : "ann", direction: i % 3 == 0 ? .outgoing : .incoming,
                    date: t0.addingTimeInterval(Double(i) * 3_700), text: text)
            })
    }

    /// The bounding box of a bubble's shape as drawn.
    static func bounds(_ item: SceneItem) -> Rect? {
        switch item {
        case let .art(_, rect, _, _): return rect
        case let .path(elements, _, _, _):
            var xs: [Double] = [], ys: [Double] = []
            for e in elements {
                switch e {
                case .move(let p), .line(let p): xs.append(p.x); ys.append(p.y)
                case let .curve(c1, c2, p): xs += [c1.x, c2.x, p.x]; ys += [c1.y, c2.y, p.y]
                case .close: break
                }
            }
            guard let x0 = xs.min(), let x1 = xs.max(), let y0 = ys.min(), let y1 = ys.max() else { return nil }
            return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        default: return nil
        }
    }

    /// Every item, with clipped and scaled groups opened (their offsets are the painters').
    static func flatten(_ items: [SceneItem]) -> [SceneItem] {
        items.flatMap { item -> [SceneItem] in
            if case let .clipped(_, inner) = item { return flatten(inner) }
            return [item]
        }
    }

    /// What is wrong with how `text` is drawn in `shapes` (nil: nothing).
    static func problem(_ text: SceneText, shapes: [Rect], engine: any TextEngine) -> String? {
        let layout = text.layout
        let size = text.style.size
        guard !layout.lines.isEmpty else { return "no lines" }
        let box = Rect(x: text.origin.x, y: text.origin.y, width: text.boxWidth, height: layout.height)
        let centre = Point(x: box.minX + box.width / 2, y: box.minY + box.height / 2)
        let around = shapes.filter { centre.x >= $0.minX && centre.x <= $0.maxX && centre.y >= $0.minY && centre.y <= $0.maxY }
        let e = 0.51
        if let bubble = around.min(by: { $0.width * $0.height < $1.width * $1.height }) {
            if box.minX < bubble.minX - e || box.maxX > bubble.maxX + e || box.minY < bubble.minY - e || box.maxY > bubble.maxY + e {
                return "text box \(box) outside its bubble \(bubble)"
            }
            if bubble.height < Double(layout.lines.count) * 0.75 * size { return "a bubble \(bubble.height) tall for \(layout.lines.count) lines" }
        } else if !EmojiText.isEmojiOnly(text.string) {
            // Up to three emoji alone are drawn large without a bubble (as Messages does).
            return "no bubble around its text box \(box)"
        }
        for (i, line) in layout.lines.enumerated() {
            if line.width > text.wrapWidth + e || line.width > text.boxWidth + e {
                return "line \(i) is \(line.width) wide in a box of \(text.boxWidth) (wrap \(text.wrapWidth))"
            }
            if line.top < -e || line.baseline > layout.height + e {
                return "line \(i) (top \(line.top), baseline \(line.baseline)) outside the text box of height \(layout.height)"
            }
            if i > 0 {
                let above = layout.lines[i - 1]
                // This line's glyphs start `ascent` above its baseline; the line above reaches at
                // least a fifth of the size below its own.
                if line.top < above.baseline + 0.2 * size - e {
                    return "line \(i) (top \(line.top)) drawn over line \(i - 1) (baseline \(above.baseline))"
                }
            }
        }
        guard let prepared = try? engine.prepare(text.string, style: text.style, spans: text.spans),
            let measured = try? engine.summary(prepared, maxWidth: text.wrapWidth, maxLines: text.maxLines)
        else { return "not measurable" }
        if measured.lineCount != layout.lines.count { return "\(layout.lines.count) lines drawn, \(measured.lineCount) measured" }
        if abs(measured.height - layout.height) > 0.01 { return "drawn \(layout.height) tall, measured \(measured.height)" }
        return nil
    }

    @Test(
        "generated messages at six widths with both engines: every line inside its bubble, none over another, as many as measured",
        arguments: TextEngineKind.allCases)
    func sweep(engine kind: TextEngineKind) throws {
        TestFonts.pin()
        let texts = MessageGenerator.messages(Self.count, seed: 0xB0BB1E)
        let mine = Set(texts)
        let (theme, folder) = try ThemeLibrary.load("imessage")
        let engine = kind.makeDrawingEngine()
        let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/", engine: engine)
        let conversation = Self.conversation(texts)
        var checked = 0, failures: [String] = []
        for width in Self.widths {
            var options = RenderOptions(format: .png)
            options.width = width
            options.timeZone = TimeZone(identifier: "UTC")!
            for page in try renderer.scene(for: conversation, options: options) {
                let items = Self.flatten(page.items)
                let shapes = items.compactMap(Self.bounds).filter { $0.height >= 10 && $0.width >= 10 && $0.width < width * 0.99 }
                for case .text(let text) in items where mine.contains(text.string) {
                    checked += 1
                    if let p = Self.problem(text, shapes: shapes, engine: engine), failures.count < 20 {
                        failures.append("width \(width): \(text.string.debugDescription): \(p)")
                    }
                }
            }
        }
        #expect(checked == texts.count * Self.widths.count, "\(checked) texts checked")
        #expect(failures.isEmpty, "\(kind): \(failures.count) bubbles drawn wrong, e.g.\n\(failures.joined(separator: "\n"))")
    }

    @Test("the issue's message: two lines at 520 pt, the emoji alone on the second, below the first")
    func theReportedMessage() throws {
        TestFonts.pin()
        for kind in TextEngineKind.allCases {
            let engine = kind.makeEngine()
            let text = "Ubrigens, das Meeting ist auf 14 Uhr verschoben 📅"
            let layout = try engine.layout(engine.prepare(text, style: TextStyle(size: 16)), maxWidth: 350, maxLines: nil)
            #expect(layout.lines.count == 2)
            let last = try #require(layout.lines.last)
            #expect(String(decoding: Array(text.utf8)[last.range], as: UTF8.self) == "📅")
            #expect(
                last.top >= layout.lines[0].baseline + 3,
                "\(kind): the emoji's line starts at \(last.top), the first line's baseline is at \(layout.lines[0].baseline)")
            #expect(layout.height > 36, "\(kind): \(layout.height)")
        }
    }

    @Test("pdftotext -bbox of a rendered sweep: no two words overlap, with both engines", arguments: TextEngineKind.allCases)
    func pdfWords(engine kind: TextEngineKind) throws {
        TestFonts.pin()
        let texts = MessageGenerator.messages(max(200, Self.count / 10), seed: 0x5EED)
        let (theme, folder) = try ThemeLibrary.load("imessage")
        let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/", engine: kind.makeDrawingEngine())
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-sweep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var words = 0, overlaps: [String] = []
        for width in [300.0, 520] {
            var options = RenderOptions(format: .pdf)
            options.width = width
            options.timeZone = TimeZone(identifier: "UTC")!
            let path = dir.appendingPathComponent("sweep-\(Int(width)).pdf").path
            _ = try renderer.render(Self.conversation(texts), to: path, options: options)
            let xml = try run("/usr/bin/pdftotext", ["-bbox", path, "-"])
            for page in xml.components(separatedBy: "<page ").dropFirst() {
                let boxes = page.matches(of: #/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>/#).map {
                    (Double($0.1)!, Double($0.2)!, Double($0.3)!, Double($0.4)!, String($0.5))
                }
                words += boxes.count
                for i in boxes.indices {
                    for j in boxes.indices where j > i {
                        let a = boxes[i], b = boxes[j]
                        let w = min(a.2, b.2) - max(a.0, b.0), h = min(a.3, b.3) - max(a.1, b.1)
                        if w > 1, h > 1, overlaps.count < 20 { overlaps.append("width \(width): \"\(a.4)\" \(a) and \"\(b.4)\" \(b)") }
                    }
                }
            }
        }
        #expect(words > texts.count * 4, "\(words) words read back")
        #expect(overlaps.isEmpty, "\(kind): words drawn over each other:\n\(overlaps.joined(separator: "\n"))")
    }
}
