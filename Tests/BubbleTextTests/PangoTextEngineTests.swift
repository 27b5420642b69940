import BubbleCore
import CCairo
@testable import BubbleRender
import Foundation
import BubbleTestSupport
import Testing
@testable import BubbleText

private func makeEngine() -> PangoTextEngine {
    TestFonts.pin()
    return PangoTextEngine()
}

private let body = TextStyle(size: 16)

/// The sanitised text of each line (what Pango laid out), as strings.
private func lineTexts(_ prepared: PreparedText, _ layout: TextLayout) throws -> [String] {
    let storage = try #require(prepared.storage as? PangoTextStorage)
    let bytes = Array(storage.sanitizedText.utf8)
    return layout.lines.map { String(decoding: bytes[$0.range], as: UTF8.self) }
}

/// Where a rendered image has ink (alpha > 40): per row, and the bounding box in pixels.
private struct Ink {
    var rows: [Bool] = []
    var minX = Int.max, maxX = Int.min, minY = Int.max, maxY = Int.min

    init(_ surface: ImageSurface) {
        let image = surface.rgbaImage()
        for y in 0..<image.height {
            var inked = false
            for x in 0..<image.width where image.bytes[(y * image.width + x) * 4 + 3] > 40 {
                inked = true
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
            }
            rows.append(inked)
        }
    }

    /// How many of `layout`'s line boxes have ink, drawn at `scale` pixels per point.
    func inkedLines(_ layout: TextLayout, scale: Double) -> Int {
        layout.lines.filter { line in
            let top = Int((line.top * scale).rounded(.up)), bottom = Int(((line.top + line.height) * scale).rounded(.down))
            return (top..<min(bottom, rows.count)).contains { rows[$0] }
        }.count
    }
}

// MARK: - pango-view, the reference

/// Runs `pango-view` (Debian package pango1.0-tools) with the same settings as the engine and
/// reads its serialized layout (`--serialize-to`, Pango ≥ 1.50): the line ranges, height and
/// unknown-glyph count exactly as Pango computed them.
private enum PangoView {
    struct Result {
        var ranges: [Range<Int>]
        var height: Double
        var unknownGlyphs: Int
    }

