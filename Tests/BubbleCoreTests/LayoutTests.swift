import BubbleTestSupport
import Foundation
import Testing
@testable import BubbleCore

/// 16 pt monospace: every character 8 pt wide, lines 20 pt high.
private let engine = MonospaceTextEngine()
private let style = LayoutStyle()  // seed 001's padding (4, 22, 7, 16 for incoming), 70 %, margin 10
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14 22:13:20 UTC

private func message(
    _ text: String?, _ direction: Direction = .incoming, at seconds: Double = 0,
    sender: String? = nil, image: ImageAttachment? = nil
) -> Message {
    Message(
        sender: sender ?? (direction == .incoming ? "them" : "me"), direction: direction,
        date: t0.addingTimeInterval(seconds), text: text, image: image)
}

@Suite("Monospace text engine keeps the TextEngine contract")
struct MonospaceEngineTests {
    func lines(_ text: String, width: Double) throws -> [String] {
        let prepared = try engine.prepare(text, style: TextStyle(size: 16))
        let layout = try engine.layout(prepared, maxWidth: width, maxLines: nil)
        let bytes = Array(text.utf8)
        return layout.lines.map { String(decoding: bytes[$0.range], as: UTF8.self).trimmingCharacters(in: .whitespaces) }
    }

    @Test func wrapsBetweenWords() throws {
        // 8 pt a character: "Here's a" is 64 pt, "longer one," would be 88 > 80.
        #expect(try lines("Here's a longer one, away from the margins", width: 80) == ["Here's a", "longer", "one, away", "from the", "margins"])
        #expect(try lines("Here's a little bubble", width: 220) == ["Here's a little bubble"])
    }
    @Test func keepsNewlines() throws {
        #expect(try lines("Bubbles respect\nnewlines\nin\nthe\nsource text ...", width: 180) == ["Bubbles respect", "newlines", "in", "the", "source text ..."])
    }
    @Test func breaksInsideAWordOnlyWhenItMust() throws {
        // 37 letters = 296 pt > 280: the word breaks at 35 letters (280 pt); the rest wraps
        // between words ("en words, unless a really long" + " word" = 35 characters fits exactly).
        let result = try lines("Andnormallyaddlinebreaksonlyinbetween words, unless a really long word too", width: 280)
        #expect(result == ["Andnormallyaddlinebreaksonlyinbetwe", "en words, unless a really long word", "too"])
    }
    @Test func emptyAndBadWidths() throws {
        let p = try engine.prepare("", style: TextStyle(size: 16))
        #expect(try engine.layout(p, maxWidth: 100, maxLines: nil) == .empty)
        for w in [0.0, -5, .nan, .infinity] {
            do {
                _ = try engine.layout(p, maxWidth: w, maxLines: nil)
                Issue.record("width \(w) accepted")
            } catch {
                guard case .invalidWidth(let got) = error else { Issue.record("wrong error \(error)"); continue }
                #expect(got == w || (got.isNaN && w.isNaN))
            }
        }
    }
    @Test func maxLinesTruncates() throws {
        let p = try engine.prepare("one two three four five six", style: TextStyle(size: 16))
        let l = try engine.layout(p, maxWidth: 40, maxLines: 2)
        #expect(l.lines.count == 2 && l.isTruncated)
    }
}

@Suite("Bubble layout")
struct BubbleLayoutTests {
    let measurer = BubbleMeasurer(style: style, engine: engine)

    @Test("text inside padding, incoming on the left")
    func incoming() throws {
        let b = try measurer.layout(message("Here's a little bubble"), rowWidth: 400)
        // 22 characters × 8 = 176 wide, one 20-pt line; padding left 22, right 16, top 4, bottom 7.
        #expect(b.bubble == Rect(x: 10, y: 0, width: 214, height: 31))
        #expect(b.textFrame == Rect(x: 32, y: 4, width: 176, height: 20))
        #expect(b.text.lines.count == 1)
        #expect(b.imageFrame == nil)
    }

    @Test("outgoing on the right, padding mirrored")
    func outgoing() throws {
        let b = try measurer.layout(message("Here's a little bubble", .outgoing), rowWidth: 400)
        #expect(b.bubble == Rect(x: 176, y: 0, width: 214, height: 31))
        #expect(b.bubble.maxX == 390)
        #expect(try #require(b.textFrame).minX == 192)  // outgoing left padding is 16
    }

