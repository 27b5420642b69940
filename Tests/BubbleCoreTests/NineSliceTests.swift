import Testing
@testable import BubbleCore
import BubbleTestSupport

/// Destination rectangles of the patches, in order, as [x, y, w, h] rounded to 1e-6.
private func destinations(_ patches: [NineSlicePatch]) -> [[Double]] {
    patches.map { p in [p.destination.minX, p.destination.minY, p.destination.width, p.destination.height].map { ($0 * 1e6).rounded() / 1e6 } }
}

@Suite("Cap insets and the legacy constructor")
struct CapInsetTests {
    @Test("seed 001: 42×30 art, left cap 24, top cap 13 → insets (13, 24, 16, 17)")
    func seed001Legacy() throws {
        let insets = try EdgeInsets.legacy(leftCapWidth: 24, topCapHeight: 13, width: 42, height: 30)
        #expect(insets == EdgeInsets(top: 13, left: 24, bottom: 16, right: 17))
        let art = try NineSliceArt(pixelWidth: 42, pixelHeight: 30, capInsets: insets)
        // The stretched part is exactly one pixel on each axis.
        #expect(art.horizontal.map(\.length) == [24, 1, 17])
        #expect(art.vertical.map(\.length) == [13, 1, 16])
        #expect(art.capInsets == insets)
    }

    @Test("seed 004: left cap 24, top cap 15 on 50×40 art")
    func seed004Legacy() throws {
        let insets = try EdgeInsets.legacy(leftCapWidth: 24, topCapHeight: 15, width: 50, height: 40)
        #expect(insets == EdgeInsets(top: 15, left: 24, bottom: 24, right: 25))
    }

    @Test("a cap of 0 stretches the whole axis")
    func zeroCap() throws {
        let insets = try EdgeInsets.legacy(leftCapWidth: 0, topCapHeight: 13, width: 42, height: 30)
        #expect(insets == EdgeInsets(top: 13, left: 0, bottom: 16, right: 0))
        let art = try NineSliceArt(pixelWidth: 42, pixelHeight: 30, capInsets: insets)
        let patches = try art.patches(for: Size(width: 100, height: 30))
        // One column: the whole width stretches from 42 px to 100 pt.
        #expect(Set(patches.map(\.destination.width)) == [100])
        #expect(Set(patches.map(\.source.width)) == [42])
    }

    @Test("legacy caps outside the art are refused", arguments: [(-1.0, 13.0), (42.0, 13.0), (24.0, 30.0), (Double.nan, 1.0)])
    func legacyOutOfRange(left: Double, top: Double) {
        #expect(throws: NineSliceError.self) {
            try EdgeInsets.legacy(leftCapWidth: left, topCapHeight: top, width: 42, height: 30)
        }
    }

    @Test("@2x art: insets in points, pixels doubled")
    func scale2() throws {
        let art = try NineSliceArt(
            pixelWidth: 84, pixelHeight: 60, scale: 2,
            capInsets: EdgeInsets(top: 13, left: 24, bottom: 16, right: 17))
        #expect(art.size == Size(width: 42, height: 30))
        #expect(art.horizontal.map(\.length) == [48, 2, 34])
        let patches = try art.patches(for: Size(width: 100, height: 50))
        // Caps keep their point size: 24 pt of left cap from 48 px.
        let topLeft = try #require(patches.first)
        #expect(topLeft.source == PixelRect(x: 0, y: 0, width: 48, height: 26))
        #expect(topLeft.destination == Rect(x: 0, y: 0, width: 24, height: 13))
    }
}

