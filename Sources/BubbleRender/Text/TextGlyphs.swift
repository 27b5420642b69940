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
    /// A run whose clusters hold no characters is a run of pictures (colour emoji: their text is
    /// shown apart, `showHidden`): drawn as images at print resolution (`GlyphPictures`).
    static func show(
        _ glyphs: UnsafePointer<cairo_glyph_t>, count: Int, text: UnsafeBufferPointer<UInt8>,
        clusters: UnsafePointer<cairo_text_cluster_t>, clusterCount: Int, on cr: OpaquePointer
    ) {
        if text.isEmpty, let font = cairo_get_scaled_font(cr) {
            GlyphPictures.draw(UnsafeBufferPointer(start: glyphs, count: count), font: font, on: cr)
            return
        }
        text.withMemoryRebound(to: CChar.self) { utf8 in
            cairo_show_text_glyphs(
                cr, utf8.baseAddress, Int32(utf8.count), glyphs, Int32(count),
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
            let first = found
        else { return }
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
    static func showPango(
        _ glyphItem: UnsafeMutablePointer<PangoGlyphItem>, text: UnsafePointer<CChar>,
        x: Double, baseline: Double, size: Double, on cr: OpaquePointer
    ) -> Bool {
        guard let item = glyphItem.pointee.item, let string = glyphItem.pointee.glyphs,
            let font = item.pointee.analysis.font, let infos = string.pointee.glyphs,
            let logs = string.pointee.log_clusters
        else { return false }
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
                    glyphs.append(
                        cairo_glyph_t(
                            index: UInt(g.glyph), x: x + Double(pen + Int64(g.geometry.x_offset)) / scale,
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
                hidden.append(
                    HiddenText(
                        x: x + Double(penBefore) / scale, y: baseline, width: Double(pen - penBefore) / scale,
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

/// Colour glyphs (emoji) as images at print resolution. Cairo 1.16 puts a colour glyph into a
/// PDF as a Type 3 glyph whose picture it makes at the glyph's printed size at 72 ppi — 13 × 13
/// pixels for a 10-pt emoji, soft on paper. Here each glyph is drawn once into an image of
/// `ppi` pixels per inch at the size it is printed (the context's scale included: a book prints
/// its text at 0.62), and that image is placed where the glyph would be. The same image object
/// is reused for every occurrence, so a PDF holds each emoji once. The glyph's characters are
/// shown apart, invisibly (`TextGlyphs.showHidden`), so the PDF's text keeps them.
enum GlyphPictures {
    /// Pixels per inch of the pictures (above print's usual 300).
    static let ppi = 320.0

    private final class Picture: @unchecked Sendable {
        let surface: OpaquePointer
        /// Where the image's top-left sits from the glyph's origin, and its size, in user units.
        let x: Double, y: Double, width: Double, height: Double
        init(surface: OpaquePointer, x: Double, y: Double, width: Double, height: Double) {
            self.surface = surface; self.x = x; self.y = y; self.width = width; self.height = height
        }
        deinit { cairo_surface_destroy(surface) }
    }

    private struct Key: Hashable {
        let face: OpaquePointer
        let glyph: UInt
        let matrix: [Double]
        let scale: Double
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var pictures: [Key: Picture?] = [:]

    static func draw(_ glyphs: UnsafeBufferPointer<cairo_glyph_t>, font: OpaquePointer, on cr: OpaquePointer) {
        var dx = 1.0, dy = 0.0
        cairo_user_to_device_distance(cr, &dx, &dy)
        let printed = max(0.01, (dx * dx + dy * dy).squareRoot())  // points per user unit
        // Pixels per user unit, in steps of 1/8 so that slightly different scales share pictures.
        let k = ((printed * ppi / 72) * 8).rounded(.up) / 8
        for g in glyphs {
            guard let picture = picture(g.index, font: font, scale: k) else { continue }
            cairo_save(cr)
            cairo_translate(cr, g.x + picture.x, g.y + picture.y)
            cairo_scale(
                cr, picture.width / Double(cairo_image_surface_get_width(picture.surface)),
                picture.height / Double(cairo_image_surface_get_height(picture.surface)))
            cairo_set_source_surface(cr, picture.surface, 0, 0)
            cairo_rectangle(cr, 0, 0, Double(cairo_image_surface_get_width(picture.surface)), Double(cairo_image_surface_get_height(picture.surface)))
            cairo_fill(cr)
            cairo_restore(cr)
        }
    }

    /// The picture of `glyph` of `font` at `k` pixels per user unit (made once; nil: the glyph
    /// draws nothing).
    private static func picture(_ glyph: UInt, font: OpaquePointer, scale k: Double) -> Picture? {
        var matrix = cairo_matrix_t()
        cairo_scaled_font_get_font_matrix(font, &matrix)
        guard let face = cairo_scaled_font_get_font_face(font) else { return nil }
        let key = Key(face: face, glyph: glyph, matrix: [matrix.xx, matrix.yx, matrix.xy, matrix.yy], scale: k)
        lock.lock()
        defer { lock.unlock() }
        if let known = pictures[key] { return known }
        let made = render(glyph, face: face, matrix: matrix, font: font, scale: k)
        pictures[key] = made
        return made
    }

    private static func render(_ glyph: UInt, face: OpaquePointer, matrix: cairo_matrix_t, font: OpaquePointer, scale k: Double) -> Picture? {
        var one = cairo_glyph_t(index: glyph, x: 0, y: 0)
        var ink = cairo_text_extents_t()
        cairo_scaled_font_glyph_extents(font, &one, 1, &ink)
        guard ink.width > 0, ink.height > 0 else { return nil }
        // A pixel of margin on every side (antialiased edges).
        let pad = 1 / k
        let w = Int32((ink.width * k).rounded(.up)) + 2, h = Int32((ink.height * k).rounded(.up)) + 2
        guard w < 4_096, h < 4_096, let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h) else { return nil }
        guard let cr = cairo_create(surface) else { cairo_surface_destroy(surface); return nil }
        defer { cairo_destroy(cr) }
        cairo_scale(cr, k, k)
        var fontMatrix = matrix
        var ctm = cairo_matrix_t()
        cairo_matrix_init_scale(&ctm, k, k)
        let options = cairo_font_options_create()
        defer { cairo_font_options_destroy(options) }
        cairo_scaled_font_get_font_options(font, options)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        guard let big = cairo_scaled_font_create(face, &fontMatrix, &ctm, options) else { cairo_surface_destroy(surface); return nil }
        defer { cairo_scaled_font_destroy(big) }
        FontFacePins.pin(big)
        cairo_set_scaled_font(cr, big)
        cairo_set_source_rgb(cr, 0, 0, 0)
        var placed = cairo_glyph_t(index: glyph, x: pad - ink.x_bearing, y: pad - ink.y_bearing)
        cairo_show_glyphs(cr, &placed, 1)
        cairo_surface_flush(surface)
        return Picture(surface: surface, x: ink.x_bearing - pad, y: ink.y_bearing - pad, width: Double(w) / k, height: Double(h) / k)
    }
}
