import BubbleCore
import BubbleRender
import Foundation
import BubbleTestSupport
import BubbleText
import Testing

/// `ScrollingLayout` against the full `ConversationLayout`: the same rows, frames and heights,
/// built at once, by appends, and re-laid out at other widths (mostly by the height formula).
@Suite struct ScrollingLayoutTests {
    init() { TestFonts.pin() }

    static let utc = TimeZone(identifier: "UTC")!

    /// The synthetic chat with what the synthetic generator leaves out: delivery statuses (some
    /// failed), reactions, replies, a photo grid, emoji-only lines, a typing participant.
    static func corpus(_ count: Int, seed: UInt64) -> Conversation {
        var c = SyntheticConversation.make(count: count, seed: seed)
        var rng = SplitMix64(seed: seed ^ 0x5EED)
        let statuses: [MessageStatus] = [.sent, .delivered, .read, .failed]
        for i in c.messages.indices where c.messages[i].kind == .message {
            let roll = rng.next() % 20
            if c.messages[i].direction == .outgoing, roll < 6 { c.messages[i].status = statuses[Int(rng.next() % 4)] }
            if roll == 7 { c.messages[i].reactions = [Reaction(emoji: "❤️", count: 2), Reaction(emoji: "👍")] }
            if roll == 8 {
                c.messages[i].reply = ReplyReference(
                    sender: "alice", text: "what time is the train? " + String(repeating: "later ", count: Int(rng.next() % 12)))
            }
            if roll == 9 { c.messages[i].text = "🎉" }
            if roll == 10 {
                c.messages[i].images = [
                    ImageAttachment(width: 400, height: 300), ImageAttachment(width: 300, height: 400),
                    ImageAttachment(width: 500, height: 500)
                ]
            }
        }
        c.typing = ["alice"]
        return c
    }

    /// Every message of `c` by its index (what a compact layout is handed back).
    static func byIndex(_ c: Conversation) -> [Int: Message] {
        Dictionary(uniqueKeysWithValues: c.messages.enumerated().map { ($0.offset, $0.element) })
    }

    /// The built-in themes' styles, every time placement, mirrored, balanced widths.
    static func styles() throws -> [(String, LayoutStyle)] {
        var out: [(String, LayoutStyle)] = []
        for name in ["imessage", "sms", "whatsapp", "classic"] {
            let theme = try ThemeLibrary.load(name).theme
            out.append((name, theme.layoutStyle))
        }
        var theme = try ThemeLibrary.load("imessage").theme
        for placement in [Theme.TimestampPlacement.aboveGroup, .inside, .beside, .daySeparator] {
            theme.timestamps = placement
            out.append(("imessage/\(placement.rawValue)", theme.layoutStyle))
        }
        var mirrored = theme.layoutStyle
        mirrored.mirrored = true
        out.append(("imessage/mirrored", mirrored))
        var balanced = try ThemeLibrary.load("sms").theme.layoutStyle
        balanced.widthMode = .balanced
        out.append(("sms/balanced", balanced))
        return out
    }

    /// Every row of `list` materialised, against the full layout's rows: contents equal, frames
    /// equal to `tolerance` (tops) and exactly (heights).
    func expectSame(
        _ list: ScrollingLayout, _ full: ConversationLayout, layouter: ConversationLayouter,
        tolerance: Double, _ label: String, messages: [Int: Message] = [:]
    ) throws {
        #expect(list.rowCount == full.rows.count, "\(label): row count")
        guard list.rowCount == full.rows.count else { return }
        var mismatches: [String] = []
        for i in 0..<list.rowCount {
            let row = try layouter.row(i, of: list, messages: messages)
            let expected = full.rows[i]
            if row.content != expected.content { mismatches.append("row \(i): content differs") }
            if row.frame.height != expected.frame.height {
                mismatches.append("row \(i): height \(row.frame.height) vs \(expected.frame.height)")
            }
            if abs(row.frame.minY - expected.frame.minY) > tolerance {
                mismatches.append("row \(i): top \(row.frame.minY) vs \(expected.frame.minY)")
            }
            if mismatches.count > 5 { break }
        }
        #expect(mismatches.isEmpty, "\(label): \(mismatches.joined(separator: "; "))")
        #expect(abs(list.height - full.height) <= tolerance, "\(label): height \(list.height) vs \(full.height)")
    }

