/// How a stretchable run fills the space it is given along one axis.
public enum TileRule: String, Hashable, Sendable, CaseIterable {
    /// Scale the run to the space (UIKit `.stretch`, CSS `stretch`, Android).
    case stretch
    /// UIKit `.tile`: whole tiles from the start of the space, the last one clipped.
    /// A run of one pixel is stretched instead, as UIKit does.
    case tile
    /// CSS `repeat`: tiles centred in the space, clipped at both ends.
    case `repeat`
    /// CSS `round`: tiles rescaled so a whole number (at least one) fills the space.
    case round
    /// CSS `space`: as many whole tiles as fit, the extra space shared equally around them;
    /// nothing when not even one tile fits.
    case space
}

/// How art is fitted to a target: a rule per axis, whether the centre is drawn, and how caps
/// shrink when the target is smaller than they are.
public struct NineSliceMode: Hashable, Sendable {
    /// How caps shrink when the target is smaller than they are.
    public enum CapShrink: Hashable, Sendable {
        /// Each axis shrinks its own caps in proportion (UIKit, Android).
        case perAxis
        /// One factor for all four caps, the smaller of the two axes' (CSS border-image rule).
        case uniform
    }
    /// How the stretchable runs across fill the width.
    public var horizontal: TileRule
    /// How the stretchable runs down fill the height.
    public var vertical: TileRule
    /// Draw the centre region (CSS `border-image-slice … fill`). UIKit and Android always do.
    public var fill: Bool
    /// How caps shrink in a target smaller than they are.
    public var capShrink: CapShrink

    /// A mode of a rule for each axis.
    public init(horizontal: TileRule, vertical: TileRule, fill: Bool = true, capShrink: CapShrink = .perAxis) {
        self.horizontal = horizontal; self.vertical = vertical; self.fill = fill; self.capShrink = capShrink
    }

    /// UIKit `resizableImage(withCapInsets:resizingMode: .stretch)` and Android 9-patch scaling.
    public static let uikitStretch = NineSliceMode(horizontal: .stretch, vertical: .stretch)
    /// UIKit `resizableImage(withCapInsets:resizingMode: .tile)`.
    public static let uikitTile = NineSliceMode(horizontal: .tile, vertical: .tile)
    /// CSS `border-image-repeat: <horizontal> <vertical>`, with `border-image-slice … fill` or not.
    public static func css(_ horizontal: TileRule, _ vertical: TileRule? = nil, fill: Bool) -> NineSliceMode {
        NineSliceMode(horizontal: horizontal, vertical: vertical ?? horizontal, fill: fill, capShrink: .uniform)
    }
}

/// A whole-pixel rectangle of the source art.
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    /// The left edge, in pixels.
    public var x: Int
    /// The top edge, in pixels.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// A rectangle of `width` × `height` pixels at (`x`, `y`).
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
    public var description: String { "[\(x), \(y), \(width)×\(height) px]" }
}

/// One drawing step: scale `source` (pixels of the art) into `destination` (points), showing only
/// the part inside `clip` (equal to `destination` unless a tile is cut at the end of its space).
public struct NineSlicePatch: Hashable, Sendable, CustomStringConvertible {
    /// The pixels of the art drawn.
    public var source: PixelRect
    /// Where they go, in points of the target.
    public var destination: Rect
    /// What of `destination` is shown (smaller only for a tile cut at the end of its space).
    public var clip: Rect
    /// Index of the source run along each axis (0…2 for cap-inset art: 0 = left/top cap).
    public var column: Int
    /// Index of the source run down the art (0…2 for cap-inset art: 0 = top cap).
    public var row: Int
    /// True when `clip` cuts `destination`.
    public var isClipped: Bool { clip != destination }
    public var description: String { "\(source) → \(destination)" + (isClipped ? " clip \(clip)" : "") }
}

/// One run placed along one axis: source pixels → destination interval, visible interval.
struct AxisSpan: Equatable {
    var segment: Int
    var sourceStart: Int
    var sourceLength: Int
    var start: Double
    var length: Double
    var visibleStart: Double
    var visibleLength: Double
}

