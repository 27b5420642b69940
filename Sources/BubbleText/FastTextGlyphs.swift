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
    ///
    /// With `clusters`, the result also maps the glyphs back to the characters they show
    /// (`PositionedGlyphs.text` and `.clusters`, for `cairo_show_text_glyphs`): a PDF's text is
    /// then the text itself — 日 not the Kangxi radical the font also maps to that glyph, Arabic
    /// letters not their presentation forms, an emoji sequence whole, a ligature split back.
    package func positionedGlyphs(
        _ prepared: PreparedText, maxWidth: Double, maxLines: Int?, at origin: Point,
        clusters: Bool = false,
        fonts: (OpaquePointer) -> OpaquePointer?
    ) throws(TextError) -> PositionedGlyphs {
        let width = try PangoTextEngine.pangoWidth(maxWidth)
        let storage = try storage(for: prepared)
        if let delegated = storage.delegated { return PositionedGlyphs(delegate: delegated) }
        let arrangement = arrange(storage, width: width == -1 ? Int32.max : width, maxLines: PangoTextEngine.lineLimit(maxLines))
        var result = PositionedGlyphs(delegate: nil)
        guard !arrangement.lines.isEmpty else { return result }
        do {
            lock.lock(); defer { lock.unlock() }
            let ellipsis = storage.context.ellipsis
            // The style's own font (the ellipsis's) for the text of colour glyphs, as the painter draws it.
            if clusters, let piece = ellipsis?.pieces.first, piece.font >= 0, !shaper.fonts[Int(piece.font)].isColor {
                result.plainFont = fonts(OpaquePointer(shaper.fonts[Int(piece.font)].pointer))
            }
            // The text's bytes once (clusters copy from them), not a look at the storage per cluster.
            let textBytes: [UInt8] = clusters ? storage.withText { Array($0) } : []
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
                line.contentEnd = storage.withText { Self.contentEnd(of: line, in: $0) }
                var runs = lineRuns(storage, line, starts: starts, ends: ends)
                let paragraphLevel: UInt8 = line.rightToLeft ? 1 : 0
                if line.ellipsis, let e = ellipsis, let piece = e.pieces.first {
                    runs.append((piece.font, paragraphLevel, piece.glyphs[...], -1, -1))
                }
                Self.reorderByLevels(&runs)
                var pen: Int64 = line.rightToLeft && width > 0 ? Int64(width) - Int64(line.width) : 0
                let baseline = origin.y + measured.baseline
                for run in runs {
                    guard run.font >= 0, let font = fonts(OpaquePointer(shaper.fonts[Int(run.font)].pointer)) else {
                        pen += run.glyphs.reduce(0) { $0 + Int64($1.advance) }
                        continue
                    }
                    let first = result.glyphs.count
                    appendGlyphs(
                        of: run, line: line, origin: origin, baseline: baseline, clusters: clusters, textBytes: textBytes, pen: &pen,
                        into: &result)
                    guard result.glyphs.count > first else { continue }
                    // One run for consecutive glyphs of one font, across lines too (positions are
                    // absolute): fewer text objects in PDF and SVG.
                    if let last = result.runs.last, last.font == font {
                        result.runs[result.runs.count - 1].end = result.glyphs.count
                        result.runs[result.runs.count - 1].clusterEnd = result.clusters.count
                        result.runs[result.runs.count - 1].textEnd = result.text.count
                    } else {
                        result.runs.append((font, result.glyphs.count, result.clusters.count, result.text.count))
                    }

                }
            }
        }
        return result
    }

    /// A glyph run's glyphs and the bytes of the text its clusters count from (`base`) and end at.
    typealias LineRun = (font: Int32, level: UInt8, glyphs: ArraySlice<FastGlyph>, base: Int, end: Int)

    /// Where `line`'s drawn content ends: before its trailing spaces, tabs and ideographic spaces.
    static func contentEnd(of line: FastLine, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var e = min(line.contentEnd, bytes.count)
        while e > line.start {
            let b = bytes[e - 1]
            if b == 0x20 || b == 0x09 { e -= 1; continue }
            if e - line.start >= 3, b == 0x80, bytes[e - 2] == 0x80, bytes[e - 3] == 0xE3 { e -= 3; continue }
            break
        }
        return e
    }

    /// The glyph runs of the segments under `line`, in logical order (called under the lock).
    private func lineRuns(
        _ storage: FastStorage, _ line: FastLine, starts: [Int], ends: [(end: Int, shaped: Int, rtl: Bool, paragraph: Int)]
    ) -> [LineRun] {
        var runs: [LineRun] = []
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
                let end = min(base + Int(piece.end), line.contentEnd)
                if whole {
                    if !piece.glyphs.isEmpty { runs.append((piece.font, piece.level, piece.glyphs[...], base, end)) }
                    continue
                }
                let kept = piece.glyphs.filter { base + Int($0.cluster) >= line.start && base + Int($0.cluster) < line.contentEnd }
                if !kept.isEmpty { runs.append((piece.font, piece.level, kept[...], base, end)) }
            }
            k += 1
        }
        return runs
    }

    /// UAX #9 L2: from the highest level down to the lowest odd one, reverses every run of
    /// pieces at that level or higher.
    static func reorderByLevels(_ runs: inout [LineRun]) {
        guard let highest = runs.map(\.level).max(), highest > 0 else { return }
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

    /// Positions `run`'s glyphs from `pen` on the line at `baseline` into `result` (and, with
    /// `clusters`, the text each cluster shows; a colour glyph's text into `hidden`). Called
    /// under the lock.
    private func appendGlyphs(
        of run: LineRun, line: FastLine, origin: Point, baseline: Double, clusters: Bool, textBytes: [UInt8],
        pen: inout Int64, into result: inout PositionedGlyphs
    ) {
        // The text of a colour glyph (an emoji), which a PDF holds as a picture, goes
        // to `hidden`, for the painter to show invisibly.
        let hideText = clusters && shaper.fonts[Int(run.font)].isColor
        var i = run.glyphs.startIndex
        while i < run.glyphs.endIndex {
            // A cluster: the glyphs of one cluster value (one or more characters).
            var j = i + 1
            while j < run.glyphs.endIndex, run.glyphs[j].cluster == run.glyphs[i].cluster { j += 1 }
            let before = result.glyphs.count, penBefore = pen
            for g in run.glyphs[i..<j] {
                if g.glyph & PANGO_GLYPH_UNKNOWN_FLAG == 0 && g.glyph != PANGO_GLYPH_EMPTY {
                    result.glyphs.append(
                        PositionedGlyph(
                            index: UInt(g.glyph),
                            x: origin.x + Double(pen + Int64(g.dx)) / Double(PANGO_SCALE),
                            y: baseline + Double(g.dy) / Double(PANGO_SCALE)))
                }
                pen += Int64(g.advance)
            }
            if clusters, result.glyphs.count > before {
                // The cluster's characters go straight into `text` (no array of its own).
                let textStart = result.text.count
                if run.base < 0 {
                    if i == run.glyphs.startIndex { result.text.append(contentsOf: "\u{2026}".utf8) }
                } else {
                    // Its characters run to the next cluster in logical order: after it
                    // left to right, before it right to left; the last to the run's end.
                    let rtl = run.level & 1 == 1
                    let next =
                        rtl
                        ? (i > run.glyphs.startIndex ? run.base + Int(run.glyphs[i - 1].cluster) : run.end)
                        : (j < run.glyphs.endIndex ? run.base + Int(run.glyphs[j].cluster) : run.end)
                    let from = max(line.start, run.base + Int(run.glyphs[i].cluster)), to = min(next, line.contentEnd)
                    if from < to {
                        let lo = FastTextEngine.characterStart(textBytes, from), hi = FastTextEngine.characterStart(textBytes, to)
                        if lo < hi { result.text.append(contentsOf: textBytes[lo..<hi]) }
                    }
                }
                if hideText {
                    // A picture's text is shown apart (`hidden`), not by its glyphs.
                    result.hidden.append(
                        HiddenText(
                            x: origin.x + Double(penBefore) / Double(PANGO_SCALE), y: baseline,
                            width: Double(pen - penBefore) / Double(PANGO_SCALE),
                            text: Array(result.text[textStart...])))
                    result.text.removeSubrange(textStart...)
                }
                result.clusters.append(
                    PositionedCluster(
                        bytes: Int32(result.text.count - textStart),
                        glyphs: Int32(result.glyphs.count - before)))
            }
            i = j
        }
    }
}

