import CCairo
import Foundation

/// Keeps every FreeType face BubbleKit draws with open for the life of the process.
///
/// Cairo 1.16's FreeType backend (Debian 12's) keeps at most 10 faces open: locking an eleventh
/// closes one whose lock count is 0 — reading that count, and calling `FT_Done_Face`, without
/// taking that face's own mutex. A thread locking that face at the same moment (drawing a glyph,
/// or writing a PDF's fonts in `cairo_show_page`, as the PDF parts of one render do on several
/// threads) then reads freed memory: seen as SIGSEGV in `FT_Get_Next_Char` under
/// `cairo_show_page`, in 1 of 5 runs of the text and PDF-part tests side by side. A face locked
/// once and never unlocked is never closed, so each face a scaled font brings is locked the first
/// time that font is seen (a few faces: a few MB held open).
enum FontFacePins {
    private static let lock = NSLock()
    /// Scaled fonts seen (each referenced, so its address is not reused) and faces pinned.
    nonisolated(unsafe) private static var seen: Set<OpaquePointer> = []
    nonisolated(unsafe) private static var faces: Set<UnsafeMutableRawPointer> = []

    /// Pins `scaled`'s face (a FreeType one) before it is drawn with. Cheap for a font seen before.
    static func pin(_ scaled: OpaquePointer) {
        guard cairo_scaled_font_get_type(scaled) == CAIRO_FONT_TYPE_FT else { return }
        lock.lock()
        defer { lock.unlock() }
        guard seen.insert(scaled).inserted else { return }
        cairo_scaled_font_reference(scaled)
        guard let face = cairo_ft_scaled_font_lock_face(scaled) else { return }
        if !faces.insert(UnsafeMutableRawPointer(face)).inserted {
            // Already held open through another scaled font of the same face.
            cairo_ft_scaled_font_unlock_face(scaled)
        }
    }

    /// Pins the face of a run Pango is about to draw.
    static func pin(glyphItem: UnsafeMutablePointer<PangoGlyphItem>) {
        if let font = glyphItem.pointee.item?.pointee.analysis.font, let scaled = pango_cairo_font_get_scaled_font(OpaquePointer(font)) {
            pin(scaled)
        }
    }

    /// Pins the faces of a layout line's runs.
    static func pin(line: UnsafeMutablePointer<PangoLayoutLine>) {
        var runs = line.pointee.runs
        while let node = runs {
            if let data = node.pointee.data { pin(glyphItem: data.assumingMemoryBound(to: PangoGlyphItem.self)) }
            runs = node.pointee.next
        }
    }

    /// Pins the faces of every line of a layout (the Pango engine draws through Pango).
    static func pin(layout: OpaquePointer) {
        var lines = pango_layout_get_lines_readonly(layout)
        while let node = lines {
            if let data = node.pointee.data { pin(line: data.assumingMemoryBound(to: PangoLayoutLine.self)) }
            lines = node.pointee.next
        }
    }
}