    static func executable() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/pango-view" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The arguments, for the record (W = the width in Pango units, 1/1024 pt):
    /// `pango-view -q --dpi=72 --font="BubbleKit Sans 16" --pango-units --width=W --wrap=word-char
    ///  --line-spacing=1 --hinting=none --hint-metrics=on --subpixel-positions --antialias=gray
    ///  --language=en --markup -t '<span insert_hyphens="false">TEXT</span>'
    ///  -o out.png --serialize-to=out.json`
    /// - `--dpi=72`: points = pixels, like the engine; `--pango-units`: the width exactly as the
    ///   engine hands it to Pango; `--subpixel-positions`: no glyph-position rounding;
    ///   `--line-spacing=1`: line height 1 as a factor, as the engine sets it.
    /// - `--hint-metrics=on` really means OFF: pango-view 1.50 passes its option's enum value
    ///   straight to cairo, whose order is DEFAULT, OFF, ON, so "on" and "off" are swapped.
    ///   (With "off" the lines are 19 pt, ascent and descent rounded up to whole pixels.)
    /// - The markup span turns off Pango's hyphen at in-word breaks, as the engine does.
    static func layout(_ text: String, family: String = "BubbleKit Sans", size: Double = 16, width: Double) throws -> Result {
        guard let executable = executable() else {
            Issue.record("pango-view not found on PATH: install the Debian package pango1.0-tools (scripts/bootstrap.sh)")
            throw CancellationError()
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pango-view-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("layout.json").path
        let escaped = text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        let arguments = [
            "-q", "--dpi=72", "--font=\(family) \(size)", "--pango-units",
            "--width=\(Int((width * 1024).rounded(.down)))", "--wrap=word-char",
            "--line-spacing=1", "--hinting=none", "--hint-metrics=on", "--subpixel-positions", "--antialias=gray",
            "--language=en", "--markup", "-t", "<span insert_hyphens=\"false\">\(escaped)</span>",
            "-o", folder.appendingPathComponent("out.png").path, "--serialize-to=\(json)"
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["FONTCONFIG_FILE"] = TestFonts.configFile
        let result = try Command.run(executable, arguments, environment: environment)
        guard result.status == 0 else {
            Issue.record("pango-view failed (\(result.status)): \(result.stderrText)")
            throw CancellationError()
        }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let output = try #require(root["output"] as? [String: Any])
        let lines = try #require(output["lines"] as? [[String: Any]])
        let ranges = try lines.map { line -> Range<Int> in
            let start = try #require(line["start-index"] as? Int), length = try #require(line["length"] as? Int)
            return start..<(start + length)
        }
        return Result(
            ranges: ranges, height: Double(try #require(output["height"] as? Int)) / 1024,
            unknownGlyphs: try #require(output["unknown-glyphs"] as? Int))
    }
}

// MARK: - Seed 001

/// Liberation Sans at 16 pt, 2048 units per em: ascent 1854 + descent 434 = 17.875 pt (a line's
/// own height); + line gap 67 = 18.3984375 pt from one baseline to the next.
private let lineBox16 = 17.875
private let linePitch16 = 18.3984375

/// Height of `lines` lines of 16-pt Liberation Sans at line height 1.
private func height16(_ lines: Int) -> Double { lines == 0 ? 0 : Double(lines - 1) * linePitch16 + lineBox16 }

@Suite("Pango text engine: seed 001 against pango-view")
struct PangoSeed001Tests {
    static let cases: [(width: Double, text: String, lines: [String])] = [
        (220, "Here's a little bubble", ["Here's a little bubble"]),
        (80, "Here's a longer one, away from the margins", ["Here's a ", "longer ", "one, away ", "from the ", "margins"]),
        (180, "Bubbles respect\nnewlines\nin\nthe\nsource text ...", ["Bubbles respect", "newlines", "in", "the", "source text ..."]),
        // "Andnormallyaddlinebreaksonlyinbetween" alone is wider than 280, so it breaks inside
        // itself (without a hyphen); everything after it breaks between words.
        (
            280, "Andnormallyaddlinebreaksonlyinbetween words, unless a really long word forces them to do otherwise",
            ["Andnormallyaddlinebreaksonlyinbetwe", "en words, unless a really long word ", "forces them to do otherwise"]
        )
    ]
    /// Line widths without trailing spaces (Liberation Sans advances, unhinted).
    static let widths: [[Double]] = [
        [144.46875],
        [59.078125, 44.4765625, 72.9375, 58.6875, 56.90625],
        [114.734375, 62.2578125, 12.453125, 22.2421875, 96.0390625],
        [273.0546875, 249.90625, 196.5390625]
    ]

    @Test("seed 001 lines, as expected and exactly as pango-view breaks them", arguments: 0..<4)
    func seed001(_ index: Int) throws {
        let (width, text, expected) = Self.cases[index]
        let engine = makeEngine()
        let prepared = try engine.prepare(text, style: body)
        let layout = try engine.layout(prepared, maxWidth: width, maxLines: nil)
        #expect(try lineTexts(prepared, layout) == expected)
        #expect(layout.lines.map(\.width) == Self.widths[index])
        #expect(layout.width == Self.widths[index].max())
        #expect(layout.height == height16(expected.count))
        #expect(!layout.isTruncated)
        #expect(try engine.unknownGlyphCount(prepared) == 0)

        let reference = try PangoView.layout(text, width: width)
        #expect(layout.lines.map(\.range) == reference.ranges, "line ranges differ from pango-view's")
        #expect(layout.height == reference.height, "height differs from pango-view's (see the --hint-metrics note)")
        #expect(reference.unknownGlyphs == 0)
    }

    @Test("laid out again at its own width, a text keeps its lines (shrink-wrap)", arguments: 0..<4)
    func shrinkWrap(_ index: Int) throws {
        let (width, text, _) = Self.cases[index]
        let engine = makeEngine()
        let prepared = try engine.prepare(text, style: body)
        let wide = try engine.layout(prepared, maxWidth: width, maxLines: nil)
        let tight = try engine.layout(prepared, maxWidth: wide.width, maxLines: nil)
        #expect(tight == wide)
    }
}

// MARK: - Text handling and refusals

@Suite("Pango text engine: text handling")
struct PangoTextHandlingTests {
    @Test func newlinesBreakAndCRLFIsNormalised() throws {
        let engine = makeEngine()
        let unix = try engine.prepare("one\ntwo\nthree", style: body)
        let mixed = try engine.prepare("one\r\ntwo\rthree", style: body)
        let storage = try #require(mixed.storage as? PangoTextStorage)
        #expect(storage.sanitizedText == "one\ntwo\nthree")
        #expect(mixed.text == "one\r\ntwo\rthree", "PreparedText.text stays the caller's text")
        let a = try engine.layout(unix, maxWidth: 300, maxLines: nil)
        let b = try engine.layout(mixed, maxWidth: 300, maxLines: nil)
        #expect(a == b)
        #expect(try lineTexts(mixed, b) == ["one", "two", "three"])
        #expect(b.lines.map(\.range) == [0..<3, 4..<7, 8..<13])
        // U+2028 breaks the line too.
        let separated = try engine.layout(try engine.prepare("one\u{2028}two", style: body), maxWidth: 300, maxLines: nil)
        #expect(separated.lineCount == 2)
    }

    @Test func emptyLinesCount() throws {
        let engine = makeEngine()
        let newline = try engine.layout(try engine.prepare("\n", style: body), maxWidth: 100, maxLines: nil)
        #expect(newline.lineCount == 2)
        #expect(newline.height == height16(2))
        #expect(newline.width == 0)
        let trailing = try engine.layout(try engine.prepare("a\n", style: body), maxWidth: 100, maxLines: nil)
        #expect(trailing.lineCount == 2)
    }

    @Test func emptyTextHasNoLines() throws {
        let engine = makeEngine()
        #expect(try engine.layout(try engine.prepare("", style: body), maxWidth: 100, maxLines: nil) == .empty)
        #expect(try engine.layout(try engine.prepare("", style: body), maxWidth: 100, maxLines: 1) == .empty)
        // Only control characters: nothing left after sanitising.
        #expect(try engine.layout(try engine.prepare("\u{0}\u{1}\u{7F}", style: body), maxWidth: 100, maxLines: nil) == .empty)
    }

    @Test func controlCharactersAreRemoved() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare("a\u{0}b\u{7}c\u{1B}[0m\u{85}d\u{9F}\te", style: body)
        let storage = try #require(prepared.storage as? PangoTextStorage)
        #expect(storage.sanitizedText == "abc[0m\nd\te")
        let layout = try engine.layout(prepared, maxWidth: 300, maxLines: nil)
        #expect(try lineTexts(prepared, layout) == ["abc[0m", "d\te"])
        #expect(try engine.unknownGlyphCount(prepared) == 0)
        #expect(TextSanitizer.sanitize("plain text") == "plain text")
        #expect(TextSanitizer.sanitize("\r\r\n\n") == "\n\n\n")
        #expect(TextSanitizer.breakLongParagraphs("aaa bbb ccc", maxBytes: 8) == "aaa bbb\nccc")
        #expect(TextSanitizer.breakLongParagraphs("aaaaaaaaaa\nbb", maxBytes: 4) == "aaaa\naaaa\naa\nbb")
        #expect(TextSanitizer.breakLongParagraphs("éééé", maxBytes: 5) == "éé\néé", "never inside a character")
        #expect(TextSanitizer.breakLongParagraphs("short\ntext", maxBytes: 5) == "short\ntext")
    }

    @Test func badWidthsAreRefused() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare("Hello", style: body)
        let canvas = try Canvas(surface: ImageSurface(width: 10, height: 10))
        for width in [0.0, -1, -.infinity, .infinity, .nan, -.nan] {
            let error = #expect(throws: TextError.self) { try engine.layout(prepared, maxWidth: width, maxLines: nil) }
            guard case let .invalidWidth(reported)? = error else {
                Issue.record("expected invalidWidth for \(width), got \(String(describing: error))"); continue
            }
            #expect(reported.bitPattern == width.bitPattern)
            #expect(throws: TextError.self) {
                try engine.draw(prepared, maxWidth: width, maxLines: nil, at: Point(x: 0, y: 0), color: Color(red: 0, green: 0, blue: 0), on: canvas)
            }
        }
    }

    @Test func badStylesAreRefused() throws {
        let engine = makeEngine()
        for size in [0.0, -16, .nan, .infinity, 1e-6, 1e9] {
            #expect(throws: TextError.self) { try engine.prepare("x", style: TextStyle(size: size)) }
        }
        #expect(throws: TextError.invalidFontSize(0)) { try engine.prepare("x", style: TextStyle(size: 0)) }
        for lineHeight in [0.0, -1, .infinity, 1e300] {
            #expect(throws: TextError.invalidLineHeight(lineHeight)) {
                try engine.prepare("x", style: TextStyle(size: 16, lineHeight: lineHeight))
            }
        }
        #expect(throws: TextError.unknownFont("No Such Family")) {
            try engine.prepare("x", style: TextStyle(family: "No Such Family", size: 16))
        }
        for family in ["Liberation Sans", "liberation sans", "DejaVu Sans", "No Such Family, DejaVu Sans", "sans-serif", "emoji"] {
            #expect(throws: Never.self) { try engine.prepare("x", style: TextStyle(family: family, size: 16)) }
        }
    }

    @Test func weightsAndSizesChangeWidths() throws {
        let engine = makeEngine()
        func width(_ style: TextStyle) throws -> Double {
            try engine.layout(try engine.prepare("Hello bubble", style: style), maxWidth: 500, maxLines: nil).width
        }
        let regular = try width(body)
        #expect(try width(TextStyle(size: 16, weight: .bold)) > regular)
        #expect(try width(TextStyle(size: 32)) == 2 * regular, "unhinted: widths scale exactly with size")
    }

    @Test func lineHeightMultiplies() throws {
        let engine = makeEngine()
        let text = "one\ntwo\nthree"
        func layout(_ lineHeight: Double) throws -> TextLayout {
            try engine.layout(try engine.prepare(text, style: TextStyle(size: 16, lineHeight: lineHeight)), maxWidth: 300, maxLines: nil)
        }
        let natural = try layout(1)
        #expect(natural.lines.map(\.top) == [0, linePitch16, 2 * linePitch16])
        #expect(natural.lines.map(\.height) == [linePitch16, linePitch16, lineBox16])
        #expect(natural.lines.map(\.baseline) == [14.484375, 14.484375 + linePitch16, 14.484375 + 2 * linePitch16])
        #expect(natural.height == height16(3))
        // No jump between 1 and a hair more.
        #expect(abs(try layout(1.0001).height - natural.height) < 0.01)
        // Twice the pitch between baselines; the first line starts at the top, the last ends at its descent.
        let double = try layout(2)
        #expect(double.lines.map(\.top) == [0, 2 * linePitch16, 4 * linePitch16])
        #expect(double.lines.map(\.baseline) == [14.484375, 14.484375 + 2 * linePitch16, 14.484375 + 4 * linePitch16])
        #expect(double.height == 4 * linePitch16 + lineBox16)
        let tight = try layout(0.5)
        #expect(tight.lines[1].baseline - tight.lines[0].baseline == linePitch16 / 2)
    }

    /// Timings (printed, not asserted) on 2 vCPUs: Pango wraps ordinary text at ≈ 0.5–2 µs per
    /// byte, but breaking inside one long word costs more and more per byte as the word grows
    /// (≈ 6 µs/byte at 2,000 letters, 60 µs/byte at 40,000): Pango 1.50 re-measures the rest of
    /// the word for every line.
    @Test func aMegabyteOfText() throws {
        let engine = makeEngine()
        let words = ["bubble", "hello", "a", "conversation", "emoji", "with", "some", "text", "ok"]
        var text = ""
        text.reserveCapacity(1_050_000)
        var i = 0
        while text.utf8.count < 1_000_000 {
            text += words[i % words.count]
            text += i % 97 == 96 ? "\n" : " "
            i += 1
        }
        text += "end."
        let clock = ContinuousClock()
        var layout = TextLayout.empty
        let elapsed = try clock.measure {
            let prepared = try engine.prepare(text, style: body)
            layout = try engine.layout(prepared, maxWidth: 280, maxLines: nil)
        }
        print("1 MB of text in short paragraphs: \(layout.lineCount) lines in \(elapsed)")
        #expect(layout.lineCount > 20_000)
        #expect(layout.width <= 280)
        #expect(layout.lines.last?.range.upperBound == text.utf8.count, "all of the text is on lines")

        // 1 MB in one paragraph: the engine breaks it every 62,500 bytes (at a space).
        let wordy = String(repeating: "word ", count: 200_000)
        var wordyLayout = TextLayout.empty
        let wordyElapsed = try clock.measure {
            wordyLayout = try engine.layout(try engine.prepare(wordy, style: body), maxWidth: 280, maxLines: nil)
        }
        print("1 MB of text in one paragraph: \(wordyLayout.lineCount) lines in \(wordyElapsed)")
        #expect(wordyLayout.width <= 280 && wordyLayout.lineCount > 10_000)
    }

    /// Past 2³¹ Pango units of advance in one paragraph (≈ 2.1 million pt) Pango's line breaking
    /// overflows: without the engine's paragraph breaking, 100,000 "x" at 160 pt (8 million pt)
    /// come out as one line 1.8 million pt wide.
    @Test func hugeParagraphsDoNotOverflow() throws {
        let engine = makeEngine()
        let style = TextStyle(size: 160)  // "x" is 80 pt wide; paragraphs broken every 6,250 bytes
        let prepared = try engine.prepare(String(repeating: "x", count: 100_000), style: style)
        let storage = try #require(prepared.storage as? PangoTextStorage)
        #expect(storage.sanitizedText.utf8.count == 100_015, "15 newlines inserted")
        let layout = try engine.layout(prepared, maxWidth: 2800, maxLines: nil)
        #expect(layout.width == 2800, "35 x per line")
        #expect(layout.lineCount == 16 * 179, "16 paragraphs of 6,250 x, 179 lines each")
        let cut = try engine.layout(prepared, maxWidth: 2800, maxLines: 3)
        #expect(cut.lineCount == 3 && cut.isTruncated && cut.width == 2800)
    }
}

