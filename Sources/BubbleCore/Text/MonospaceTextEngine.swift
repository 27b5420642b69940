/// A deterministic `TextEngine` with no fonts: every grapheme is `advance × size` wide
/// (wide scripts — CJK, emoji — twice that), lines are `1.25 × size` high. Unit tests of layout
/// use it so their numbers do not depend on a font; it keeps the full `TextEngine` contract
/// (word wrap, breaking inside a word only when it alone is too wide, hard newlines, max lines).
public final class MonospaceTextEngine: TextEngine, Sendable {
    /// Every grapheme's advance as a share of the font size.
    public let advance: Double
    /// An engine whose every grapheme is `advance × size` points wide.
    public init(advance: Double = 0.5) { self.advance = advance }

    // Every character has the same advance, so it has no fast paths (`FastPathTextEngine`):
    // nothing is kept for re-layouts, substrings are measured as they are (cheap).

    final class Storage {
        /// Per paragraph: its words, each a list of (utf8 start, utf8 end, width) graphemes,
        /// with the width of the space that follows the word.
        let paragraphs: [[Word]]
        let paragraphStarts: [Int]
        init(paragraphs: [[Word]], paragraphStarts: [Int]) {
            self.paragraphs = paragraphs; self.paragraphStarts = paragraphStarts
        }
    }
    struct Word {
        var graphemes: [(start: Int, end: Int, width: Double)]
        var trailingSpace: Double
        var trailingEnd: Int
        var width: Double { graphemes.reduce(0) { $0 + $1.width } }
    }

    public func prepare(_ text: String, style: TextStyle) throws(TextError) -> PreparedText {
        guard style.size.isFinite, style.size > 0 else { throw .invalidFontSize(style.size) }
        guard style.lineHeight.isFinite, style.lineHeight > 0 else { throw .invalidLineHeight(style.lineHeight) }
        var paragraphs: [[Word]] = [[]]
        var starts = [0]
        var current: Word?
        var offset = 0
        let unit = advance * style.size
        for ch in text {
            let len = ch.utf8.count
            defer { offset += len }
            if ch.isNewline {
                if let w = current { paragraphs[paragraphs.count - 1].append(w); current = nil }
                paragraphs.append([]); starts.append(offset + len)
                continue
            }
            if ch == " " || ch == "\t" {
                if current == nil { current = Word(graphemes: [], trailingSpace: 0, trailingEnd: offset) }
                current!.trailingSpace += unit
                current!.trailingEnd = offset + len
                continue
            }
            if let w = current, w.trailingSpace > 0 {
                paragraphs[paragraphs.count - 1].append(w); current = nil
            }
            let wide = ch.unicodeScalars.contains { $0.value >= 0x1100 && ($0.value >= 0x2E80 || $0.properties.isEmojiPresentation) }
            if current == nil { current = Word(graphemes: [], trailingSpace: 0, trailingEnd: offset) }
            current!.graphemes.append((offset, offset + len, wide ? 2 * unit : unit))
            current!.trailingEnd = offset + len
        }
        if let w = current { paragraphs[paragraphs.count - 1].append(w) }
        if text.isEmpty { paragraphs = []; starts = [] }
        return PreparedText(text: text, style: style, storage: Storage(paragraphs: paragraphs, paragraphStarts: starts))
    }

    public func layout(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextLayout {
        guard maxWidth.isFinite, maxWidth > 0 else { throw .invalidWidth(maxWidth) }
        guard let storage = prepared.storage as? Storage, !storage.paragraphs.isEmpty else { return .empty }
        let lineHeight = 1.25 * prepared.style.size * prepared.style.lineHeight
        var lines: [TextLine] = []
        func emit(_ start: Int, _ end: Int, _ width: Double) {
            let top = Double(lines.count) * lineHeight
            lines.append(
                TextLine(
                    range: start..<end, width: width, top: top, height: lineHeight,
                    baseline: top + 0.8 * lineHeight * 1 / prepared.style.lineHeight))
        }
        for (p, words) in storage.paragraphs.enumerated() {
            var lineStart = storage.paragraphStarts[p], lineEnd = lineStart
            var width = 0.0, pendingSpace = 0.0
            var lineHasContent = false
            for word in words {
                let ww = word.width
                if lineHasContent && width + pendingSpace + ww > maxWidth + 1e-9 {
                    emit(lineStart, lineEnd, width)
                    lineStart = word.graphemes.first?.start ?? lineEnd
                    width = 0; pendingSpace = 0; lineHasContent = false
                }
                if ww > maxWidth + 1e-9 {
                    // The word alone is too wide: break it between graphemes.
                    for g in word.graphemes {
                        if lineHasContent && width + g.width > maxWidth + 1e-9 {
                            emit(lineStart, g.start, width)
                            lineStart = g.start; width = 0
                        }
                        width += g.width; lineHasContent = true
                    }
                } else if !word.graphemes.isEmpty {
                    width += pendingSpace + ww; lineHasContent = true
                }
                pendingSpace = word.trailingSpace
                lineEnd = word.trailingEnd
            }
            emit(lineStart, lineEnd, width)
        }
        var truncated = false
        if let maxLines, maxLines > 0, lines.count > maxLines {
            lines.removeLast(lines.count - maxLines)
            truncated = true
            // The ellipsis takes one unit at the end of the last line.
            let unit = advance * prepared.style.size
            lines[maxLines - 1].width = min(lines[maxLines - 1].width + unit, maxWidth)
        }
        let width = lines.reduce(0) { max($0, $1.width) }
        return TextLayout(lines: lines, width: width, height: Double(lines.count) * lineHeight, isTruncated: truncated)
    }
}
