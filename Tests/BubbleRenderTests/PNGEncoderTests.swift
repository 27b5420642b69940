import BubbleCore
import CCairo
import CPNGShim
import Foundation
import BubbleTestSupport
import Testing
@testable import BubbleRender
@testable import BubbleText

// Round trips through PNGEncoder and Cairo's PNG reader.
//
// Every comparison here is exact, with no ±1 allowance, because none is needed: the encoder
// un-premultiplies with rounding, u = round(255·c / a), and Cairo's reader premultiplies with
// rounding, round(a·u / 255). Since |u − 255·c/a| ≤ ½, |a·u/255 − c| ≤ a/510 < ½ for a < 255
// (a = 255 is a plain copy, a = 0 is all zeros), so the reader lands on the original c. The
// decoded surface therefore holds the very same premultiplied words, and `rgbaImage()` of both
// gives the same straight RGBA. `everyPremultipliedValue` checks all 32,896 valid (a, c) pairs.

private let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

private func temporaryPath(_ name: String = "png") -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("bk-png-\(UUID().uuidString).\(name)").path
}

/// The pixels as Cairo stores them (premultiplied ARGB words), without any stride padding.
/// RGB24 words get alpha 255, as that format's top byte means nothing.
private func words(_ surface: ImageSurface) -> [UInt32] {
    cairo_surface_flush(surface.pointer)
    let stride = Int(cairo_image_surface_get_stride(surface.pointer))
    let opaque = cairo_image_surface_get_format(surface.pointer) == CAIRO_FORMAT_RGB24
    let data = UnsafeRawPointer(cairo_image_surface_get_data(surface.pointer)!)
    var result: [UInt32] = []
    result.reserveCapacity(surface.width * surface.height)
    for y in 0..<surface.height {
        for x in 0..<surface.width {
            let word = data.load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
            result.append(opaque ? word | 0xFF00_0000 : word)
        }
    }
    return result
}

/// Writes with `encoder`, decodes with Cairo.
private func roundTrip(_ surface: ImageSurface, _ encoder: PNGEncoder = .fast) throws -> (ImageSurface, [UInt8]) {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    try encoder.write(surface, to: path)
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    return (try ImageSurface(pngFile: path), bytes)
}

private func decode(_ bytes: [UInt8]) throws -> ImageSurface {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return try ImageSurface(pngFile: path)
}

/// The IHDR colour type: 2 = RGB, 6 = RGBA.
private func colourType(_ png: [UInt8]) -> UInt8 { png[25] }

private func roundedRect(_ cr: OpaquePointer, _ x: Double, _ y: Double, _ w: Double, _ h: Double, _ r: Double) {
    cairo_new_sub_path(cr)
    cairo_arc(cr, x + w - r, y + r, r, -Double.pi / 2, 0)
    cairo_arc(cr, x + w - r, y + h - r, r, 0, Double.pi / 2)
    cairo_arc(cr, x + r, y + h - r, r, Double.pi / 2, Double.pi)
    cairo_arc(cr, x + r, y + r, r, Double.pi, 3 * Double.pi / 2)
    cairo_close_path(cr)
}

/// Chat-like content: bubbles with antialiased rounded edges, a gradient, thin lines and a
/// soft shadow. With `background` everything is opaque; without, the bubbles float on
/// transparency (edges, shadow and a fade give many alpha values; corners stay fully clear).
private func drawScene(on surface: ImageSurface, background: Bool) {
    let cr = cairo_create(surface.pointer)!
    defer { cairo_destroy(cr) }
    let w = Double(surface.width), h = Double(surface.height)
    if background {
        cairo_set_source_rgb(cr, 0.97, 0.97, 0.98)
        cairo_paint(cr)
    }
    // A bubble with a vertical gradient and a translucent shadow.
    cairo_set_source_rgba(cr, 0, 0, 0, 0.3)
    roundedRect(cr, w * 0.1 + 2, h * 0.1 + 3, w * 0.6, h * 0.35, min(w, h) * 0.08)
    cairo_fill(cr)
    let gradient = cairo_pattern_create_linear(0, h * 0.1, 0, h * 0.45)!
    cairo_pattern_add_color_stop_rgb(gradient, 0, 0.2, 0.55, 1)
    cairo_pattern_add_color_stop_rgb(gradient, 1, 0.0, 0.4, 0.9)
    cairo_set_source(cr, gradient)
    roundedRect(cr, w * 0.1, h * 0.1, w * 0.6, h * 0.35, min(w, h) * 0.08)
    cairo_fill(cr)
    cairo_pattern_destroy(gradient)
    // A grey bubble that fades out to the right (alpha 1 → 0.1).
    let fade = cairo_pattern_create_linear(w * 0.3, 0, w * 0.95, 0)!
    cairo_pattern_add_color_stop_rgba(fade, 0, 0.9, 0.9, 0.92, 1)
    cairo_pattern_add_color_stop_rgba(fade, 1, 0.3, 0.8, 0.4, 0.1)
    cairo_set_source(cr, fade)
    roundedRect(cr, w * 0.3, h * 0.55, w * 0.65, h * 0.35, min(w, h) * 0.1)
    cairo_fill(cr)
    cairo_pattern_destroy(fade)
    // Hairlines and a circle: antialiased edges at fractional positions.
    cairo_set_line_width(cr, 0.7)
    cairo_set_source_rgba(cr, 0.8, 0.1, 0.2, 0.85)
    for i in 0..<5 {
        cairo_move_to(cr, 0.3 + Double(i) * w / 5, h * 0.05)
        cairo_line_to(cr, w * 0.9 - Double(i) * 1.7, h * 0.95)
    }
    cairo_stroke(cr)
    cairo_arc(cr, w * 0.8, h * 0.3, min(w, h) * 0.15 + 0.4, 0, 2 * Double.pi)
    cairo_set_source_rgba(cr, 1, 0.6, 0, 0.55)
    cairo_fill(cr)
    cairo_surface_flush(surface.pointer)
}