// MARK: - Scripts

@Suite("Pango text engine: emoji, CJK, Arabic")
struct PangoScriptTests {
    @Test func emojiWithoutTofu() throws {
        let engine = makeEngine()
        let text = "😀👨‍👩‍👧‍👦🇯🇵"  // a face, a ZWJ family sequence, a flag
        let prepared = try engine.prepare(text, style: body)
        let layout = try engine.layout(prepared, maxWidth: 300, maxLines: nil)
        #expect(try engine.unknownGlyphCount(prepared) == 0)
        #expect(layout.width > 0)
        // Three emoji of ≈ 19.9 pt at 16 pt on one line: Noto Color Emoji's 136-px bitmaps scaled to
        // the size asked for (fonts.conf's bitmap-scaling rule; without it they are 135.7 pt wide).
        #expect(layout.lineCount == 1)
        #expect(layout.width > 3 * 16 && layout.width < 3 * 16 * 1.5)
        #expect(layout.height < 16 * 2)
    }

    @Test func japaneseWithoutTofu() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare("今日は良い天気ですね", style: TextStyle(size: 16, language: "ja"))
        let layout = try engine.layout(prepared, maxWidth: 300, maxLines: nil)
        #expect(try engine.unknownGlyphCount(prepared) == 0)
        #expect(layout.lineCount == 1)
        #expect(layout.width == 160, "ten full-width characters of 1 em")
        #expect(!layout.lines[0].isRightToLeft)
        // CJK breaks between any two characters.
        let narrow = try engine.layout(prepared, maxWidth: 50, maxLines: nil)
        #expect(narrow.lineCount == 4)
        #expect(narrow.lines.allSatisfy { $0.width <= 50 })
    }

    @Test func arabicRunsRightToLeft() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare("مرحبا كيف حالك", style: body)
        let layout = try engine.layout(prepared, maxWidth: 300, maxLines: nil)
        #expect(try engine.unknownGlyphCount(prepared) == 0)
        #expect(layout.lineCount == 1)
        #expect(layout.lines[0].isRightToLeft)
        #expect(layout.width > 0)
        // Mixed paragraphs: each takes its own direction.
        let mixed = try engine.prepare("Hello\nمرحبا كيف حالك\nBye\nمرحبا\n123", style: body)
        let lines = try engine.layout(mixed, maxWidth: 300, maxLines: nil).lines
        // A paragraph without strong characters ("123") keeps the previous one's direction.
        #expect(lines.map(\.isRightToLeft) == [false, true, false, true, true])
        // Shrink-wrapped, the lines stay the same.
        let narrow = try engine.layout(prepared, maxWidth: 60, maxLines: nil)
        #expect(narrow.lineCount > 1)
        #expect(try engine.layout(prepared, maxWidth: narrow.width, maxLines: nil) == narrow)
    }
}

