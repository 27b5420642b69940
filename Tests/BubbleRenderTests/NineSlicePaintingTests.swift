import BubbleCore
import Foundation
import BubbleTestSupport
import Testing
@testable import BubbleRender
@testable import BubbleText

/// Test art: a 21×21 bubble body of opaque `body` colour (0…15 each way) with a 3-pixel
/// translucent black shadow (alpha 76 ≈ 0.3) along its right and bottom edges, transparent
/// elsewhere. Caps of 8 on every side leave a 5-pixel interior.
private func shadowArt(body: (UInt8, UInt8, UInt8) = (255, 255, 255)) -> RGBAImage {
    var bytes = [UInt8](repeating: 0, count: 21 * 21 * 4)
    for y in 0..<21 {
        for x in 0..<21 {
            let i = (y * 21 + x) * 4
            if x < 18 && y < 18 {
                bytes[i] = body.0; bytes[i + 1] = body.1; bytes[i + 2] = body.2; bytes[i + 3] = 255
            } else if x >= 3 && y >= 3 {
                bytes[i + 3] = 76
            }
        }
    }
    return RGBAImage(width: 21, height: 21, bytes: bytes)
}

private let shadowInsets = EdgeInsets(top: 8, left: 8, bottom: 8, right: 8)

/// Writes `surface` to a PNG, decodes it again: what a user of the file would see.
private func roundTrip(_ surface: ImageSurface) throws -> RGBAImage {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString).png").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    try surface.writePNG(to: path)
    return try ImageSurface(pngFile: path).rgbaImage()
}

@Suite("Painting nine-slice art with real alpha")
struct NineSlicePaintingTests {
    @Test("a translucent shadow over a gradient keeps the gradient visible", arguments: [1.0, 2.0, 3.0])
    func shadowOverGradient(scale: Double) throws {
        let size = Size(width: 160, height: 80)
        let surface = try ImageSurface(width: Int(size.width * scale), height: Int(size.height * scale))
        let canvas = try Canvas(surface: surface, scale: scale)
        let red = Color(red: 1, green: 0, blue: 0), blue = Color(red: 0, green: 0, blue: 1)
        canvas.fillGradient(Rect(origin: .zero, size: size), from: red, to: blue)
        let art = try StretchableImage(
            art: NineSliceArt(pixelWidth: 21, pixelHeight: 21, capInsets: shadowInsets),
            pixels: ImageSurface(rgba: shadowArt()))
        let bubble = Rect(x: 10, y: 10, width: 140, height: 60)
        try art.draw(in: bubble, on: canvas)
        let image = try roundTrip(surface)

        // The shadow band is the bubble's bottom 3 points, from x + 3 to the right edge.
        let y = Int((bubble.maxY - 1.5) * scale)
        var reds: [Int] = []
        for xPoint in stride(from: 20.0, through: 140.0, by: 10.0) {
            let x = Int(xPoint * scale)
            let (r, g, b, a) = image.pixel(x: x, y: y)
            // Expected: the gradient at x, darkened by 30 % black: bg × (1 − 76/255).
            let t = (Double(x) + 0.5) / (size.width * scale)
            let keep = 1 - 76.0 / 255
            #expect(a == 255)
            #expect(abs(Double(r) - 255 * (1 - t) * keep) <= 3, "x=\(x) r=\(r)")
            #expect(abs(Double(b) - 255 * t * keep) <= 3, "x=\(x) b=\(b)")
            #expect(g == 0)
            reds.append(Int(r))
        }
        // The background under the shadow really varies: not a pre-blended flat colour.
        #expect(reds.first! - reds.last! > 100)
        // Outside the art the gradient is untouched.
        let (r0, _, b0, _) = image.pixel(x: Int(5 * scale), y: Int(40 * scale))
        #expect(r0 > 240 && b0 < 15)
    }