@Suite("Bad art and insets give typed errors")
struct NineSliceErrorTests {
    @Test func negativeInset() {
        #expect(throws: NineSliceError.negativeInset(side: "left", value: -2)) {
            try NineSliceArt(pixelWidth: 42, pixelHeight: 30, capInsets: EdgeInsets(top: 1, left: -2, bottom: 1, right: 1))
        }
    }
    @Test func insetsLargerThanImage() {
        #expect(throws: NineSliceError.insetsExceedImage(axis: .horizontal, first: 30, second: 12, available: 42)) {
            try NineSliceArt(pixelWidth: 42, pixelHeight: 30, capInsets: EdgeInsets(top: 1, left: 30, bottom: 1, right: 12))
        }
        #expect(throws: NineSliceError.insetsExceedImage(axis: .vertical, first: 20, second: 20, available: 30)) {
            try NineSliceArt(pixelWidth: 42, pixelHeight: 30, capInsets: EdgeInsets(top: 20, left: 1, bottom: 20, right: 1))
        }
    }
    @Test func zeroSizedArt() {
        #expect(throws: NineSliceError.emptyArt(pixelWidth: 0, pixelHeight: 30)) {
            try NineSliceArt(pixelWidth: 0, pixelHeight: 30, capInsets: .zero)
        }
    }
    @Test func badScaleAndFractionalPixels() {
        #expect(throws: NineSliceError.invalidScale(0)) {
            try NineSliceArt(pixelWidth: 4, pixelHeight: 4, scale: 0, capInsets: .zero)
        }
        #expect(throws: NineSliceError.insetNotOnPixelGrid(side: "top", value: 1.25, scale: 2)) {
            try NineSliceArt(pixelWidth: 8, pixelHeight: 8, scale: 2, capInsets: EdgeInsets(top: 1.25, left: 1, bottom: 1, right: 1))
        }
    }
    @Test func badTarget() throws {
        let art = try NineSliceArt(pixelWidth: 42, pixelHeight: 30, capInsets: EdgeInsets(top: 13, left: 24, bottom: 16, right: 17))
        for size in [Size(width: -1, height: 10), Size(width: .nan, height: 10), Size(width: 10, height: .infinity)] {
            #expect(throws: NineSliceError.self) { try art.patches(for: size) }
        }
        #expect(try art.patches(for: .zero).isEmpty)
    }
    @Test("errors say which value is wrong and why")
    func messages() {
        let e = NineSliceError.insetsExceedImage(axis: .horizontal, first: 30, second: 12, available: 42)
        #expect(
            e.description
                == "left + right insets = 30 + 12 = 42 points but the art's width is 42 points (its pixels ÷ its scale); expected a sum below 42 so at least one pixel stretches"
        )
    }
}

@Suite("UIKit stretch and tile")
struct UIKitModeTests {
    // Seed 002 "mine" art: insets (14, 14, 17, 28) around a 1×1 interior → 43×32 px.
    let mine = try! NineSliceArt(pixelWidth: 43, pixelHeight: 32, capInsets: EdgeInsets(top: 14, left: 14, bottom: 17, right: 28))
    // Seed 003 left art: insets (10, 16, 18, 26) → 43×29 px.
    let seed003 = try! NineSliceArt(pixelWidth: 43, pixelHeight: 29, capInsets: EdgeInsets(top: 10, left: 16, bottom: 18, right: 26))

    @Test("seed 002 mine at 200×60: caps copied, interior stretched")
    func seed002() throws {
        let patches = try mine.patches(for: Size(width: 200, height: 60))
        #expect(patches.count == 9)
        #expect(
            destinations(patches) == [
                [0, 0, 14, 14], [14, 0, 158, 14], [172, 0, 28, 14],
                [0, 14, 14, 29], [14, 14, 158, 29], [172, 14, 28, 29],
                [0, 43, 14, 17], [14, 43, 158, 17], [172, 43, 28, 17]
            ])
        #expect(
            patches.map(\.source) == [
                PixelRect(x: 0, y: 0, width: 14, height: 14), PixelRect(x: 14, y: 0, width: 1, height: 14), PixelRect(x: 15, y: 0, width: 28, height: 14),
                PixelRect(x: 0, y: 14, width: 14, height: 1), PixelRect(x: 14, y: 14, width: 1, height: 1), PixelRect(x: 15, y: 14, width: 28, height: 1),
                PixelRect(x: 0, y: 15, width: 14, height: 17), PixelRect(x: 14, y: 15, width: 1, height: 17), PixelRect(x: 15, y: 15, width: 28, height: 17)
            ])
    }

    @Test("seed 003 at the art's own size: every patch 1:1")
    func seed003Natural() throws {
        let patches = try seed003.patches(for: Size(width: 43, height: 29))
        for p in patches {
            #expect(Double(p.source.width) == p.destination.width)
            #expect(Double(p.source.height) == p.destination.height)
        }
        #expect(destinations(patches).map { $0[0] } == [0, 16, 17, 0, 16, 17, 0, 16, 17])
    }

    @Test("target smaller than the caps: caps shrink proportionally, interior gets nothing")
    func shrink() throws {
        // Width 21 < 14 + 28 = 42: caps scale by 1/2; height 62 is big enough.
        let patches = try mine.patches(for: Size(width: 21, height: 62))
        #expect(patches.count == 6)  // the 1-px interior column has no room
        #expect(Set(patches.map(\.destination.width)) == [7, 14])
        for p in patches { #expect(p.destination.width > 0 && p.destination.height > 0) }
        let xs = Set(patches.map(\.destination.minX))
        #expect(xs == [0, 7])
        // Per axis: vertical caps keep their size.
        #expect(Set(patches.map(\.destination.height)) == [14, 31, 17])
    }

    @Test("UIKit .tile: whole tiles from the start, the last clipped; a 1-px interior stretches")
    func tile() throws {
        let onePixel = try mine.patches(for: Size(width: 100, height: 40), mode: .uikitTile)
        #expect(onePixel.count == 9)
        // A 10-px interior tiles: 4 px caps, target 30 → interior 22 = 10 + 10 + 2 (clipped).
        let art = try NineSliceArt(pixelWidth: 18, pixelHeight: 18, capInsets: EdgeInsets(top: 4, left: 4, bottom: 4, right: 4))
        let patches = try art.patches(for: Size(width: 30, height: 18), mode: .uikitTile)
        let topRow = patches.filter { $0.row == 0 && $0.column == 1 }
        #expect(topRow.map(\.destination.minX) == [4, 14, 24])
        #expect(topRow.map(\.destination.width) == [10, 10, 10])
        #expect(topRow.map(\.clip.width) == [10, 10, 2])
        #expect(topRow.last?.isClipped == true)
    }
}

