/// One run of source pixels along an axis of stretchable art: either a fixed cap that is copied
/// as it is, or a stretchable run that grows (or tiles) to fill the target.
public struct SliceSegment: Hashable, Sendable {
    /// First pixel of the run in the art (pixels, not points).
    public var start: Int
    /// Number of pixels in the run.
    public var length: Int
    /// True when the run stretches (or tiles) to fill the space; false for a cap drawn as it is.
    public var stretches: Bool
    /// A run of `length` pixels from pixel `start`.
    public init(start: Int, length: Int, stretches: Bool) {
        self.start = start; self.length = length; self.stretches = stretches
    }
}

/// Stretchable bubble art: its pixel size, its scale (2 for @2x art, so 84×60 pixels are 42×30
/// points) and how each axis is cut into fixed and stretchable runs.
///
/// Cap-inset art (UIKit, CSS) has three runs per axis: cap, interior, cap. Android 9-patch art can
/// have several stretchable runs per axis. Either way `patches(for:mode:)` gives the
/// source→destination rectangles to paint.
///
///     let art = try NineSliceArt(pixelWidth: 42, pixelHeight: 30,
///                                capInsets: .legacy(leftCapWidth: 24, topCapHeight: 13, width: 42, height: 30))
///     let patches = try art.patches(for: Size(width: 200, height: 60), mode: .uikitStretch)
public struct NineSliceArt: Hashable, Sendable {
    /// The art's width in pixels.
    public let pixelWidth: Int
    /// The art's height in pixels.
    public let pixelHeight: Int
    /// Pixels per point of the art.
    public let scale: Double
    /// The runs across the art, left to right: caps that are kept and runs that stretch.
    public let horizontal: [SliceSegment]
    /// The runs down the art, top to bottom.
    public let vertical: [SliceSegment]
    /// The box, inset from the art's edges in points, where content (text) belongs, when the art
    /// says so itself (9-patch bottom/right markers). Nil for plain cap-inset art: the theme's
    /// padding decides there.
    public let contentInsets: EdgeInsets?

    /// Size of the art in points.
    public var size: Size { Size(width: Double(pixelWidth) / scale, height: Double(pixelHeight) / scale) }

    /// Art cut by cap insets (in points, as UIKit's `capInsets`); the interior between the caps stretches.
    public init(pixelWidth: Int, pixelHeight: Int, scale: Double = 1, capInsets: EdgeInsets) throws(NineSliceError) {
        try Self.validate(pixelWidth: pixelWidth, pixelHeight: pixelHeight, scale: scale)
        let sides = [("top", capInsets.top), ("left", capInsets.left), ("bottom", capInsets.bottom), ("right", capInsets.right)]
        var px: [Int] = []
        for (name, value) in sides {
            guard value.isFinite else { throw .insetNotFinite(side: name, value: value) }
            guard value >= 0 else { throw .negativeInset(side: name, value: value) }
            let pixels = value * scale
            guard abs(pixels - pixels.rounded()) < 1e-6 else {
                throw .insetNotOnPixelGrid(side: name, value: value, scale: scale)
            }
            px.append(Int(pixels.rounded()))
        }
        let (top, left, bottom, right) = (px[0], px[1], px[2], px[3])
        guard left + right < pixelWidth else {
            throw .insetsExceedImage(
                axis: .horizontal, first: capInsets.left, second: capInsets.right,
                available: Double(pixelWidth) / scale)
        }
        guard top + bottom < pixelHeight else {
            throw .insetsExceedImage(
                axis: .vertical, first: capInsets.top, second: capInsets.bottom,
                available: Double(pixelHeight) / scale)
        }
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.scale = scale
        self.horizontal = Self.threeRuns(first: left, second: right, total: pixelWidth)
        self.vertical = Self.threeRuns(first: top, second: bottom, total: pixelHeight)
        self.contentInsets = nil
    }

    /// Art cut by arbitrary runs (as a 9-patch's markers give them).
    public init(
        pixelWidth: Int, pixelHeight: Int, scale: Double = 1,
        horizontal: [SliceSegment], vertical: [SliceSegment],
        contentInsets: EdgeInsets? = nil
    ) throws(NineSliceError) {
        try Self.validate(pixelWidth: pixelWidth, pixelHeight: pixelHeight, scale: scale)
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.scale = scale
        self.horizontal = horizontal
        self.vertical = vertical
        self.contentInsets = contentInsets
    }

    /// The cap insets in points when the art is a plain 3×3 grid (one stretchable run per axis);
    /// nil for a 9-patch with several stretch regions. CSS `border-image-slice` takes these (in pixels).
    public var capInsets: EdgeInsets? {
        guard horizontal.count == 3, vertical.count == 3,
            horizontal[1].stretches, vertical[1].stretches,
            !horizontal[0].stretches, !horizontal[2].stretches,
            !vertical[0].stretches, !vertical[2].stretches
        else { return nil }
        return EdgeInsets(
            top: Double(vertical[0].length) / scale, left: Double(horizontal[0].length) / scale,
            bottom: Double(vertical[2].length) / scale, right: Double(horizontal[2].length) / scale)
    }

    private static func validate(pixelWidth: Int, pixelHeight: Int, scale: Double) throws(NineSliceError) {
        guard pixelWidth > 0, pixelHeight > 0 else { throw .emptyArt(pixelWidth: pixelWidth, pixelHeight: pixelHeight) }
        guard scale.isFinite, scale > 0 else { throw .invalidScale(scale) }
    }

    /// cap | interior | cap, leaving out zero-length caps.
    private static func threeRuns(first: Int, second: Int, total: Int) -> [SliceSegment] {
        [
            SliceSegment(start: 0, length: first, stretches: false),
            SliceSegment(start: first, length: total - first - second, stretches: true),
            SliceSegment(start: total - second, length: second, stretches: false)
        ]
    }
}

extension EdgeInsets {
    /// The insets of UIKit's legacy `stretchableImage(withLeftCapWidth:topCapHeight:)`: the caps
    /// are given, the stretched part is exactly one point, and the far caps are what is left
    /// (`right = width − left − 1`, `bottom = height − top − 1`). A cap of 0 stretches the whole axis.
    ///
    ///     try EdgeInsets.legacy(leftCapWidth: 24, topCapHeight: 13, width: 42, height: 30)
    ///     // (top 13, left 24, bottom 16, right 17): seed 001's SMS bubble
    public static func legacy(
        leftCapWidth: Double, topCapHeight: Double,
        width: Double, height: Double
    ) throws(NineSliceError) -> EdgeInsets {
        func farCap(_ cap: Double, _ length: Double, _ name: String) throws(NineSliceError) -> Double {
            guard cap.isFinite, cap >= 0, cap < length else {
                throw .legacyCapOutOfRange(name: name, value: cap, imageLength: length)
            }
            return cap == 0 ? 0 : length - cap - 1
        }
        let right = try farCap(leftCapWidth, width, "leftCapWidth")
        let bottom = try farCap(topCapHeight, height, "topCapHeight")
        return EdgeInsets(top: topCapHeight, left: leftCapWidth, bottom: bottom, right: right)
    }
}
