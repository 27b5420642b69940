import BubbleCore
import CPango
import Foundation

extension FastTextEngine {
    /// The glyphs of `prepared` laid out at `maxWidth`, `maxLines`, positioned with the text box's
    /// top-left at `origin`: every line's glyph runs from the segment cache, in visual order (bidi
    /// runs reordered by their levels, UAX #9 L2), trailing whitespace left out. `nil` when the
    /// text is one the engine hands to its reference (`PangoTextEngine`): draw `delegate` with it.
    ///
    /// Gathered under the lock (the segment cache, the font table and Pango are shared); `fonts`
    /// then maps each run's `PangoFont` to what the painter draws it with, still under the lock,
    /// so a painter can draw the result after it, overlapping with other threads.
    package func positionedGlyphs(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
                                  fonts: (OpaquePointer) -> OpaquePointer?) throws(TextError) -> PositionedGlyphs {
        let width = try PangoTextEngine.pangoWidth(maxWidth)
        let storage = try storage(for: prepared)
        if let delegated = storage.delegated { return PositionedGlyphs(delegate: delegated) }
        let arrangement = arrange(storage, width: width == -1 ? Int32.max : width, maxLines: PangoTextEngine.lineLimit(maxLines))
        var result = PositionedGlyphs(delegate: nil)
        guard !arrangement.lines.isEmpty else { return result }
        do {
            lock.lock(); defer { lock.unlock() }
            let ellipsis = storage.context.ellipsis
            // Segment starts, to find the segments under each line.
            var starts: [Int] = []
            var ends: [(end: Int, shaped: Int, rtl: Bool, paragraph: Int)] = []
            storage.withSegments { segs in
                var s = 0, paragraph = 0
                for seg in segs {
                    starts.append(s); ends.append((seg.end, seg.end - seg.separatorLength, seg.rightToLeft, paragraph)); s = seg.end
                    if seg.hard { paragraph = seg.end }
                }
            }
            for (var line, measured) in zip(arrangement.lines, arrangement.layout.lines) {
                // Trailing whitespace is not drawn (it hangs; in an RTL line it would sit at the left).
                line.contentEnd = storage.withText { bytes in
                    var e = min(line.contentEnd, bytes.count)
                    while e > line.start {
                        let b = bytes[e - 1]
                        if b == 0x20 || b == 0x09 { e -= 1; continue }
                        if e - line.start >= 3, b == 0x80, bytes[e - 2] == 0x80, bytes[e - 3] == 0xE3 { e -= 3; continue }
                        break
                    }
                    return e
                }
                var runs: [(font: Int32, level: UInt8, glyphs: ArraySlice<FastGlyph>)] = []
                // The last segment starting at or before the line (binary search: long texts).
                var lo = 0, hi = starts.count
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2
                    if starts[mid] <= line.start { lo = mid } else { hi = mid }
                }
                var k = lo
                while k < starts.count, starts[k] < line.contentEnd {
                    let shape = segmentShape(storage, starts[k], ends[k].shaped, rtl: ends[k].rtl, paragraphStart: ends[k].paragraph)
                    let base = starts[k]
                    // A segment inside the line's content keeps all its glyphs (no copy); one the
                    // line cuts (a word broken across lines) only those whose clusters are inside.
                    let whole = base >= line.start && ends[k].shaped <= line.contentEnd
                    for piece in shape.pieces {
                        if whole {
                            if !piece.glyphs.isEmpty { runs.append((piece.font, piece.level, piece.glyphs[...])) }
                            continue
                        }
                        let kept = piece.glyphs.filter { base + Int($0.cluster) >= line.start && base + Int($0.cluster) < line.contentEnd }
                        if !kept.isEmpty { runs.append((piece.font, piece.level, kept[...])) }
                    }
                    k += 1
                }
                let paragraphLevel: UInt8 = line.rightToLeft ? 1 : 0
                if line.ellipsis, let e = ellipsis, let piece = e.pieces.first {
                    runs.append((piece.font, paragraphLevel, piece.glyphs[...]))
                }
                // UAX #9 L2: from the highest level down to the lowest odd one, reverse every run of
                // pieces at that level or higher.
                if let highest = runs.map(\.level).max(), highest > 0 {
                    let lowestOdd = max(1, (runs.map(\.level).min() ?? 0) | 1)
                    var level = highest
                    while level >= lowestOdd {
                        var i = 0
                        while i < runs.count {
                            guard runs[i].level >= level else { i += 1; continue }
                            var j = i
                            while j < runs.count, runs[j].level >= level { j += 1 }
                            runs[i..<j].reverse()
                            i = j
                        }
                        level -= 1
                    }
                }
                var pen: Int64 = line.rightToLeft && width > 0 ? Int64(width) - Int64(line.width) : 0
                let baseline = origin.y + measured.baseline
                for run in runs {
                    guard run.font >= 0, let font = fonts(OpaquePointer(shaper.fonts[Int(run.font)].pointer)) else {
                        pen += run.glyphs.reduce(0) { $0 + Int64($1.advance) }
                        continue
                    }
                    let first = result.glyphs.count
                    for g in run.glyphs {
                        if g.glyph & PANGO_GLYPH_UNKNOWN_FLAG == 0 && g.glyph != PANGO_GLYPH_EMPTY {
                            result.glyphs.append(PositionedGlyph(index: UInt(g.glyph),
                                                                 x: origin.x + Double(pen + Int64(g.dx)) / Double(PANGO_SCALE),
                                                                 y: baseline + Double(g.dy) / Double(PANGO_SCALE)))
                        }
                        pen += Int64(g.advance)
                    }
                    guard result.glyphs.count > first else { continue }
                    // One run for consecutive glyphs of one font, across lines too (positions are
                    // absolute): fewer text objects in PDF and SVG.
                    if let last = result.runs.last, last.font == font { result.runs[result.runs.count - 1].end = result.glyphs.count }
                    else { result.runs.append((font, result.glyphs.count)) }
                }
            }
        }
        return result
    }
}

/// A glyph of a font at a position (points, y down); the same layout as Cairo's `cairo_glyph_t`.
package struct PositionedGlyph {
    package var index: UInt
    package var x: Double
    package var y: Double
}

/// What `FastTextEngine.positionedGlyphs` found: the glyphs, and runs of them in one font (each
/// ending at `end`, exclusive; the font is what the painter's `fonts` gave), or a text to hand
/// to the reference engine.
package struct PositionedGlyphs {
    package var delegate: PreparedText?
    package var glyphs: [PositionedGlyph] = []
    package var runs: [(font: OpaquePointer, end: Int)] = []
    init(delegate: PreparedText?) { self.delegate = delegate }
}
