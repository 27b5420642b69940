import BubbleCore
import BubbleText
import CCairo

/// Draws the `classic` theme's bubble art: the glossy iOS 6 SMS bubble of the seeds, 42×30
/// points with its tail on the left, so its caps are seed 001's: left 24, top 13 with the
/// legacy one-point stretch, i.e. insets (13, 24, 16, 17). The other side is the same art
/// mirrored. The art has real alpha (a soft translucent shadow, anti-aliased edges), so it
/// works on any background, unlike seed 001's art pre-blended with one colour.
///
/// The PNGs committed under the theme folder are this function's output; `bubbles art`
/// writes them again.
public enum ClassicBubbleArt {
    /// The art's size in points (seed 001's `balloon.png` is 42 × 30 at 1x).
    public static let size = Size(width: 42, height: 30)
    /// The art's cap insets: the corners that never stretch (seed 001's left cap 24, top cap 13).
    public static let capInsets = EdgeInsets(top: 13, left: 24, bottom: 16, right: 17)

    /// The art at `scale` pixels per point, body shading from `top` to `bottom`.
    public static func draw(top: Color, bottom: Color, scale: Int) throws(RenderError) -> ImageSurface {
        let surface = try ImageSurface(width: Int(size.width) * scale, height: Int(size.height) * scale)
        let cr = cairo_create(surface.pointer)!
        defer { cairo_destroy(cr) }
        cairo_scale(cr, Double(scale), Double(scale))

        // Shadow: the outline one point lower, translucent black.
        cairo_save(cr)
        cairo_translate(cr, 0, 1)
        outline(cr)
        cairo_set_source_rgba(cr, 0, 0, 0, 0.22)
        cairo_fill(cr)
        cairo_restore(cr)

        // Body: vertical gradient.
        outline(cr)
        let body = cairo_pattern_create_linear(0, 1, 0, 28)!
        cairo_pattern_add_color_stop_rgba(body, 0, top.red, top.green, top.blue, top.alpha)
        cairo_pattern_add_color_stop_rgba(body, 1, bottom.red, bottom.green, bottom.blue, bottom.alpha)
        cairo_set_source(cr, body)
        cairo_fill_preserve(cr)
        cairo_pattern_destroy(body)

        // Gloss: a white sheen over the upper half, inside the outline.
        cairo_save(cr)
        cairo_clip_preserve(cr)
        let gloss = cairo_pattern_create_linear(0, 1, 0, 14)!
        cairo_pattern_add_color_stop_rgba(gloss, 0, 1, 1, 1, 0.55)
        cairo_pattern_add_color_stop_rgba(gloss, 1, 1, 1, 1, 0.08)
        cairo_set_source(cr, gloss)
        cairo_rectangle(cr, 0, 0, 42, 13)
        cairo_fill(cr)
        cairo_pattern_destroy(gloss)
        cairo_restore(cr)

        // Rim: a darker hairline of the bottom colour.
        cairo_set_line_width(cr, 1)
        cairo_set_source_rgba(cr, bottom.red * 0.7, bottom.green * 0.7, bottom.blue * 0.7, 0.55)
        cairo_stroke(cr)
        cairo_surface_flush(surface.pointer)
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw .cairo(operation: "drawing classic bubble art", status: ImageSurface.describe(status))
        }
        return surface
    }

    /// Body from x 7…41, y 1…28, corner radius 11.5, and a tail hooking out to the bottom-left
    /// corner. Every curve stays inside the caps; row 13 and column 24 are straight edges.
    private static func outline(_ cr: OpaquePointer) {
        let r = 11.5
        cairo_new_path(cr)
        cairo_move_to(cr, 7.5 + r, 1.5)
        cairo_line_to(cr, 41 - r, 1.5)
        cairo_arc(cr, 41 - r, 1.5 + r, r, -Double.pi / 2, 0)
        cairo_line_to(cr, 41, 28 - r)
        cairo_arc(cr, 41 - r, 28 - r, r, 0, Double.pi / 2)
        cairo_line_to(cr, 21, 28)
        cairo_curve_to(cr, 15, 28, 10, 28.6, 1.5, 28.8)
        cairo_curve_to(cr, 5.5, 26.5, 7.5, 23, 7.5, 18)
        cairo_line_to(cr, 7.5, 1.5 + r)
        cairo_arc(cr, 7.5 + r, 1.5 + r, r, Double.pi, 3 * Double.pi / 2)
        cairo_close_path(cr)
    }
}

/// The demo conversation's photo: a small drawn landscape (no camera pictures in the repo).
/// `bubbles art` writes it again.
package enum SamplePhoto {
    package static func draw() throws(RenderError) -> ImageSurface {
        let surface = try ImageSurface(width: 480, height: 320)
        let cr = cairo_create(surface.pointer)!
        defer { cairo_destroy(cr) }
        let sky = cairo_pattern_create_linear(0, 0, 0, 320)!
        cairo_pattern_add_color_stop_rgb(sky, 0, 0.16, 0.35, 0.72)
        cairo_pattern_add_color_stop_rgb(sky, 0.65, 0.98, 0.62, 0.38)
        cairo_pattern_add_color_stop_rgb(sky, 1, 0.99, 0.83, 0.55)
        cairo_set_source(cr, sky)
        cairo_paint(cr)
        cairo_pattern_destroy(sky)
        cairo_set_source_rgb(cr, 1, 0.93, 0.7)
        cairo_arc(cr, 330, 190, 46, 0, 2 * Double.pi)
        cairo_fill(cr)
        for (i, shade) in [(0, 0.22), (1, 0.14)] {
            cairo_set_source_rgb(cr, shade, shade + 0.12, shade + 0.1)
            let base = 235.0 + Double(i) * 40
            cairo_move_to(cr, 0, base)
            cairo_curve_to(cr, 120, base - 70, 260, base + 30, 480, base - 50)
            cairo_line_to(cr, 480, 320)
            cairo_line_to(cr, 0, 320)
            cairo_close_path(cr)
            cairo_fill(cr)
        }
        return surface
    }
}