extension NineSliceArt {
    /// The patches that paint this art at `target` size (points), origin (0, 0).
    ///
    /// Fixed caps keep their size (art pixels ÷ scale); when the target is smaller than the caps
    /// they shrink proportionally and stretchable runs get nothing — never a negative rect.
    /// Several stretchable runs on one axis (9-patch) share the extra space in proportion to
    /// their lengths.
    public func patches(for target: Size, mode: NineSliceMode = .uikitStretch) throws(NineSliceError) -> [NineSlicePatch] {
        guard target.width.isFinite, target.height.isFinite, target.width >= 0, target.height >= 0 else {
            throw .invalidTargetSize(width: target.width, height: target.height)
        }
        var fx = Self.capFactor(horizontal, scale: scale, target: target.width)
        var fy = Self.capFactor(vertical, scale: scale, target: target.height)
        if mode.capShrink == .uniform { fx = min(fx, fy); fy = fx }
        let xs = Self.place(horizontal, scale: scale, target: target.width, capFactor: fx, rule: mode.horizontal)
        let ys = Self.place(vertical, scale: scale, target: target.height, capFactor: fy, rule: mode.vertical)
        let lastColumn = horizontal.count - 1, lastRow = vertical.count - 1
        var result: [NineSlicePatch] = []
        result.reserveCapacity(xs.count * ys.count)
        for y in ys {
            for x in xs {
                let interior = x.segment > 0 && x.segment < lastColumn && y.segment > 0 && y.segment < lastRow
                if interior && !mode.fill { continue }
                result.append(
                    NineSlicePatch(
                        source: PixelRect(x: x.sourceStart, y: y.sourceStart, width: x.sourceLength, height: y.sourceLength),
                        destination: Rect(x: x.start, y: y.start, width: x.length, height: y.length),
                        clip: Rect(x: x.visibleStart, y: y.visibleStart, width: x.visibleLength, height: y.visibleLength),
                        column: x.segment, row: y.segment))
            }
        }
        return result
    }

    /// 1 when the fixed caps fit in `target`, else the factor that makes them fit exactly.
    static func capFactor(_ segments: [SliceSegment], scale: Double, target: Double) -> Double {
        let fixed = segments.reduce(0.0) { $0 + ($1.stretches ? 0 : Double($1.length) / scale) }
        return fixed > target ? target / fixed : 1
    }

    /// Places every run of one axis, in order, from 0 to `target`.
    static func place(
        _ segments: [SliceSegment], scale: Double, target: Double,
        capFactor: Double, rule: TileRule
    ) -> [AxisSpan] {
        let fixed = segments.reduce(0.0) { $0 + ($1.stretches ? 0 : Double($1.length) / scale) }
        let stretchPixels = segments.reduce(0) { $0 + ($1.stretches ? $1.length : 0) }
        let extra = max(0, target - fixed * capFactor)
        var spans: [AxisSpan] = []
        var cursor = 0.0
        for (index, segment) in segments.enumerated() where segment.length > 0 {
            if !segment.stretches {
                let length = Double(segment.length) / scale * capFactor
                if length > 0 {
                    spans.append(
                        AxisSpan(
                            segment: index, sourceStart: segment.start, sourceLength: segment.length,
                            start: cursor, length: length, visibleStart: cursor, visibleLength: length))
                }
                cursor += length
                continue
            }
            let area = stretchPixels > 0 ? extra * Double(segment.length) / Double(stretchPixels) : 0
            if area > 0 {
                let tile = Double(segment.length) / scale * capFactor
                for (start, length) in tiles(area: area, tile: tile, pixels: segment.length, rule: rule) {
                    let visibleStart = max(start, 0), visibleEnd = min(start + length, area)
                    guard visibleEnd > visibleStart else { continue }
                    spans.append(
                        AxisSpan(
                            segment: index, sourceStart: segment.start, sourceLength: segment.length,
                            start: cursor + start, length: length,
                            visibleStart: cursor + visibleStart, visibleLength: visibleEnd - visibleStart))
                }
            }
            cursor += area
        }
        return spans
    }

    /// Tile positions (relative to the start of the area) for one stretchable run.
    static func tiles(area: Double, tile: Double, pixels: Int, rule: TileRule) -> [(Double, Double)] {
        guard tile > 0 else { return [(0, area)] }
        switch rule {
        case .stretch:
            return [(0, area)]
        case .tile:
            if pixels == 1 { return [(0, area)] }
            let count = Int((area / tile).rounded(.up))
            return (0..<count).map { (Double($0) * tile, tile) }
        case .repeat:
            // One tile centred in the area, then whole tiles outwards until the area is covered.
            let first = area / 2 - tile / 2
            let before = Int((first / tile).rounded(.up))
            let start = first - Double(before) * tile
            let count = Int(((area - start) / tile).rounded(.up))
            return (0..<count).map { (start + Double($0) * tile, tile) }
        case .round:
            let count = max(1, Int((area / tile).rounded(.toNearestOrAwayFromZero)))
            let width = area / Double(count)
            return (0..<count).map { (Double($0) * width, width) }
        case .space:
            let count = Int((area / tile + 1e-9).rounded(.down))
            guard count > 0 else { return [] }
            let gap = (area - Double(count) * tile) / Double(count + 1)
            return (0..<count).map { (gap + Double($0) * (tile + gap), tile) }
        }
    }
}
