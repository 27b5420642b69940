import BubbleCore
import BubbleText
import CCairo

/// Bubble art ready to paint at any size: the art's pixels plus how they are cut
/// (cap insets or 9-patch markers). Composites with real alpha: translucent pixels of the art
/// (shadows, glass) let whatever is under them show through.
///
///     let bubble = try StretchableImage(pngFile: "bubble.png", capInsets: .legacy(...))
///     try bubble.draw(in: Rect(x: 10, y: 10, width: 180, height: 44), on: canvas)
public final class StretchableImage {
    /// The slices: which parts of the art stretch and which are kept as drawn.
    public let art: NineSliceArt
    let pixels: ImageSurface
    /// Each source region copied into its own surface once (cairo 1.16 crashes in PDF output
    /// when sub-surfaces are used as sources).
    private var regions: [PixelRect: ImageSurface] = [:]

    /// `pixels` must be exactly the art's pixel size.
    public init(art: NineSliceArt, pixels: ImageSurface) throws(RenderError) {
        guard pixels.width == art.pixelWidth, pixels.height == art.pixelHeight else {
            throw .artSizeMismatch(
                expected: "\(art.pixelWidth)×\(art.pixelHeight) px",
                actual: "\(pixels.width)×\(pixels.height) px")
        }
        self.art = art
        self.pixels = pixels
    }

    /// Cap-inset art from a PNG file; `capInsets` in points, `scale` = 2 for @2x art.
    public convenience init(pngFile path: String, scale: Double = 1, capInsets: EdgeInsets) throws(RenderError) {
        let surface = try ImageSurface(pngFile: path)
        let art: NineSliceArt
        do {
            art = try NineSliceArt(pixelWidth: surface.width, pixelHeight: surface.height, scale: scale, capInsets: capInsets)
        } catch { throw .nineSlice(path: path, error) }
        try self.init(art: art, pixels: surface)
    }

    /// Art from an Android 9-patch PNG (`.9.png`): the markers give the slices and the content box.
    public convenience init(ninePatchFile path: String, scale: Double = 1) throws(RenderError) {
        let image = try ImageSurface(pngFile: path).rgbaImage()
        let art: NineSliceArt
        do { art = try NinePatch.parse(image, scale: scale) } catch { throw .nineSlice(path: path, error) }
        try self.init(art: art, pixels: ImageSurface(rgba: NinePatch.interiorPixels(of: image)))
    }

    /// Paints the art stretched to `rect` (points). `mirrored` flips it left↔right, giving the
    /// other side's bubble from one piece of art.
    public func draw(
        in rect: Rect, on canvas: Canvas, mode: NineSliceMode = .uikitStretch,
        mirrored: Bool = false
    ) throws(RenderError) {
        let patches: [NineSlicePatch]
        do { patches = try art.patches(for: rect.size, mode: mode) } catch { throw .nineSlice(path: nil, error) }
        if mirrored {
            try canvas.mirrored(around: rect) { () throws(RenderError) in try paint(patches, at: rect.origin, on: canvas) }
        } else {
            try paint(patches, at: rect.origin, on: canvas)
        }
        try canvas.check("drawing bubble art")
    }

    private func paint(_ patches: [NineSlicePatch], at origin: Point, on canvas: Canvas) throws(RenderError) {
        let cr = canvas.context
        for patch in patches {
            let source = try region(patch.source)
            // Snap the tile and its visible part to device pixels; neighbours share edges exactly.
            let dx0 = canvas.snapX(origin.x + patch.destination.minX), dx1 = canvas.snapX(origin.x + patch.destination.maxX)
            let dy0 = canvas.snapY(origin.y + patch.destination.minY), dy1 = canvas.snapY(origin.y + patch.destination.maxY)
            let cx0 = canvas.snapX(origin.x + patch.clip.minX), cx1 = canvas.snapX(origin.x + patch.clip.maxX)
            let cy0 = canvas.snapY(origin.y + patch.clip.minY), cy1 = canvas.snapY(origin.y + patch.clip.maxY)
            guard dx1 != dx0, dy1 != dy0, cx1 != cx0, cy1 != cy0 else { continue }
            cairo_save(cr)
            cairo_rectangle(cr, min(cx0, cx1), min(cy0, cy1), abs(cx1 - cx0), abs(cy1 - cy0))
            cairo_clip(cr)
            let pattern = cairo_pattern_create_for_surface(source.pointer)!
            // PAD: samples at a patch's edge repeat its own edge pixels instead of fading to
            // transparent, which is what shows as light seams between patches.
            cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
            cairo_pattern_set_filter(pattern, CAIRO_FILTER_GOOD)
            // Pattern space is the region's pixels: user (dx0…dx1) → pattern (0…width).
            var matrix = cairo_matrix_t()
            let sx = Double(patch.source.width) / (dx1 - dx0), sy = Double(patch.source.height) / (dy1 - dy0)
            cairo_matrix_init(&matrix, sx, 0, 0, sy, -dx0 * sx, -dy0 * sy)
            cairo_pattern_set_matrix(pattern, &matrix)
            cairo_set_source(cr, pattern)
            cairo_paint(cr)
            cairo_pattern_destroy(pattern)
            cairo_restore(cr)
        }
    }

    private func region(_ rect: PixelRect) throws(RenderError) -> ImageSurface {
        if let cached = regions[rect] { return cached }
        let copy = try pixels.copy(rect)
        regions[rect] = copy
        return copy
    }
}