/// A surface over memory we own, rows `padding` bytes longer than the pixels, the padding
/// filled with junk that must not reach the PNG. Call `body` while `storage` lives.
private func withPaddedSurface<T>(
    format: cairo_format_t, width: Int, height: Int, padding: Int,
    fill: (Int, Int) -> UInt32,
    _ body: (ImageSurface) throws -> T
) throws -> T {
    let stride = width * 4 + padding
    let storage = UnsafeMutableRawPointer.allocate(byteCount: stride * height, alignment: 16)
    defer { storage.deallocate() }
    storage.initializeMemory(as: UInt8.self, repeating: 0xAB, count: stride * height)
    for y in 0..<height {
        for x in 0..<width {
            storage.storeBytes(of: fill(x, y), toByteOffset: y * stride + x * 4, as: UInt32.self)
        }
    }
    let cairoSurface = cairo_image_surface_create_for_data(
        storage.assumingMemoryBound(to: UInt8.self), format,
        Int32(width), Int32(height), Int32(stride))!
    #expect(cairo_surface_status(cairoSurface) == CAIRO_STATUS_SUCCESS)
    let surface = ImageSurface(adopting: cairoSurface)
    return try withExtendedLifetime(surface) { try body(surface) }
}

@Suite("PNG encoder: exact round trips")
struct PNGEncoderRoundTripTests {
    @Test("an opaque image is written as RGB and decodes to the same pixels")
    func opaque() throws {
        let surface = try ImageSurface(width: 240, height: 90)
        drawScene(on: surface, background: true)
        let (decoded, png) = try roundTrip(surface)
        #expect(colourType(png) == 2)
        #expect(words(decoded) == words(surface))
        #expect(decoded.rgbaImage() == surface.rgbaImage())
    }

    @Test("translucent and fully transparent pixels decode to the same straight RGBA")
    func translucent() throws {
        let surface = try ImageSurface(width: 240, height: 90)
        drawScene(on: surface, background: false)
        let source = words(surface)
        let alphas = Set(source.map { $0 >> 24 })
        #expect(alphas.contains(0) && alphas.contains(255) && alphas.count > 100, "scene has \(alphas.count) alphas")
        let (decoded, png) = try roundTrip(surface)
        #expect(colourType(png) == 6)
        #expect(words(decoded) == source)
        #expect(decoded.rgbaImage() == surface.rgbaImage())
        // Fully transparent pixels are stored as 0, 0, 0, 0.
        #expect(decoded.rgbaImage().pixel(x: 0, y: 0) == (0, 0, 0, 0))
    }

    @Test("every valid premultiplied value survives exactly")
    func everyPremultipliedValue() throws {
        // Row y has alpha y; column x has red min(x, y), green y − red, blue (7x) mod (y + 1).
        let surface = try ImageSurface(width: 256, height: 256)
        let stride = Int(cairo_image_surface_get_stride(surface.pointer))
        let data = UnsafeMutableRawPointer(cairo_image_surface_get_data(surface.pointer)!)
        for y in 0..<256 {
            for x in 0..<256 {
                let a = UInt32(y), r = UInt32(min(x, y)), g = UInt32(y) - r, b = UInt32(x * 7 % (y + 1))
                data.storeBytes(of: a << 24 | r << 16 | g << 8 | b, toByteOffset: y * stride + x * 4, as: UInt32.self)
            }
        }
        cairo_surface_mark_dirty(surface.pointer)
        let (decoded, _) = try roundTrip(surface)
        #expect(words(decoded) == words(surface))
        #expect(decoded.rgbaImage() == surface.rgbaImage())
    }

