import BubbleCore
import BubbleText
import CCairo
import CPNGShim

/// Encodes an ``ImageSurface`` as PNG with libpng (through the `CPNGShim` C target), several
/// times faster than Cairo's own writer, which always uses zlib's default level and tries all
/// five row filters.
///
/// The output is 8-bit straight-alpha RGBA, or 8-bit RGB when every pixel is opaque (checked
/// once per image). Colours are un-premultiplied with the same rounding as Cairo's writer, so
/// decoding with Cairo gives back exactly the surface's pixels.
public struct PNGEncoder: Hashable, Sendable {
    /// How each row is prepared for compression. Filters predict a byte from its neighbours;
    /// flat colours become runs of zeros that zlib compresses well.
    public enum Filter: Hashable, Sendable, CaseIterable {
        /// Bytes as they are.
        case none
        /// Difference from the pixel to the left.
        case sub
        /// Difference from the pixel above.
        case up
        /// Difference from the average of left and above.
        case average
        /// Difference from the Paeth predictor of left, above and upper-left.
        case paeth
        /// libpng picks None or Sub for each row.
        case noneOrSub
        /// libpng tries all five filters on each row and keeps the best guess (Cairo's and
        /// libpng's default): usually the smallest file, and the slowest.
        case adaptive

        var shimValue: Int32 {
            switch self {
            case .none: Int32(BK_PNG_FILTER_NONE)
            case .sub: Int32(BK_PNG_FILTER_SUB)
            case .up: Int32(BK_PNG_FILTER_UP)
            case .average: Int32(BK_PNG_FILTER_AVERAGE)
            case .paeth: Int32(BK_PNG_FILTER_PAETH)
            case .noneOrSub: Int32(BK_PNG_FILTER_NONE | BK_PNG_FILTER_SUB)
            case .adaptive: Int32(BK_PNG_FILTER_ALL)
            }
        }
    }

    /// zlib's match-finding strategy.
    public enum Strategy: Hashable, Sendable, CaseIterable {
        /// zlib's general-purpose matching.
        case standard
        /// Favours short literal runs over short matches (libpng's usual choice for filtered data;
        /// no different from `.standard` at levels 1…3).
        case filtered
        /// Only repeats of the previous byte: very fast; good on flat, filtered rows.
        case runLength
        /// No matching at all, Huffman coding only.
        case huffmanOnly

        var shimValue: Int32 {
            switch self {
            case .standard: Int32(BK_PNG_STRATEGY_DEFAULT)
            case .filtered: Int32(BK_PNG_STRATEGY_FILTERED)
            case .runLength: Int32(BK_PNG_STRATEGY_RLE)
            case .huffmanOnly: Int32(BK_PNG_STRATEGY_HUFFMAN_ONLY)
            }
        }
    }

    /// zlib level, 0 (stored) … 9 (smallest, slowest); values outside are clamped.
    public var compressionLevel: Int
    /// The row filter libpng applies before compressing.
    public var filter: Filter
    /// zlib's compression strategy.
    public var strategy: Strategy

    /// Defaults to ``fast``'s settings.
    public init(compressionLevel: Int = 2, filter: Filter = .none, strategy: Strategy = .standard) {
        self.compressionLevel = compressionLevel
        self.filter = filter
        self.strategy = strategy
    }

    /// Fast settings for rendered conversations: zlib level 2, no row filter, standard matching.
    ///
    /// Measured on chat images (flat bubbles, gradients, antialiased Pango text; 600×200 and
    /// 800×8000, opaque and transparent, 1× and 2×): 3.5–4.6× less CPU than Cairo's writer, files
    /// 2–5 % larger. Unfiltered rows beat every filter on such images, in time and in size (Sub,
    /// Up, Paeth: 16–37 % larger and slower; adaptive: slower still), because repeated flat colours
    /// and glyph edges match as they are. Level 2 costs the same as level 1 and is 1–3 % smaller.
    /// With many photos in the image files are ≈ 20 % larger than Cairo's (3.3× less CPU); use
    /// ``compact`` when size matters more than time.
    public static let fast = PNGEncoder(compressionLevel: 2, filter: .none, strategy: .standard)

