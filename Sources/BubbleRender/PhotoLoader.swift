import BubbleCore
import BubbleMedia
import BubbleText
import CCairo
import CGdkPixbuf
import Foundation

/// Decodes photos for bubbles (JPEG, PNG, GIF, WebP, … whatever gdk-pixbuf reads) into Cairo
/// surfaces, once per path.
package final class PhotoLoader {
    /// Paths are resolved against this folder (the conversation file's).
    package let baseFolder: String
    private var cache: [String: ImageSurface] = [:]
    private var failures: [String: String] = [:]

    package init(baseFolder: String) { self.baseFolder = baseFolder }

    /// The photo's pixel size as displayed, without decoding it all (nil when unreadable): a
    /// JPEG whose EXIF orientation turns it a quarter (5–8, most portrait phone photos) has its
    /// stored width and height swapped, as `decode` turns its pixels.
    /// A picture that is not whole (`MediaProbe.incompleteness`: a PNG or JPEG cut short, which
    /// gdk-pixbuf would draw half grey) has no size: it is shown as a placeholder.
    package static func size(ofFile path: String) -> (width: Int, height: Int)? {
        var w: Int32 = 0, h: Int32 = 0
        guard let format = gdk_pixbuf_get_file_info(path, &w, &h), w > 0, h > 0 else { return nil }
        if MediaProbe.incompleteness(path: path) != nil { return nil }
        if let name = gdk_pixbuf_format_get_name(format) {
            defer { g_free(name) }
            if String(cString: name) == "jpeg", let o = MediaProbe.jpegOrientation(path: path), o >= 5 {
                return (Int(h), Int(w))
            }
        }
        return (Int(w), Int(h))
    }

    /// The photo as a JPEG a browser shows the right way up: decoded with its orientation
    /// applied and encoded again (HEIC, which browsers do not show; a turned JPEG for SVG
    /// viewers that ignore EXIF). nil when the picture has transparency (use PNG then).
    static func orientedJPEG(_ path: String, quality: Int = 90) throws(RenderError) -> [UInt8]? {
        let picture = try OrientedPixbuf(path)
        let oriented = picture.pointer
        if gdk_pixbuf_get_has_alpha(oriented) != 0 { return nil }
        return try encoded(oriented, as: "jpeg", option: ("quality", "\(quality)"), path: path)
    }

    /// `pixbuf` encoded by gdk-pixbuf as `type` ("jpeg", "png") with one save option; errors
    /// name `path`.
    static func encoded(_ pixbuf: OpaquePointer, as type: String, option: (key: String, value: String), path: String) throws(RenderError) -> [UInt8] {
        var error: UnsafeMutablePointer<GError>?
        var buffer: UnsafeMutablePointer<gchar>?
        var size: gsize = 0
        let ok = withArrayOfCStrings([option.key]) { keys in
            withArrayOfCStrings([option.value]) { values in
                gdk_pixbuf_save_to_bufferv(pixbuf, &buffer, &size, type, keys, values, &error)
            }
        }
        guard ok != 0, let buffer else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "cannot encode \(type.uppercased())"
            if let error { g_error_free(error) }
            throw .unreadableImage(path: path, reason: reason)
        }
        defer { g_free(buffer) }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(size)) { Array(UnsafeBufferPointer(start: $0, count: Int(size))) }
    }

    /// The picture as every browser and SVG viewer shows it the right way up: JPEG, or PNG when it
    /// has transparency (HEIC, TIFF, BMP; a JPEG turned by EXIF for viewers that ignore it).
    static func transcoded(_ path: String) throws(RenderError) -> (mime: String, bytes: [UInt8]) {
        if let jpeg = try orientedJPEG(path) { return ("image/jpeg", jpeg) }
        return ("image/png", try PNGEncoder.fast.encode(decode(path)))
    }

    /// NULL-terminated C string arrays for the duration of `body`.
    static func withArrayOfCStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { for p in pointers { free(p) } }
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }

    package func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : baseFolder + "/" + path
    }

    /// Print: photos are drawn with no more pixels than this many per inch at their printed size
    /// (`surface(for:width:)`); nil draws them as decoded.
    package var printDPI: Double?
    private var scaled: [String: ImageSurface] = [:]

    /// The photo's displayed size in pixels, read from its header once (nil when unreadable).
    package func naturalSize(of path: String) -> (width: Int, height: Int)? {
        let full = resolve(path)
        if let known = sizes[full] { return known }
        let size = Self.size(ofFile: full)
        sizes[full] = size
        return size
    }
    private var sizes: [String: (width: Int, height: Int)?] = [:]

    /// The photo downscaled to `width` pixels (its aspect kept), made once per size. The
    /// full-size picture is decoded for it and not kept: a book of big photos holds only what
    /// it prints.
    package func surface(for path: String, width: Int) throws(RenderError) -> ImageSurface {
        let full = resolve(path)
        let key = full + "@" + String(width)
        if let hit = scaled[key] { return hit }
        if let reason = failures[full] { throw .unreadableImage(path: full, reason: reason) }
        let source: ImageSurface
        if let hit = cache[full] {
            source = hit
        } else {
            do { source = try Self.decode(full) } catch {
                if case let .unreadableImage(_, reason) = error { failures[full] = reason }
                throw error
            }
        }
        guard width > 0, width < source.width else { return source }
        let height = max(1, Int((Double(source.height) * Double(width) / Double(source.width)).rounded()))
        let out = try ImageSurface(width: width, height: height)
        let cr = cairo_create(out.pointer)!
        defer { cairo_destroy(cr) }
        cairo_scale(cr, Double(width) / Double(source.width), Double(height) / Double(source.height))
        cairo_set_source_surface(cr, source.pointer, 0, 0)
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD)
        cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD)
        cairo_paint(cr)
        cairo_surface_flush(out.pointer)
        scaled[key] = out
        return out
    }

    /// The decoded photo, or an error naming the file.
    package func surface(for path: String) throws(RenderError) -> ImageSurface {
        let full = resolve(path)
        if let hit = cache[full] { return hit }
        if let reason = failures[full] { throw .unreadableImage(path: full, reason: reason) }
        do {
            let surface = try Self.decode(full)
            cache[full] = surface
            return surface
        } catch {
            if case let .unreadableImage(_, reason) = error { failures[full] = reason }
            throw error
        }
    }

    static func decode(_ path: String) throws(RenderError) -> ImageSurface {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .unreadableImage(path: path, reason: FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")
        }
        if let cut = MediaProbe.incompleteness(path: path) { throw .unreadableImage(path: path, reason: cut) }
        let picture = try OrientedPixbuf(path)
        let oriented = picture.pointer
        let width = Int(gdk_pixbuf_get_width(oriented)), height = Int(gdk_pixbuf_get_height(oriented))
        let channels = Int(gdk_pixbuf_get_n_channels(oriented))
        let rowstride = Int(gdk_pixbuf_get_rowstride(oriented))
        guard let src = gdk_pixbuf_read_pixels(oriented), channels == 3 || channels == 4 else {
            throw .unreadableImage(path: path, reason: "unsupported pixel layout (\(channels) channels)")
        }
        let surface = try ImageSurface(width: width, height: height)
        cairo_surface_flush(surface.pointer)
        let stride = Int(cairo_image_surface_get_stride(surface.pointer))
        let dst = cairo_image_surface_get_data(surface.pointer)!
        for y in 0..<height {
            let row = (dst + y * stride).withMemoryRebound(to: UInt32.self, capacity: width) { $0 }
            let s = src + y * rowstride
            for x in 0..<width {
                let p = s + x * channels
                let a = channels == 4 ? UInt32(p[3]) : 255
                func pm(_ c: UInt8) -> UInt32 { (UInt32(c) * a + 127) / 255 }
                row[x] = a << 24 | pm(p[0]) << 16 | pm(p[1]) << 8 | pm(p[2])
            }
        }
        cairo_surface_mark_dirty(surface.pointer)
        return surface
    }
}