    @Test("max width is a share of the row, plus an absolute cap")
    func maxWidth() throws {
        let long = String(repeating: "word ", count: 40)
        let b = try measurer.layout(message(long), rowWidth: 400)
        #expect(b.bubble.width <= 280)
        #expect(b.textWrapWidth == 280 - 38)
        var capped = style
        capped.maxBubbleWidth = 200
        let c = try BubbleMeasurer(style: capped, engine: engine).layout(message(long), rowWidth: 400)
        #expect(c.bubble.width <= 200)
        #expect(c.textWrapWidth == 200 - 38)
        var seed002 = style
        seed002.maxWidthShare = 0.65
        let d = try BubbleMeasurer(style: seed002, engine: engine).layout(message(long), rowWidth: 400)
        #expect(d.textWrapWidth == 260 - 38)
    }

    @Test("minimum size from the art's caps")
    func minimum() throws {
        let b = try measurer.layout(message("k"), rowWidth: 400)
        #expect(b.bubble.size == Size(width: 46, height: 31))  // 8 + 38 wide; 20 + 11 high
        let tiny = try measurer.layout(message(""), rowWidth: 400)
        #expect(tiny.bubble.size == style.minimumBubbleSize)
        #expect(tiny.textFrame == nil)
    }

    @Test("balanced width: narrowest with the same line count")
    func balanced() throws {
        var b = style
        b.widthMode = .balanced
        let text = "aaaa bbbb cccc dddd eeee ffff gggg"  // 34 characters = 272 pt > 242
        let fit = try measurer.layout(message(text), rowWidth: 400)
        let bal = try BubbleMeasurer(style: b, engine: engine).layout(message(text), rowWidth: 400)
        #expect(fit.text.lines.count == 2)
        #expect(bal.text.lines.count == 2)
        // Fit fills the first line (6 words, 232 pt) and leaves "gggg" alone; balanced puts
        // 4 words (152 pt) over 3.
        #expect(fit.text.width == 232)
        #expect(bal.text.width == 152)
        #expect(bal.bubble.width == 152 + 38)
        // The renderer gets the width that reproduces these lines.
        let again = try engine.layout(engine.prepare(text, style: style.text), maxWidth: bal.textWrapWidth, maxLines: nil)
        #expect(again == bal.text)
    }

    @Test("photos scale to the bubble's max width and max height, keeping aspect ratio")
    func images() throws {
        let wide = try measurer.layout(message(nil, image: ImageAttachment(width: 1000, height: 500)), rowWidth: 400)
        #expect(wide.imageFrame == Rect(x: 20, y: 4, width: 260, height: 130))
        #expect(wide.bubble == Rect(x: 10, y: 0, width: 280, height: 138))
        let tall = try measurer.layout(message(nil, image: ImageAttachment(width: 300, height: 1200)), rowWidth: 400)
        #expect(tall.imageFrame?.size == Size(width: 60, height: 240))
        let small = try measurer.layout(message(nil, image: ImageAttachment(width: 40, height: 30)), rowWidth: 400)
        #expect(small.imageFrame?.size == Size(width: 40, height: 30))  // never enlarged
        let withText = try measurer.layout(message("Nice", image: ImageAttachment(width: 1000, height: 500)), rowWidth: 400)
        #expect(try #require(withText.textFrame).minY == 138)  // 4 inset + 130 photo + 4 spacing
        #expect(withText.bubble.height == 4 + 130 + 4 + 20 + 7)
    }

    @Test("a 0×0 or NaN photo gets the placeholder size")
    func brokenImage() throws {
        for size in [(0.0, 0.0), (.nan, 10), (-4, 10)] {
            let b = try measurer.layout(message(nil, image: ImageAttachment(width: size.0, height: size.1)), rowWidth: 400)
            #expect(b.imageIsPlaceholder)
            #expect(b.imageFrame?.size == style.placeholderImageSize)
        }
    }

