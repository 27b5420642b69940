import BubbleCore
import BubbleText
import CCairo
import Foundation

/// A Cairo ARGB32 image surface (premultiplied, native-endian), owned by this object and
/// destroyed with it. Sizes are in device pixels.
public final class ImageSurface {
    let pointer: OpaquePointer
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int

    /// A transparent surface of `width`×`height` pixels.
    public init(width: Int, height: Int) throws(RenderError) {
        guard width > 0, height > 0, width <= 32767, height <= 32767 else {
            throw .invalidSize(width: width, height: height)
        }
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))!
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw .cairo(operation: "creating a \(width)×\(height) image", status: Self.describe(status))
        }
        self.pointer = surface
        self.width = width
        self.height = height
    }

    /// Decodes a PNG file (any colour type libpng reads) into a surface.
    public convenience init(pngFile path: String) throws(RenderError) {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .unreadableImage(
                path: path,
                reason: FileManager.default.fileExists(atPath: path)
                    ? "permission denied" : "no such file")
        }
        // Cairo 1.16 reports any decoding failure as "out of memory": look at the signature
        // ourselves so the message says what is wrong.
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .unreadableImage(path: path, reason: "cannot open the file")
        }
        let head = (try? handle.read(upToCount: 8)).flatMap { $0 } ?? Data()
        try? handle.close()
        guard [UInt8](head) == signature else {
            throw .unreadableImage(path: path, reason: "not a PNG file (expected the 8-byte PNG signature)")
        }
        let surface = cairo_image_surface_create_from_png(path)!
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw .unreadableImage(path: path, reason: "corrupt or truncated PNG data (\(Self.describe(status)))")
        }
        self.init(adopting: surface)
    }

    /// A surface holding straight-alpha RGBA pixels.
    public convenience init(rgba image: RGBAImage) throws(RenderError) {
        try self.init(width: image.width, height: image.height)
        let stride = Int(cairo_image_surface_get_stride(pointer))
        cairo_surface_flush(pointer)
        let data = cairo_image_surface_get_data(pointer)!
        image.bytes.withUnsafeBufferPointer { src in
            for y in 0..<height {
                let row = (data + y * stride).withMemoryRebound(to: UInt32.self, capacity: width) { $0 }
                for x in 0..<width {
                    let i = (y * width + x) * 4
                    let a = UInt32(src[i + 3])
                    func pm(_ c: UInt8) -> UInt32 { (UInt32(c) * a + 127) / 255 }
                    row[x] = a << 24 | pm(src[i]) << 16 | pm(src[i + 1]) << 8 | pm(src[i + 2])
                }
            }
        }
        cairo_surface_mark_dirty(pointer)
    }

    init(adopting surface: OpaquePointer) {
        self.pointer = surface
        self.width = Int(cairo_image_surface_get_width(surface))
        self.height = Int(cairo_image_surface_get_height(surface))
    }

    deinit { cairo_surface_destroy(pointer) }

    /// The pixels as straight-alpha RGBA bytes (what a PNG decoder would give).
    public func rgbaImage() -> RGBAImage {
        cairo_surface_flush(pointer)
        let stride = Int(cairo_image_surface_get_stride(pointer))
        let format = cairo_image_surface_get_format(pointer)
        let data = cairo_image_surface_get_data(pointer)!
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            let rowStart = data + y * stride
            for x in 0..<width {
                let v =
                    format == CAIRO_FORMAT_RGB24
                    ? rowStart.advanced(by: x * 4).withMemoryRebound(to: UInt32.self, capacity: 1) { $0.pointee } | 0xFF00_0000
                    : rowStart.advanced(by: x * 4).withMemoryRebound(to: UInt32.self, capacity: 1) { $0.pointee }
                let a = (v >> 24) & 0xFF
                func un(_ c: UInt32) -> UInt8 { a == 0 ? 0 : UInt8(min(255, (c * 255 + a / 2) / a)) }
                let i = (y * width + x) * 4
                bytes[i] = un((v >> 16) & 0xFF)
                bytes[i + 1] = un((v >> 8) & 0xFF)
                bytes[i + 2] = un(v & 0xFF)
                bytes[i + 3] = UInt8(a)
            }
        }
        return RGBAImage(width: width, height: height, bytes: bytes)
    }

    /// A copy of the pixels inside `rect` as a new surface of that size.
    public func copy(_ rect: PixelRect) throws(RenderError) -> ImageSurface {
        let copy = try ImageSurface(width: rect.width, height: rect.height)
        let cr = cairo_create(copy.pointer)!
        defer { cairo_destroy(cr) }
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_surface(cr, pointer, Double(-rect.x), Double(-rect.y))
        cairo_paint(cr)
        cairo_surface_flush(copy.pointer)
        return copy
    }

    /// Writes the surface as PNG with ``PNGEncoder/fast``. The file appears whole or not at all:
    /// it is written to a temporary file beside `path` and renamed over it.
    public func writePNG(to path: String) throws(RenderError) {
        try PNGEncoder.fast.write(self, to: path)
    }

    /// Writes the surface as PNG with Cairo's own (slower) writer, like ``writePNG(to:)``
    /// otherwise; kept for benchmark comparisons.
    public func writePNGWithCairo(to path: String) throws(RenderError) {
        try AtomicFile.write(to: path) { (tmp: String) throws(RenderError) in
            cairo_surface_flush(pointer)
            let status = cairo_surface_write_to_png(pointer, tmp)
            guard status == CAIRO_STATUS_SUCCESS else {
                throw .unwritable(path: path, reason: Self.describe(status))
            }
        }
    }

    static func describe(_ status: cairo_status_t) -> String {
        // Cairo says only that a write failed: a full disk or the process's file-size limit.
        if status == CAIRO_STATUS_WRITE_ERROR {
            return "cannot write the file: no space left on the device, or the file-size limit (Cairo: error while writing to output stream)"
        }
        return String(cString: cairo_status_to_string(status))
    }
}

