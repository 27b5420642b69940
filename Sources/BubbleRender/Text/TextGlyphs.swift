import BubbleText
import CCairo
import Foundation

/// Glyphs shown with the characters they stand for (`cairo_show_text_glyphs`), on surfaces that
/// keep text (PDF): copying or searching the PDF then finds the message's own text in every script —
/// ideographs, not the radicals a CJK font also maps to their glyphs; Arabic letters in logical
/// order, not presentation forms; an emoji sequence whole; a ligature split back.
///
/// Clusters go in visual order (left to right, as the glyphs are placed), each with the
/// characters of its own bytes, so a right-to-left run reads as one word in a PDF reader, not as
/// a glyph per word (Pango's own `pango_cairo_show_glyph_item` gives a right-to-left run
/// backwards, which readers split into letters).
enum TextGlyphs {
    private static let toyFontLock = NSLock()

    /// Whether `cr` draws on a surface that keeps text with its glyphs.
    static func keepsText(_ cr: OpaquePointer) -> Bool {
        cairo_surface_has_show_text_glyphs(cairo_get_target(cr)) != 0
    }

    /// Shows `glyphs` in the current scaled font, `clusters` mapping them to `text`, cluster by
    /// cluster in glyph order (each cluster's bytes and glyph count).
    static func show(_ glyphs: UnsafePointer<cairo_glyph_t>, count: Int, text: UnsafeBufferPointer<UInt8>,
                     clusters: UnsafePointer<cairo_text_cluster_t>, clusterCount: Int, on cr: OpaquePointer) {
        text.withMemoryRebound(to: CChar.self) { utf8 in
            cairo_show_text_glyphs(cr, utf8.baseAddress, Int32(utf8.count), glyphs, Int32(count),
                                   clusters, Int32(clusterCount), cairo_text_cluster_flags_t(rawValue: 0))
        }
    }

    /// Shows the text of pictures (colour emoji, which a PDF holds as images) invisibly: blank
    /// glyphs (spaces) of a plain sans face spread over each box, all mapped to its text, so a
    /// PDF reader finds the text where the picture is, and no gap that splits the line.
    /// `font`: a plain scaled font to use (the fast engine's, one per painting thread); without
    /// one a sans face is looked up, under a lock (a lookup loads fonts, which FreeType does not
    /// do on several threads at once).
    static func showHidden(_ hidden: [HiddenText], font plain: OpaquePointer? = nil, size: Double, on cr: OpaquePointer) {
        guard hidden.contains(where: { !$0.text.isEmpty }) else { return }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        if let plain {
            cairo_set_scaled_font(cr, plain)
        } else {
            toyFontLock.lock()
            cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
            cairo_set_font_size(cr, max(1, size))
            if let toy = cairo_get_scaled_font(cr) { FontFacePins.pin(toy) }
            toyFontLock.unlock()
        }
        guard let font = cairo_get_scaled_font(cr) else { return }
        var found: UnsafeMutablePointer<cairo_glyph_t>?
        var count: Int32 = 0
        guard cairo_scaled_font_text_to_glyphs(font, 0, 0, " ", 1, &found, &count, nil, nil, nil) == CAIRO_STATUS_SUCCESS,
              let first = found else { return }
        let space = first[0].index
        cairo_glyph_free(first)
        guard count == 1 else { return }
        var one = cairo_glyph_t(index: space, x: 0, y: 0)
        var extents = cairo_text_extents_t()
        cairo_scaled_font_glyph_extents(font, &one, 1, &extents)
        let advance = extents.x_advance > 0 ? extents.x_advance : max(1, size) / 4
        for h in hidden where !h.text.isEmpty {
            let n = max(1, Int((h.width / advance).rounded()))
            let step = h.width / Double(n)
            let glyphs = (0..<n).map { cairo_glyph_t(index: space, x: h.x + Double($0) * step, y: h.y) }
            var cluster = cairo_text_cluster_t(num_bytes: Int32(h.text.count), num_glyphs: Int32(n))
            glyphs.withUnsafeBufferPointer { g in
                h.text.withUnsafeBufferPointer { t in show(g.baseAddress!, count: n, text: t, clusters: &cluster, clusterCount: 1, on: cr) }
            }
        }
    }

