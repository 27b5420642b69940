/// Straight-alpha RGBA pixels, row by row, 4 bytes a pixel: what a decoded PNG gives.
public struct RGBAImage: Hashable, Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Pixels row by row, four bytes each (red, green, blue, alpha; not premultiplied).
    public var bytes: [UInt8]
    /// An image of `width` × `height` pixels; `bytes` holds `width × height × 4` bytes.
    public init(width: Int, height: Int, bytes: [UInt8]) {
        self.width = width; self.height = height; self.bytes = bytes
    }
    /// (r, g, b, a) at column `x`, row `y`.
    public func pixel(x: Int, y: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        let i = (y * width + x) * 4
        return (bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3])
    }
}

/// Reads an Android 9-patch (`.9.png`): the art inside a 1-pixel marker border. Black pixels on
/// the top and left edges mark stretchable runs; black on the bottom and right edges mark the
/// content (padding) box, which falls back to the first stretchable run of that axis when the
/// marker is absent, as Android's `aapt` does.
public enum NinePatch {
    /// The art without its border, cut as the markers say. `scale` is the art's pixels per point.
    /// The art's pixels for painting are `image` minus the 1-pixel border (see `interiorPixels`).
    public static func parse(_ image: RGBAImage, scale: Double = 1) throws(NineSliceError) -> NineSliceArt {
        guard image.width >= 3, image.height >= 3 else {
            throw .ninePatchTooSmall(width: image.width, height: image.height)
        }
        guard image.bytes.count == image.width * image.height * 4 else {
            throw .ninePatchPixelCountMismatch(expected: image.width * image.height * 4, actual: image.bytes.count)
        }
        let w = image.width, h = image.height
        // Every border pixel must be a marker (opaque black) or nothing (fully transparent).
        func isMarker(_ x: Int, _ y: Int) throws(NineSliceError) -> Bool {
            let (r, g, b, a) = image.pixel(x: x, y: y)
            if a == 0 { return false }
            if a == 255, r == 0, g == 0, b == 0 { return true }
            throw .ninePatchInvalidMarker(x: x, y: y, red: r, green: g, blue: b, alpha: a)
        }
        var top: [Bool] = [], bottom: [Bool] = [], left: [Bool] = [], right: [Bool] = []
        for x in 1..<(w - 1) {
            top.append(try isMarker(x, 0))
            bottom.append(try isMarker(x, h - 1))
        }
        for y in 1..<(h - 1) {
            left.append(try isMarker(0, y))
            right.append(try isMarker(w - 1, y))
        }
        for (x, y) in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)] { _ = try isMarker(x, y) }

        let xStretch = runs(top), yStretch = runs(left)
        guard let firstX = xStretch.first else { throw .ninePatchNoStretchMarker(edge: "top") }
        guard let firstY = yStretch.first else { throw .ninePatchNoStretchMarker(edge: "left") }
        let xContent = runs(bottom), yContent = runs(right)
        guard xContent.count <= 1 else { throw .ninePatchSeveralContentMarkers(edge: "bottom", runs: xContent.count) }
        guard yContent.count <= 1 else { throw .ninePatchSeveralContentMarkers(edge: "right", runs: yContent.count) }
        let contentX = xContent.first ?? firstX
        let contentY = yContent.first ?? firstY
        let iw = w - 2, ih = h - 2
        let content = EdgeInsets(
            top: Double(contentY.lowerBound) / scale,
            left: Double(contentX.lowerBound) / scale,
            bottom: Double(ih - contentY.upperBound) / scale,
            right: Double(iw - contentX.upperBound) / scale)
        return try NineSliceArt(
            pixelWidth: iw, pixelHeight: ih, scale: scale,
            horizontal: segments(xStretch, total: iw),
            vertical: segments(yStretch, total: ih),
            contentInsets: content)
    }

    /// The art's own pixels: `image` without its 1-pixel marker border.
    public static func interiorPixels(of image: RGBAImage) -> RGBAImage {
        guard image.width >= 3, image.height >= 3 else { return RGBAImage(width: 0, height: 0, bytes: []) }
        let iw = image.width - 2, ih = image.height - 2
        var bytes: [UInt8] = []
        bytes.reserveCapacity(iw * ih * 4)
        for y in 1...ih {
            let start = (y * image.width + 1) * 4
            bytes.append(contentsOf: image.bytes[start..<(start + iw * 4)])
        }
        return RGBAImage(width: iw, height: ih, bytes: bytes)
    }

    /// Runs of `true` as half-open ranges.
    static func runs(_ marks: [Bool]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start: Int?
        for (i, m) in marks.enumerated() {
            if m, start == nil { start = i }
            if !m, let s = start { result.append(s..<i); start = nil }
        }
        if let s = start { result.append(s..<marks.count) }
        return result
    }

    /// Alternating fixed and stretchable segments covering 0..<total.
    static func segments(_ stretch: [Range<Int>], total: Int) -> [SliceSegment] {
        var result: [SliceSegment] = []
        var cursor = 0
        for run in stretch {
            if run.lowerBound > cursor {
                result.append(SliceSegment(start: cursor, length: run.lowerBound - cursor, stretches: false))
            }
            result.append(SliceSegment(start: run.lowerBound, length: run.count, stretches: true))
            cursor = run.upperBound
        }
        if cursor < total { result.append(SliceSegment(start: cursor, length: total - cursor, stretches: false)) }
        return result
    }
}
