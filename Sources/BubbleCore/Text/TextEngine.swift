/// Font weight on the CSS/OpenType scale (400 regular, 700 bold).
public struct FontWeight: Hashable, Sendable, Comparable {
    /// The weight, 100…900.
    public var value: Int
    /// A weight of `value` (400 regular, 700 bold).
    public init(_ value: Int) { self.value = value }
    /// 400.
    public static let regular = FontWeight(400)
    /// 500.
    public static let medium = FontWeight(500)
    /// 600.
    public static let semibold = FontWeight(600)
    /// 700.
    public static let bold = FontWeight(700)
    public static func < (a: FontWeight, b: FontWeight) -> Bool { a.value < b.value }
}

/// How text is set: what a theme says about one kind of label. Sizes in points.
public struct TextStyle: Hashable, Sendable {
    /// A fontconfig family name or alias ("BubbleKit Sans" is the project's pinned default).
    public var family: String
    /// Size in points.
    public var size: Double
    /// Weight on the CSS scale.
    public var weight: FontWeight
    /// Line height as a multiple of the font's natural line height (1 = the font's own).
    public var lineHeight: Double
    /// BCP 47 language, which steers font fallback (Japanese vs Chinese glyph shapes); nil = none.
    public var language: String?
    /// The italic (or oblique) face of the family.
    public var italic = false

    /// A style of `size` points in the project's pinned sans-serif unless `family` says otherwise.
    public init(
        family: String = "BubbleKit Sans", size: Double, weight: FontWeight = .regular,
        lineHeight: Double = 1, language: String? = nil, italic: Bool = false
    ) {
        self.family = family; self.size = size; self.weight = weight
        self.lineHeight = lineHeight; self.language = language; self.italic = italic
    }

    /// The project's pinned monospace family (Liberation Mono, then DejaVu Sans Mono, with the
    /// same CJK and emoji fallback as "BubbleKit Sans").
    public static let monospaceFamily = "BubbleKit Mono"

    /// This style in `face`: bold is 300 heavier (700 for regular text), italic slants,
    /// monospace sets `monospaceFamily`. The regular face is the style itself.
    public func face(_ face: TextFace) -> TextStyle {
        var s = self
        if face.contains(.bold) { s.weight = FontWeight(min(900, max(700, weight.value + 300))) }
        if face.contains(.italic) { s.italic = true }
        if face.contains(.monospace) { s.family = Self.monospaceFamily }
        return s
    }
}

/// One laid-out line. Ranges are UTF-8 byte offsets into the prepared text; geometry in points,
/// relative to the top-left of the text box.
public struct TextLine: Hashable, Sendable {
    /// The line's UTF-8 byte range of the prepared text.
    public var range: Range<Int>
    /// Advance width of the line's ink-bearing content (trailing spaces excluded).
    public var width: Double
    /// Top of the line box.
    public var top: Double
    /// The line box's height.
    public var height: Double
    /// Baseline, from the top of the text box.
    public var baseline: Double
    /// True when the paragraph this line belongs to runs right to left.
    public var isRightToLeft: Bool

    /// A line; every parameter is the property of the same name.
    public init(range: Range<Int>, width: Double, top: Double, height: Double, baseline: Double, isRightToLeft: Bool = false) {
        self.range = range; self.width = width; self.top = top; self.height = height
        self.baseline = baseline; self.isRightToLeft = isRightToLeft
    }
}

/// A text laid out in a width: its lines and overall size (points).
public struct TextLayout: Hashable, Sendable {
    /// The lines, top to bottom.
    public var lines: [TextLine]
    /// Width of the widest line.
    public var width: Double
    /// Height of all the lines.
    public var height: Double
    /// True when `maxLines` cut the text and the last line ends in an ellipsis.
    public var isTruncated: Bool

    /// A layout of `lines`, `width` × `height` points.
    public init(lines: [TextLine], width: Double, height: Double, isTruncated: Bool = false) {
        self.lines = lines; self.width = width; self.height = height; self.isTruncated = isTruncated
    }
    /// How many lines.
    public var lineCount: Int { lines.count }
    /// No lines, no size: an empty text's layout.
    public static let empty = TextLayout(lines: [], width: 0, height: 0)

