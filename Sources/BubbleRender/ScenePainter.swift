import BubbleCore
import BubbleText
import CCairo
import Foundation

/// Paints scene pages with Cairo (PNG and PDF). It never measures: every position comes from
/// the scene; text is drawn by the same engine, at the same wrap width, that measured it (Pango
/// layouts, or the fast engine's cached glyph runs — see `DrawingTextEngine`).
package final class ScenePainter {
    package let theme: Theme
    /// Folder the theme's relative paths (art, background image) are resolved against.
    package let themeFolder: String
    package let engine: any DrawingTextEngine
    package let photos: PhotoLoader
    private var arts: [String: StretchableImage] = [:]

    package init(theme: Theme, themeFolder: String, engine: any DrawingTextEngine, photos: PhotoLoader) {
        self.theme = theme; self.themeFolder = themeFolder; self.engine = engine; self.photos = photos
    }

    /// Paints `page` on `canvas` (whose transform maps points to its device). `outputScale` picks
    /// @2x/@3x art when the theme ships it.
    package func paint(_ page: ScenePage, on canvas: Canvas, outputScale: Double = 1) throws(RenderError) {
        for item in page.items { try paint(item, on: canvas, outputScale: outputScale) }
        try canvas.check("drawing page \(page.number)")
    }

    private func paint(_ item: SceneItem, on canvas: Canvas, outputScale: Double) throws(RenderError) {
        let cr = canvas.context
        switch item {
        case let .fill(rect, color):
            canvas.fill(rect, color: color)
        case let .gradient(rect, top, bottom):
            canvas.fillGradient(rect, from: top, to: bottom, vertical: true)
        case let .tiledImage(path, rect):
            let surface = try photos.surface(for: resolve(path))
            cairo_save(cr)
            let pattern = cairo_pattern_create_for_surface(surface.pointer)!
            cairo_pattern_set_extend(pattern, CAIRO_EXTEND_REPEAT)
            cairo_set_source(cr, pattern)
            cairo_rectangle(cr, rect.minX, rect.minY, rect.width, rect.height)
            cairo_fill(cr)
            cairo_pattern_destroy(pattern)
            cairo_restore(cr)
        case let .path(elements, fill, stroke, lineWidth):
            trace(elements, cr)
            if let fill {
                cairo_set_source_rgba(cr, fill.red, fill.green, fill.blue, fill.alpha)
                if stroke != nil { cairo_fill_preserve(cr) } else { cairo_fill(cr) }
            }
            if let stroke {
                cairo_set_source_rgba(cr, stroke.red, stroke.green, stroke.blue, stroke.alpha)
                cairo_set_line_width(cr, lineWidth)
                cairo_stroke(cr)
            }
        case let .art(direction, rect, mirrored, tint):
            let art = try self.art(direction, outputScale: outputScale)
            let mode = artMode(direction)
            if let tint {
                // JSQMessagesViewController's tint: the art's alpha, filled with one colour.
                cairo_push_group(cr)
                try art.draw(in: rect, on: canvas, mode: mode, mirrored: mirrored)
                let mask = cairo_pop_group(cr)!
                cairo_set_source_rgba(cr, tint.red, tint.green, tint.blue, tint.alpha)
                cairo_mask(cr, mask)
                cairo_pattern_destroy(mask)
            } else {
                try art.draw(in: rect, on: canvas, mode: mode, mirrored: mirrored)
            }
        case let .photo(path, rect, radius):
            cairo_save(cr)
            trace(BubbleShape.roundedRect(rect, radius: radius), cr)
            cairo_clip(cr)
            // A file that passed the renderer's check but does not decode (damaged after its
            // header) draws the placeholder: one bad photo never stops a whole render.
            if let path, let surface = try? printable(path, in: rect, cr) {
                // Aspect fill: the photo covers the rect, centred, cropped by the clip (a grid's
                // square cells; a single photo's rect already has its aspect ratio).
                let factor = max(rect.width / Double(surface.width), rect.height / Double(surface.height))
                cairo_translate(cr, rect.midX - Double(surface.width) * factor / 2, rect.midY - Double(surface.height) * factor / 2)
                cairo_scale(cr, factor, factor)
                cairo_set_source_surface(cr, surface.pointer, 0, 0)
                cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD)
                // PAD keeps a scaled photo's edges opaque in pixels; PDF and SVG have no PAD
                // (Cairo would rasterise and compress a padded copy of the photo at every use),
                // and their viewers sample the image themselves: NONE, and one image object per
                // photo file however often it is shown.
                let target = cairo_surface_get_type(cairo_get_target(cr))
                let vector = target == CAIRO_SURFACE_TYPE_PDF || target == CAIRO_SURFACE_TYPE_SVG
                cairo_pattern_set_extend(cairo_get_source(cr), vector ? CAIRO_EXTEND_NONE : CAIRO_EXTEND_PAD)
                cairo_paint(cr)
            } else {
                // A photo whose size or file was unusable: a grey placeholder with a cross.
                cairo_set_source_rgba(cr, 0.8, 0.8, 0.82, 1)
                cairo_paint(cr)
                cairo_set_source_rgba(cr, 0.55, 0.55, 0.6, 1)
                cairo_set_line_width(cr, 1.5)
                cairo_move_to(cr, rect.minX, rect.minY); cairo_line_to(cr, rect.maxX, rect.maxY)
                cairo_move_to(cr, rect.maxX, rect.minY); cairo_line_to(cr, rect.minX, rect.maxY)
                cairo_stroke(cr)
            }
            cairo_restore(cr)
        case let .text(text):
            try draw(text, on: canvas)
        case let .link(url, rects, color):
            drawLink(url: url, rects: rects, color: color, on: canvas)
        case let .scaled(origin, factor, items):
            cairo_save(cr)
            cairo_translate(cr, origin.x, origin.y)
            cairo_scale(cr, factor, factor)
            for inner in items {
                do { try paint(inner, on: canvas, outputScale: outputScale * factor) } catch {
                    cairo_restore(cr)
                    throw error
                }
            }
            cairo_restore(cr)
        case let .clipped(rect, items):
            cairo_save(cr)
            cairo_rectangle(cr, rect.minX, rect.minY, rect.width, rect.height)
            cairo_clip(cr)
            for inner in items {
                do { try paint(inner, on: canvas, outputScale: outputScale) } catch {
                    cairo_restore(cr)
                    throw error
                }
            }
            cairo_restore(cr)
        }
    }

    /// The photo to draw into `rect`: as decoded, or — printing (`PhotoLoader.printDPI`) — with
    /// no more pixels than that resolution at the size the page prints it (the current
    /// transform says how big that is).
    private func printable(_ path: String, in rect: Rect, _ cr: OpaquePointer) throws(RenderError) -> ImageSurface {
        guard let dpi = photos.printDPI, let natural = photos.naturalSize(of: path) else { return try photos.surface(for: path) }
        let cover = max(rect.width / Double(natural.width), rect.height / Double(natural.height))
        var dx = Double(natural.width) * cover, dy = 0.0
        cairo_user_to_device_distance(cr, &dx, &dy)
        let wanted = Int((abs(dx) * dpi / 72).rounded(.up))
        return wanted < natural.width ? try photos.surface(for: path, width: wanted) : try photos.surface(for: path)
    }

    private func draw(_ text: SceneText, on canvas: Canvas) throws(RenderError) {
        do {
            let prepared = try engine.prepare(text.string, style: text.style, spans: text.spans)
            // Right-to-left lines align to the right edge of the box they were measured into.
            let rtl = text.layout.lines.contains { $0.isRightToLeft }
            let width = rtl ? max(text.boxWidth, 1) + 0.001 : text.wrapWidth
            try engine.draw(prepared, maxWidth: width, maxLines: text.maxLines, at: text.origin, color: text.color, on: canvas)
        } catch {
            throw .cairo(operation: "drawing text", status: error.description)
        }
    }

    /// A link: its text underlined; on PDF pages also a link annotation over its rects
    /// (`cairo_tag_begin(CAIRO_TAG_LINK)`), so it opens when clicked.
    private func drawLink(url: String, rects: [Rect], color: Color, on canvas: Canvas) {
        let cr = canvas.context
        guard let safe = Self.linkTarget(url) else { return }
        if canvas.pixelScale == nil, !rects.isEmpty {
            let areas = rects.map { "\($0.minX) \($0.minY) \($0.width) \($0.height)" }.joined(separator: " ")
            cairo_tag_begin(cr, CAIRO_TAG_LINK, "uri='\(safe)' rect=[\(areas)]")
        }
        cairo_save(cr)
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
        for r in rects {
            // The underline sits a little above the line box's bottom (below the baseline).
            let y = r.maxY - max(1.5, r.height * 0.12)
            cairo_rectangle(cr, r.minX, y, r.width, 1)
        }
        cairo_fill(cr)
        cairo_restore(cr)
        if canvas.pixelScale == nil, !rects.isEmpty { cairo_tag_end(cr, CAIRO_TAG_LINK) }
    }

    /// `url` when it is an http, https, mailto or tel URL, with quotes, backslashes, spaces and
    /// controls percent-encoded; nil otherwise (javascript: and the like are never linked).
    static func linkTarget(_ url: String) -> String? {
        let lower = url.lowercased()
        guard ["http://", "https://", "mailto:", "tel:"].contains(where: { lower.hasPrefix($0) }) else { return nil }
        var out = ""
        for b in url.utf8 {
            if b <= 0x20 || b == 0x27 || b == 0x5C || b == 0x22 || b >= 0x7F || b == 0x3C || b == 0x3E {
                out += String(format: "%%%02X", b)
            } else {
                out.unicodeScalars.append(Unicode.Scalar(b))
            }
        }
        return out
    }

    private func trace(_ elements: [PathElement], _ cr: OpaquePointer) {
        cairo_new_path(cr)
        for e in elements {
            switch e {
            case .move(let p): cairo_move_to(cr, p.x, p.y)
            case .line(let p): cairo_line_to(cr, p.x, p.y)
            case let .curve(a, b, c): cairo_curve_to(cr, a.x, a.y, b.x, b.y, c.x, c.y)
            case .close: cairo_close_path(cr)
            }
        }
    }

    func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : themeFolder + "/" + path }

    private func artMode(_ direction: Direction) -> NineSliceMode {
        guard case .art(let spec) = theme.bubble(direction).shape, let rule = spec.mode, rule != .stretch else { return .uikitStretch }
        return rule == .tile ? .uikitTile : .css(rule, fill: true)
    }

    /// The side's art, from the sharpest `@Nx` file that is no sharper than the output needs.
    func art(_ direction: Direction, outputScale: Double) throws(RenderError) -> StretchableImage {
        guard case .art(let spec) = theme.bubble(direction).shape else {
            throw .cairo(operation: "drawing bubble art", status: "the theme's \(direction.rawValue) bubble is not art")
        }
        let wanted = max(1, min(3, Int(outputScale.rounded(.up))))
        let base = resolve(spec.image)
        let ext = PathText.fileExtension(base)
        let stem = (base as NSString).deletingPathExtension
        var candidates: [(String, Double)] = []
        for s in stride(from: wanted, through: 2, by: -1) { candidates.append(("\(stem)@\(s)x.\(ext)", Double(s))) }
        candidates.append((base, spec.scale ?? 1))
        let (file, scale) = candidates.first { FileManager.default.fileExists(atPath: $0.0) } ?? (base, spec.scale ?? 1)
        let key = "\(direction.rawValue)|\(file)"
        if let hit = arts[key] { return hit }
        let art: StretchableImage
        if spec.ninePatch == true {
            art = try StretchableImage(ninePatchFile: file, scale: scale)
        } else if let caps = spec.legacyCaps, caps.count == 2 {
            let probe = try ImageSurface(pngFile: file)
            let sliced: NineSliceArt
            do {
                let insets = try EdgeInsets.legacy(
                    leftCapWidth: caps[0], topCapHeight: caps[1],
                    width: Double(probe.width) / scale, height: Double(probe.height) / scale)
                sliced = try NineSliceArt(pixelWidth: probe.width, pixelHeight: probe.height, scale: scale, capInsets: insets)
            } catch {
                throw .nineSlice(path: file, error)
            }
            art = try StretchableImage(art: sliced, pixels: probe)
        } else {
            art = try StretchableImage(pngFile: file, scale: scale, capInsets: spec.insets ?? .zero)
        }
        arts[key] = art
        return art
    }
}