// MARK: - maxLines

@Suite("Pango text engine: maxLines")
struct PangoMaxLinesTests {
    static let long = "Here's a longer one, away from the margins, and it goes on and on for a good while longer"

    @Test func cutsWithAnEllipsis() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare(Self.long, style: body)
        let full = try engine.layout(prepared, maxWidth: 120, maxLines: nil)
        let cut = try engine.layout(prepared, maxWidth: 120, maxLines: 2)
        #expect(full.lineCount > 2)
        #expect(cut.lineCount == 2)
        #expect(cut.isTruncated)
        #expect(cut.lines[0] == full.lines[0])
        // The second line shows the start of what was the second line, then the ellipsis.
        #expect(cut.lines[1].range.lowerBound == full.lines[1].range.lowerBound)
        #expect(cut.lines[1].range.upperBound <= full.lines[1].range.upperBound)
        #expect(try lineTexts(prepared, cut) == ["Here's a longer ", "one, away fro"], "drawn as \"one, away fro…\"")
        // "one, away fro" 96.0546875 + "…" 16 (Pango pads the ellipsis to fill 120; not counted).
        #expect(cut.lines[1].width == 112.0546875)
        #expect(cut.lines[1].top == full.lines[1].top)
        #expect(cut.lines[1].baseline == full.lines[1].baseline)
        #expect(cut.height == height16(2))
        #expect(cut.width <= 120)
        // No limit, a limit ≥ the line count, or a limit ≤ 0: the whole text.
        #expect(try engine.layout(prepared, maxWidth: 120, maxLines: full.lineCount) == full)
        #expect(try engine.layout(prepared, maxWidth: 120, maxLines: 0) == full)
        #expect(try engine.layout(prepared, maxWidth: 120, maxLines: -3) == full)
        let one = try engine.layout(prepared, maxWidth: 120, maxLines: 1)
        #expect(one.lineCount == 1 && one.isTruncated && one.height == lineBox16)
    }

    @Test func cutsAcrossParagraphs() throws {
        let engine = makeEngine()
        let text = "Bubbles respect\nnewlines\nin\nthe\nsource text ..."
        let prepared = try engine.prepare(text, style: body)
        // Pango's own per-paragraph limit would show all five lines; the engine shows two and
        // marks the cut with an ellipsis even though "newlines" fits.
        let cut = try engine.layout(prepared, maxWidth: 180, maxLines: 2)
        #expect(cut.lineCount == 2)
        #expect(cut.isTruncated)
        #expect(try lineTexts(prepared, cut) == ["Bubbles respect", "newlines"], "drawn as \"newlines…\"")
        let full = try engine.layout(prepared, maxWidth: 180, maxLines: nil)
        #expect(cut.lines[1].width > full.lines[1].width, "\"newlines…\" is wider than \"newlines\"")
        #expect(cut.height == height16(2))
        // A cut line that is itself an empty paragraph still shows the ellipsis.
        let gaps = try engine.layout(try engine.prepare("a\n\n\nb", style: body), maxWidth: 180, maxLines: 2)
        #expect(gaps.lineCount == 2 && gaps.isTruncated && gaps.lines[1].width > 0)
    }

    @Test func truncatedRightToLeft() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare("مرحبا كيف حالك مرحبا كيف حالك مرحبا كيف حالك", style: body)
        let cut = try engine.layout(prepared, maxWidth: 80, maxLines: 2)
        #expect(cut.lineCount == 2 && cut.isTruncated)
        #expect(cut.lines.allSatisfy { $0.isRightToLeft })
        #expect(cut.lines.allSatisfy { $0.width <= 80 })
    }
}