@Suite("CSS border-image-repeat")
struct CSSModeTests {
    // 30×30 art, 10-px slices: the interior tile is 10×10.
    let art = try! NineSliceArt(pixelWidth: 30, pixelHeight: 30, capInsets: EdgeInsets(top: 10, left: 10, bottom: 10, right: 10))

    func topEdge(width: Double, _ rule: TileRule, fill: Bool = false) throws -> [NineSlicePatch] {
        try art.patches(for: Size(width: width, height: 30), mode: .css(rule, .stretch, fill: fill))
            .filter { $0.row == 0 && $0.column == 1 }
    }

    @Test("stretch: one tile across the whole edge")
    func stretch() throws {
        let edge = try topEdge(width: 65, .stretch)
        #expect(edge.map(\.destination) == [Rect(x: 10, y: 0, width: 45, height: 10)])
    }

    @Test("repeat: a tile centred in the area, clipped at both ends")
    func repeatCentred() throws {
        // Area 45 wide from x = 10: centre tile at 10 + 17.5 = 27.5 … 37.5.
        let edge = try topEdge(width: 65, .repeat)
        #expect(edge.map(\.destination.minX) == [7.5, 17.5, 27.5, 37.5, 47.5])
        #expect(edge.map(\.clip.minX) == [10, 17.5, 27.5, 37.5, 47.5])
        #expect(edge.map(\.clip.width) == [7.5, 10, 10, 10, 7.5])
        // Area of exactly 3 tiles: the centred tile leaves whole tiles at both ends.
        let odd = try topEdge(width: 50, .repeat)
        #expect(odd.map(\.destination.minX) == [10, 20, 30])
        #expect(odd.allSatisfy { !$0.isClipped })
        // Area of exactly 4 tiles: a tile is still centred, so half tiles stand at both ends.
        let even = try topEdge(width: 60, .repeat)
        #expect(even.map(\.destination.minX) == [5, 15, 25, 35, 45])
        #expect(even.map(\.clip.width) == [5, 10, 10, 10, 5])
    }

    @Test("round: tiles rescaled to a whole number")
    func round() throws {
        // 45 / 10 = 4.5 → 5 tiles of 9; 44 / 10 = 4.4 → 4 tiles of 11; 4 → at least one tile.
        #expect(try topEdge(width: 65, .round).map(\.destination.width) == [9, 9, 9, 9, 9])
        #expect(try topEdge(width: 64, .round).map(\.destination.width) == [11, 11, 11, 11])
        #expect(try topEdge(width: 24, .round).map(\.destination.width) == [4])
    }

    @Test("space: whole tiles, extra space shared around them")
    func space() throws {
        // Area 45: 4 tiles, 5 px over, 5 gaps of 1 px.
        let edge = try topEdge(width: 65, .space)
        #expect(edge.map(\.destination.minX) == [11, 22, 33, 44])
        #expect(edge.map(\.destination.width) == [10, 10, 10, 10])
        // Area 8 < one tile: nothing drawn.
        #expect(try topEdge(width: 28, .space).isEmpty)
    }