/// Writes through a temporary file in the destination's folder and renames it into place, so a
/// reader never sees half a file and a failure leaves nothing behind. A process killed mid-write
/// (`kill -9`) cannot remove its temporary file: the next write of the same output does
/// (`sweepStale`).
package enum AtomicFile {
    /// Removes work files of earlier runs that were killed before they could: `.NAME.tmp-PID-N`
    /// and `.NAME.partK-PID-N` beside `path`, whose process `PID` is gone. A running render's
    /// files are left alone.
    package static func sweepStale(beside path: String) {
        let url = URL(fileURLWithPath: path)
        sweep(url.deletingLastPathComponent().path, prefix: "." + url.lastPathComponent + ".")
    }

    /// `sweepStale` for PDF parts in the temporary folder (`bubblekit-pdf-partK-PID-N.pdf`).
    static func sweepStaleParts() {
        sweep(NSTemporaryDirectory(), prefix: "bubblekit-pdf-", suffix: ".pdf")
    }

    private static func sweep(_ folder: String, prefix: String, suffix: String = "") {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let rest = name.dropFirst(prefix.count).dropLast(suffix.count)
            // "tmp-PID-N" or "partK-PID-N"
            let fields = rest.split(separator: "-")
            guard fields.count == 3, fields[0] == "tmp" || (fields[0].hasPrefix("part") && Int(fields[0].dropFirst(4)) != nil),
                let pid = Int32(fields[1]), pid > 0, Int(fields[2]) != nil
            else { continue }
            if pid == getpid() { continue }
            // kill(pid, 0) fails with ESRCH when no such process exists.
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: (folder as NSString).appendingPathComponent(name))
            }
        }
    }

    package static func write(to path: String, _ body: (String) throws(RenderError) -> Void) throws(RenderError) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw .unwritable(path: path, reason: "folder \(folder) does not exist")
        }
        sweepStale(beside: path)
        let tmp = folder + "/." + url.lastPathComponent + ".tmp-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try body(tmp)
        } catch {
            try? FileManager.default.removeItem(atPath: tmp)
            throw error
        }
        guard rename(tmp, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: tmp)
            throw .unwritable(path: path, reason: reason)
        }
    }
}