// MARK: - Drawing and output independence

@Suite("Pango text engine: drawing")
struct PangoDrawingTests {
    static let text = "Here's a longer one, away from the margins"
    static let black = Color(red: 0, green: 0, blue: 0)

    private func render(
        _ engine: PangoTextEngine, _ prepared: PreparedText, width: Double, maxLines: Int? = nil,
        scale: Double, size: (Int, Int)
    ) throws -> Ink {
        let surface = try ImageSurface(width: Int(Double(size.0) * scale), height: Int(Double(size.1) * scale))
        let canvas = try Canvas(surface: surface, scale: scale)
        try engine.draw(prepared, maxWidth: width, maxLines: maxLines, at: Point(x: 0, y: 0), color: Self.black, on: canvas)
        try canvas.check("drawing text")
        return Ink(surface)
    }

    @Test func layoutDoesNotDependOnTheOutput() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare(Self.text, style: body)
        let before = try engine.layout(prepared, maxWidth: 80, maxLines: nil)
        for scale in [1.0, 2, 3] {
            _ = try render(engine, prepared, width: 80, scale: scale, size: (100, 100))
            #expect(try engine.layout(prepared, maxWidth: 80, maxLines: nil) == before, "after drawing at \(scale)×")
        }
        // PDF and SVG surfaces (files in the temporary folder), drawn at 1.5×.
        for kind in ["pdf", "svg"] {
            let folder = FileManager.default.temporaryDirectory.path
            let path = "\(folder)/pango-engine-\(UUID().uuidString).\(kind)"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let surface = kind == "pdf" ? cairo_pdf_surface_create(path, 100, 100)! : cairo_svg_surface_create(path, 100, 100)!
            let cr = cairo_create(surface)!
            cairo_scale(cr, 1.5, 1.5)
            try engine.draw(prepared, maxWidth: 80, maxLines: nil, at: Point(x: 2, y: 3), color: Self.black, cairo: cr)
            try engine.draw(prepared, maxWidth: 80, maxLines: 2, at: Point(x: 2, y: 3), color: Self.black, cairo: cr)
            #expect(cairo_status(cr) == CAIRO_STATUS_SUCCESS)
            cairo_destroy(cr)
            cairo_surface_finish(surface)
            #expect(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS)
            cairo_surface_destroy(surface)
            #expect(try engine.layout(prepared, maxWidth: 80, maxLines: nil) == before, "after drawing to \(kind)")
            let bytes = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(bytes > 500)
        }
        // A second engine (another font map and context) measures the same.
        let other = makeEngine()
        #expect(try other.layout(try other.prepare(Self.text, style: body), maxWidth: 80, maxLines: nil) == before)
    }

    @Test("drawn lines are the measured lines at 1×, 2× and 3×", arguments: [1.0, 2, 3])
    func drawnLinesMatch(_ scale: Double) throws {
        let engine = makeEngine()
        let prepared = try engine.prepare(Self.text, style: body)
        let layout = try engine.layout(prepared, maxWidth: 80, maxLines: nil)
        let ink = try render(engine, prepared, width: 80, scale: scale, size: (100, 100))
        #expect(ink.inkedLines(layout, scale: scale) == layout.lineCount, "ink in every line box")
        #expect(Double(ink.maxX) < 80 * scale)
        #expect(Double(ink.maxX) < (layout.width + 1) * scale)
        #expect(Double(ink.maxY) < layout.height * scale)
        // The same picture, scaled: the ink's box at 1× times the scale, give or take a pixel or so.
        let one = try render(engine, prepared, width: 80, scale: 1, size: (100, 100))
        for (scaled, base) in [(ink.minX, one.minX), (ink.maxX + 1, one.maxX + 1), (ink.minY, one.minY), (ink.maxY + 1, one.maxY + 1)] {
            #expect(abs(Double(scaled) - Double(base) * scale) <= scale + 1)
        }
    }

    @Test func drawsTruncatedText() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare("Bubbles respect\nnewlines\nin\nthe\nsource text ...", style: body)
        let layout = try engine.layout(prepared, maxWidth: 180, maxLines: 2)
        let ink = try render(engine, prepared, width: 180, maxLines: 2, scale: 2, size: (200, 100))
        #expect(ink.inkedLines(layout, scale: 2) == 2)
        #expect(Double(ink.maxY) < layout.height * 2)
        #expect(Double(ink.maxX) <= layout.width * 2 + 1)
        #expect(Double(ink.maxX) > layout.lines[1].width * 2 - 4, "the ellipsis is drawn")
    }

    @Test func rightToLeftIsDrawnAtTheRight() throws {
        let engine = makeEngine()
        let prepared = try engine.prepare("مرحبا", style: body)
        let layout = try engine.layout(prepared, maxWidth: 100, maxLines: nil)
        let ink = try render(engine, prepared, width: 100, scale: 1, size: (120, 30))
        #expect(ink.maxX >= 97 && ink.maxX < 100, "right-aligned in the width it is drawn at")
        #expect(Double(ink.minX) > 100 - layout.width - 2)
        let tight = try render(engine, prepared, width: layout.width, scale: 1, size: (120, 30))
        #expect(tight.minX <= 1)
    }
}