    @Test("fill draws the centre; without it the centre is empty")
    func fill() throws {
        let without = try art.patches(for: Size(width: 50, height: 50), mode: .css(.stretch, fill: false))
        let with = try art.patches(for: Size(width: 50, height: 50), mode: .css(.stretch, fill: true))
        #expect(without.count == 8)
        #expect(with.count == 9)
        #expect(with.contains { $0.row == 1 && $0.column == 1 && $0.destination == Rect(x: 10, y: 10, width: 30, height: 30) })
        // Repeat both ways with fill: the centre is a 3×3 grid of tiles for a 30×30 area.
        let grid = try art.patches(for: Size(width: 50, height: 50), mode: .css(.repeat, fill: true))
        #expect(grid.filter { $0.row == 1 && $0.column == 1 }.count == 9)
    }

    @Test("CSS shrinks all caps by one factor, the smaller axis's")
    func uniformShrink() throws {
        // Width 10 < 20: factor 0.5 applies to the (unshrunk) vertical caps too.
        let patches = try art.patches(for: Size(width: 10, height: 100), mode: .css(.stretch, fill: true))
        #expect(patches.filter { $0.column == 0 && $0.row == 0 }.map(\.destination) == [Rect(x: 0, y: 0, width: 5, height: 5)])
        #expect(patches.filter { $0.column == 0 && $0.row == 1 }.map(\.destination.height) == [90])
    }
}

@Suite("Android 9-patch")
struct NinePatchTests {
    /// Builds a 9-patch: interior of `width`×`height` opaque grey, plus border markers.
    static func ninePatch(
        width: Int, height: Int, top: [Range<Int>], left: [Range<Int>],
        bottom: [Range<Int>] = [], right: [Range<Int>] = []
    ) -> RGBAImage {
        let w = width + 2, h = height + 2
        var bytes = [UInt8](repeating: 0, count: w * h * 4)
        func set(_ x: Int, _ y: Int, _ px: [UInt8]) { bytes.replaceSubrange(((y * w + x) * 4)..<((y * w + x) * 4 + 4), with: px) }
        for y in 1...height { for x in 1...width { set(x, y, [128, 128, 128, 255]) } }
        for r in top { for x in r { set(x + 1, 0, [0, 0, 0, 255]) } }
        for r in bottom { for x in r { set(x + 1, h - 1, [0, 0, 0, 255]) } }
        for r in left { for y in r { set(0, y + 1, [0, 0, 0, 255]) } }
        for r in right { for y in r { set(w - 1, y + 1, [0, 0, 0, 255]) } }
        return RGBAImage(width: w, height: h, bytes: bytes)
    }

    @Test("two horizontal stretch regions of 1 and 3 px share 40 extra points as 10 and 30")
    func proportionalShare() throws {
        // 20 px wide: fixed 0..<5, stretch 5..<6, fixed 6..<12, stretch 12..<15, fixed 15..<20.
        let image = Self.ninePatch(width: 20, height: 10, top: [5..<6, 12..<15], left: [4..<6])
        let art = try NinePatch.parse(image)
        #expect(art.pixelWidth == 20 && art.pixelHeight == 10)
        #expect(art.horizontal.map(\.length) == [5, 1, 6, 3, 5])
        #expect(art.horizontal.map(\.stretches) == [false, true, false, true, false])
        // Target 56 = 16 fixed + 40 extra (stretch pixels 4 → 36 + 4 natural).
        let patches = try art.patches(for: Size(width: 56, height: 10))
        let row = patches.filter { $0.row == 0 }
        #expect(row.map(\.destination.width) == [5, 10, 6, 30, 5])
        #expect(row.map(\.destination.minX) == [0, 5, 15, 21, 51])
    }

    @Test("content box from the bottom and right markers")
    func contentBox() throws {
        let image = Self.ninePatch(width: 20, height: 12, top: [8..<10], left: [5..<6], bottom: [3..<17], right: [2..<9])
        let art = try NinePatch.parse(image)
        #expect(art.contentInsets == EdgeInsets(top: 2, left: 3, bottom: 3, right: 3))
    }

    @Test("content box falls back to the first stretch region of each axis")
    func contentFallback() throws {
        let image = Self.ninePatch(width: 20, height: 12, top: [8..<10, 14..<15], left: [5..<7])
        let art = try NinePatch.parse(image)
        #expect(art.contentInsets == EdgeInsets(top: 5, left: 8, bottom: 5, right: 10))
    }

    @Test("@2x 9-patch: content insets in points")
    func scaled() throws {
        let image = Self.ninePatch(width: 20, height: 12, top: [8..<10], left: [4..<6], bottom: [4..<16], right: [2..<10])
        let art = try NinePatch.parse(image, scale: 2)
        #expect(art.contentInsets == EdgeInsets(top: 1, left: 2, bottom: 1, right: 2))
        #expect(art.size == Size(width: 10, height: 6))
    }

