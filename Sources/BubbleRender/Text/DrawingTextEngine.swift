import BubbleCore
import CCairo
import Foundation

/// A text engine the Cairo painter draws with: it draws exactly what it measured.
/// `ScenePainter` only needs `prepare` and `draw`.
public protocol DrawingTextEngine: TextEngine {
    /// Draws `prepared` as `layout(prepared, maxWidth:, maxLines:)` lays it out, the text box's
    /// top-left at `origin`. Right-to-left lines align to the right edge of `maxWidth`.
    func draw(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
              color: Color, on canvas: Canvas) throws(TextError)
    /// True when `prepare` and `draw` may be called from several threads at once, each drawing
    /// on its own canvas (the PDF renderer then paints parts of the pages in parallel). False
    /// (the default): one thread at a time.
    var supportsConcurrentDrawing: Bool { get }
}

extension DrawingTextEngine {
    public var supportsConcurrentDrawing: Bool { false }
}

/// Pango's drawing is serialised by the engine's lock too, but it is kept to one thread: its
/// whole `pango_cairo_show_layout` runs under that lock, so threads would gain little.
extension PangoTextEngine: DrawingTextEngine {}

/// Which text engine measures and draws.
public enum TextEngineKind: String, Sendable, CaseIterable {
    /// `PangoTextEngine`: a Pango layout per text (the reference).
    case pango
    /// `FastTextEngine`: cached segments, arithmetic layout, cached glyph runs.
    case fast

    /// The engine used when none is named.
    public static let standard: TextEngineKind = .fast

    /// A new engine of this kind.
    public func makeEngine() -> any DrawingTextEngine {
        switch self {
        case .pango: return PangoTextEngine()
        case .fast: return FastTextEngine()
        }
    }
}

extension FastTextEngine: DrawingTextEngine {
    /// Every use of Pango and of the caches is under the engine's lock; what is drawn outside it
    /// is Cairo's (glyphs of Cairo scaled fonts, which Cairo locks itself) on the caller's own
    /// context.
    public var supportsConcurrentDrawing: Bool { true }

    public func draw(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
                     color: Color, on canvas: Canvas) throws(TextError) {
        try draw(prepared, maxWidth: maxWidth, maxLines: maxLines, at: origin, color: color, cairo: canvas.context,
                 fontCopy: canvas.fontCopy)
    }

    /// The scaled font to draw `font` with for `Canvas.fontCopy` `copy`: the font itself for 0,
    /// else a scaled font of the same face, matrices and metrics options that Cairo keeps apart
    /// (its subpixel order differs, which vector output ignores), so threads do not share its
    /// lock. Copies 1…4 exist; higher ones share the original. The caller holds the lock.
    func fontCopy(_ font: OpaquePointer, _ copy: Int) -> OpaquePointer {
        let orders = [CAIRO_SUBPIXEL_ORDER_RGB, CAIRO_SUBPIXEL_ORDER_BGR, CAIRO_SUBPIXEL_ORDER_VRGB, CAIRO_SUBPIXEL_ORDER_VBGR]
        guard copy > 0, copy <= orders.count else { return font }
        let key = FontCopyKey(font: font, copy: copy)
        if let known = fontCopies[key] { return known }
        var matrix = cairo_matrix_t(), ctm = cairo_matrix_t()
        cairo_scaled_font_get_font_matrix(font, &matrix)
        cairo_scaled_font_get_ctm(font, &ctm)
        let options = cairo_font_options_create()!
        defer { cairo_font_options_destroy(options) }
        cairo_scaled_font_get_font_options(font, options)
        cairo_font_options_set_subpixel_order(options, orders[copy - 1])
        guard let made = cairo_scaled_font_create(cairo_scaled_font_get_font_face(font), &matrix, &ctm, options),
              cairo_scaled_font_status(made) == CAIRO_STATUS_SUCCESS else { return font }
        fontCopies[key] = made
        return made
    }