    @Test("bad widths are typed errors")
    func badWidths() {
        #expect(throws: LayoutError.invalidWidth(0)) { try measurer.layout(message("x"), rowWidth: 0) }
        #expect(throws: LayoutError.invalidWidth(-3)) { try measurer.layout(message("x"), rowWidth: -3) }
        #expect(throws: LayoutError.self) { try measurer.layout(message("x"), rowWidth: .nan) }
        #expect(throws: LayoutError.rowTooNarrow(width: 40, minimum: style.minimumRowWidth)) {
            try measurer.layout(message("x"), rowWidth: 40)
        }
    }

    @Test("1 MB of text and control characters lay out")
    func hugeText() throws {
        let big = String(repeating: "lorem ipsum dolor sit amet ", count: 40_000)
        let b = try measurer.layout(message(big), rowWidth: 400)
        #expect(b.text.lines.count > 1000)
        #expect(b.bubble.width <= 280)
        let control = try measurer.layout(message("a\u{0}b\u{7}c\u{1B}[0m"), rowWidth: 400)
        #expect(control.text.lines.count == 1)
    }
}

@Suite("Conversation layout")
struct ConversationLayoutTests {
    let layouter = ConversationLayouter(style: style, engine: engine, timeZone: TimeZone(identifier: "UTC")!)