/// A glyph of a font at a position (points, y down); the same layout as Cairo's `cairo_glyph_t`.
package struct PositionedGlyph {
    package var index: UInt
    package var x: Double
    package var y: Double
}

/// Some bytes of text shown by some glyphs; the same layout as Cairo's `cairo_text_cluster_t`.
package struct PositionedCluster {
    package var bytes: Int32
    package var glyphs: Int32
}

/// What `FastTextEngine.positionedGlyphs` found: the glyphs, and runs of them in one font (each
/// ending at `end`, exclusive; the font is what the painter's `fonts` gave), or a text to hand
/// to the reference engine. When asked for clusters, `text` holds the UTF-8 the glyphs show,
/// cluster after cluster in glyph order, and each run also ends at `clusterEnd` and `textEnd`.
/// The text of glyphs a PDF holds as pictures (colour emoji), at the box they cover: a painter
/// shows it invisibly (blank glyphs of a plain font) so that the PDF's text has it.
package struct HiddenText {
    package var x: Double
    package var y: Double
    package var width: Double
    package var text: [UInt8]

    package init(x: Double, y: Double, width: Double, text: [UInt8]) {
        self.x = x; self.y = y; self.width = width; self.text = text
    }
}

package struct PositionedGlyphs {
    package var delegate: PreparedText?
    package var hidden: [HiddenText] = []
    /// A font without colour glyphs (the style's), as the painter's `fonts` gave it, to show
    /// `hidden` with.
    package var plainFont: OpaquePointer?
    package var glyphs: [PositionedGlyph] = []
    package var runs: [(font: OpaquePointer, end: Int, clusterEnd: Int, textEnd: Int)] = []
    package var text: [UInt8] = []
    package var clusters: [PositionedCluster] = []
    init(delegate: PreparedText?) { self.delegate = delegate }
}

extension FastTextEngine {
    /// `offset` moved forward to the start of a character (never inside a UTF-8 sequence).
    static func characterStart(_ text: [UInt8], _ offset: Int) -> Int {
        var o = max(0, min(offset, text.count))
        while o < text.count, text[o] & 0xC0 == 0x80 { o += 1 }
        return o
    }
}
