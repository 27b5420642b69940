import BubbleCore
import CPango
import CPangoMeasure
import Foundation

/// `TextEngine` on Pango (HarfBuzz shaping, fontconfig fallback, UAX #14 line breaking, bidi).
///
/// Measures the same for PNG at any scale, PDF and SVG: the engine owns its own font map and
/// context, with metric hinting off, hint style none, unrounded glyph positions, 72 dpi (1 pt = 1
/// unit) and absolute font sizes. Drawing never feeds the target's transform or font options back
/// into the layout, so a layout measured once is the layout drawn everywhere.
///
/// Text is set with `PANGO_WRAP_WORD_CHAR` (break between words; inside a word only when the word
/// alone is wider than the line), without inserted hyphens at such breaks (as UIKit), with the
/// paragraph direction taken from its first strong character (auto-dir; RTL paragraphs are
/// right-aligned in the width). See `TextSanitizer` for what happens to control characters.
///
/// Threading: every call takes the engine's lock (and so does freeing a prepared text's layout),
/// so one engine and the `PreparedText` values it made can be used from several threads; calls
/// are serialised, not parallel. Use one engine per thread to measure in parallel.
///
/// Fonts come from fontconfig's current configuration: set `FONTCONFIG_FILE` to the project's
/// `Sources/BubbleText/Fonts/fonts.conf` (`PinnedFonts.use()`) before the first engine is made.
public final class PangoTextEngine: TextEngine, @unchecked Sendable {
    let fontMap: UnsafeMutablePointer<PangoFontMap>
    let context: OpaquePointer
    /// Serialises every use of the font map, the context and the layouts made from them.
    /// Recursive: a layout freed while the engine works (a replaced cache) takes it again.
    let lock = NSRecursiveLock()
    /// `TextStyle.family` → whether it names something fontconfig has (see `checkFamily`).
    private var familyIsKnown: [String: Bool] = [:]
    private var installedFamilies: Set<String>?
    private var unknownFamilyFallback: String??