    @Test("a fully transparent image", arguments: [(1, 1), (5, 3), (64, 64)])
    func transparent(size: (Int, Int)) throws {
        let surface = try ImageSurface(width: size.0, height: size.1)
        let (decoded, png) = try roundTrip(surface)
        #expect(colourType(png) == 6)
        #expect(decoded.rgbaImage().bytes.allSatisfy { $0 == 0 })
    }

    @Test("small and odd sizes", arguments: [(1, 1), (2, 1), (1, 7), (3, 2), (7, 5), (13, 1), (33, 17), (101, 3)])
    func oddSizes(size: (Int, Int)) throws {
        for background in [true, false] {
            let surface = try ImageSurface(width: size.0, height: size.1)
            drawScene(on: surface, background: background)
            // Make sure the image is not trivially flat: one translucent or one coloured pixel.
            cairo_surface_flush(surface.pointer)
            let corner = UnsafeMutableRawPointer(cairo_image_surface_get_data(surface.pointer)!)
            corner.storeBytes(of: background ? 0xFF12_3456 : 0x8040_2010, as: UInt32.self)
            cairo_surface_mark_dirty(surface.pointer)
            let (decoded, png) = try roundTrip(surface)
            #expect(colourType(png) == (background ? 2 : 6))
            #expect(words(decoded) == words(surface), "\(size) background: \(background)")
            #expect(decoded.rgbaImage() == surface.rgbaImage())
        }
    }

    @Test("rows longer than the pixels (stride ≠ width × 4): the padding is skipped", arguments: [(1, 1), (7, 5), (50, 9)])
    func paddedStride(size: (Int, Int)) throws {
        // Cairo's own ARGB32 surfaces always have stride = width × 4, so this uses a surface over
        // our own memory with 12 bytes of junk after each row.
        let pixel = { (x: Int, y: Int) -> UInt32 in
            let a = UInt32((x * 37 + y * 11) % 256)
            return a << 24 | (a * 3 / 4) << 16 | (a / 2) << 8 | UInt32(x % 2) * a
        }
        try withPaddedSurface(format: CAIRO_FORMAT_ARGB32, width: size.0, height: size.1, padding: 12, fill: pixel) { surface in
            let (decoded, _) = try roundTrip(surface)
            #expect(words(decoded) == words(surface))
            let bytes = try PNGEncoder.fast.encode(surface)
            #expect(words(try decode(bytes)) == words(surface))
        }
    }

    @Test("an RGB24 surface is opaque whatever its unused top byte holds")
    func rgb24() throws {
        try withPaddedSurface(
            format: CAIRO_FORMAT_RGB24, width: 9, height: 4, padding: 4,
            fill: { x, y in UInt32(x * 28) << 16 | UInt32(y * 60) << 8 | 0x42 }
        ) { surface in
            let (decoded, png) = try roundTrip(surface)
            #expect(colourType(png) == 2)
            #expect(words(decoded) == words(surface))
            #expect(decoded.rgbaImage().pixel(x: 8, y: 3) == (224, 180, 0x42, 255))
        }
    }

    @Test("an image decoded from PNG (Cairo makes RGB24 of opaque files) writes again unchanged")
    func reencodeDecoded() throws {
        let surface = try ImageSurface(width: 120, height: 40)
        drawScene(on: surface, background: true)
        let (decoded, _) = try roundTrip(surface)
        #expect(cairo_image_surface_get_format(decoded.pointer) == CAIRO_FORMAT_RGB24)
        let (again, png) = try roundTrip(decoded)
        #expect(colourType(png) == 2)
        #expect(words(again) == words(surface))
    }

    @Test("noise spanning several IDAT chunks and output-buffer growth")
    func noise() throws {
        var generator = SystemRandomNumberGenerator()
        let surface = try ImageSurface(width: 301, height: 299)
        let stride = Int(cairo_image_surface_get_stride(surface.pointer))
        let data = UnsafeMutableRawPointer(cairo_image_surface_get_data(surface.pointer)!)
        for y in 0..<surface.height {
            for x in 0..<surface.width {
                let a = UInt32.random(in: 0...255, using: &generator)
                let c = { UInt32.random(in: 0...a, using: &generator) }
                data.storeBytes(of: a << 24 | c() << 16 | c() << 8 | c(), toByteOffset: y * stride + x * 4, as: UInt32.self)
            }
        }
        cairo_surface_mark_dirty(surface.pointer)
        let bytes = try PNGEncoder.fast.encode(surface)
        #expect(bytes.count > 200_000)
        #expect(words(try decode(bytes)) == words(surface))
    }

