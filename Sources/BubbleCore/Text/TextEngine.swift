/// Font weight on the CSS/OpenType scale (400 regular, 700 bold).
public struct FontWeight: Hashable, Sendable, Comparable {
    public var value: Int
    public init(_ value: Int) { self.value = value }
    public static let regular = FontWeight(400)
    public static let medium = FontWeight(500)
    public static let semibold = FontWeight(600)
    public static let bold = FontWeight(700)
    public static func < (a: FontWeight, b: FontWeight) -> Bool { a.value < b.value }
}

/// How text is set: what a theme says about one kind of label. Sizes in points.
public struct TextStyle: Hashable, Sendable {
    /// A fontconfig family name or alias ("BubbleKit Sans" is the project's pinned default).
    public var family: String
    public var size: Double
    public var weight: FontWeight
    /// Line height as a multiple of the font's natural line height (1 = the font's own).
    public var lineHeight: Double
    /// BCP 47 language, which steers font fallback (Japanese vs Chinese glyph shapes); nil = none.
    public var language: String?
    /// The italic (or oblique) face of the family.
    public var italic = false

    public init(family: String = "BubbleKit Sans", size: Double, weight: FontWeight = .regular,
                lineHeight: Double = 1, language: String? = nil, italic: Bool = false) {
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
    public var range: Range<Int>
    /// Advance width of the line's ink-bearing content (trailing spaces excluded).
    public var width: Double
    /// Top of the line box.
    public var top: Double
    public var height: Double
    /// Baseline, from the top of the text box.
    public var baseline: Double
    /// True when the paragraph this line belongs to runs right to left.
    public var isRightToLeft: Bool

    public init(range: Range<Int>, width: Double, top: Double, height: Double, baseline: Double, isRightToLeft: Bool = false) {
        self.range = range; self.width = width; self.top = top; self.height = height
        self.baseline = baseline; self.isRightToLeft = isRightToLeft
    }
}

/// A text laid out in a width: its lines and overall size (points).
public struct TextLayout: Hashable, Sendable {
    public var lines: [TextLine]
    /// Width of the widest line.
    public var width: Double
    public var height: Double
    /// True when `maxLines` cut the text and the last line ends in an ellipsis.
    public var isTruncated: Bool

    public init(lines: [TextLine], width: Double, height: Double, isTruncated: Bool = false) {
        self.lines = lines; self.width = width; self.height = height; self.isTruncated = isTruncated
    }
    public var lineCount: Int { lines.count }
    public static let empty = TextLayout(lines: [], width: 0, height: 0)

    /// What a height needs of these lines (`TextEngine.summary`).
    public var summary: TextSummary {
        TextSummary(lineCount: lines.count, width: width, height: height, lastLineWidth: lines.last?.width ?? 0,
                    lastLineTop: lines.last?.top ?? 0, lastLineHeight: lines.last?.height ?? 0,
                    lastLineIsRightToLeft: lines.last?.isRightToLeft ?? false, isTruncated: isTruncated)
    }
}

/// A text's layout without its lines: their count and size, and the last line's width and
/// direction (whether a time fits after it). Equal to `TextLayout.summary` of the same layout.
public struct TextSummary: Hashable, Sendable {
    public var lineCount: Int
    public var width: Double
    public var height: Double
    public var lastLineWidth: Double
    public var lastLineTop: Double
    public var lastLineHeight: Double
    public var lastLineIsRightToLeft: Bool
    public var isTruncated: Bool

    public init(lineCount: Int, width: Double, height: Double, lastLineWidth: Double, lastLineTop: Double,
                lastLineHeight: Double, lastLineIsRightToLeft: Bool, isTruncated: Bool = false) {
        self.lineCount = lineCount; self.width = width; self.height = height
        self.lastLineWidth = lastLineWidth; self.lastLineTop = lastLineTop; self.lastLineHeight = lastLineHeight
        self.lastLineIsRightToLeft = lastLineIsRightToLeft; self.isTruncated = isTruncated
    }
}

/// Text measured once and laid out at any width. What an engine keeps inside is its own
/// business (`storage`); callers only hand the value back to the engine that made it.
public struct PreparedText: @unchecked Sendable {
    public let text: String
    public let style: TextStyle
    /// Styled ranges of `text` (UTF-8 bytes): the faces they set are measured, the rest drawn.
    public let spans: [TextSpan]
    /// Engine-private state (shaped runs, a cached layout object…). Immutable once made.
    public let storage: AnyObject?
    public init(text: String, style: TextStyle, spans: [TextSpan] = [], storage: AnyObject?) {
        self.text = text; self.style = style; self.spans = spans; self.storage = storage
    }
}

/// Why a text or a width was refused.
public enum TextError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidWidth(Double)
    case invalidFontSize(Double)
    case invalidLineHeight(Double)
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
    func prepare(_ text: String, style: TextStyle) throws(TextError) -> PreparedText
    /// `text` with styled ranges: bold, italic and monospace runs are set in those faces of
    /// `style` (`TextStyle.face`), so lines break where they will be drawn. The default ignores
    /// the faces (an engine whose every face has the same advances, such as a monospace one).
    func prepare(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText
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