/// A picture decoded by gdk-pixbuf and turned by its EXIF orientation, so phone photos stand the
/// right way up; owns its pixbuf reference (released with the value).
final class OrientedPixbuf {
    let pointer: OpaquePointer

    init(_ path: String) throws(RenderError) {
        var error: UnsafeMutablePointer<GError>?
        guard let pixbuf = gdk_pixbuf_new_from_file(path, &error) else {
            let reason = error.map { String(cString: $0.pointee.message) } ?? "unknown image format"
            if let error { g_error_free(error) }
            throw .unreadableImage(path: path, reason: reason)
        }
        defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
        // A new reference either way (the same pixbuf when there is nothing to turn).
        guard let oriented = gdk_pixbuf_apply_embedded_orientation(pixbuf) else {
            throw .unreadableImage(path: path, reason: "cannot apply its orientation")
        }
        pointer = oriented
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }
}

/// The toolkit's `PictureDecoder`: gdk-pixbuf reads and turns photos, Cairo paints theme art.
/// Give it to `MediaResolver` and to BubbleHTML's `HTMLExporter`.
public struct PhotoDecoder: PictureDecoder {
    /// A decoder; it keeps nothing between calls.
    public init() {}

    public func displaySize(ofFile path: String) -> (width: Int, height: Int)? {
        PhotoLoader.size(ofFile: path)
    }

