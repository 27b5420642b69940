import BubbleCore
import CPango
import Foundation

/// What `PangoTextEngine.prepare` keeps in `PreparedText.storage`: the sanitised text and the
/// Pango layout holding it (owned, freed with this object). Only the engine that made it touches
/// the layout, under that engine's lock.
package final class PangoTextStorage {
    /// The text exactly as Pango sees it: `TextSanitizer.sanitize` of `PreparedText.text`, with
    /// paragraphs longer than about 1,000,000 / font size UTF-8 bytes broken by
    /// `TextSanitizer.breakLongParagraphs` (never the case for a chat message).
    /// `TextLine.range` values are UTF-8 byte offsets into this string:
    /// `String(decoding: Array(sanitizedText.utf8)[line.range], as: UTF8.self)`.
    package let sanitizedText: String
    package let style: TextStyle
    /// The styled ranges set as attributes (empty: plain text).
    package let spans: [TextSpan]
    let engine: PangoTextEngine
    let bytes: [UInt8]
    let layout: OpaquePointer
    /// The last arrangement made, reused while width and line limit stay the same (draw after
    /// layout, or many lays out at one width).
    private var cached: Arrangement?

    /// `text` sanitised once (`PangoTextEngine.pangoText`), set with the `spans` that still fit it.
    init(engine: PangoTextEngine, text: String, style: TextStyle, spans: [TextSpan] = []) {
        let sanitizedText = PangoTextEngine.pangoText(text, style: style)
        self.engine = engine
        self.sanitizedText = sanitizedText
        self.style = style
        self.spans = PangoTextEngine.usableSpans(spans, text: text, sanitized: sanitizedText)
        self.bytes = Array(sanitizedText.utf8)
        self.layout = engine.makeLayout(sanitizedText, style: style, spans: self.spans)
    }

    deinit {
        engine.lock.lock()
        g_object_unref(UnsafeMutableRawPointer(layout))
        engine.lock.unlock()
    }

    /// The lines for a width in Pango units (-1: no wrapping) and an optional line limit.
    /// The caller holds the engine's lock.
    func arrangement(width: Int32, maxLines: Int?) -> Arrangement {
        if let cached, cached.width == width, cached.maxLines == maxLines { return cached }
        let made = arrange(width: width, maxLines: maxLines)
        cached = made
        return made
    }

    private func arrange(width: Int32, maxLines: Int?) -> Arrangement {
        guard !bytes.isEmpty else {
            return Arrangement(width: width, maxLines: maxLines, layout: .empty, tail: nil)
        }
        pango_layout_set_width(layout, width)
        pango_layout_set_height(layout, -1)
        pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_NONE)
        var lines = Self.lines(of: layout, bytes: bytes, lineHeight: style.lineHeight)
        guard let limit = maxLines, lines.count > limit else {
            var logical = PangoRectangle()
            pango_layout_get_extents(layout, nil, &logical)
            // Lines moved down from Pango's places (`lines(of:)`) make the text as much taller.
            let shift = lines.last.map { $0.baseline - $0.pangoBaseline } ?? 0
            return Arrangement(
                width: width, maxLines: maxLines,
                layout: TextLayout(
                    lines: lines.map(\.line),
                    width: lines.map(\.line.width).max() ?? 0,
                    height: PangoTextEngine.points(logical.height + shift)),
                tail: nil, placed: shift == 0 ? nil : lines.map { ($0.x, $0.baseline) })
        }
        // Cut after `limit` lines. Pango's own limit (`set_height(-n)`) counts lines per paragraph
        // and adds no ellipsis when the cut falls at a paragraph end, so the last line is laid out
        // on its own: the rest of its paragraph, plus "…" if later paragraphs are dropped, in one
        // line ellipsized at the end. A direction mark keeps the paragraph's direction.
        let last = lines[limit - 1]
        lines.removeSubrange((limit - 1)...)
        let start = last.line.range.lowerBound
        var end = start
        while end < bytes.count, !Self.isParagraphEnd(bytes, at: end) { end += 1 }
        let mark = last.line.isRightToLeft ? "\u{200F}" : "\u{200E}"
        let markLength = mark.utf8.count
        let tailText = mark + String(decoding: bytes[start..<end], as: UTF8.self) + (end < bytes.count ? "\u{2026}" : "")
        // The spans that fall on the tail, moved to its bytes.
        let tailSpans = spans.compactMap { s -> TextSpan? in
            let lo = max(s.range.lowerBound, start), hi = min(s.range.upperBound, end)
            return hi > lo ? TextSpan(s.style, (lo - start + markLength)..<(hi - start + markLength), url: s.url) : nil
        }
        let tailLayout = LayoutBox(engine.makeLayout(tailText, style: style, spans: tailSpans), lock: engine.lock)
        pango_layout_set_width(tailLayout.pointer, width)
        pango_layout_set_height(tailLayout.pointer, -1)
        pango_layout_set_ellipsize(tailLayout.pointer, PANGO_ELLIPSIZE_END)
        let tailBytes = Array(tailText.utf8)
        guard var tailLine = Self.lines(of: tailLayout.pointer, bytes: tailBytes, lineHeight: style.lineHeight).first else {
            preconditionFailure("a non-empty Pango layout has at least one line")
        }
        var tailX = tailLine.x
        if width > 0, Self.ellipsisOffset(pango_layout_get_line_readonly(tailLayout.pointer, 0)) != nil {
            // Pango pads the ellipsis to fill the width, which leaves a gap between the ellipsis and
            // the text of an RTL line. Laid out again at its own width the padding is gone; the
            // line is then placed at the side its paragraph aligns to.
            let natural = Int32((tailLine.line.width * Double(PANGO_SCALE)).rounded(.up))
            pango_layout_set_width(tailLayout.pointer, max(1, natural))
            if let again = Self.lines(of: tailLayout.pointer, bytes: tailBytes, lineHeight: style.lineHeight).first {
                tailLine = again
                tailX = last.line.isRightToLeft ? width - natural + again.x : again.x
            }
        }
        // The characters shown: up to where Pango's ellipsis starts, else the paragraph's rest.
        let shownInTail = Self.ellipsisOffset(pango_layout_get_line_readonly(tailLayout.pointer, 0)) ?? (markLength + end - start)
        let shownEnd = start + min(end - start, max(0, shownInTail - markLength))
        // Move the tail's first line to where the cut line was.
        let shift = last.top - tailLine.top
        tailLine.line = TextLine(
            range: start..<shownEnd, width: tailLine.line.width,
            top: last.line.top, height: tailLine.line.height,
            baseline: PangoTextEngine.points(shift + tailLine.baseline),
            isRightToLeft: last.line.isRightToLeft)
        let all = lines.map(\.line) + [tailLine.line]
        return Arrangement(
            width: width, maxLines: maxLines,
            layout: TextLayout(
                lines: all, width: all.map(\.width).max() ?? 0,
                height: tailLine.line.top + tailLine.line.height, isTruncated: true),
            tail: Tail(layout: tailLayout, x: tailX, baseline: shift + tailLine.baseline),
            placed: lines.map { ($0.x, $0.baseline) })
    }

    /// Byte offset of the text an ellipsis replaces in `line`, if Pango ellipsized it.
    private static func ellipsisOffset(_ line: UnsafeMutablePointer<PangoLayoutLine>?) -> Int? {
        var run = line?.pointee.runs
        while let node = run {
            if let item = node.pointee.data?.assumingMemoryBound(to: PangoGlyphItem.self).pointee.item,
                Int32(item.pointee.analysis.flags) & PANGO_ANALYSIS_FLAG_IS_ELLIPSIS != 0
            {
                return Int(item.pointee.offset)
            }
            run = node.pointee.next
        }
        return nil
    }

    /// `\n`, U+2028 or U+2029 starts at `i`.
    private static func isParagraphEnd(_ bytes: [UInt8], at i: Int) -> Bool {
        if bytes[i] == 0x0A { return true }
        return bytes[i] == 0xE2 && i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9)
    }

    /// One line as measured, with the Pango-unit positions `draw` needs.
    struct MeasuredLine {
        var line: TextLine
        var x: Int32
        var top: Int32
        var baseline: Int32
        /// Where Pango put the baseline (`baseline` may be lower: see `lines(of:)`).
        var pangoBaseline: Int32
    }

    /// The lines of `layout`, whose text is `bytes`, as laid out now.
    ///
    /// With a line-spacing factor Pango puts each baseline `lineHeight` × the line's font height
    /// below the one before. The colour emoji font reports a height of about a sixth of its
    /// ascent + descent (Noto Color Emoji through cairo 1.16's FreeType fonts), so a line holding
    /// only emoji was placed about 2 pt below the line before it — drawn over it, in a bubble
    /// one line tall. A line whose font height is less than half its ascent + descent is spaced
    /// by its ascent + descent instead (`FastLineMetrics.pitch`, the same rule); the lines after
    /// it move down with it.
    static func lines(of layout: OpaquePointer, bytes: [UInt8], lineHeight: Double) -> [MeasuredLine] {
        var result: [MeasuredLine] = []
        let iter = pango_layout_get_iter(layout)!
        defer { pango_layout_iter_free(iter) }
        repeat {
            let line = pango_layout_iter_get_line_readonly(iter)!
            var y0: Int32 = 0, y1: Int32 = 0
            pango_layout_iter_get_line_yrange(iter, &y0, &y1)
            var logical = PangoRectangle()
            pango_layout_iter_get_line_extents(iter, nil, &logical)
            let baseline = pango_layout_iter_get_baseline(iter)
            let start = Int(line.pointee.start_index), length = Int(line.pointee.length)
            let width =
                ellipsisOffset(line) != nil
                ? ellipsizedWidth(line)
                : contentWidth(line, bytes: bytes, start: start, end: start + length)
            let rtl = line.pointee.resolved_dir == PANGO_DIRECTION_RTL.rawValue
            result.append(
                MeasuredLine(
                    line: TextLine(
                        range: start..<(start + length),
                        width: PangoTextEngine.points(width),
                        top: PangoTextEngine.points(y0), height: PangoTextEngine.points(y1 - y0),
                        baseline: PangoTextEngine.points(baseline), isRightToLeft: rtl),
                    x: logical.x, top: y0, baseline: baseline, pangoBaseline: baseline))
        } while pango_layout_iter_next_line(iter) != 0
        let factor = Float(lineHeight)
        var shift: Int32 = 0
        for i in result.indices.dropFirst() {
            let step = result[i].pangoBaseline - result[i - 1].pangoBaseline
            let natural = Int32((result[i].line.height * Double(PANGO_SCALE)).rounded())
            if Float(step) * 2 < factor * Float(natural) { shift += Int32(factor * Float(natural)) - step }
            guard shift != 0 else { continue }
            result[i].baseline += shift
            result[i].top += shift
            result[i].line.baseline = PangoTextEngine.points(result[i].baseline)
            result[i].line.top = PangoTextEngine.points(result[i].top)
        }
        // With a line-spacing factor, y ranges leave the spacing out: stretch each line to the next.
        for i in result.indices.dropLast() {
            result[i].line.height = result[i + 1].line.top - result[i].line.top
        }
        return result
    }

    /// Width in Pango units of an ellipsized line: its glyphs' advances, the ellipsis with its own.
    /// Pango pads the ellipsis glyph's advance so the line is exactly as wide as the layout
    /// (pango-ellipsize.c, `fixup_ellipsis_run`); the padding is blank and not counted.
    private static func ellipsizedWidth(_ line: UnsafeMutablePointer<PangoLayoutLine>) -> Int32 {
        var total: Int32 = 0
        var run = line.pointee.runs
        while let node = run {
            run = node.pointee.next
            guard let glyphItem = node.pointee.data?.assumingMemoryBound(to: PangoGlyphItem.self).pointee,
                let item = glyphItem.item, let glyphs = glyphItem.glyphs?.pointee, glyphs.num_glyphs > 0
            else { continue }
            let isEllipsis = Int32(item.pointee.analysis.flags) & PANGO_ANALYSIS_FLAG_IS_ELLIPSIS != 0
            for i in 0..<Int(glyphs.num_glyphs) {
                let info = glyphs.glyphs[i]
                var advance = info.geometry.width
                if isEllipsis, i == Int(glyphs.num_glyphs) - 1, let font = item.pointee.analysis.font {
                    var natural = PangoRectangle()
                    pango_font_get_glyph_extents(font, info.glyph, nil, &natural)
                    advance = min(advance, natural.width)
                }
                total += advance
            }
        }
        return max(0, total)
    }

    /// Width in Pango units of the line's content without trailing whitespace: the span of the
    /// x ranges covering the bytes `start..<end'`, where `end'` drops trailing whitespace.
    private static func contentWidth(
        _ line: UnsafeMutablePointer<PangoLayoutLine>, bytes: [UInt8],
        start: Int, end: Int
    ) -> Int32 {
        var visibleEnd = end
        while visibleEnd > start {
            var first = visibleEnd - 1
            while first > start, bytes[first] & 0xC0 == 0x80 { first -= 1 }
            let scalar = String(decoding: bytes[first..<visibleEnd], as: UTF8.self).unicodeScalars.first
            guard let scalar, scalar.properties.isWhitespace else { break }
            visibleEnd = first
        }
        guard visibleEnd > start else { return 0 }
        var ranges: UnsafeMutablePointer<Int32>?
        var count: Int32 = 0
        pango_layout_line_get_x_ranges(line, Int32(start), Int32(visibleEnd), &ranges, &count)
        defer { g_free(ranges) }
        guard let ranges, count > 0 else { return 0 }
        var low = Int32.max, high = Int32.min
        for i in 0..<Int(count) {
            low = min(low, ranges[2 * i])
            high = max(high, ranges[2 * i + 1])
        }
        return max(0, high - low)
    }
}

/// A laid-out `PreparedText` at one width and line limit.
struct Arrangement {
    var width: Int32
    var maxLines: Int?
    var layout: TextLayout
    /// The separately laid-out last line of a truncated text.
    var tail: Tail?
    /// Each line's x and baseline (Pango units) where they differ from Pango's own placement
    /// (a truncated text, or lines moved down by `lines(of:)`): drawn line by line; nil: the
    /// layout is drawn whole.
    var placed: [(x: Int32, baseline: Int32)]? = nil
}

struct Tail {
    var layout: LayoutBox
    /// Pango units, in the text box's coordinates.
    var x: Int32
    var baseline: Int32
}

/// Owns one reference to a PangoLayout, released under its engine's lock.
final class LayoutBox {
    let pointer: OpaquePointer
    private let lock: NSRecursiveLock
    init(_ pointer: OpaquePointer, lock: NSRecursiveLock) { self.pointer = pointer; self.lock = lock }
    deinit {
        lock.lock()
        g_object_unref(UnsafeMutableRawPointer(pointer))
        lock.unlock()
    }
}
