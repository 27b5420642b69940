/// Wraps any `TextEngine` with a bounded cache of finished layouts, keyed by text, style,
/// width and line limit. Chats repeat themselves ("ok", "haha", "👍"), and a re-layout at a
/// width seen before costs a dictionary look-up. `prepare` is lazy: the wrapped engine only
/// prepares a text when a layout misses the cache.
///
/// The cache holds at most `capacity` layouts in two generations: when the young one fills,
/// the old one is dropped and the young one becomes old (an approximate LRU with O(1) work).
/// One instance is meant for one thread at a time, like the engines it wraps.
public final class CachingTextEngine: FastPathTextEngine {
    /// The engine that measures what is not in the cache.
    public let base: any TextEngine
    /// `base`'s fast paths, when it has them.
    private let fast: (any FastPathTextEngine)?
    /// The most texts kept.
    public let capacity: Int
    /// How many layouts came from the cache.
    public private(set) var hits = 0
    /// How many layouts `base` had to make.
    public private(set) var misses = 0

    struct Key: Hashable {
        var text: String
        var style: TextStyle
        var spans: [TextSpan]
        var width: Double
        var maxLines: Int
    }
    private var young: [Key: TextLayout] = [:]
    private var old: [Key: TextLayout] = [:]

    final class Lazy {
        let text: String
        let style: TextStyle
        let spans: [TextSpan]
        var prepared: PreparedText?
        init(text: String, style: TextStyle, spans: [TextSpan]) { self.text = text; self.style = style; self.spans = spans }
    }

    /// A cache of up to `capacity` texts in front of `base`.
    public init(_ base: any TextEngine, capacity: Int = 65_536) {
        self.base = base
        self.fast = base as? any FastPathTextEngine
        self.capacity = max(2, capacity)
    }

    public func prepare(_ text: String, style: TextStyle) throws(TextError) -> PreparedText {
        try prepare(text, style: style, spans: [])
    }

    public func prepare(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText {
        guard style.size.isFinite, style.size > 0 else { throw .invalidFontSize(style.size) }
        guard style.lineHeight.isFinite, style.lineHeight > 0 else { throw .invalidLineHeight(style.lineHeight) }
        return PreparedText(text: text, style: style, spans: spans, storage: Lazy(text: text, style: style, spans: spans))
    }

    public func layout(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextLayout {
        guard maxWidth.isFinite, maxWidth > 0 else { throw .invalidWidth(maxWidth) }
        let key = Key(text: prepared.text, style: prepared.style, spans: prepared.spans, width: maxWidth, maxLines: maxLines ?? 0)
        if let hit = young[key] { hits += 1; return hit }
        if let hit = old[key] {
            hits += 1
            store(key, hit)
            return hit
        }
        misses += 1
        let result = try base.layout(try inner(prepared), maxWidth: maxWidth, maxLines: maxLines)
        store(key, result)
        return result
    }

    /// The wrapped engine's text as it prepared it (prepared now when it has not been).
    private func inner(_ prepared: PreparedText) throws(TextError) -> PreparedText {
        if let lazy = prepared.storage as? Lazy {
            if let p = lazy.prepared { return p }
            let p = try base.prepare(lazy.text, style: lazy.style, spans: lazy.spans)
            lazy.prepared = p
            return p
        }
        return try base.prepare(prepared.text, style: prepared.style, spans: prepared.spans)
    }

    /// The wrapped engine's advance (its fast path: an HTML bubble's shrink-wrap).
    package func advance(of range: Range<Int>, in prepared: PreparedText) -> Double? {
        guard let fast, let p = try? inner(prepared) else { return nil }
        return fast.advance(of: range, in: p)
    }

    /// The wrapped engine's answer: a `Lazy` holds the text and, once laid out, what the
    /// wrapped engine prepared.
    package var preparedTextsAreCompact: Bool { fast?.preparedTextsAreCompact ?? false }

    /// From the wrapped engine's storage, when the text has been prepared; nil before (preparing
    /// it here would change the cache from several threads, which this engine does not allow).
    package func summary(ofStorage storage: AnyObject, maxWidth: Double) throws(TextError) -> TextSummary? {
        guard let fast, let p = (storage as? Lazy)?.prepared?.storage else { return nil }
        return try fast.summary(ofStorage: p, maxWidth: maxWidth)
    }

    /// Passed on for a text the wrapped engine has prepared.
    package func prefetch(storage: UnsafeRawPointer) {
        let lazy = Unmanaged<AnyObject>.fromOpaque(storage).takeUnretainedValue() as? Lazy
        guard let fast, let p = lazy?.prepared?.storage else { return }
        fast.prefetch(storage: UnsafeRawPointer(Unmanaged.passUnretained(p).toOpaque()))
    }

    /// The wrapped engine's, for a text it has prepared.
    package func packBreaks(ofStorage storage: AnyObject, into words: inout [UInt32]) -> Bool {
        guard let fast, let p = (storage as? Lazy)?.prepared?.storage else { return false }
        return fast.packBreaks(ofStorage: p, into: &words)
    }

    package func summary(ofPacked words: UnsafeBufferPointer<UInt32>, maxWidth: Double) throws(TextError) -> TextSummary? {
        try fast?.summary(ofPacked: words, maxWidth: maxWidth)
    }

    /// One thread at a time (the cache is not locked).
    package var preparesConcurrently: Bool { false }

    package func prepareOnce(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText {
        try prepare(text, style: style, spans: spans)
    }

    /// Number of layouts held.
    public var count: Int { young.count + old.count }

    private func store(_ key: Key, _ layout: TextLayout) {
        if young.count >= capacity / 2 {
            old = young
            young = [:]
            young.reserveCapacity(capacity / 2)
        }
        young[key] = layout
    }
}