    public func browserImage(ofFile path: String) throws(RenderError) -> (mime: String, bytes: [UInt8]) {
        try PhotoLoader.transcoded(path)
    }

    public func thumbnail(ofFile path: String, maxSide: Int) throws(RenderError) -> (mime: String, bytes: [UInt8]) {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .unreadableImage(path: path, reason: FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")
        }
        if let cut = MediaProbe.incompleteness(path: path) { throw .unreadableImage(path: path, reason: cut) }
        let picture = try OrientedPixbuf(path)
        let width = Int(gdk_pixbuf_get_width(picture.pointer)), height = Int(gdk_pixbuf_get_height(picture.pointer))
        guard width > 0, height > 0, maxSide > 0 else { throw .unreadableImage(path: path, reason: "it has no pixels") }
        let factor = min(1, Double(maxSide) / Double(max(width, height)))
        let w = max(1, Int((Double(width) * factor).rounded())), h = max(1, Int((Double(height) * factor).rounded()))
        guard let scaled = gdk_pixbuf_scale_simple(picture.pointer, Int32(w), Int32(h), GDK_INTERP_BILINEAR) else {
            throw .unreadableImage(path: path, reason: "cannot scale it to \(w) × \(h)")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(scaled)) }
        let transparent = gdk_pixbuf_get_has_alpha(scaled) != 0
        let bytes =
            transparent
            ? try PhotoLoader.encoded(scaled, as: "png", option: ("compression", "6"), path: path)
            : try PhotoLoader.encoded(scaled, as: "jpeg", option: ("quality", "82"), path: path)
        return (transparent ? "image/png" : "image/jpeg", bytes)
    }

    public func svg(_ pages: [ScenePage], theme: Theme, themeFolder: String) throws(RenderError) -> String {
        try SVGWriter(theme: theme, themeFolder: themeFolder, photos: PhotoLoader(baseFolder: themeFolder)).document(pages)
    }

    /// Mirrored art is mirrored in its pixels (its caps swapped by the caller from the slices).
    public func themeArt(
        _ direction: Direction, theme: Theme, themeFolder: String, outputScale: Double,
        mirrored: Bool
    ) throws(RenderError) -> (art: NineSliceArt, png: [UInt8])? {
        guard case .art = theme.bubble(direction).shape else { return nil }
        let painter = ScenePainter(theme: theme, themeFolder: themeFolder, engine: PangoTextEngine(), photos: PhotoLoader(baseFolder: themeFolder))
        let image = try painter.art(direction, outputScale: outputScale)
        var pixels = image.pixels
        if mirrored {
            var rgba = pixels.rgbaImage()
            let w = rgba.width
            for y in 0..<rgba.height {
                for x in 0..<w / 2 {
                    for c in 0..<4 { rgba.bytes.swapAt((y * w + x) * 4 + c, (y * w + w - 1 - x) * 4 + c) }
                }
            }
            pixels = try ImageSurface(rgba: rgba)
        }
        return (image.art, try PNGEncoder.fast.encode(pixels))
    }
}