    @Test("no seams between patches at fractional positions and sizes", arguments: [1.0, 2.0, 3.0])
    func noSeams(scale: Double) throws {
        let surface = try ImageSurface(width: Int(200 * scale), height: Int(100 * scale))
        let canvas = try Canvas(surface: surface, scale: scale)
        canvas.fill(Rect(x: 0, y: 0, width: 200, height: 100), color: Color(red: 0, green: 0.5, blue: 0))
        let art = try StretchableImage(
            art: NineSliceArt(pixelWidth: 21, pixelHeight: 21, capInsets: shadowInsets),
            pixels: ImageSurface(rgba: shadowArt()))
        for mode in [NineSliceMode.uikitStretch, .uikitTile, .css(.round, fill: true), .css(.repeat, fill: true)] {
            let bubble = Rect(x: 10.3, y: 7.6, width: 97.45, height: 41.2)
            try art.draw(in: bubble, on: canvas, mode: mode)
            let image = surface.rgbaImage()
            // Every pixel fully inside the white body (2 pt in from its edges) is pure white.
            let x0 = Int(((bubble.minX + 2) * scale).rounded(.up)), x1 = Int(((bubble.maxX - 5) * scale).rounded(.down))
            let y0 = Int(((bubble.minY + 2) * scale).rounded(.up)), y1 = Int(((bubble.maxY - 5) * scale).rounded(.down))
            var bad: [(Int, Int)] = []
            for y in y0..<y1 {
                for x in x0..<x1 {
                    let (r, g, b, a) = image.pixel(x: x, y: y)
                    if r != 255 || g != 255 || b != 255 || a != 255 { bad.append((x, y)) }
                }
            }
            #expect(bad.isEmpty, "\(mode) at \(scale)×: \(bad.count) off-white pixels, first \(bad.prefix(3))")
            // Along the shadow band, the colour is the same on both sides of every patch edge.
            let y = Int(((bubble.maxY - 1.5) * scale))
            // (The shadow starts 3 pt in from the left and is interpolated there when magnified.)
            let bandStart = Int(((bubble.minX + 5) * scale).rounded(.up))
            let band = (bandStart..<(x1 - Int(3 * scale))).map { image.pixel(x: $0, y: y).1 }
            #expect(Set(band).count == 1, "\(mode) at \(scale)×: shadow band values \(Set(band).sorted())")
        }
    }

    @Test("mirrored art puts the left cap on the right")
    func mirrored() throws {
        // 9×3 art: red left cap (3 px), grey interior, blue right cap (3 px).
        var bytes: [UInt8] = []
        for _ in 0..<3 {
            for x in 0..<9 { bytes += x < 3 ? [255, 0, 0, 255] : x >= 6 ? [0, 0, 255, 255] : [128, 128, 128, 255] }
        }
        let art = try StretchableImage(
            art: NineSliceArt(pixelWidth: 9, pixelHeight: 3, capInsets: EdgeInsets(top: 0, left: 3, bottom: 0, right: 3)),
            pixels: ImageSurface(rgba: RGBAImage(width: 9, height: 3, bytes: bytes)))
        let surface = try ImageSurface(width: 60, height: 10)
        let canvas = try Canvas(surface: surface)
        try art.draw(in: Rect(x: 10, y: 0, width: 40, height: 10), on: canvas, mirrored: true)
        let image = surface.rgbaImage()
        #expect(image.pixel(x: 11, y: 5) == (0, 0, 255, 255))
        #expect(image.pixel(x: 48, y: 5) == (255, 0, 0, 255))
        #expect(image.pixel(x: 30, y: 5) == (128, 128, 128, 255))
        #expect(image.pixel(x: 5, y: 5).3 == 0)
        #expect(image.pixel(x: 55, y: 5).3 == 0)
    }

