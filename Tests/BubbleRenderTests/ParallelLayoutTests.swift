import BubbleCore
import BubbleRender
import Foundation
import BubbleTestSupport
import BubbleText
import Testing

/// A long first layout with `FastTextEngine` measures messages on every core
/// (`TextEngine.preparesConcurrently`): it must give exactly what one thread gives, keep memos a
/// re-layout can use, and meet a failing message in order.
@Suite struct ParallelLayoutTests {
    init() { TestFonts.pin() }

    /// Forwards to an engine, saying whether it prepares concurrently as told, and fails to
    /// prepare the texts in `failing` (with `unknownFont` naming the text).
    final class ForwardingEngine: FastPathTextEngine {
        let base: any FastPathTextEngine
        let concurrent: Bool
        let failing: Set<String>
        init(_ base: any FastPathTextEngine, concurrent: Bool, failing: Set<String> = []) {
            self.base = base; self.concurrent = concurrent; self.failing = failing
        }
        func prepare(_ text: String, style: TextStyle) throws(TextError) -> PreparedText {
            if failing.contains(text) { throw .unknownFont(text) }
            return try base.prepare(text, style: style)
        }
        func layout(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextLayout {
            try base.layout(prepared, maxWidth: maxWidth, maxLines: maxLines)
        }
        func advance(of range: Range<Int>, in prepared: PreparedText) -> Double? { base.advance(of: range, in: prepared) }
        var preparedTextsAreCompact: Bool { base.preparedTextsAreCompact }
        func summary(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextSummary {
            try base.summary(prepared, maxWidth: maxWidth, maxLines: maxLines)
        }
        func summary(ofStorage storage: AnyObject, maxWidth: Double) throws(TextError) -> TextSummary? {
            try base.summary(ofStorage: storage, maxWidth: maxWidth)
        }
        var preparesConcurrently: Bool { concurrent }
        func prepareOnce(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText {
            if failing.contains(text) { throw .unknownFont(text) }
            return try base.prepareOnce(text, style: style, spans: spans)
        }
        func prefetch(storage: UnsafeRawPointer) { base.prefetch(storage: storage) }
        func packBreaks(ofStorage storage: AnyObject, into words: inout [UInt32]) -> Bool { base.packBreaks(ofStorage: storage, into: &words) }
        func summary(ofPacked words: UnsafeBufferPointer<UInt32>, maxWidth: Double) throws(TextError) -> TextSummary? {
            try base.summary(ofPacked: words, maxWidth: maxWidth)
        }
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// The scrolling tests' corpus (statuses, reactions, replies, grids, emoji-only lines,
    /// typing), long enough for the parallel path (2,048 messages) and for its ring of results
    /// to wrap around, in a group chat (sender names) and not.
    static func corpus(group: Bool) -> Conversation {
        var c = ScrollingLayoutTests.corpus(3_200, seed: group ? 41 : 42)
        if !group { c.participants = Array(c.participants.prefix(2)) }
        return c
    }

    @Test("parallel first layout equals the one-thread layout, row for row, in every style", arguments: [false, true])
    func sameAsOneThread(group: Bool) throws {
        #expect(ProcessInfo.processInfo.activeProcessorCount > 1, "one core: the parallel path is not taken, the comparison proves nothing")
        let conversation = Self.corpus(group: group)
        #expect(conversation.isGroup == group)
        for (name, style) in try ScrollingLayoutTests.styles() {
            let fast = FastTextEngine()
            #expect(fast.preparesConcurrently)
            let parallel = ConversationLayouter(style: style, engine: fast, timeZone: Self.utc)
            let serial = ConversationLayouter(style: style, engine: ForwardingEngine(FastTextEngine(), concurrent: false), timeZone: Self.utc)
            let a = try parallel.layout(conversation, width: 375)
            let b = try serial.layout(conversation, width: 375)
            #expect(a.rows.count == b.rows.count, "\(name): row count")
            let firstDifference = a.rows.indices.first { $0 < b.rows.count && a.rows[$0] != b.rows[$0] }
            #expect(firstDifference == nil, "\(name): row \(firstDifference ?? -1) differs")
            #expect(a.height == b.height, "\(name): height")
            // The memos the workers made serve a re-layout as the walker's own do.
            let again = try parallel.layout(conversation, width: 320, reusing: a)
            #expect(again == (try serial.layout(conversation, width: 320)), "\(name): re-layout from the parallel layout")
            // And appending after it goes on as after a one-thread layout.
            var grown = a, grownSerial = b
            let extra = Message(
                sender: "me", direction: .outgoing, date: conversation.messages.last!.date.addingTimeInterval(30),
                text: "and one more", status: .delivered)
            try parallel.append(extra, to: &grown)
            try serial.append(extra, to: &grownSerial)
            #expect(grown == grownSerial, "\(name): append")
        }
    }

    @Test("parallel scrolling first layout equals the one-thread one: every frame, rows, re-layout", arguments: [false, true])
    func scrollingSameAsOneThread(group: Bool) throws {
        let conversation = Self.corpus(group: group)
        for (name, style) in try ScrollingLayoutTests.styles() {
            let parallel = ConversationLayouter(style: style, engine: FastTextEngine(), timeZone: Self.utc)
            let serial = ConversationLayouter(style: style, engine: ForwardingEngine(FastTextEngine(), concurrent: false), timeZone: Self.utc)
            let a = try parallel.scrollingLayout(conversation, width: 375)
            let b = try serial.scrollingLayout(conversation, width: 375)
            #expect(a.rowCount == b.rowCount && a.height == b.height, "\(name): rows \(a.rowCount) vs \(b.rowCount)")
            guard a.rowCount == b.rowCount else { continue }
            let firstFrame = (0..<a.rowCount).first { a.frame(ofRow: $0) != b.frame(ofRow: $0) }
            #expect(firstFrame == nil, "\(name): frame of row \(firstFrame ?? -1)")
            for i in stride(from: 0, to: a.rowCount, by: 29) {
                #expect(try parallel.row(i, of: a) == serial.row(i, of: b), "\(name): row \(i)")
            }
            // Its memos serve the re-layout at a new width as the one-thread ones do.
            let again = try parallel.scrollingLayout(a, width: 320), expected = try serial.scrollingLayout(b, width: 320)
            #expect(
                again.height == expected.height && (0..<again.rowCount).allSatisfy { again.frame(ofRow: $0) == expected.frame(ofRow: $0) },
                "\(name): re-layout at 320 pt")
        }
    }

    @Test("a message that fails to measure is met in order: the first failing message's error, whichever thread measured it")
    func failureInOrder() throws {
        var conversation = Self.corpus(group: false)
        // Two failing texts, the first well inside the conversation (a worker's chunk or the
        // walker's), the second later.
        conversation.messages[1_501].text = "first failure"
        conversation.messages[1_501].kind = .message
        conversation.messages[2_900].text = "second failure"
        conversation.messages[2_900].kind = .message
        let engine = ForwardingEngine(FastTextEngine(), concurrent: true, failing: ["first failure", "second failure"])
        let layouter = ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: Self.utc)
        for _ in 0..<5 {
            #expect(throws: LayoutError.text(.unknownFont("first failure"))) { try layouter.layout(conversation, width: 375) }
            #expect(throws: LayoutError.text(.unknownFont("first failure"))) { try layouter.scrollingLayout(conversation, width: 375) }
        }
        // Without the failures the same layouter lays it out.
        conversation.messages[1_501].text = "fine"
        conversation.messages[2_900].text = "fine"
        #expect(try layouter.layout(conversation, width: 375).rows.count > conversation.messages.count)
    }
}