// MARK: - Threads

@Suite("Pango text engine: threads")
struct PangoThreadTests {
    @Test func oneEngineFromManyThreads() throws {
        let engine = makeEngine()
        let texts = PangoSeed001Tests.cases
        let expected = try texts.map { try engine.layout(try engine.prepare($0.text, style: body), maxWidth: $0.width, maxLines: nil) }
        let shared = try texts.map { try engine.prepare($0.text, style: body) }
        let results = Results(count: 64)
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            let k = i % texts.count
            do {
                // Half use a prepared text shared between threads, half prepare their own.
                let prepared = i % 2 == 0 ? shared[k] : try engine.prepare(texts[k].text, style: body)
                let maxLines: Int? = i % 3 == 0 ? 2 : nil
                let layout = try engine.layout(prepared, maxWidth: texts[k].width, maxLines: maxLines)
                results.set(i, maxLines == nil ? layout == expected[k] : layout.lineCount == min(2, expected[k].lineCount))
            } catch {
                results.set(i, false)
            }
        }
        #expect(results.all)
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Bool]
        init(count: Int) { values = Array(repeating: false, count: count) }
        func set(_ i: Int, _ value: Bool) { lock.lock(); values[i] = value; lock.unlock() }
        var all: Bool { lock.lock(); defer { lock.unlock() }; return values.allSatisfy { $0 } }
    }
}