    @Test("day separators, groups, tails and spacing")
    func structure() throws {
        let conversation = Conversation(messages: [
            message("Hi", at: 0),
            message("How are you?", at: 30),  // same sender, 30 s later: same group
            message("Fine", .outgoing, at: 60),
            message("Later", .outgoing, at: 60 + 600),  // 10 min later: new group
            message("Next day", at: 86_400),
            .system("Alice left", date: t0.addingTimeInterval(86_500))
        ])
        let layout = try layouter.layout(conversation, width: 400)
        let kinds = layout.rows.map { row -> String in
            switch row.content {
            case .daySeparator(let l): return "day:\(l.string)"
            case .system(_, let l): return "system:\(l.string)"
            case .message(let i, let b): return "m\(i)\(b.hasTail ? "+tail" : "")"
            case .typing: return "typing"
            }
        }
        #expect(
            kinds == [
                "day:Tuesday, 14 November 2023", "m0", "m1+tail", "m2+tail", "m3+tail",
                "day:Wednesday, 15 November 2023", "m4+tail", "system:Alice left"
            ])
        // Grouped rows sit 2 pt apart, others 10 pt.
        let gaps = zip(layout.rows, layout.rows.dropFirst()).map { $1.frame.minY - $0.frame.maxY }
        #expect(gaps == [10, 2, 10, 10, 10, 10, 10])
        #expect(layout.height == layout.rows.last!.frame.maxY)
        // System lines are centred and have no bubble.
        if case .system(_, let label) = layout.rows.last!.content {
            #expect(abs(label.frame.midX - 200) < 1e-9)
        }
        #expect(layout.rows.last!.bubble == nil)
    }

    @Test("time label above the first bubble of each group (seed 000)")
    func timeLabels() throws {
        var s = style
        s.showsTimeAboveGroup = true
        let l = ConversationLayouter(style: s, engine: engine, timeZone: TimeZone(identifier: "UTC")!)
        let layout = try l.layout(Conversation(messages: [message("Hi", at: 0), message("there", at: 10)]), width: 400)
        let first = try #require(layout.rows[1].bubble), second = try #require(layout.rows[2].bubble)
        #expect(first.labels.map(\.string) == ["22:13"])
        #expect(first.bubble.minY == first.labels[0].frame.maxY + s.timeLabelSpacing)
        #expect(second.labels.isEmpty)
    }

    @Test("re-layout at a new width equals a fresh layout at that width")
    func relayout() throws {
        let conversation = SyntheticConversation.make(count: 200, seed: 7)
        let a = try layouter.layout(conversation, width: 320)
        let b = try layouter.layout(conversation, width: 600)
        #expect(a != b)
        #expect(a.rows.count == b.rows.count)
        #expect(try layouter.layout(conversation, width: 320) == a)
    }

    @Test("re-layout reusing the previous layout equals a fresh layout; a stale previous is ignored", arguments: [5, 6])
    func relayoutReusing(seed: UInt64) throws {
        let conversation = SyntheticConversation.make(count: 300, seed: seed)
        let first = try layouter.layout(conversation, width: 375)
        for width in [240.0, 414, 820] {
            let reused = try layouter.layout(conversation, width: width, reusing: first)
            #expect(reused == (try layouter.layout(conversation, width: width)))
            // And again from the re-layout (its memos are carried on).
            #expect(try layouter.layout(conversation, width: 375, reusing: reused) == first)
        }
        // Appending after a re-layout goes on as after a full layout.
        var reused = try layouter.layout(conversation, width: 414, reusing: first)
        var full = try layouter.layout(conversation, width: 414)
        let extra = SyntheticConversation.make(count: 20, seed: seed + 100).messages
        for m in extra { try layouter.append(m, to: &reused); try layouter.append(m, to: &full) }
        #expect(reused == full)
        // A previous layout of another conversation (other message count) is not used.
        let shorter = Conversation(participants: conversation.participants, messages: Array(conversation.messages.prefix(100)))
        #expect(
            try layouter.layout(conversation, width: 414, reusing: layouter.layout(shorter, width: 375))
                == layouter.layout(conversation, width: 414))
    }

    @Test("property: appending one by one equals laying out the whole conversation", arguments: [1, 2, 3, 4])
    func appendEqualsFull(seed: UInt64) throws {
        let conversation = SyntheticConversation.make(count: 300, seed: seed)
        let full = try layouter.layout(conversation, width: 375)
        // Participants decide sender names and avatars (a group chat): start with them.
        var incremental = try layouter.layout(Conversation(participants: conversation.participants), width: 375)
        for m in conversation.messages { try layouter.append(m, to: &incremental) }
        #expect(incremental == full)
    }

    @Test("property: rows(in:) equals a brute-force scan", arguments: [11, 12, 13])
    func visibleRows(seed: UInt64) throws {
        let conversation = SyntheticConversation.make(count: 400, seed: seed)
        let layout = try layouter.layout(conversation, width: 375)
        var rng = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let y = Double(rng.next() % UInt64(layout.height + 200)) - 100
            let h = Double(rng.next() % 900)
            let rect = Rect(x: 0, y: y, width: 375, height: h)
            let brute = layout.rows.indices.filter {
                layout.rows[$0].frame.maxY > rect.minY && layout.rows[$0].frame.minY < rect.maxY
            }
            #expect(Array(layout.rowIndices(in: rect)) == brute, "rect \(rect)")
        }
    }

    @Test("property: rows never overlap; bubbles stay inside the row and the max width", arguments: [21, 22])
    func geometry(seed: UInt64) throws {
        for width in [240.0, 375, 820] {
            let conversation = SyntheticConversation.make(count: 300, seed: seed)
            let layout = try layouter.layout(conversation, width: width)
            let maxBubble = style.maxBubbleWidth(rowWidth: width)
            for (a, b) in zip(layout.rows, layout.rows.dropFirst()) { #expect(a.frame.maxY <= b.frame.minY) }
            for row in layout.rows {
                #expect(row.frame.height > 0)
                guard let bubble = row.bubble else { continue }
                let inRow = Rect(origin: .zero, size: row.frame.size)
                #expect(inRow.contains(bubble.bubble), "\(bubble.bubble) in \(inRow)")
                #expect(bubble.bubble.width <= maxBubble + 1e-9 || bubble.emojiOnly)
                if let text = bubble.textFrame { #expect(bubble.bubble.contains(text)) }
                if let image = bubble.imageFrame { #expect(bubble.bubble.contains(image)) }
                if bubble.direction == .outgoing {
                    #expect(abs(bubble.bubble.maxX - (width - style.sideMargin)) < 1e-9)
                } else {
                    // Group chats leave a column for avatars.
                    let indent = conversation.isGroup ? style.avatarSize + style.besideGap : 0
                    #expect(bubble.bubble.minX == style.sideMargin + indent)
                }
            }
        }
    }

    @Test("a width too narrow for the style is refused before anything is measured")
    func narrow() {
        #expect(throws: LayoutError.rowTooNarrow(width: 30, minimum: style.minimumRowWidth)) {
            try layouter.layout(SyntheticConversation.make(count: 3, seed: 1), width: 30)
        }
    }
}

@Suite("Caching text engine")
struct CachingTextEngineTests {
    @Test("gives the wrapped engine's layouts, computes each once, stays bounded")
    func cache() throws {
        let cache = CachingTextEngine(MonospaceTextEngine(), capacity: 8)
        let plain = MonospaceTextEngine()
        let texts = ["ok", "haha", "see you tomorrow", "ok", "haha", "ok"]
        for t in texts {
            let a = try cache.layout(cache.prepare(t, style: TextStyle(size: 16)), maxWidth: 100, maxLines: nil)
            let b = try plain.layout(plain.prepare(t, style: TextStyle(size: 16)), maxWidth: 100, maxLines: nil)
            #expect(a == b)
        }
        #expect(cache.misses == 3 && cache.hits == 3)
        for i in 0..<100 {
            _ = try cache.layout(cache.prepare("message \(i)", style: TextStyle(size: 16)), maxWidth: 100, maxLines: nil)
        }
        #expect(cache.count <= 8)
        // A different width or line limit is a different entry.
        let p = try cache.prepare("ok", style: TextStyle(size: 16))
        let before = cache.misses
        _ = try cache.layout(p, maxWidth: 90, maxLines: nil)
        _ = try cache.layout(p, maxWidth: 90, maxLines: 1)
        #expect(cache.misses == before + 2)
        #expect(throws: TextError.invalidWidth(0)) { try cache.layout(p, maxWidth: 0, maxLines: nil) }
    }

    @Test("a conversation laid out through the cache equals one laid out without it")
    func sameLayout() throws {
        let conversation = SyntheticConversation.make(count: 500, seed: 3)
        let utc = TimeZone(identifier: "UTC")!
        let direct = try ConversationLayouter(style: LayoutStyle(), engine: MonospaceTextEngine(), timeZone: utc)
            .layout(conversation, width: 375)
        let cached = try ConversationLayouter(style: LayoutStyle(), engine: CachingTextEngine(MonospaceTextEngine()), timeZone: utc)
            .layout(conversation, width: 375)
        #expect(direct == cached)
    }
}

@Suite("Time inside the bubble (WhatsApp)")
struct TimeInsideTests {
    var whatsapp: LayoutStyle {
        var s = style
        s.timeInsideBubble = true
        s.timeLabelText = TextStyle(size: 8)  // 4 pt a character: "09:41" is 20 pt wide, 10 pt high
        return s
    }

    @Test("after the last line when it fits")
    func fits() throws {
        let m = BubbleMeasurer(style: whatsapp, engine: engine)
        let b = try m.layout(message("Hi"), rowWidth: 400, time: "09:41")
        // "Hi" is 16 pt; + 6 gap + 20 = 42 pt of text box; the line stays one line high.
        #expect(b.bubble.width == 42 + 38)
        #expect(b.bubble.height == 31)
        let time = try #require(b.labels.first { $0.kind == .timeInside })
        let text = try #require(b.textFrame)
        #expect(time.frame == Rect(x: text.minX + 22, y: text.minY + 10, width: 20, height: 10))
        #expect(b.bubble.contains(time.frame))
    }

    @Test("on its own line below when the last line is too long")
    func ownLine() throws {
        let m = BubbleMeasurer(style: whatsapp, engine: engine)
        // 30 characters = 240 pt of 242 available: no room for the time.
        let b = try m.layout(message(String(repeating: "x", count: 30)), rowWidth: 400, time: "09:41")
        #expect(b.text.lines.count == 1)
        #expect(b.bubble.height == 31 + 10)
        let time = try #require(b.labels.first { $0.kind == .timeInside })
        let text = try #require(b.textFrame)
        #expect(time.frame.minY == text.minY + 20)
        #expect(time.frame.maxX == text.minX + 240)
        #expect(b.bubble.contains(time.frame))
    }

    @Test("every message of a group shows its time inside; above-group labels stay off")
    func everyMessage() throws {
        var t = whatsapp
        t.showsTimeAboveGroup = false
        let layout = try ConversationLayouter(style: t, engine: engine, timeZone: TimeZone(identifier: "UTC")!)
            .layout(Conversation(messages: [message("Hi", at: 0), message("again", at: 5)]), width: 400)
        let times = layout.rows.compactMap(\.bubble).map { $0.labels.map(\.kind) }
        #expect(times == [[.timeInside], [.timeInside]])
    }
}