    @Test("every filter and strategy round-trips", arguments: PNGEncoder.Filter.allCases, PNGEncoder.Strategy.allCases)
    func settings(filter: PNGEncoder.Filter, strategy: PNGEncoder.Strategy) throws {
        let surface = try ImageSurface(width: 37, height: 23)
        drawScene(on: surface, background: false)
        for level in [-3, 0, 1, 6, 9, 42] {
            let encoder = PNGEncoder(compressionLevel: level, filter: filter, strategy: strategy)
            let (decoded, _) = try roundTrip(surface, encoder)
            #expect(words(decoded) == words(surface), "level \(level)")
        }
    }

    @Test("writePNG and Cairo's writer give the same pixels")
    func sameAsCairo() throws {
        let surface = try ImageSurface(width: 160, height: 70)
        drawScene(on: surface, background: false)
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try surface.writePNGWithCairo(to: path)
        let viaCairo = try ImageSurface(pngFile: path)
        try surface.writePNG(to: path)
        let viaEncoder = try ImageSurface(pngFile: path)
        #expect(words(viaEncoder) == words(viaCairo))
        #expect(words(viaEncoder) == words(surface))
    }
}

@Suite("PNG encoder: memory output and failures")
struct PNGEncoderOutputTests {
    @Test("encoding to memory gives a PNG that decodes to the same pixels, byte for byte the file")
    func memory() throws {
        for background in [true, false] {
            let surface = try ImageSurface(width: 99, height: 41)
            drawScene(on: surface, background: background)
            let bytes = try PNGEncoder.fast.encode(surface)
            #expect(Array(bytes.prefix(8)) == pngSignature)
            #expect(words(try decode(bytes)) == words(surface))
            let (_, file) = try roundTrip(surface)
            #expect(file == bytes)
        }
    }

    @Test("writing into a missing folder throws unwritable and leaves nothing behind")
    func missingFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bk-png-\(UUID().uuidString)").path
        let path = folder + "/out.png"
        let surface = try ImageSurface(width: 8, height: 8)
        #expect(throws: RenderError.unwritable(path: path, reason: "folder \(folder) does not exist")) {
            try PNGEncoder.fast.write(surface, to: path)
        }
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a file the encoder cannot create throws unwritable with the system's reason, nothing left")
    func cannotCreate() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bk-png-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A 250-byte name is allowed, but the temporary name beside it is too long to create.
        let path = folder.path + "/" + String(repeating: "b", count: 246) + ".png"
        #expect(throws: RenderError.unwritable(path: path, reason: "File name too long")) {
            try ImageSurface(width: 8, height: 8).writePNG(to: path)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test(
        "a write error inside libpng is reported, not crashed on (setjmp path)",
        .enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func diskFull() throws {
        // 4×4: the bytes stay in stdio's buffer until the final flush. 300×300 noise: libpng's
        // first 64 KiB IDAT write fails, and libpng longjmps out of the encoder.
        for size in [(4, 4), (300, 300)] {
            let surface = try ImageSurface(width: size.0, height: size.1)
            drawScene(on: surface, background: false)
            if size.0 > 4 {
                let data = cairo_image_surface_get_data(surface.pointer)!
                for i in 0..<(size.0 * size.1 * 4) { data[i] = UInt8(truncatingIfNeeded: (i &* 2_654_435_761) >> 13) | 0xC0 }
                cairo_surface_mark_dirty(surface.pointer)
            }
            var options = bk_png_options(compression_level: 1, filters: Int32(BK_PNG_FILTER_SUB), strategy: 0)
            var buffer = [CChar](repeating: 0, count: 256)
            let stride = cairo_image_surface_get_stride(surface.pointer)
            let status = buffer.withUnsafeMutableBufferPointer { buffer in
                bk_png_write_argb32(
                    "/dev/full", cairo_image_surface_get_data(surface.pointer), Int32(size.0),
                    Int32(size.1), stride, 0, &options, buffer.baseAddress, buffer.count)
            }
            let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            #expect(status != 0)
            #expect(message == "write failed: No space left on device", "\(size)")
        }
    }

    @Test("bad arguments to the shim are refused with a message")
    func badArguments() {
        var options = bk_png_options(compression_level: 1, filters: 0, strategy: 0)
        var pixels = [UInt8](repeating: 0, count: 64)
        var buffer = [CChar](repeating: 0, count: 128)
        var out: UnsafeMutablePointer<UInt8>?
        var count = 99
        let status = buffer.withUnsafeMutableBufferPointer { buffer in
            bk_png_encode_argb32_to_memory(&pixels, 4, 4, 8, 0, &options, &out, &count, buffer.baseAddress, buffer.count)
        }
        #expect(status != 0)
        #expect(out == nil && count == 0)
        #expect(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } == "stride 8 is too small or unaligned for width 4")
    }
}