    /// Fast settings for photographs (level 2, Paeth filter): as fast as ``fast`` on a photo and
    /// ≈ 20 % smaller (measured on a 720×477 photo: 690 KB in 44 ms of CPU, against 880 KB for
    /// ``fast`` and 648 KB in 145 ms for ``compact``). On rendered chat images it is the worse
    /// choice (≈ 20 % larger and slower than ``fast``).
    public static let fastPhoto = PNGEncoder(compressionLevel: 2, filter: .paeth, strategy: .standard)

    /// Cairo's own settings (level 6, all five filters tried per row, zlib's filtered strategy):
    /// the same size and about the same time as `cairo_surface_write_to_png`.
    public static let compact = PNGEncoder(compressionLevel: 6, filter: .adaptive, strategy: .filtered)

    /// Writes `surface` as a PNG file at `path`. The file appears whole or not at all (see
    /// `AtomicFile`); failures are ``/BubbleCore/RenderError/unwritable(path:reason:)``.
    public func write(_ surface: ImageSurface, to path: String) throws(RenderError) {
        try AtomicFile.write(to: path) { (tmp: String) throws(RenderError) in
            let pixels = try Pixels(surface)
            var options = shimOptions
            let message = withExtendedLifetime(surface) {
                withErrorBuffer { buffer, size in
                    bk_png_write_argb32(
                        tmp, pixels.data, pixels.width, pixels.height, pixels.stride,
                        pixels.ignoreAlpha, &options, buffer, size)
                }
            }
            if let message {
                throw .unwritable(path: path, reason: message)
            }
        }
    }

    /// The PNG file's bytes, e.g. for standard output: the same bytes ``write(_:to:)`` writes.
    /// Fails (out of memory, in practice) with ``/BubbleCore/RenderError/unwritable(path:reason:)`` whose
    /// path is "(PNG in memory)".
    public func encode(_ surface: ImageSurface) throws(RenderError) -> [UInt8] {
        let pixels = try Pixels(surface)
        var options = shimOptions
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let message = withExtendedLifetime(surface) {
            withErrorBuffer { buffer, size in
                bk_png_encode_argb32_to_memory(
                    pixels.data, pixels.width, pixels.height, pixels.stride,
                    pixels.ignoreAlpha, &options, &output, &count, buffer, size)
            }
        }
        defer { bk_png_free(output) }
        guard message == nil, let output else {
            throw .unwritable(path: "(PNG in memory)", reason: message ?? "no data")
        }
        return Array(UnsafeBufferPointer(start: output, count: count))
    }

    private var shimOptions: bk_png_options {
        bk_png_options(
            compression_level: Int32(clamping: compressionLevel),
            filters: filter.shimValue, strategy: strategy.shimValue)
    }

    /// Runs `body` with a C error buffer; returns the message when `body` returns non-zero.
    private func withErrorBuffer(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        return buffer.withUnsafeMutableBufferPointer { buffer -> String? in
            let base = buffer.baseAddress!
            guard body(base, buffer.count) != 0 else { return nil }
            base[buffer.count - 1] = 0
            let message = String(cString: base)
            return message.isEmpty ? "unknown libpng error" : message
        }
    }

    /// A surface's pixel memory, flushed, as the shim wants it. Valid while the surface lives.
    private struct Pixels {
        let data: UnsafeMutablePointer<UInt8>
        let width: Int32, height: Int32, stride: Int32
        let ignoreAlpha: Int32

        init(_ surface: ImageSurface) throws(RenderError) {
            cairo_surface_flush(surface.pointer)
            let format = cairo_image_surface_get_format(surface.pointer)
            guard format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24,
                let data = cairo_image_surface_get_data(surface.pointer)
            else {
                throw .cairo(operation: "encoding a PNG", status: "unsupported surface format \(format.rawValue)")
            }
            self.data = data
            self.width = Int32(surface.width)
            self.height = Int32(surface.height)
            self.stride = cairo_image_surface_get_stride(surface.pointer)
            self.ignoreAlpha = format == CAIRO_FORMAT_RGB24 ? 1 : 0
        }
    }
}
