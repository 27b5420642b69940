import BubbleCore
import BubbleText
import BubbleTestSupport
import Foundation

// Styled text (bold, italic, code, strike, spoilers…) against the same texts plain: the first
// layout of the benchmark conversation with the fast engine, each message given one to three
// styled runs over whole words, as apps set them. Goal (issue 28): styled within 1.5× of plain.

/// The benchmark conversation with spans over words of every text message (deterministic).
func styledConversation(_ base: Conversation) -> Conversation {
    var rng = SplitMix64(seed: 28)
    let styles: [TextSpan.Style] = [.bold, .italic, .code, .bold, .strike, .spoiler, .underline, .link]
    var out = base
    for i in out.messages.indices {
        guard let text = out.messages[i].text, !text.isEmpty else { continue }
        // Word starts and ends (UTF-8 offsets).
        var words: [Range<Int>] = []
        var start: Int?
        var offset = 0
        for b in text.utf8 {
            if b == 0x20 || b == 0x0A { if let s = start { words.append(s..<offset); start = nil } } else if start == nil { start = offset }
            offset += 1
        }
        if let s = start { words.append(s..<offset) }
        guard !words.isEmpty else { continue }
        var spans: [TextSpan] = []
        for _ in 0..<(1 + Int(rng.next() % 3)) {
            let a = Int(rng.next() % UInt64(words.count))
            let z = min(words.count - 1, a + Int(rng.next() % 3))
            let style = styles[Int(rng.next() % UInt64(styles.count))]
            spans.append(TextSpan(style, words[a].lowerBound..<words[z].upperBound, url: style == .link ? "https://example.com/" : nil))
        }
        out.messages[i].spans = spans.sorted { $0.range.lowerBound < $1.range.lowerBound }
    }
    return out
}

/// Plain and styled first layouts in turn on fresh engines (best of five each), and the
/// engine alone (prepare + layout of each text).
func styledCase(messages: Int) throws -> Figures {
    let (plain, _) = layoutConversation(messages: messages)
    let styled = styledConversation(plain)
    var best: [String: Double] = [:]
    for _ in 0..<5 {
        for (name, conversation) in [("plain", plain), ("styled", styled)] {
            let engine = FastTextEngine()
            let (layout, wall, _) = try timedFirstLayout(ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: utc), conversation)
            keptToTheEnd.append(layout)
            best["first layout " + name] = min(best["first layout " + name] ?? .infinity, wall)
        }
    }
    let style = LayoutStyle().text
    for _ in 0..<3 {
        for (name, conversation) in [("plain", plain), ("styled", styled)] {
            let engine = FastTextEngine()
            let texts = conversation.messages.compactMap { m in m.text.map { ($0, m.spans) } }
            let t = try timed(texts.count) {
                for (t, spans) in texts { _ = try engine.layout(engine.prepare(t, style: style, spans: spans), maxWidth: 250, maxLines: nil) }
            }
            best["engine only " + name] = min(best["engine only " + name] ?? .infinity, t)
        }
    }
    let styledMessages = styled.messages.filter { !$0.spans.isEmpty }.count
    return Figures(
        name: "layout-styled", messages: messages, microsPerMessage: best, peakMemoryMB: peakMemoryMB(),
        notes: [
            "styled messages": String(styledMessages),
            "spans/message": String(format: "%.2f", Double(styled.messages.reduce(0) { $0 + $1.spans.count }) / Double(max(1, styledMessages)))
        ])
}

func printStyled(_ results: [String: Figures]) {
    guard let f = results["layout-styled"] else { return }
    let m = f.microsPerMessage
    print("")
    print("Styled text with the fast engine (µs per message, best of 5 fresh first layouts each, in turn; ratio = styled ÷ plain)")
    print(pad("phase", 16) + lpad("plain", 10) + lpad("styled", 10) + lpad("ratio", 9) + "  goal")
    for phase in ["first layout", "engine only"] {
        guard let a = m[phase + " plain"], let b = m[phase + " styled"] else { continue }
        let goal = phase == "first layout" ? "≤ 1.5× (" + (b / a <= 1.5 ? "met" : "not met") + ")" : "prepare + layout of each text, one thread"
        print(
            pad(phase, 16) + lpad(String(format: "%.2f", a), 10) + lpad(String(format: "%.2f", b), 10)
                + lpad(String(format: "%.2f×", b / a), 9) + "  " + goal)
    }
    print("notes: \(f.notes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))")
}

/// The styled texts through the engine alone (prepare + layout), on a fresh engine (`perf record … --case
/// profile-styled`).
func styledFirstLayoutOnly(messages: Int) throws -> Figures {
    let (plain, _) = layoutConversation(messages: messages)
    let styled = styledConversation(plain)
    let engine = FastTextEngine()
    let texts = styled.messages.compactMap { m in m.text.map { ($0, m.spans) } }
    let style = LayoutStyle().text
    let wall = try timed(texts.count) {
        for (t, spans) in texts { _ = try engine.layout(engine.prepare(t, style: style, spans: spans), maxWidth: 250, maxLines: nil) }
    }
    keptToTheEnd = [engine]
    return Figures(name: "profile-styled", messages: messages, microsPerMessage: ["engine only": wall], peakMemoryMB: peakMemoryMB(), notes: [:])
}