    @Test("first layout equal to the full one; re-layouts at other widths: exact heights, tops to 1e-9 pt, most rows without a full measure")
    func relayout() throws {
        let engine = FastTextEngine()
        let conversation = Self.corpus(900, seed: 12)
        for (name, style) in try Self.styles() {
            let layouter = ConversationLayouter(style: style, engine: engine, timeZone: Self.utc)
            var list = try layouter.scrollingLayout(conversation, width: 375)
            try expectSame(list, try layouter.layout(conversation, width: 375), layouter: layouter, tolerance: 0, "\(name) first")
            for width in [414.0, 320, 768, 375, 290] {
                list = try layouter.scrollingLayout(conversation, width: width, reusing: list)
                #expect(list.width == width)
                try expectSame(
                    list, try layouter.layout(conversation, width: width), layouter: layouter,
                    tolerance: 1e-9, "\(name) at \(width)")
                // Replies, grids, emoji-only lines and the typing row are measured in full.
                #expect(
                    list.rowsMeasuredInFull < list.rowCount / 4,
                    "\(name) at \(width): \(list.rowsMeasuredInFull) of \(list.rowCount) rows measured in full")
            }
        }
    }

    @Test("a compact layout holds no messages and re-lays out as the full one does, given only the messages it measures in full")
    func compactRelayout() throws {
        let engine = FastTextEngine()
        let conversation = Self.corpus(900, seed: 21)
        let all = Self.byIndex(conversation)
        for (name, style) in try Self.styles() {
            let layouter = ConversationLayouter(style: style, engine: engine, timeZone: Self.utc)
            var list = try layouter.scrollingLayout(conversation, width: 375)
            layouter.compact(&list)
            #expect(list.isCompact && list.conversation.messages.isEmpty && list.messageCount == conversation.messages.count)
            for width in [414.0, 320, 768, 375, 290] {
                let pending = try layouter.relayout(list, width: width)
                // Replies, grids, emoji-only lines and texts with a word wider than the bubble
                // (the corpus has many: its text is broken inside the word): their messages are
                // asked for, not the others.
                #expect(
                    pending.messagesToMeasure.count < conversation.messages.count / 3 && !pending.messagesToMeasure.isEmpty,
                    "\(name) at \(width): \(pending.messagesToMeasure.count) messages to measure")
                let given = Dictionary(uniqueKeysWithValues: pending.messagesToMeasure.map { ($0, conversation.messages[$0]) })
                list = try layouter.finish(list, pending, messages: given)
                #expect(list.width == width && list.isCompact)
                try expectSame(
                    list, try layouter.layout(conversation, width: width), layouter: layouter,
                    tolerance: 1e-9, "\(name) compact at \(width)", messages: all)
            }
            // Without the messages it must measure: an error naming one, not a guess.
            let pending = try layouter.relayout(list, width: 333)
            if pending.messagesToMeasure.count > 1 {
                #expect(throws: LayoutError.self) { try layouter.finish(list, pending, messages: [:]) }
            }
            #expect(throws: LayoutError.messageNotHeld(0)) { try layouter.row(list.rowIndex(ofMessage: 0)!, of: list) }
        }
    }

    @Test("appending to a compact layout gives the layout of the whole conversation")
    func compactAppends() throws {
        let engine = FastTextEngine()
        var whole = Self.corpus(600, seed: 22)
        whole.typing = []
        let all = Self.byIndex(whole)
        for (name, style) in try Self.styles().prefix(6) {
            let layouter = ConversationLayouter(style: style, engine: engine, timeZone: Self.utc)
            var head = whole
            head.messages = Array(whole.messages.prefix(200))
            var list = try layouter.scrollingLayout(head, width: 375)
            layouter.compact(&list)
            for m in whole.messages.dropFirst(200) { try layouter.append(m, to: &list) }
            #expect(list.messageCount == whole.messages.count && list.conversation.messages.isEmpty)
            try expectSame(list, try layouter.layout(whole, width: 375), layouter: layouter, tolerance: 0, "\(name), appended", messages: all)
            let pending = try layouter.relayout(list, width: 320)
            list = try layouter.finish(list, pending, messages: all)
            try expectSame(list, try layouter.layout(whole, width: 320), layouter: layouter, tolerance: 1e-9, "\(name), appended, 320", messages: all)
        }
    }

    @Test("appending after a re-layout at another width: the status row shrinks by what its label adds at the new width")
    func appendsAfterResize() throws {
        let engine = FastTextEngine()
        var whole = Self.corpus(400, seed: 31)
        whole.typing = []
        // Every outgoing message shows a status, so each append takes one off the row before.
        for i in whole.messages.indices where whole.messages[i].direction == .outgoing { whole.messages[i].status = .delivered }
        // The head's last message: outgoing, plain, wrapping to more lines at 260 than at 375.
        whole.messages[149].kind = .message
        whole.messages[149].direction = .outgoing
        whole.messages[149].images = []
        whole.messages[149].status = .delivered
        whole.messages[149].text = String(repeating: "a longer line that wraps ", count: 6)
        let all = Self.byIndex(whole)
        for (name, style) in try Self.styles().prefix(4) {
            let layouter = ConversationLayouter(style: style, engine: engine, timeZone: Self.utc)
            for compact in [false, true] {
                var head = whole
                head.messages = Array(whole.messages.prefix(150))
                var list = try layouter.scrollingLayout(head, width: 375)
                if compact { layouter.compact(&list) }
                // The last status row was stitched at 375; at 260 its label may wrap differently.
                list = try layouter.finish(list, try layouter.relayout(list, width: 260), messages: all)
                for m in whole.messages.dropFirst(150) { try layouter.append(m, to: &list) }
                try expectSame(
                    list, try layouter.layout(whole, width: 260), layouter: layouter, tolerance: 1e-9,
                    "\(name), compact \(compact), resized then appended", messages: compact ? all : [:])
            }
        }
    }

    @Test("a compact layout's plain bubbles whose labels it met before take the formula: every row, frame and height as measured, in every style")
    func compactTemplates() throws {
        let engine = FastTextEngine()
        var whole = Self.corpus(3_200, seed: 41)
        whole.typing = []
        var rng = SplitMix64(seed: 41)
        for i in whole.messages.indices where whole.messages[i].kind == .message {
            let roll = rng.next() % 16
            // Read at a time ("Read 09:41": a label of its own), edited, no sender name known.
            if whole.messages[i].status == .read, roll < 8 { whole.messages[i].statusDate = whole.messages[i].date.addingTimeInterval(90) }
            if roll == 9 { whole.messages[i].edited = whole.messages[i].date }
            if roll == 10, whole.messages[i].direction == .incoming { whole.messages[i].sender = "carol" }
            if roll == 11 { whole.messages[i].text = "اين انت؟ " + (whole.messages[i].text ?? "") }
        }
        let all = Self.byIndex(whole)
        for (name, style) in try Self.styles() {
            let layouter = ConversationLayouter(style: style, engine: engine, timeZone: Self.utc)
            var list = try layouter.scrollingLayout(Conversation(participants: whole.participants, messages: Array(whole.messages.prefix(300))), width: 375)
            layouter.compact(&list)
            // On every core (a pipeline: more than 2,048), then one by one.
            try layouter.extend(&list, with: Array(whole.messages[300..<2_700]))
            for m in whole.messages[2_700...] { try layouter.append(m, to: &list) }
            #expect(list.rowsByFormula + list.rowsMeasuredInFull == list.rowCount)
            // Most where times show in day separators (about half the rows here); a time in
            // every bubble makes most keys new (2–3 %).
            let share = name == "imessage" ? 0.4 : 0.01
            #expect(Double(list.rowsByFormula) > share * Double(list.rowCount), "\(name): \(list.rowsByFormula) of \(list.rowCount) rows by the formula")
            // Heights exactly; tops to 1e-9 (a status label taken off a row much later: the full
            // layout moves the rows below by a subtraction, a scrolling one sums their heights).
            try expectSame(list, try layouter.layout(whole, width: 375), layouter: layouter, tolerance: 1e-9, "\(name), compact", messages: all)
            // The facts the formula recorded carry a re-layout as those of a full measure do.
            let narrower = try layouter.finish(list, try layouter.relayout(list, width: 320), messages: all)
            try expectSame(
                narrower, try layouter.layout(whole, width: 320), layouter: layouter, tolerance: 1e-9, "\(name), compact at 320", messages: all)
        }
    }

    @Test("laid out chunk by chunk (extend: every core, compact after the first chunk) gives the layout of the whole conversation")
    func extendInChunks() throws {
        let engine = FastTextEngine()
        var whole = Self.corpus(7_000, seed: 23)
        whole.typing = []
        let all = Self.byIndex(whole)
        let layouter = ConversationLayouter(style: try ThemeLibrary.load("imessage").theme.layoutStyle, engine: engine, timeZone: Self.utc)
        let full = try layouter.layout(whole, width: 375)
        for compact in [false, true] {
            var head = whole
            head.messages = Array(whole.messages.prefix(2_500))
            var list = try layouter.scrollingLayout(head, width: 375)
            if compact { layouter.compact(&list) }
            // Chunks long enough for the pipeline (2,048) and a short one.
            for range in [2_500..<5_000, 5_000..<6_990, 6_990..<7_000] {
                try layouter.extend(&list, with: Array(whole.messages[range]))
            }
            #expect(list.messageCount == whole.messages.count && list.isCompact == compact)
            try expectSame(list, full, layouter: layouter, tolerance: 0, "extended, compact \(compact)", messages: compact ? all : [:])
        }
    }

    @Test("a plain chat re-laid out needs almost no full measures (long enough to use every core)")
    func plainChatUsesTheFormula() throws {
        let engine = FastTextEngine()
        let layouter = ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: Self.utc)
        let conversation = SyntheticConversation.make(count: 9_000, seed: 3)
        let first = try layouter.scrollingLayout(conversation, width: 375)
        #expect(first.rowsMeasuredInFull == first.rowCount)
        let second = try layouter.scrollingLayout(conversation, width: 414, reusing: first)
        // Photos whose size is unusable and emoji-only lines are the only full measures.
        #expect(second.rowsMeasuredInFull * 50 < second.rowCount, "\(second.rowsMeasuredInFull) of \(second.rowCount)")
        // Both shortcuts are taken: wrapped texts by the formula, one-line ones kept.
        #expect(
            second.rowsByFormula > second.rowCount / 5 && second.rowsByFormula < second.rowCount * 4 / 5,
            "\(second.rowsByFormula) of \(second.rowCount) by the formula")
        try expectSame(second, try layouter.layout(conversation, width: 414), layouter: layouter, tolerance: 1e-9, "plain")
    }

    @Test("appending message by message gives the layout of the whole conversation")
    func appends() throws {
        let engine = FastTextEngine()
        let conversation = Self.corpus(600, seed: 13)
        for (name, style) in try Self.styles().prefix(6) {
            let layouter = ConversationLayouter(style: style, engine: engine, timeZone: Self.utc)
            var head = conversation
            head.messages = Array(conversation.messages.prefix(200))
            head.typing = []
            var list = try layouter.scrollingLayout(head, width: 375)
            for m in conversation.messages.dropFirst(200) { try layouter.append(m, to: &list) }
            var whole = conversation
            whole.typing = []
            try expectSame(list, try layouter.layout(whole, width: 375), layouter: layouter, tolerance: 0, "\(name), appended")
            // The row of every message, as the full layout numbers them.
            let full = try layouter.layout(whole, width: 375)
            for k in [0, 1, 57, 199, 200, 433, conversation.messages.count - 1] {
                let expected = full.rows.firstIndex { $0.messageIndex == k }
                #expect(list.rowIndex(ofMessage: k) == expected, "\(name): message \(k)")
            }
            #expect(list.rowIndex(ofMessage: -1) == nil && list.rowIndex(ofMessage: conversation.messages.count) == nil)
            // A typing indicator, then a re-layout of the appended list (its own conversation) and back.
            try layouter.appendTyping("alice", to: &list)
            list = try layouter.scrollingLayout(try layouter.scrollingLayout(list, width: 320), width: 375)
            whole.typing = ["alice"]
            try expectSame(list, try layouter.layout(whole, width: 375), layouter: layouter, tolerance: 1e-9, name)
            #expect(list.conversation.messages.count == conversation.messages.count)
        }
    }

    @Test("rows(in:) gives the rows a full layout gives for the same rectangle")
    func visibleRows() throws {
        let engine = FastTextEngine()
        let layouter = ConversationLayouter(style: try ThemeLibrary.load("whatsapp").theme.layoutStyle, engine: engine, timeZone: Self.utc)
        let conversation = Self.corpus(800, seed: 14)
        let first = try layouter.scrollingLayout(conversation, width: 414)
        let list = try layouter.scrollingLayout(conversation, width: 360, reusing: first)
        let full = try layouter.layout(conversation, width: 360)
        var rng = SplitMix64(seed: 99)
        for _ in 0..<50 {
            let y = Double(rng.next() % UInt64(max(1, full.height)))
            let rect = Rect(x: 0, y: y, width: 360, height: 700)
            let rows = try layouter.rows(in: rect, of: list)
            let expected = full.rows(in: rect)
            #expect(rows.count == expected.count && !rows.isEmpty)
            #expect(zip(rows, expected).allSatisfy { $0.content == $1.content && abs($0.frame.minY - $1.frame.minY) <= 1e-9 })
        }
        #expect(try layouter.rows(in: Rect(x: 0, y: full.height + 10, width: 360, height: 100), of: list).isEmpty)
    }

    @Test("a re-layout from a layout of another conversation starts afresh")
    func otherConversation() throws {
        let engine = FastTextEngine()
        let layouter = ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: Self.utc)
        let a = SyntheticConversation.make(count: 300, seed: 1), b = SyntheticConversation.make(count: 200, seed: 2)
        let list = try layouter.scrollingLayout(b, width: 414, reusing: try layouter.scrollingLayout(a, width: 375))
        #expect(list.rowsMeasuredInFull == list.rowCount)
        try expectSame(list, try layouter.layout(b, width: 414), layouter: layouter, tolerance: 0, "other")
        #expect(throws: LayoutError.self) { try layouter.scrollingLayout(b, width: -1, reusing: list) }
    }

    @Test("summaries equal the layouts they summarise")
    func summaries() throws {
        let engine = FastTextEngine()
        let style = LayoutStyle().text
        for message in SyntheticConversation.make(count: 3_000, seed: 21).messages {
            guard let text = message.text else { continue }
            let prepared = try engine.prepare(text, style: style)
            for width in [60.0, 180, 250, 1000] {
                #expect(try engine.summary(prepared, maxWidth: width, maxLines: nil) == engine.layout(prepared, maxWidth: width, maxLines: nil).summary)
            }
            #expect(try engine.summary(prepared, maxWidth: 80, maxLines: 2) == engine.layout(prepared, maxWidth: 80, maxLines: 2).summary)
        }
    }
}