    /// Shows one run of a Pango line (`glyphItem`, of the layout whose text is `text`) with its
    /// left edge at `x` on `baseline`, with its characters. False (nothing drawn) when the run
    /// holds a glyph for a character no font has: Pango draws those as boxes of hex digits, which
    /// `pango_cairo_show_glyph_item` should draw.
    static func showPango(_ glyphItem: UnsafeMutablePointer<PangoGlyphItem>, text: UnsafePointer<CChar>,
                          x: Double, baseline: Double, size: Double, on cr: OpaquePointer) -> Bool {
        guard let item = glyphItem.pointee.item, let string = glyphItem.pointee.glyphs,
              let font = item.pointee.analysis.font, let infos = string.pointee.glyphs,
              let logs = string.pointee.log_clusters else { return false }
        let n = Int(string.pointee.num_glyphs)
        for i in 0..<n where infos[i].glyph & PANGO_GLYPH_UNKNOWN_FLAG != 0 { return false }
        guard let scaled = pango_cairo_font_get_scaled_font(OpaquePointer(font)) else { return false }
        let rtl = item.pointee.analysis.level & 1 == 1
        let start = Int(item.pointee.offset), end = start + Int(item.pointee.length)
        let color = PangoTextEngine.hasColorGlyphs(font)
        var glyphs: [cairo_glyph_t] = [], clusters: [cairo_text_cluster_t] = []
        var bytes: [UInt8] = [], hidden: [HiddenText] = []
        glyphs.reserveCapacity(n); clusters.reserveCapacity(n)
        let scale = Double(PANGO_SCALE)
        var pen: Int64 = 0
        var i = 0
        while i < n {
            var j = i + 1
            while j < n, logs[j] == logs[i] { j += 1 }
            let before = glyphs.count, penBefore = pen
            for k in i..<j {
                let g = infos[k]
                if g.glyph != PANGO_GLYPH_EMPTY {
                    glyphs.append(cairo_glyph_t(index: UInt(g.glyph), x: x + Double(pen + Int64(g.geometry.x_offset)) / scale,
                                                y: baseline + Double(g.geometry.y_offset) / scale))
                }
                pen += Int64(g.geometry.width)
            }
            let first = i
            i = j
            guard glyphs.count > before else { continue }
            // The cluster's characters run to the next cluster in logical order: after it left to
            // right, before it right to left; the last to the run's end.
            let lo = start + Int(logs[first])
            let hi = rtl ? (first > 0 ? start + Int(logs[first - 1]) : end) : (j < n ? start + Int(logs[j]) : end)
            let piece = UnsafeRawBufferPointer(start: text + lo, count: max(0, hi - lo)).bindMemory(to: UInt8.self)
            if color {
                hidden.append(HiddenText(x: x + Double(penBefore) / scale, y: baseline, width: Double(pen - penBefore) / scale,
                                         text: Array(piece)))
                clusters.append(cairo_text_cluster_t(num_bytes: 0, num_glyphs: Int32(glyphs.count - before)))
            } else {
                bytes.append(contentsOf: piece)
                clusters.append(cairo_text_cluster_t(num_bytes: Int32(piece.count), num_glyphs: Int32(glyphs.count - before)))
            }
        }
        cairo_set_scaled_font(cr, scaled)
        glyphs.withUnsafeBufferPointer { g in
            bytes.withUnsafeBufferPointer { t in
                clusters.withUnsafeBufferPointer { c in
                    guard let gb = g.baseAddress, let cb = c.baseAddress else { return }
                    show(gb, count: g.count, text: t, clusters: cb, clusterCount: c.count, on: cr)
                }
            }
        }
        showHidden(hidden, size: size, on: cr)
        return true
    }
}
