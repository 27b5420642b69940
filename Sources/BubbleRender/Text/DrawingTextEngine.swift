import BubbleCore
import BubbleText
import CCairo
import Foundation

/// A text engine the Cairo painter draws with: it draws exactly what it measured.
/// `ScenePainter` only needs `prepare` and `draw`.
public protocol DrawingTextEngine: TextEngine {
    /// Draws `prepared` as `layout(prepared, maxWidth:, maxLines:)` lays it out, the text box's
    /// top-left at `origin`. Right-to-left lines align to the right edge of `maxWidth`.
    func draw(
        _ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
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
extension PangoTextEngine: DrawingTextEngine {
    /// Draws `prepared` as `layout(prepared, maxWidth:, maxLines:)` lays it out, with the text box's
    /// top-left at `origin`, in `color`. The canvas's transform (scale, mirroring) applies to the
    /// drawing but never changes line breaks or positions. Cairo errors stay in the canvas's sticky
    /// status (`Canvas.check`).
    ///
    /// To draw shrink-wrapped text (an RTL line right-aligned inside its bubble), pass the
    /// `TextLayout.width` the text was measured at as `maxWidth`: the lines stay the same.
    public func draw(
        _ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
        color: Color, on canvas: Canvas
    ) throws(TextError) {
        try draw(prepared, maxWidth: maxWidth, maxLines: maxLines, at: origin, color: color, cairo: canvas.context)
    }

    /// `draw` onto any cairo context (PDF and SVG surfaces in tests).
    func draw(
        _ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
        color: Color, cairo cr: OpaquePointer
    ) throws(TextError) {
        try withDrawPlan(prepared, maxWidth: maxWidth, maxLines: maxLines) { plan, spans in
            cairo_save(cr)
            defer { cairo_restore(cr) }
            cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
            // Styled text, and any text on a surface that keeps it (a PDF: `TextGlyphs`), is drawn
            // run by run.
            if !spans.isEmpty || TextGlyphs.keepsText(cr) {
                StyledLinePainter(cr: cr, spans: spans, color: color, size: prepared.style.size).draw(plan, at: origin)
                return
            }
            switch plan {
            case .layout(let layout):
                FontFacePins.pin(layout: layout)
                cairo_move_to(cr, origin.x, origin.y)
                pango_cairo_show_layout(cr, layout)
            case .lines(let lines):
                for line in lines {
                    FontFacePins.pin(line: UnsafeMutablePointer(line.line))
                    cairo_move_to(cr, origin.x + line.x, origin.y + line.baseline)
                    pango_cairo_show_layout_line(cr, UnsafeMutablePointer(line.line))
                }
            }
        }
    }
}

/// Draws the lines of a styled Pango layout run by run (`PangoTextEngine.prepare(_:style:spans:)`
/// splits runs at every span's edges): a code background under monospace runs, the glyphs, an
/// underline or a strike line, a bar beside quoted lines. A spoiler's glyphs are never shown — a
/// hatched box takes their place — so its text is not in a PDF's or SVG's text either.
struct StyledLinePainter {
    let cr: OpaquePointer
    let spans: [TextSpan]
    let color: Color
    let size: Double
    let keepsText: Bool

    init(cr: OpaquePointer, spans: [TextSpan], color: Color, size: Double) {
        self.cr = cr; self.spans = spans; self.color = color; self.size = size
        keepsText = TextGlyphs.keepsText(cr)
    }

    func draw(_ plan: PangoDrawPlan, at origin: Point) {
        switch plan {
        case .layout(let layout):
            let text = pango_layout_get_text(layout)!
            let iter = pango_layout_get_iter(layout)!
            defer { pango_layout_iter_free(iter) }
            repeat {
                var logical = PangoRectangle()
                pango_layout_iter_get_line_extents(iter, nil, &logical)
                let baseline = pango_layout_iter_get_baseline(iter)
                let line = pango_layout_iter_get_line_readonly(iter)!
                drawLine(
                    line, text: text, x: origin.x + PangoTextEngine.points(logical.x),
                    baseline: origin.y + PangoTextEngine.points(baseline))
            } while pango_layout_iter_next_line(iter) != 0
        case .lines(let lines):
            for entry in lines {
                let line = UnsafeMutablePointer<PangoLayoutLine>(entry.line)
                guard let layout = line.pointee.layout, let text = pango_layout_get_text(layout) else { continue }
                drawLine(line, text: text, x: origin.x + entry.x, baseline: origin.y + entry.baseline)
            }
        }
    }

    /// The styles covering byte `offset`.
    private func styles(at offset: Int) -> Set<TextSpan.Style> {
        var out = Set<TextSpan.Style>()
        for s in spans where s.range.contains(offset) { out.insert(s.style) }
        return out
    }

    private func drawLine(_ line: UnsafeMutablePointer<PangoLayoutLine>, text: UnsafePointer<CChar>, x lineX: Double, baseline: Double) {
        var x = lineX
        var quoted = false
        let ascent = size * 0.92, descent = size * 0.26
        var run = line.pointee.runs
        while let node = run {
            run = node.pointee.next
            guard let glyphItem = node.pointee.data?.assumingMemoryBound(to: PangoGlyphItem.self),
                let item = glyphItem.pointee.item, let glyphs = glyphItem.pointee.glyphs
            else { continue }
            let width = PangoTextEngine.points(pango_glyph_string_get_width(glyphs))
            defer { x += width }
            let styles = styles(at: Int(item.pointee.offset))
            if styles.contains(.quote) { quoted = true }
            let box = Rect(x: x, y: baseline - ascent, width: width, height: ascent + descent)
            if styles.contains(.spoiler) {
                drawSpoiler(box)
                continue
            }
            if styles.contains(.code) || styles.contains(.pre) {
                cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha * 0.14)
                rounded(Rect(x: box.minX - 1.5, y: box.minY, width: box.width + 3, height: box.height), radius: 3)
                cairo_fill(cr)
            }
            cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
            FontFacePins.pin(glyphItem: glyphItem)
            if !keepsText || !TextGlyphs.showPango(glyphItem, text: text, x: x, baseline: baseline, size: size, on: cr) {
                cairo_move_to(cr, x, baseline)
                pango_cairo_show_glyph_item(cr, text, glyphItem)
            }
            let thickness = max(0.75, size / 16)
            if styles.contains(.underline) {
                cairo_rectangle(cr, x, baseline + size * 0.12, width, thickness)
                cairo_fill(cr)
            }
            if styles.contains(.strike) {
                cairo_rectangle(cr, x, baseline - size * 0.3, width, thickness)
                cairo_fill(cr)
            }
        }
        if quoted {
            // In the bubble's padding, beside the line (the text is not indented: lines stay as measured).
            cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha * 0.55)
            cairo_rectangle(cr, lineX - 7, baseline - ascent, 2.5, ascent + descent + size * 0.2)
            cairo_fill(cr)
        }
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
    }

