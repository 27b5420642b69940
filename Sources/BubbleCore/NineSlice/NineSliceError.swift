/// Why a piece of stretchable art, its insets or a target size was refused.
/// Every case names the wrong value and what was expected; nothing is clamped silently.
public enum NineSliceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Art with no pixels.
    case emptyArt(pixelWidth: Int, pixelHeight: Int)
    /// A scale (1x, 2x, 3x) that is not a finite number above 0.
    case invalidScale(Double)
    /// A cap inset below 0.
    case negativeInset(side: String, value: Double)
    /// A cap inset that is not a finite number.
    case insetNotFinite(side: String, value: Double)
    /// The two caps of one axis cover the whole image (or more), leaving nothing to stretch.
    case insetsExceedImage(axis: Axis, first: Double, second: Double, available: Double)
    /// Insets times the art's scale must land on whole pixels.
    case insetNotOnPixelGrid(side: String, value: Double, scale: Double)
    /// A target size that is not finite or is negative.
    case invalidTargetSize(width: Double, height: Double)
    /// Legacy `stretchableImage(withLeftCapWidth:topCapHeight:)` caps must be ≥ 0 and < the image size.
    case legacyCapOutOfRange(name: String, value: Double, imageLength: Double)
    // Android 9-patch markers.
    /// A 9-patch image smaller than 3 × 3 pixels (a one-pixel border around at least one).
    case ninePatchTooSmall(width: Int, height: Int)
    /// A 9-patch's pixel buffer whose length is not width × height × 4.
    case ninePatchPixelCountMismatch(expected: Int, actual: Int)
    /// A border pixel that is neither transparent nor opaque black.
    case ninePatchInvalidMarker(x: Int, y: Int, red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8)
    /// A 9-patch edge (top or left) without a stretch marker.
    case ninePatchNoStretchMarker(edge: String)
    /// A 9-patch content edge (bottom or right) with more than one marked run.
    case ninePatchSeveralContentMarkers(edge: String, runs: Int)

    public var description: String {
        switch self {
        case let .emptyArt(w, h):
            return "art is \(w)×\(h) pixels; expected at least 1×1"
        case let .invalidScale(s):
            return "scale \(s) is not usable; expected a finite number > 0 (1, 2 or 3 for @1x/@2x/@3x art)"
        case let .negativeInset(side, v):
            return "\(side) inset is \(v.short) points; expected ≥ 0"
        case let .insetNotFinite(side, v):
            return "\(side) inset is \(v); expected a finite number"
        case let .insetsExceedImage(axis, a, b, avail):
            let names = axis == .horizontal ? ("left", "right", "width") : ("top", "bottom", "height")
            return
                "\(names.0) + \(names.1) insets = \(a.short) + \(b.short) = \((a + b).short) points but the art's \(names.2) is \(avail.short) points (its pixels ÷ its scale); expected a sum below \(avail.short) so at least one pixel stretches"
        case let .insetNotOnPixelGrid(side, v, s):
            return "\(side) inset \(v.short) × scale \(s.short) = \((v * s).short) pixels; expected a whole number of pixels"
        case let .invalidTargetSize(w, h):
            return "target size \(w)×\(h) is not usable; expected finite sizes ≥ 0"
        case let .legacyCapOutOfRange(name, v, len):
            return "\(name) \(v.short) is outside the art (\(len.short) points); expected 0 ≤ cap < \(len.short)"
        case let .ninePatchTooSmall(w, h):
            return "9-patch is \(w)×\(h) pixels; expected at least 3×3 (art plus a 1-pixel marker border)"
        case let .ninePatchPixelCountMismatch(e, a):
            return "9-patch pixel buffer has \(a) bytes; expected \(e) (width × height × 4, RGBA)"
        case let .ninePatchInvalidMarker(x, y, r, g, b, a):
            return "9-patch border pixel at (\(x), \(y)) is RGBA(\(r), \(g), \(b), \(a)); expected fully transparent or opaque black"
        case let .ninePatchNoStretchMarker(edge):
            return "9-patch has no black stretch marker on its \(edge) edge; expected at least one black pixel there"
        case let .ninePatchSeveralContentMarkers(edge, runs):
            return "9-patch \(edge) edge has \(runs) separate content markers; expected one run of black pixels (or none)"
        }
    }
}