    /// `draw` onto any cairo context: every line's glyph runs from the segment cache, in visual
    /// order (bidi runs reordered by their levels, UAX #9 L2), with `cairo_show_glyphs`.
    func draw(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
              color: Color, cairo cr: OpaquePointer, fontCopy copy: Int = 0) throws(TextError) {
        let width = try PangoTextEngine.pangoWidth(maxWidth)
        let storage = try storage(for: prepared)
        if let delegated = storage.delegated {
            try reference.draw(delegated, maxWidth: maxWidth, maxLines: maxLines, at: origin, color: color, cairo: cr)
            return
        }
        let arrangement = arrange(storage, width: width == -1 ? Int32.max : width, maxLines: PangoTextEngine.lineLimit(maxLines))
        guard !arrangement.lines.isEmpty else { return }
        // The glyph runs are gathered under the lock (the segment cache, the font table and Pango
        // are shared); Cairo draws them after it, so threads drawing on their own canvases
        // overlap. A run's scaled font belongs to a `FastFont` the engine keeps for its lifetime.
        var glyphs: [cairo_glyph_t] = []
        var shown: [(font: OpaquePointer, end: Int)] = []
        do {
            lock.lock(); defer { lock.unlock() }
            let ellipsis = storage.context.ellipsis
            // Segment starts, to find the segments under each line.
            var starts: [Int] = []
            var ends: [(end: Int, shaped: Int, rtl: Bool, paragraph: Int)] = []
            storage.withSegments { segs in
                var s = 0, paragraph = 0
                for seg in segs {
                    starts.append(s); ends.append((seg.end, seg.end - seg.separatorLength, seg.rightToLeft, paragraph)); s = seg.end
                    if seg.hard { paragraph = seg.end }
                }
            }
            for (var line, measured) in zip(arrangement.lines, arrangement.layout.lines) {
                // Trailing whitespace is not drawn (it hangs; in an RTL line it would sit at the left).
                line.contentEnd = storage.withText { bytes in
                    var e = min(line.contentEnd, bytes.count)
                    while e > line.start {
                        let b = bytes[e - 1]
                        if b == 0x20 || b == 0x09 { e -= 1; continue }
                        if e - line.start >= 3, b == 0x80, bytes[e - 2] == 0x80, bytes[e - 3] == 0xE3 { e -= 3; continue }
                        break
                    }
                    return e
                }
                var runs: [(font: Int32, level: UInt8, glyphs: ArraySlice<FastGlyph>)] = []
                // The last segment starting at or before the line (binary search: long texts).
                var lo = 0, hi = starts.count
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2
                    if starts[mid] <= line.start { lo = mid } else { hi = mid }
                }
                var k = lo
                while k < starts.count, starts[k] < line.contentEnd {
                    let shape = segmentShape(storage, starts[k], ends[k].shaped, rtl: ends[k].rtl, paragraphStart: ends[k].paragraph)
                    let base = starts[k]
                    for piece in shape.pieces {
                        // The piece's glyphs whose clusters lie in the line's content.
                        let kept = piece.glyphs.filter { base + Int($0.cluster) >= line.start && base + Int($0.cluster) < line.contentEnd }
                        if !kept.isEmpty { runs.append((piece.font, piece.level, kept[...])) }
                    }
                    k += 1
                }
                let paragraphLevel: UInt8 = line.rightToLeft ? 1 : 0
                if line.ellipsis, let e = ellipsis, let piece = e.pieces.first {
                    runs.append((piece.font, paragraphLevel, piece.glyphs[...]))
                }
                // UAX #9 L2: from the highest level down to the lowest odd one, reverse every run of
                // pieces at that level or higher.
                if let highest = runs.map(\.level).max(), highest > 0 {
                    let lowestOdd = max(1, (runs.map(\.level).min() ?? 0) | 1)
                    var level = highest
                    while level >= lowestOdd {
                        var i = 0
                        while i < runs.count {
                            guard runs[i].level >= level else { i += 1; continue }
                            var j = i
                            while j < runs.count, runs[j].level >= level { j += 1 }
                            runs[i..<j].reverse()
                            i = j
                        }
                        level -= 1
                    }
                }
                var pen: Int64 = line.rightToLeft && width > 0 ? Int64(width) - Int64(line.width) : 0
                let baseline = origin.y + measured.baseline
                for run in runs {
                    guard run.font >= 0, let scaled = shaper.fonts[Int(run.font)].scaledFont else {
                        pen += run.glyphs.reduce(0) { $0 + Int64($1.advance) }
                        continue
                    }
                    let first = glyphs.count
                    for g in run.glyphs {
                        if g.glyph & PANGO_GLYPH_UNKNOWN_FLAG == 0 && g.glyph != PANGO_GLYPH_EMPTY {
                            glyphs.append(cairo_glyph_t(index: UInt(g.glyph),
                                                        x: origin.x + Double(pen + Int64(g.dx)) / Double(PANGO_SCALE),
                                                        y: baseline + Double(g.dy) / Double(PANGO_SCALE)))
                        }
                        pen += Int64(g.advance)
                    }
                    guard glyphs.count > first else { continue }
                    // One show_glyphs call for consecutive glyphs of one font, across lines too
                    // (positions are absolute): fewer text objects in PDF and SVG.
                    let font = fontCopy(scaled, copy)
                    if let last = shown.last, last.font == font { shown[shown.count - 1].end = glyphs.count }
                    else { shown.append((font, glyphs.count)) }
                }
            }
        }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
        glyphs.withUnsafeBufferPointer { all in
            var start = 0
            for run in shown {
                cairo_set_scaled_font(cr, run.font)
                cairo_show_glyphs(cr, all.baseAddress! + start, Int32(run.end - start))
                start = run.end
            }
        }
    }
}