    @Test("tile mode repeats the interior's pattern instead of stretching it")
    func tilesPattern() throws {
        // 1-px caps; the 4-px interior is two black pixels then two white ones.
        var bytes: [UInt8] = []
        for _ in 0..<3 {
            for x in 0..<6 { bytes += (x == 1 || x == 2) ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        }
        let art = try StretchableImage(
            art: NineSliceArt(pixelWidth: 6, pixelHeight: 3, capInsets: EdgeInsets(top: 1, left: 1, bottom: 1, right: 1)),
            pixels: ImageSurface(rgba: RGBAImage(width: 6, height: 3, bytes: bytes)))
        let surface = try ImageSurface(width: 18, height: 3)
        try art.draw(in: Rect(x: 0, y: 0, width: 18, height: 3), on: Canvas(surface: surface), mode: .uikitTile)
        let row = (0..<18).map { surface.rgbaImage().pixel(x: $0, y: 1).0 }
        #expect(row == [255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 255])
    }

    @Test("a 9-patch PNG file loads, drops its border and paints its content")
    func ninePatchFile() throws {
        // 12×12 interior: blue, with stretch markers in the middle of the top and left edges.
        var bytes = [UInt8](repeating: 0, count: 14 * 14 * 4)
        for y in 1...12 { for x in 1...12 { let i = (y * 14 + x) * 4; bytes[i + 2] = 255; bytes[i + 3] = 255 } }
        for k in 6...7 {
            bytes.replaceSubrange((k * 4)..<(k * 4 + 4), with: [0, 0, 0, 255])
            bytes.replaceSubrange((k * 14 * 4)..<(k * 14 * 4 + 4), with: [0, 0, 0, 255])
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("bubble.9.png").path
        try ImageSurface(rgba: RGBAImage(width: 14, height: 14, bytes: bytes)).writePNG(to: path)

        let art = try StretchableImage(ninePatchFile: path)
        #expect(art.art.pixelWidth == 12 && art.art.pixelHeight == 12)
        #expect(art.art.contentInsets == EdgeInsets(top: 5, left: 5, bottom: 5, right: 5))
        let surface = try ImageSurface(width: 50, height: 30)
        try art.draw(in: Rect(x: 0, y: 0, width: 50, height: 30), on: Canvas(surface: surface))
        let image = surface.rgbaImage()
        // All blue, no black marker pixels carried over.
        for (x, y) in [(0, 0), (25, 0), (49, 29), (0, 15), (25, 15)] {
            #expect(image.pixel(x: x, y: y) == (0, 0, 255, 255))
        }
    }
}

@Suite("Files: bad input and atomic output")
struct ImageFileTests {
    @Test("a missing file names the path")
    func missing() {
        #expect(throws: RenderError.unreadableImage(path: "/nonexistent/bubble.png", reason: "no such file")) {
            try ImageSurface(pngFile: "/nonexistent/bubble.png")
        }
    }

    @Test("a file that is not a PNG is refused, not crashed on")
    func notPNG() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString).png").path
        try Data("definitely not a png".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: RenderError.unreadableImage(path: path, reason: "not a PNG file (expected the 8-byte PNG signature)")) {
            try ImageSurface(pngFile: path)
        }
        // A real PNG cut in half: the signature is right, the data is not.
        let whole = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: whole) }
        try ImageSurface(width: 64, height: 64).writePNG(to: whole)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
        do {
            _ = try ImageSurface(pngFile: path)
            Issue.record("a truncated PNG was accepted")
        } catch {
            #expect(error.description.hasPrefix("\(path): cannot read image: corrupt or truncated PNG data"))
        }
    }

    @Test("a 9-patch with a bad marker names the file and the pixel")
    func badNinePatchFile() throws {
        var bytes = [UInt8](repeating: 0, count: 5 * 5 * 4)
        bytes.replaceSubrange(8..<12, with: [10, 200, 10, 255])  // (2, 0): green
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString).9.png").path
        try ImageSurface(rgba: RGBAImage(width: 5, height: 5, bytes: bytes)).writePNG(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try StretchableImage(ninePatchFile: path)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix(path + ": 9-patch border pixel at (2, 0)"))
        }
    }

    @Test("cap insets that do not fit the PNG name the file")
    func badInsetsFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString).png").path
        try ImageSurface(width: 10, height: 10).writePNG(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: RenderError.nineSlice(path: path, .insetsExceedImage(axis: .horizontal, first: 6, second: 4, available: 10))) {
            try StretchableImage(pngFile: path, capInsets: EdgeInsets(top: 1, left: 6, bottom: 1, right: 4))
        }
    }

    @Test("writing into a missing folder fails cleanly and leaves nothing behind")
    func unwritable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString)")
        #expect(throws: RenderError.unwritable(path: dir.path + "/x.png", reason: "folder \(dir.path) does not exist")) {
            try ImageSurface(width: 4, height: 4).writePNG(to: dir.path + "/x.png")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path))
    }

    @Test("writing replaces the file whole and leaves no temporary file")
    func atomic() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.path + "/out.png"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let surface = try ImageSurface(width: 3, height: 2)
        try Canvas(surface: surface).fill(Rect(x: 0, y: 0, width: 3, height: 2), color: Color(red: 0, green: 1, blue: 0))
        try surface.writePNG(to: path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out.png"])
        #expect(try ImageSurface(pngFile: path).rgbaImage().pixel(x: 2, y: 1) == (0, 255, 0, 255))
    }

    @Test("surfaces of impossible sizes are refused")
    func badSizes() {
        #expect(throws: RenderError.invalidSize(width: 0, height: 5)) { try ImageSurface(width: 0, height: 5) }
        #expect(throws: RenderError.invalidSize(width: 40000, height: 5)) { try ImageSurface(width: 40000, height: 5) }
    }
}
