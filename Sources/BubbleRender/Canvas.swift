import BubbleCore
import BubbleText
import CCairo

/// A Cairo drawing context in points. On a raster surface, `scale` device pixels make one point
/// (2 for @2x output) and edges of nine-slice patches are snapped to whole device pixels.
public final class Canvas {
    let context: OpaquePointer
    /// Keeps the target surface alive as long as the context draws into it.
    private let target: AnyObject
    /// Device pixels per point; nil on vector surfaces (PDF, SVG), where nothing is snapped.
    public let pixelScale: Double?
    /// Which copy of each font the fast text engine draws with on this canvas: 0, the engine's
    /// own; k > 0, the copy of thread k (threads painting PDF parts at once would otherwise
    /// wait on the same Cairo font's lock).
    var fontCopy = 0

    /// Draws into `surface`, `scale` pixels per point.
    public convenience init(surface: ImageSurface, scale: Double = 1) throws(RenderError) {
        try self.init(cairoSurface: surface.pointer, owner: surface, scale: scale, raster: true)
    }

    /// Draws into any Cairo surface kept alive by `owner`. `raster` surfaces snap patch edges
    /// to device pixels; vector ones (PDF, SVG) do not.
    init(cairoSurface: OpaquePointer, owner: AnyObject, scale: Double, raster: Bool) throws(RenderError) {
        let cr = cairo_create(cairoSurface)!
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(cr)
            throw .cairo(operation: "creating a drawing context", status: ImageSurface.describe(status))
        }
        if scale != 1 { cairo_scale(cr, scale, scale) }
        self.context = cr
        self.target = owner
        self.pixelScale = raster ? scale : nil
    }

    deinit { cairo_destroy(context) }

    /// Cairo's sticky error state, as an error, if any drawing call failed.
    public func check(_ operation: String) throws(RenderError) {
        let status = cairo_status(context)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw .cairo(operation: operation, status: ImageSurface.describe(status))
        }
    }

    /// Runs `body` between `cairo_save` and `cairo_restore`.
    public func saved<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        cairo_save(context)
        defer { cairo_restore(context) }
        return try body()
    }

    /// Fills `rect` (points) with `color`.
    public func fill(_ rect: Rect, color: Color) {
        saved {
            cairo_set_source_rgba(context, color.red, color.green, color.blue, color.alpha)
            cairo_rectangle(context, rect.minX, rect.minY, rect.width, rect.height)
            cairo_fill(context)
        }
    }

    /// Fills `rect` with a linear gradient from `from` at its top-left to `to` at its bottom-right.
    public func fillGradient(_ rect: Rect, from: Color, to: Color, vertical: Bool = false) {
        saved {
            let pattern = cairo_pattern_create_linear(
                rect.minX, rect.minY,
                vertical ? rect.minX : rect.maxX, vertical ? rect.maxY : rect.minY)!
            defer { cairo_pattern_destroy(pattern) }
            cairo_pattern_add_color_stop_rgba(pattern, 0, from.red, from.green, from.blue, from.alpha)
            cairo_pattern_add_color_stop_rgba(pattern, 1, to.red, to.green, to.blue, to.alpha)
            cairo_set_source(context, pattern)
            cairo_rectangle(context, rect.minX, rect.minY, rect.width, rect.height)
            cairo_fill(context)
        }
    }

    /// Mirrors the x axis around the vertical centre line of `rect` for the duration of `body`
    /// (the other side's bubble from the same art).
    public func mirrored<T, E: Error>(around rect: Rect, _ body: () throws(E) -> T) throws(E) -> T {
        try saved { () throws(E) -> T in
            cairo_translate(context, rect.minX + rect.maxX, 0)
            cairo_scale(context, -1, 1)
            return try body()
        }
    }

    /// `x` moved to the nearest device-pixel edge under the current transform (unchanged on
    /// vector surfaces). Shared patch edges snap to the same pixel, so patches never leave a gap.
    func snapX(_ x: Double) -> Double {
        guard pixelScale != nil else { return x }
        var m = cairo_matrix_t()
        cairo_get_matrix(context, &m)
        guard m.xx != 0 else { return x }
        return ((x * m.xx + m.x0).rounded() - m.x0) / m.xx
    }

    func snapY(_ y: Double) -> Double {
        guard pixelScale != nil else { return y }
        var m = cairo_matrix_t()
        cairo_get_matrix(context, &m)
        guard m.yy != 0 else { return y }
        return ((y * m.yy + m.y0).rounded() - m.y0) / m.yy
    }
}