    /// An engine with its own Pango context on the fonts fontconfig finds (`PinnedFonts.use()`
    /// pins the project's own).
    public init() {
        fontMap = bk_measuring_font_map_new()!
        context = bk_measuring_context_new(fontMap)!
        // Fixed, not the process locale: the same text measures the same everywhere.
        // `TextStyle.language` overrides it per text.
        pango_context_set_language(context, pango_language_from_string("en"))
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(context))
        g_object_unref(fontMap)
    }

    // MARK: TextEngine

    // A Pango layout is large and tied to one thread: it has no fast paths (`FastPathTextEngine`);
    // none is kept per message, none is read from several threads, a substring is measured by
    // laying it out, and a compact layout measures its texts in full.

    /// Checks the style, sanitises the text and makes the Pango layout that `layout` and `draw`
    /// reuse. Throws `invalidFontSize`, `invalidLineHeight`, or `unknownFont` when no family in
    /// `style.family` is installed or is an alias fontconfig resolves.
    public func prepare(_ text: String, style: TextStyle) throws(TextError) -> PreparedText {
        try prepare(text, style: style, spans: [])
    }

    /// `prepare` with styled ranges: bold, italic and monospace runs set as Pango attributes
    /// (weight, style, family) over their bytes; every other span gets an attribute that does not
    /// change shaping, so the laid-out runs split at its edges (a painter draws them apart).
    public func prepare(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText {
        try Self.validate(style)
        lock.lock(); defer { lock.unlock() }
        try checkFamily(style.family)
        if !spans.isEmpty { try checkFamily(TextStyle.monospaceFamily) }
        let storage = PangoTextStorage(engine: self, text: text, style: style, spans: spans)
        return PreparedText(text: text, style: style, spans: spans, storage: storage)
    }

    /// The spans that apply to the text as Pango gets it (`sanitized`, `pangoText` of `text`):
    /// all of them when sanitising kept every byte in place, none otherwise (a control character
    /// removed moves the offsets; the text is then measured and drawn plain, the same by every
    /// engine).
    package static func usableSpans(_ spans: [TextSpan], text: String, sanitized: String) -> [TextSpan] {
        spans.isEmpty || sanitized.utf8.count != text.utf8.count ? [] : spans
    }

    /// Lines of `prepared` broken for `maxWidth` points. `maxLines` nil or ≤ 0 means no limit.
    ///
    /// - `TextLine.range`: UTF-8 byte offsets into `PangoTextStorage.sanitizedText` (the same as
    ///   `PangoTextEngine.pangoText(text, style:)`), without the paragraph separator. On the last
    ///   line of a truncated layout: the characters shown before the ellipsis (which is drawn but
    ///   is not part of the text).
    /// - `TextLine.width`: the visual span of the line's characters up to its last non-whitespace
    ///   one (`pango_layout_line_get_x_ranges`), so trailing spaces never count, also not in an
    ///   RTL line where they sit on the left; leading spaces and tabs do. Of a truncated last line:
    ///   its glyphs with the ellipsis at its own advance (Pango pads it to the full width).
    /// - `top`: the line's top (`pango_layout_iter_get_line_yrange`); `height`: down to the next
    ///   line's top, for the last line its own logical height, so lines tile and the last one ends
    ///   at the layout's height (with `lineHeight` ≠ 1 the extra space is between lines only).
    /// - A truncated last line holds at least the ellipsis, even when `maxWidth` is narrower.
    /// - `TextLayout.height`: the layout's logical height; `width`: the widest line.
    public func layout(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextLayout {
        let width = try Self.pangoWidth(maxWidth)
        lock.lock(); defer { lock.unlock() }
        let storage = try storage(for: prepared)
        return storage.arrangement(width: width, maxLines: Self.lineLimit(maxLines)).layout
    }

    /// What a painter shows for `prepared` laid out at `maxWidth`, `maxLines` (see
    /// `PangoDrawPlan`), handed to `body` under the engine's lock (Pango's layouts are shared).
    /// Nothing is called when the text has no lines.
    /// `body` also gets the spans the text is set with (`PangoTextStorage.spans`).
    package func withDrawPlan(
        _ prepared: PreparedText, maxWidth: Double, maxLines: Int?,
        _ body: (PangoDrawPlan, [TextSpan]) -> Void
    ) throws(TextError) {
        let width = try Self.pangoWidth(maxWidth)
        lock.lock(); defer { lock.unlock() }
        let storage = try storage(for: prepared)
        let arrangement = storage.arrangement(width: width, maxLines: Self.lineLimit(maxLines))
        guard !arrangement.layout.lines.isEmpty else { return }
        guard let placed = arrangement.placed else {
            body(.layout(storage.layout), storage.spans)
            return
        }
        // Line by line where the layout's own placement is not what was measured: the lines of
        // the full layout at their measured baselines, then (truncated) the tail's line.
        let own = arrangement.layout.lines.count - (arrangement.tail == nil ? 0 : 1)
        var lines: [(line: OpaquePointer, x: Double, baseline: Double)] = []
        let iter = pango_layout_get_iter(storage.layout)!
        defer { pango_layout_iter_free(iter) }
        for k in 0..<own {
            lines.append((OpaquePointer(pango_layout_iter_get_line_readonly(iter)!), Self.points(placed[k].x), Self.points(placed[k].baseline)))
            guard pango_layout_iter_next_line(iter) != 0 else { break }
        }
        if let tail = arrangement.tail {
            lines.append((OpaquePointer(pango_layout_get_line_readonly(tail.layout.pointer, 0)!), Self.points(tail.x), Self.points(tail.baseline)))
        }
        body(.lines(lines), storage.spans)
    }

    /// How many glyphs of `prepared` no installed font has (drawn as hex boxes, "tofu").
    public func unknownGlyphCount(_ prepared: PreparedText) throws(TextError) -> Int {
        lock.lock(); defer { lock.unlock() }
        let storage = try storage(for: prepared)
        guard !storage.bytes.isEmpty else { return 0 }
        return Int(pango_layout_get_unknown_glyphs_count(storage.layout))
    }

    // MARK: Internals

    static func validate(_ style: TextStyle) throws(TextError) {
        // Pango keeps sizes as int Pango units (1/1024 pt): refuse what rounds to 0 or overflows.
        guard style.size.isFinite, style.size * Double(PANGO_SCALE) >= 1,
            style.size * Double(PANGO_SCALE) <= Double(Int32.max)
        else { throw .invalidFontSize(style.size) }
        guard style.lineHeight.isFinite, style.lineHeight > 0,
            Float(style.lineHeight).isFinite, Float(style.lineHeight) > 0
        else { throw .invalidLineHeight(style.lineHeight) }
    }

    /// The width in Pango units, rounded down so no line is ever wider than asked; -1 (no wrapping)
    /// when it does not fit Pango's int.
    static func pangoWidth(_ maxWidth: Double) throws(TextError) -> Int32 {
        guard maxWidth.isFinite, maxWidth > 0 else { throw .invalidWidth(maxWidth) }
        let units = (maxWidth * Double(PANGO_SCALE)).rounded(.down)
        return units >= Double(Int32.max) ? -1 : Int32(units)
    }

    static func lineLimit(_ maxLines: Int?) -> Int? {
        guard let maxLines, maxLines > 0 else { return nil }
        return maxLines
    }

    package static func points(_ units: Int32) -> Double { Double(units) / Double(PANGO_SCALE) }

    /// The storage of `prepared` if this engine made it, else a fresh one (a `PreparedText` from
    /// another engine still works, it just is not reused).
    private func storage(for prepared: PreparedText) throws(TextError) -> PangoTextStorage {
        if let storage = prepared.storage as? PangoTextStorage, storage.engine === self { return storage }
        try Self.validate(prepared.style)
        try checkFamily(prepared.style.family)
        return PangoTextStorage(engine: self, text: prepared.text, style: prepared.style, spans: prepared.spans)
    }

    /// The text as Pango gets it, whose UTF-8 offsets `TextLine.range` counts: sanitised
    /// (`TextSanitizer.sanitize`), and paragraphs too long for Pango's int arithmetic broken
    /// (`TextSanitizer.breakLongParagraphs`; a space becomes `\n`, so offsets only move for a run of
    /// over 1,000,000 / size bytes without a space). Pango adds a paragraph's advances in int
    /// Pango units: past 2³¹ (≈ 2.1 million pt, ≈ 260,000 Latin letters at 16 pt) line breaking
    /// overflows and the paragraph comes out as one line of nonsense width. Allowing 2 em per
    /// UTF-8 byte, paragraphs stay under 2 million pt.
    package static func pangoText(_ text: String, style: TextStyle) -> String {
        let maxBytes = max(64, Int(1_000_000 / style.size))
        return TextSanitizer.breakLongParagraphs(TextSanitizer.sanitize(text), maxBytes: maxBytes)
    }

    /// A new layout on the engine's context holding `text` set in `style`: font, language,
    /// wrapping, line spacing. Width, height and ellipsizing are set per `layout` call.
    func makeLayout(_ text: String, style: TextStyle, spans: [TextSpan] = []) -> OpaquePointer {
        let layout = pango_layout_new(context)!
        let font = fontDescription(family: style.family, style: style)
        pango_layout_set_font_description(layout, font)
        pango_font_description_free(font)
        let attributes = pango_attr_list_new()!
        // Pango 1.44+ adds a hyphen where it breaks inside a word; UIKit does not.
        pango_attr_list_insert(attributes, pango_attr_insert_hyphens_new(0))
        if let language = style.language, !language.isEmpty {
            pango_attr_list_insert(attributes, pango_attr_language_new(pango_language_from_string(language)))
        }
        Self.insertSpans(spans, text: text, style: style, into: attributes)
        pango_layout_set_attributes(layout, attributes)
        pango_attr_list_unref(attributes)
        pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
        pango_layout_set_auto_dir(layout, 1)
        // Baselines `lineHeight` × the font's line height apart (ascent + descent + line gap, as
        // UIFont.lineHeight). Always a factor, also for 1: Pango's default (factor 0) stacks
        // ascent + descent without the line gap (17.875 instead of 18.398 pt per 16-pt Liberation
        // Sans line), and switching between the two would make 1 and 1.0001 differ by a jump.
        pango_layout_set_line_spacing(layout, Float(style.lineHeight))
        pango_layout_set_text(layout, text, -1)
        return layout
    }

    /// The faces of `spans` as weight, style and family attributes; the other spans as a
    /// foreground attribute (no effect on shaping, but runs split at its edges).
    static func insertSpans(_ spans: [TextSpan], text: String, style: TextStyle, into list: OpaquePointer) {
        guard !spans.isEmpty else { return }
        func insert(_ attribute: UnsafeMutablePointer<PangoAttribute>?, _ range: Range<Int>) {
            guard let attribute else { return }
            attribute.pointee.start_index = UInt32(range.lowerBound)
            attribute.pointee.end_index = UInt32(range.upperBound)
            pango_attr_list_insert(list, attribute)
        }
        for run in TextSpan.faceRuns(spans, in: text.utf8) {
            let faced = style.face(run.face)
            if faced.weight != style.weight {
                insert(pango_attr_weight_new(PangoWeight(rawValue: UInt32(faced.weight.value))), run.range)
            }
            if faced.italic { insert(pango_attr_style_new(PANGO_STYLE_ITALIC), run.range) }
            if faced.family != style.family { insert(pango_attr_family_new(faced.family), run.range) }
        }
        let count = text.utf8.count
        for span in spans where !span.style.changesFace && !span.range.isEmpty && span.range.upperBound <= count {
            insert(pango_attr_foreground_new(0, 0, 0), span.range)
        }
    }

    private func fontDescription(family: String, style: TextStyle) -> OpaquePointer {
        let font = pango_font_description_new()!
        pango_font_description_set_family(font, family)
        pango_font_description_set_weight(font, PangoWeight(rawValue: UInt32(min(1000, max(100, style.weight.value)))))
        pango_font_description_set_absolute_size(font, style.size * Double(PANGO_SCALE))
        if style.italic { pango_font_description_set_style(font, PANGO_STYLE_ITALIC) }
        return font
    }

    /// Throws `unknownFont` unless some family in the comma-separated list is installed, is a
    /// generic name (sans-serif, serif, monospace, emoji…), or is an alias fontconfig resolves to a
    /// different font than it gives for a name that does not exist. (An alias that resolves to
    /// exactly that fallback font is reported as unknown.) Results are cached per family string.
    func checkFamily(_ family: String) throws(TextError) {
        if let known = familyIsKnown[family] {
            guard known else { throw .unknownFont(family) }
            return
        }
        let names = family.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let known = names.contains { name in
            let key = name.lowercased()
            if Self.genericFamilies.contains(key) || installedFamilyNames().contains(key) { return true }
            return resolvedFamily(name) != unknownFallback()
        }
        familyIsKnown[family] = known
        guard known else { throw .unknownFont(family) }
    }

    private static let genericFamilies: Set<String> = [
        "sans-serif", "sans", "serif", "monospace", "mono", "system-ui", "emoji", "cursive", "fantasy", "math"
    ]

    private func installedFamilyNames() -> Set<String> {
        if let installedFamilies { return installedFamilies }
        var families: UnsafeMutablePointer<UnsafeMutablePointer<PangoFontFamily>?>?
        var count: Int32 = 0
        pango_font_map_list_families(fontMap, &families, &count)
        defer { g_free(families) }
        var names = Set<String>()
        for i in 0..<Int(count) {
            if let family = families?[i], let name = pango_font_family_get_name(family) {
                names.insert(String(cString: name).lowercased())
            }
        }
        installedFamilies = names
        return names
    }

    private func unknownFallback() -> String? {
        if let unknownFamilyFallback { return unknownFamilyFallback }
        let fallback = resolvedFamily("BubbleKit No Such Family 8c1f")
        unknownFamilyFallback = .some(fallback)
        return fallback
    }

    /// The family of the font fontconfig picks for `name`.
    private func resolvedFamily(_ name: String) -> String? {
        let description = fontDescription(family: name, style: TextStyle(size: 16))
        defer { pango_font_description_free(description) }
        guard let font = pango_font_map_load_font(fontMap, context, description) else { return nil }
        defer { g_object_unref(font) }
        let loaded = pango_font_describe(font)!
        defer { pango_font_description_free(loaded) }
        return pango_font_description_get_family(loaded).map { String(cString: $0) }
    }
}

/// How a Pango-measured text is shown: the whole layout at the text box's top-left, or (a
/// truncated text) its lines one by one, each at its x and baseline from the box's top-left.
/// The pointers are Pango's (`PangoLayout`, `PangoLayoutLine`), valid inside `withDrawPlan`.
package enum PangoDrawPlan {
    case layout(OpaquePointer)
    case lines([(line: OpaquePointer, x: Double, baseline: Double)])
}

extension PangoTextEngine {
    /// True when `font`'s glyphs are pictures (colour emoji: bitmaps, layers or SVG), which a
    /// PDF holds as images, without their text.
    package static func hasColorGlyphs(_ font: UnsafeMutablePointer<PangoFont>) -> Bool {
        guard let hb = pango_font_get_hb_font(font) else { return false }
        let face = hb_font_get_face(hb)
        return hb_ot_color_has_png(face) != 0 || hb_ot_color_has_layers(face) != 0 || hb_ot_color_has_svg(face) != 0
    }
}