    /// What a height needs of these lines (`TextEngine.summary`).
    public var summary: TextSummary {
        TextSummary(
            lineCount: lines.count, width: width, height: height, lastLineWidth: lines.last?.width ?? 0,
            lastLineTop: lines.last?.top ?? 0, lastLineHeight: lines.last?.height ?? 0,
            lastLineIsRightToLeft: lines.last?.isRightToLeft ?? false, isTruncated: isTruncated)
    }
}

/// A text's layout without its lines: their count and size, and the last line's width and
/// direction (whether a time fits after it). Equal to `TextLayout.summary` of the same layout.
public struct TextSummary: Hashable, Sendable {
    /// How many lines.
    public var lineCount: Int
    /// Width of the widest line.
    public var width: Double
    /// Height of all the lines.
    public var height: Double
    /// Width of the last line (whether a time fits after it).
    public var lastLineWidth: Double
    /// Top of the last line.
    public var lastLineTop: Double
    /// Height of the last line.
    public var lastLineHeight: Double
    /// True when the last line runs right to left.
    public var lastLineIsRightToLeft: Bool
    /// True when `maxLines` cut the text.
    public var isTruncated: Bool

    /// A summary; every parameter is the property of the same name.
    public init(
        lineCount: Int, width: Double, height: Double, lastLineWidth: Double, lastLineTop: Double,
        lastLineHeight: Double, lastLineIsRightToLeft: Bool, isTruncated: Bool = false
    ) {
        self.lineCount = lineCount; self.width = width; self.height = height
        self.lastLineWidth = lastLineWidth; self.lastLineTop = lastLineTop; self.lastLineHeight = lastLineHeight
        self.lastLineIsRightToLeft = lastLineIsRightToLeft; self.isTruncated = isTruncated
    }
}

/// Text measured once and laid out at any width. What an engine keeps inside is its own
/// business (`storage`); callers only hand the value back to the engine that made it.
public struct PreparedText: @unchecked Sendable {
    /// The text as given to `prepare`.
    public let text: String
    /// The style it was prepared in.
    public let style: TextStyle
    /// Styled ranges of `text` (UTF-8 bytes): the faces they set are measured, the rest drawn.
    public let spans: [TextSpan]
    /// Engine-private state (shaped runs, a cached layout object…). Immutable once made.
    public let storage: AnyObject?
    /// A prepared text; only engines make these, handing their own `storage`.
    public init(text: String, style: TextStyle, spans: [TextSpan] = [], storage: AnyObject?) {
        self.text = text; self.style = style; self.spans = spans; self.storage = storage
    }
}

/// Why a text or a width was refused.
public enum TextError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A wrap width that is not a finite number above 0.
    case invalidWidth(Double)
    /// A font size that is not a finite number above 0.
    case invalidFontSize(Double)
    /// A line height that is not a finite multiple above 0.
    case invalidLineHeight(Double)
    /// A family that matches no installed font.
    case unknownFont(String)

    public var description: String {
        switch self {
        case let .invalidWidth(w): return "text width \(w) is not usable; expected a finite number > 0"
        case let .invalidFontSize(s): return "font size \(s) is not usable; expected a finite number > 0"
        case let .invalidLineHeight(h): return "line height \(h) is not usable; expected a finite multiple > 0"
        case let .unknownFont(f): return "font family \(f) matches no installed font"
        }
    }
}