// MARK: - Invariants

@Suite("Pango text engine: geometry invariants")
struct PangoInvariantTests {
    static let texts = [
        "Here's a little bubble",
        "Here's a longer one, away from the margins",
        "Bubbles respect\nnewlines\nin\nthe\nsource text ...",
        "Andnormallyaddlinebreaksonlyinbetween words, unless a really long word forces them to do otherwise",
        "trailing spaces     \nand    more   ",
        "今日は良い天気ですね 😀 مرحبا كيف حالك mixed",
        "W",
        "\t\ttabs\tand\ttabs"
    ]

    @Test(arguments: [8.0, 20, 47.5, 80, 133.3, 280, 1000])
    func linesFitAndStack(_ width: Double) throws {
        let engine = makeEngine()
        for text in Self.texts {
            let prepared = try engine.prepare(text, style: body)
            for maxLines in [nil, 1, 3] as [Int?] {
                let layout = try engine.layout(prepared, maxWidth: width, maxLines: maxLines)
                let bytes = Array(TextSanitizer.sanitize(text).utf8)
                #expect(layout.width == (layout.lines.map(\.width).max() ?? 0))
                #expect(layout.height > 0)
                var previous: TextLine?
                for line in layout.lines {
                    let content = String(decoding: bytes[line.range], as: UTF8.self)
                    let single = content.trimmingCharacters(in: .whitespaces).count <= 1
                    // A truncated last line holds at least the ellipsis (16 pt wide).
                    let ellipsisOnly = layout.isTruncated && line == layout.lines.last && width < 16
                    #expect(
                        line.width <= width || single || ellipsisOnly, "\(text.debugDescription) at \(width): \(content.debugDescription) is \(line.width) wide"
                    )
                    #expect(line.width >= 0)
                    #expect(line.height > 0)
                    #expect(line.baseline > line.top && line.baseline < line.top + line.height)
                    if let previous {
                        #expect(line.baseline > previous.baseline)
                        #expect(abs(line.top - (previous.top + previous.height)) < 0.001, "lines tile")
                        #expect(line.range.lowerBound >= previous.range.upperBound)
                    }
                    previous = line
                }
                #expect(abs((layout.lines.last.map { $0.top + $0.height } ?? 0) - layout.height) < 0.001)
            }
        }
    }
}