    /// A spoiler: a rounded box in a shade of the text colour, hatched.
    private func drawSpoiler(_ box: Rect) {
        cairo_save(cr)
        rounded(box, radius: 3)
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha * 0.35)
        cairo_fill_preserve(cr)
        cairo_clip(cr)
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha * 0.5)
        cairo_set_line_width(cr, 1)
        var hx = box.minX - box.height
        while hx < box.maxX {
            cairo_move_to(cr, hx, box.maxY); cairo_line_to(cr, hx + box.height, box.minY)
            hx += 4
        }
        cairo_stroke(cr)
        cairo_restore(cr)
    }

    private func rounded(_ r: Rect, radius: Double) {
        let k = min(radius, r.height / 2, r.width / 2)
        cairo_new_sub_path(cr)
        cairo_arc(cr, r.maxX - k, r.minY + k, k, -Double.pi / 2, 0)
        cairo_arc(cr, r.maxX - k, r.maxY - k, k, 0, Double.pi / 2)
        cairo_arc(cr, r.minX + k, r.maxY - k, k, Double.pi / 2, Double.pi)
        cairo_arc(cr, r.minX + k, r.minY + k, k, Double.pi, 3 * Double.pi / 2)
        cairo_close_path(cr)
    }
}

extension TextEngineKind {
    /// A new engine of this kind that also draws (on a Cairo `Canvas`).
    public func makeDrawingEngine() -> any DrawingTextEngine {
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

    public func draw(
        _ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
        color: Color, on canvas: Canvas
    ) throws(TextError) {
        try draw(
            prepared, maxWidth: maxWidth, maxLines: maxLines, at: origin, color: color, cairo: canvas.context,
            fontCopy: canvas.fontCopy)
    }

    /// The scaled font to draw `font` with for `Canvas.fontCopy` `copy`: the font itself for 0,
    /// else a scaled font of the same face, matrices and metrics options that Cairo keeps apart
    /// (its subpixel order differs, which vector output ignores), so threads do not share its
    /// lock. Copies 1…4 exist; higher ones share the original. The caller holds the lock.
    func fontCopy(_ font: OpaquePointer, _ copy: Int) -> OpaquePointer {
        let orders = [CAIRO_SUBPIXEL_ORDER_RGB, CAIRO_SUBPIXEL_ORDER_BGR, CAIRO_SUBPIXEL_ORDER_VRGB, CAIRO_SUBPIXEL_ORDER_VBGR]
        guard copy > 0, copy <= orders.count else { return font }
        let copies: ScaledFontCopies
        if let known = painterState {
            copies = unsafeDowncast(known, to: ScaledFontCopies.self)
        } else {
            copies = ScaledFontCopies()
            painterState = copies
        }
        let key = ScaledFontCopies.Key(font: font, copy: copy)
        if let known = copies.fonts[key] { return known }
        var matrix = cairo_matrix_t(), ctm = cairo_matrix_t()
        cairo_scaled_font_get_font_matrix(font, &matrix)
        cairo_scaled_font_get_ctm(font, &ctm)
        let options = cairo_font_options_create()!
        defer { cairo_font_options_destroy(options) }
        cairo_scaled_font_get_font_options(font, options)
        cairo_font_options_set_subpixel_order(options, orders[copy - 1])
        guard let made = cairo_scaled_font_create(cairo_scaled_font_get_font_face(font), &matrix, &ctm, options),
            cairo_scaled_font_status(made) == CAIRO_STATUS_SUCCESS
        else { return font }
        copies.fonts[key] = made
        return made
    }

    /// `draw` onto any cairo context: the engine's positioned glyphs, with `cairo_show_glyphs`.
    func draw(
        _ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
        color: Color, cairo cr: OpaquePointer, fontCopy copy: Int = 0
    ) throws(TextError) {
        if !prepared.spans.isEmpty {
            // Styled text: drawn by the reference engine with the same faces as attributes
            // (the lines agree with what this engine measured), run by run.
            let styled = try reference.prepare(prepared.text, style: prepared.style, spans: prepared.spans)
            try reference.draw(styled, maxWidth: maxWidth, maxLines: maxLines, at: origin, color: color, cairo: cr)
            return
        }
        // Surfaces that keep text (PDF) get each glyph's characters too: the PDF's text is then
        // the message's, in every script.
        let withText = TextGlyphs.keepsText(cr)
        let found = try positionedGlyphs(prepared, maxWidth: maxWidth, maxLines: maxLines, at: origin, clusters: withText) { font in
            // A run's scaled font belongs to the Pango font the engine keeps for its lifetime.
            guard let scaled = pango_cairo_font_get_scaled_font(font) else { return nil }
            FontFacePins.pin(scaled)
            return fontCopy(scaled, copy)
        }
        if let delegated = found.delegate {
            try reference.draw(delegated, maxWidth: maxWidth, maxLines: maxLines, at: origin, color: color, cairo: cr)
            return
        }
        guard !found.runs.isEmpty else { return }
        let glyphs = found.glyphs
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
        // `PositionedGlyph` is laid out as `cairo_glyph_t` (unsigned long, double, double).
        glyphs.withUnsafeBufferPointer { positioned in
            positioned.withMemoryRebound(to: cairo_glyph_t.self) { all in
                guard withText else {
                    var start = 0
                    for run in found.runs {
                        cairo_set_scaled_font(cr, run.font)
                        cairo_show_glyphs(cr, all.baseAddress! + start, Int32(run.end - start))
                        start = run.end
                    }
                    return
                }
                // `PositionedCluster` is laid out as `cairo_text_cluster_t` (int, int).
                found.clusters.withUnsafeBufferPointer { c in
                    c.withMemoryRebound(to: cairo_text_cluster_t.self) { clusters in
                        found.text.withUnsafeBufferPointer { text in
                            var start = 0, clusterStart = 0, textStart = 0
                            for run in found.runs {
                                cairo_set_scaled_font(cr, run.font)
                                let bytes = UnsafeBufferPointer(rebasing: text[textStart..<run.textEnd])
                                if run.end - start == bytes.count, run.clusterEnd - clusterStart == bytes.count, !bytes.contains(where: { $0 >= 0x80 }) {
                                    // ASCII, a glyph per character: the font's own map back from glyphs to
                                    // characters is right, and Cairo writes such runs faster without clusters.
                                    cairo_show_glyphs(cr, all.baseAddress! + start, Int32(run.end - start))
                                } else {
                                    TextGlyphs.show(
                                        all.baseAddress! + start, count: run.end - start, text: bytes,
                                        clusters: clusters.baseAddress! + clusterStart, clusterCount: run.clusterEnd - clusterStart, on: cr)
                                }
                                start = run.end; clusterStart = run.clusterEnd; textStart = run.textEnd
                            }
                        }
                    }
                }
            }
        }
        TextGlyphs.showHidden(found.hidden, font: found.plainFont, size: prepared.style.size, on: cr)
    }
}

/// The scaled-font copies of one `FastTextEngine` (see `fontCopy`), kept in its `painterState`
/// and destroyed with it.
final class ScaledFontCopies {
    struct Key: Hashable { let font: OpaquePointer; let copy: Int }
    var fonts: [Key: OpaquePointer] = [:]
    deinit { for font in fonts.values { cairo_scaled_font_destroy(font) } }
}