/// Measures text in two steps, so the expensive part happens once per text:
/// `prepare` segments, shapes and measures; `layout` breaks lines for a width.
///
/// Contract for every implementation:
/// - lines break between words; inside a word only when the word alone is wider than the line;
/// - hard newlines (`\n`, `\r\n`, U+2028) always break; an empty text has no lines and zero size;
/// - `maxLines` (> 0) cuts the text after that many lines with a tail ellipsis (`isTruncated`);
/// - the result never has a negative size and does not depend on the output scale or format;
/// - a width that is not finite and > 0 is refused with `TextError.invalidWidth`.
///
///     let engine = PangoTextEngine()
///     let prepared = try engine.prepare("Here's a little bubble", style: TextStyle(size: 16))
///     let layout = try engine.layout(prepared, maxWidth: 220, maxLines: nil)
public protocol TextEngine: AnyObject {
    /// Segments, shapes and measures `text` in `style` once, for any number of layouts.
    func prepare(_ text: String, style: TextStyle) throws(TextError) -> PreparedText
    /// `text` with styled ranges: bold, italic and monospace runs are set in those faces of
    /// `style` (`TextStyle.face`), so lines break where they will be drawn. The default ignores
    /// the faces (an engine whose every face has the same advances, such as a monospace one).
    func prepare(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText
    /// Breaks `prepared` into lines no wider than `maxWidth` points, at most `maxLines` (nil: no
    /// limit) with a tail ellipsis on the last.
    func layout(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextLayout
    /// `layout(prepared, maxWidth:, maxLines:).summary`, without making the lines when the
    /// engine can (a re-layout that needs only heights).
    func summary(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextSummary
}

/// The fast paths of the toolkit's own engines (`FastTextEngine`, `MonospaceTextEngine` and the
/// `CachingTextEngine` that wraps them): what a layout of a million messages asks of an engine
/// besides `TextEngine`. Package-only: some of it hands storage over as raw memory. An engine
/// without it is laid out through `TextEngine` alone (nothing kept between layouts, one thread).
///
/// None of these has a default: a wrapper that forgot to forward one would silently lose its
/// engine's fast path.
package protocol FastPathTextEngine: TextEngine {
    /// Advance (points) of UTF-8 bytes `range` of `prepared`'s text set on one line, trailing
    /// whitespace excluded, when the engine can tell it from what it prepared; nil: measure the
    /// substring instead.
    func advance(of range: Range<Int>, in prepared: PreparedText) -> Double?
    /// True when the prepared texts this engine makes are small enough to keep one for every
    /// message of a long conversation (a `ConversationLayout` then keeps them for re-layouts);
    /// false: layouts keep none and prepare again.
    var preparedTextsAreCompact: Bool { get }
    /// `summary` (no line limit) of the text whose `PreparedText.storage` this engine made,
    /// from the storage alone; nil when the engine needs the whole `PreparedText`.
    /// An engine that answers it must allow calls from several threads at once (a scrolling
    /// re-layout makes them).
    func summary(ofStorage storage: AnyObject, maxWidth: Double) throws(TextError) -> TextSummary?
    /// A hint: the prepared storage at `storage` (an object this engine made) will be
    /// summarised soon, so its memory may be requested now (or nothing, for an engine whose
    /// storage is not read that way).
    func prefetch(storage: UnsafeRawPointer)
    /// Appends to `words` what `summary(ofPacked:maxWidth:)` needs of the text whose
    /// `PreparedText.storage` this engine made — its breaks and their advances, not its text —
    /// and returns true; false (nothing appended) when the engine keeps no such form for it.
    /// A compact scrolling layout keeps these instead of the prepared texts.
    func packBreaks(ofStorage storage: AnyObject, into words: inout [UInt32]) -> Bool
    /// `summary(ofStorage:maxWidth:)` (no line limit) from `packBreaks`' words alone; nil when
    /// they do not tell (a word wider than `maxWidth` is broken by its text). Callable from
    /// several threads at once.
    func summary(ofPacked words: UnsafeBufferPointer<UInt32>, maxWidth: Double) throws(TextError) -> TextSummary?
    /// True when `prepare` (and every other call) may be made from several threads at once and
    /// does run in parallel, not one call at a time behind a lock: a long first layout then
    /// prepares its texts on the other cores too (`ConversationLayouter`). False: one thread
    /// prepares.
    var preparesConcurrently: Bool { get }
    /// `prepare(_:style:spans:)` of a text prepared once: not looked up in, nor kept by, what
    /// the engine keeps of the texts it prepared.
    func prepareOnce(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText
}

extension TextEngine {
    public func prepare(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText {
        let plain = try prepare(text, style: style)
        return spans.isEmpty ? plain : PreparedText(text: text, style: style, spans: spans, storage: plain.storage)
    }

    public func summary(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextSummary {
        try layout(prepared, maxWidth: maxWidth, maxLines: maxLines).summary
    }
}