    @Test("the interior pixels drop the marker border")
    func interior() {
        let image = Self.ninePatch(width: 4, height: 3, top: [1..<2], left: [1..<2])
        let inner = NinePatch.interiorPixels(of: image)
        #expect(inner.width == 4 && inner.height == 3)
        #expect(inner.bytes.count == 48)
        #expect(inner.pixel(x: 0, y: 0) == (128, 128, 128, 255))
    }

    @Test("a border pixel that is neither transparent nor black is refused, with its position")
    func badMarker() {
        var image = Self.ninePatch(width: 10, height: 10, top: [4..<5], left: [4..<5])
        let i = (0 * 12 + 7) * 4
        image.bytes.replaceSubrange(i..<(i + 4), with: [255, 0, 0, 255])
        #expect(throws: NineSliceError.ninePatchInvalidMarker(x: 7, y: 0, red: 255, green: 0, blue: 0, alpha: 255)) {
            try NinePatch.parse(image)
        }
        // A half-transparent black is not a marker either.
        var soft = Self.ninePatch(width: 10, height: 10, top: [4..<5], left: [4..<5])
        let j = (5 * 12 + 0) * 4
        soft.bytes.replaceSubrange(j..<(j + 4), with: [0, 0, 0, 128])
        #expect(throws: NineSliceError.ninePatchInvalidMarker(x: 0, y: 5, red: 0, green: 0, blue: 0, alpha: 128)) {
            try NinePatch.parse(soft)
        }
    }

    @Test("no stretch marker, too small, several content runs")
    func missingMarkers() {
        #expect(throws: NineSliceError.ninePatchNoStretchMarker(edge: "top")) {
            try NinePatch.parse(Self.ninePatch(width: 10, height: 10, top: [], left: [4..<5]))
        }
        #expect(throws: NineSliceError.ninePatchNoStretchMarker(edge: "left")) {
            try NinePatch.parse(Self.ninePatch(width: 10, height: 10, top: [4..<5], left: []))
        }
        #expect(throws: NineSliceError.ninePatchTooSmall(width: 2, height: 5)) {
            try NinePatch.parse(RGBAImage(width: 2, height: 5, bytes: [UInt8](repeating: 0, count: 40)))
        }
        #expect(throws: NineSliceError.ninePatchSeveralContentMarkers(edge: "bottom", runs: 2)) {
            try NinePatch.parse(Self.ninePatch(width: 10, height: 10, top: [4..<5], left: [4..<5], bottom: [1..<3, 5..<8]))
        }
        #expect(throws: NineSliceError.ninePatchPixelCountMismatch(expected: 36, actual: 10)) {
            try NinePatch.parse(RGBAImage(width: 3, height: 3, bytes: [UInt8](repeating: 0, count: 10)))
        }
    }
}

@Suite("Properties of every fit")
struct NineSlicePropertyTests {
    @Test("patches tile the target exactly, never negative or inverted", arguments: TileRule.allCases)
    func coverage(rule: TileRule) throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<300 {
            let w = Int(rng.next() % 40) + 3, h = Int(rng.next() % 40) + 3
            let l = Int(rng.next() % UInt64(w - 1)), r = Int(rng.next() % UInt64(w - l - 1))
            let t = Int(rng.next() % UInt64(h - 1)), b = Int(rng.next() % UInt64(h - t - 1))
            let art = try NineSliceArt(
                pixelWidth: w, pixelHeight: h,
                capInsets: EdgeInsets(top: Double(t), left: Double(l), bottom: Double(b), right: Double(r)))
            let target = Size(width: Double(rng.next() % 300) / 3, height: Double(rng.next() % 300) / 3)
            let patches = try art.patches(for: target, mode: NineSliceMode(horizontal: rule, vertical: rule))
            let bounds = Rect(origin: .zero, size: target)
            var area = 0.0
            for p in patches {
                #expect(p.clip.width > 0 && p.clip.height > 0)
                #expect(p.destination.width > 0 && p.destination.height > 0)
                #expect(bounds.contains(p.clip, tolerance: 1e-9))
                #expect(p.destination.contains(p.clip, tolerance: 1e-9))
                area += p.clip.width * p.clip.height
            }
            // Stretch, tile, repeat and round cover the target exactly once; space leaves gaps.
            if rule != .space {
                #expect(abs(area - target.width * target.height) < 1e-6, "\(w)×\(h) \(l),\(r),\(t),\(b) → \(target)")
            } else {
                #expect(area <= target.width * target.height + 1e-6)
            }
        }
    }
}
