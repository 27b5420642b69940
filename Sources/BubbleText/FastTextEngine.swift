import BubbleCore
import CPango
import CLineBreak
import Foundation

/// A `TextEngine` that shapes each distinct line-break segment once and lays out by arithmetic
/// (the approach of pretext in browsers), measuring like `PangoTextEngine`:
///
/// - `prepare` sanitises the text as Pango gets it (`PangoTextEngine.pangoText`), splits it into
///   UAX #14 segments with ICU's line breaker (a word plus the spaces after it; hard breaks after
///   `\n`, U+2028, U+2029), takes each paragraph's direction from its first strong character
///   (ICU bidi classes), and looks every segment up in a shared cache keyed by (style, paragraph
///   direction, text). A miss itemizes the segment with Pango (bidi levels, script, fontconfig
///   fallback with the pinned fonts: emoji and CJK go to the fonts that have them) and shapes each
///   item with HarfBuzz (`pango_shape_with_flags`). What a prepared text keeps is 4 bytes per
///   segment (12 for the few whose numbers do not fit): its end, its advance without trailing
///   spaces, the spaces' advance, flags, and the line-metrics class of its fonts. Prepared texts are themselves cached by (text, style), so a
///   re-layout at a new width costs a look-up and arithmetic.
/// - `layout` fills lines greedily over those integers (Pango units, 1/1024 pt, as Pango adds
///   them): trailing spaces hang, hard breaks always break, a segment wider than the whole line is
///   broken between grapheme clusters, `maxLines` cuts with a tail "…". Line heights follow
///   Pango's line-spacing rule (baselines `lineHeight` × the tallest font's height apart).
/// - `draw` shows the cached glyph runs with `cairo_show_glyphs`, bidi runs reordered per line.
///
/// Texts with a tab are handed to the reference `PangoTextEngine` whole (tab stops are not
/// modelled), as are texts over 16 MB.
///
/// Threading: `lock` (the reference engine's) guards Pango, `FastShaper.tableLock` the shared
/// segment cache, a lock per shard the prepared texts. `prepare` sanitises, hashes, segments
/// (ICU, one iterator per thread) and packs outside all of them, with its thread's own buffers,
/// style contexts and segment memo (`PrepareThreadState`), and takes `tableLock` only for the
/// segments its memo lacks, `lock` only to shape new ones; `layout`, `summary` and `advance`
/// take no lock but to shape grapheme clusters. So several threads prepare and lay out at once
/// (`preparesConcurrently`); drawing is serialised. The segment cache is bounded by `cacheBytes`
/// (two generations, approximately LRU); the prepared-text cache by `preparedCapacity` texts.
public final class FastTextEngine: FastPathTextEngine, @unchecked Sendable {
    /// The reference engine: its Pango context and font map (same font options, 72 dpi, no
    /// hinting), its family check, and the texts this engine does not model.
    public let reference: PangoTextEngine
    let shaper: FastShaper
    var lock: NSRecursiveLock { reference.lock }
    /// How many prepared texts the engine keeps, looked up by style and text.
    public let preparedCapacity: Int
    /// Prepared texts by a hash of (style, text), checked against the storage's own text, in
    /// shards with a lock each (threads preparing at once seldom meet on one).
    private let shards: [PreparedShard]
    /// Tells this engine's per-thread state (`PrepareThreadState`) from other engines'.
    private let engineID = FastTextEngine.nextEngineID()
    /// Marks the prepared texts this engine makes (`FastStorage.engine`).
    private var engineTag: UInt32 { UInt32(truncatingIfNeeded: engineID) }
    /// What a painter keeps with this engine (BubbleRender: copies of Cairo's scaled fonts for
    /// drawing on several threads); used under the lock, released with the engine.
    @exclusivity(unchecked) package var painterState: AnyObject?

    static let metricClassLimit = 255

    /// An engine measuring as `reference` does.
    ///
    /// - Parameters:
    ///   - reference: the Pango engine whose fonts and context it shares (and which measures the
    ///     texts this engine does not model).
    ///   - cacheBytes: budget of the shaped-segment cache.
    ///   - preparedCapacity: prepared texts kept for re-layout (0: none).
    public init(reference: PangoTextEngine = PangoTextEngine(), cacheBytes: Int = 64 << 20, preparedCapacity: Int = 262_144) {
        self.reference = reference
        self.shaper = FastShaper(context: reference.context, fontMap: reference.fontMap, budget: cacheBytes)
        self.preparedCapacity = max(0, preparedCapacity)
        let perShard = (self.preparedCapacity + PreparedShard.count - 1) / PreparedShard.count
        shards = (0..<PreparedShard.count).map { _ in PreparedShard(capacity: perShard) }
    }

    private static let idLock = NSLock()
    nonisolated(unsafe) private static var lastID: UInt64 = 0
    private static func nextEngineID() -> UInt64 {
        idLock.lock(); defer { idLock.unlock() }
        lastID += 1
        return lastID
    }

    // MARK: TextEngine

    public func prepare(_ text: String, style: TextStyle) throws(TextError) -> PreparedText {
        try prepare(text, style: style, keep: true)
    }

    public func prepare(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText {
        try prepare(text, style: style, spans: spans, keep: true)
    }

    /// `prepare` without looking the text up in the prepared texts nor keeping it there: a text
    /// prepared once (a compact first layout measures each message once and keeps its packed
    /// breaks, not the prepared text).
    package func prepareOnce(_ text: String, style: TextStyle, spans: [TextSpan]) throws(TextError) -> PreparedText {
        try prepare(text, style: style, spans: spans, keep: false)
    }

    /// `prepare`; `keep`: through the prepared texts (looked up, kept when made).
    private func prepare(_ text: String, style: TextStyle, keep: Bool) throws(TextError) -> PreparedText {
        try PangoTextEngine.validate(style)
        // Cached by the sanitised text (what the ranges count): the same for "a\r\nb" and "a\nb".
        // Sanitising, hashing, segmenting and packing need no lock; the thread's own state (its
        // recent styles, scratch buffers and segment memo) none either. The prepared texts need
        // one shard's lock for the look-up and for the insertion; the shared segment cache and
        // Pango theirs only for the segments the thread's memo does not know.
        var sanitized = Self.isClean(text, style: style) ? text : PangoTextEngine.pangoText(text, style: style)
        let textHash = sanitized.withUTF8 { fastHash(UnsafeRawBufferPointer($0)) }
        let mine = PrepareThreadState.current.entry(for: engineID)
        var known: Unmanaged<FastStyleContext>?
        for recent in mine.contexts where recent.style == style { known = recent.context; break }
        if known == nil {
            let made = try styleContext(style)
            if mine.contexts.count == 8 { mine.contexts.removeFirst() }
            known = Unmanaged.passUnretained(made)
            mine.contexts.append((style, known!))
        }
        // Borrowed, not retained: every thread uses the same context objects, and a reference
        // count they all change moves its cache line between the cores at every prepare. The
        // shaper keeps the context as long as this engine lives.
        let result = known!._withUnsafeGuaranteedRef { context in
            Result { () throws(TextError) in
                try prepare(
                    text, sanitized: sanitized, textHash: textHash, style: style,
                    context: context, scratch: mine.scratch, keep: keep)
            }
        }
        return try result.get()
    }

    /// `prepare` with styled ranges. The faces they set (bold, italic, monospace: `TextStyle.face`)
    /// are shaped in their own style contexts, cached like every segment: a line-break segment
    /// inside one face is looked up as usual in that face's context, one that a face edge cuts is
    /// shaped piece by piece (as Pango itemizes at the edge) and its advances added. Lines are
    /// filled by the same arithmetic; drawing such a text goes through the reference engine with
    /// the same attributes (`draw`). Styled texts are kept in the prepared-text cache too, under a
    /// key that holds their face runs.
    private func prepare(_ text: String, style: TextStyle, spans: [TextSpan], keep: Bool) throws(TextError) -> PreparedText {
        // Spans that set no face (strike, spoilers, links…) measure as plain text.
        func plain() throws(TextError) -> PreparedText {
            PreparedText(text: text, style: style, spans: spans, storage: try prepare(text, style: style, keep: keep).storage)
        }
        guard spans.contains(where: { $0.style.changesFace }) else { return try plain() }
        var sanitized = Self.isClean(text, style: style) ? text : PangoTextEngine.pangoText(text, style: style)
        let runs = sanitized.utf8.count == text.utf8.count ? sanitized.withUTF8 { TextSpan.faceRuns(spans, in: $0) } : []
        guard !runs.isEmpty else { return try plain() }
        try PangoTextEngine.validate(style)
        let base = try threadContext(style)
        var faceRuns: [(range: Range<Int>, context: FastStyleContext)] = []
        faceRuns.reserveCapacity(runs.count)
        for run in runs { faceRuns.append((run.range, try faceContext(base, run.face))) }
        // The prepared-text cache, keyed by the text, the style and the face runs (checked on a hit).
        var key = sanitized.withUTF8 { fastHash(UnsafeRawBufferPointer($0)) } ^ UInt64(base.id)
        for run in faceRuns {
            key = (key ^ UInt64(run.range.lowerBound) << 20 ^ UInt64(run.range.upperBound) << 40 ^ UInt64(run.context.id)) &* 0xBF58_476D_1CE4_E5B9
        }
        key = (key | 1) &* 0x9E37_79B9_7F4A_7C15
        let shard = shard(key)
        if keep, preparedCapacity > 0, let hit = shard.find(key, context: base, text: sanitized), hit.faces?.same(faceRuns) == true {
            return PreparedText(text: text, style: style, spans: spans, storage: hit)
        }
        let faces = FastFaces(faceRuns)
        let mine = PrepareThreadState.current.entry(for: engineID)
        let scratch = mine.scratch.inUse ? PrepareScratch() : mine.scratch
        scratch.inUse = true
        defer { scratch.inUse = false }
        let plan = segment(sanitized, styleID: base.id, into: scratch)
        if plan == .segments {
            var bytesCopy = sanitized
            bytesCopy.withUTF8 { bytes in
                for k in scratch.segments.indices {
                    let s = scratch.segments[k]
                    let shaped = s.start..<(s.end - s.separator)
                    guard faces.touches(shaped) else { continue }
                    scratch.segments[k].known = styledSummary(bytes, s, faces: faces, plain: base, scratch: scratch)
                }
            }
        }
        let storage = try makeStorage(
            text, sanitized: sanitized, style: style, context: base, plan: plan, scratch: scratch,
            spans: spans, faces: faces)
        if keep, preparedCapacity > 0, storage.faces != nil { shard.insert(key, storage) }
        return PreparedText(text: text, style: style, spans: spans, storage: storage)
    }

    /// The context of `base`'s style in `face`: kept in the base context once made (a slot per
    /// face, written once under the lock; read without it).
    private func faceContext(_ base: FastStyleContext, _ face: TextFace) throws(TextError) -> FastStyleContext {
        let slot = Int(face.rawValue & 7)
        if let known = base.faces[slot] { return known.takeUnretainedValue() }
        let made = try styleContext(base.style.face(face))
        lock.lock(); defer { lock.unlock() }
        if base.faces[slot] == nil { base.faces[slot] = Unmanaged.passUnretained(made) }
        return made
    }

    /// The context of `style` through the thread's recent ones (`prepare`'s look-up).
    private func threadContext(_ style: TextStyle) throws(TextError) -> FastStyleContext {
        let mine = PrepareThreadState.current.entry(for: engineID)
        for recent in mine.contexts where recent.style == style { return recent.context.takeUnretainedValue() }
        let made = try styleContext(style)
        if mine.contexts.count == 8 { mine.contexts.removeFirst() }
        mine.contexts.append((style, Unmanaged.passUnretained(made)))
        return made
    }

    /// One segment cut by face edges: its pieces' advances added (each piece but the last with
    /// its trailing spaces), the last piece's spaces hanging, the union of their line metrics.
    private func styledSummary(
        _ bytes: UnsafeBufferPointer<UInt8>, _ s: PlannedSegment, faces: FastFaces,
        plain: FastStyleContext, scratch: PrepareScratch
    ) -> SegmentMemo.Value {
        var content: Int64 = 0, space: Int32 = 0, pendingSpace: Int32 = 0
        var metric: FastLineMetrics?
        var firstMetric: UInt8?, sameMetric = true
        var unmodelled = false
        let shaped = s.start..<(s.end - s.separator)
        faces.forEachPiece(of: shaped, plain: plain) { piece, face in
            let (prefix, context, joined) = Self.pieceSurroundings(bytes, piece, of: shaped, prefix: s.prefix, context: s.context)
            let length = FastShaper.keyLength(segment: piece, prefix: prefix, context: context)
            if scratch.key.count < length { scratch.key = [UInt8](repeating: 0, count: max(length, 2 * scratch.key.count)) }
            let shape = scratch.key.withUnsafeMutableBufferPointer { buffer in
                FastShaper.writeKey(
                    buffer.baseAddress!, bytes, segment: piece, prefix: prefix, context: context,
                    rtl: s.rightToLeft, styleID: face.id, joined: joined)
                let key = UnsafeRawBufferPointer(start: buffer.baseAddress!, count: length)
                // The thread's memo first (no lock), as for plain segments; then the shared cache.
                let memoable = length <= SegmentMemo.keyBytes
                let memoHash = memoable ? SegmentMemo.hash(buffer.baseAddress!, length: length, seed: SegmentMemo.wholeKey) : 0
                if memoable, let known = scratch.memo.find(memoHash, seed: SegmentMemo.wholeKey, buffer.baseAddress!, length: length) {
                    return known.summary
                }
                let found: FastSegmentSummary
                if let known = shaper.cachedSummary(key, hash: fastHash(key)) {
                    found = known
                } else {
                    lock.lockSpinning(); defer { lock.unlock() }
                    found = shaper.summary(
                        bytes, segment: piece, prefix: prefix, context: context, rtl: s.rightToLeft,
                        style: face, joined: joined)
                }
                if memoable {
                    // (The shaper writes its own keys in a buffer of its own: this one is intact.)
                    scratch.memo.insert(
                        memoHash, seed: SegmentMemo.wholeKey, buffer.baseAddress!, length: length,
                        SegmentMemo.Value(summary: found, spaceIndex: -1))
                }
                return found
            }
            unmodelled = unmodelled || shape.unmodelled
            // Each piece's trailing spaces count once a piece follows; the last one's hang.
            content += Int64(pendingSpace) + Int64(shape.content)
            pendingSpace = shape.space
            space = shape.space
            if let f = firstMetric { sameMetric = sameMetric && f == shape.metric } else { firstMetric = shape.metric }
            let m = shaper.metricTable[Int(shape.metric)]
            metric = metric.map { $0.union(m) } ?? m
        }
        // Pieces in fonts of the same line metrics (most): that class; else the union's, made
        // under the lock.
        let id: UInt8
        if sameMetric, let f = firstMetric {
            id = f
        } else {
            lock.lockSpinning()
            id = shaper.metricID(metric!)
            lock.unlock()
        }
        let summary = FastSegmentSummary(
            content: Int32(clamping: content), space: space, metric: id,
            unmodelled: unmodelled || Int(id) >= Self.metricClassLimit)
        return SegmentMemo.Value(summary: summary, spaceIndex: -1)
    }

    /// What a piece of a segment is shaped with around it: the segment's bytes before it (the
    /// first piece: the segment's script prefix) and after it (the last piece: the segment's
    /// space context), so joining and itemization see the whole word.
    /// A cut next to a space needs no context on that side (nothing joins across a space): the
    /// piece is then looked up as a word of its own (`joined` false), which most cuts are —
    /// `**word** next`: "word" in bold, its trailing space in the regular face.
    static func pieceSurroundings(
        _ bytes: UnsafeBufferPointer<UInt8>, _ piece: Range<Int>, of segment: Range<Int>,
        prefix: Range<Int>?, context: Range<Int>?
    ) -> (before: Range<Int>?, after: Range<Int>?, joined: Bool) {
        func space(_ i: Int) -> Bool { bytes[i] == 0x20 || bytes[i] == 0x09 }
        var joined = false
        var before = prefix, after = context
        if piece.lowerBound > segment.lowerBound {
            if space(piece.lowerBound - 1) || space(piece.lowerBound) {
                before = nil
            } else {
                before = segment.lowerBound..<piece.lowerBound; joined = true
            }
        }
        if piece.upperBound < segment.upperBound {
            if space(piece.upperBound - 1) || space(piece.upperBound) {
                after = nil
            } else {
                after = piece.upperBound..<segment.upperBound; joined = true
            }
        }
        return (before, after, joined)
    }

    /// `prepare` once the text is sanitised and hashed and its style's context found.
    private func prepare(
        _ text: String, sanitized: String, textHash: UInt64, style: TextStyle,
        context: FastStyleContext, scratch mine: PrepareScratch, keep: Bool
    ) throws(TextError) -> PreparedText {
        let key = (textHash ^ UInt64(context.id)) &* 0x9E37_79B9_7F4A_7C15
        // The shard only when the text is kept (a `prepareOnce` takes no reference to it).
        let cached = keep && preparedCapacity > 0
        if cached, let hit = shard(key).find(key, context: context, text: sanitized) {
            return PreparedText(text: text, style: style, storage: hit)
        }
        // A prepare inside a prepare on this thread (none today) would get buffers of its own.
        let scratch = mine.inUse ? PrepareScratch() : mine
        scratch.inUse = true
        defer { scratch.inUse = false }
        let storage = try makeStorage(
            text, sanitized: sanitized, style: style, context: context,
            plan: segment(sanitized, styleID: context.id, into: scratch), scratch: scratch)
        if cached { shard(key).insert(key, storage) }
        return PreparedText(text: text, style: style, storage: storage)
    }

    /// The prepared-text shard that holds texts of cache key `key` (by its top bits).
    private func shard(_ key: UInt64) -> PreparedShard { shards[Int(truncatingIfNeeded: key >> 60) & (PreparedShard.count - 1)] }

    /// The context of `style` (its family checked first).
    private func styleContext(_ style: TextStyle) throws(TextError) -> FastStyleContext {
        lock.lock(); defer { lock.unlock() }
        if let known = shaper.knownStyleContext(style) {
            // A style with a context has had its family checked (contexts are made after it).
            return known
        }
        try reference.checkFamily(style.family)
        return shaper.styleContext(style)
    }

    public func layout(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextLayout {
        let width = try PangoTextEngine.pangoWidth(maxWidth)
        let storage = try storage(for: prepared)
        if let delegated = storage.delegated {
            return try reference.layout(delegated, maxWidth: maxWidth, maxLines: maxLines)
        }
        // No lock: the storage is immutable and the line metrics never move (`fill`). The
        // lines are made in the thread's own buffer (no allocation but the layout's).
        let mine = PrepareThreadState.current.entry(for: engineID)
        return arrange(
            storage, width: width == -1 ? Int32.max : width, maxLines: PangoTextEngine.lineLimit(maxLines),
            into: &mine.lines)
    }

    /// The layout's summary from the same line filling, without making its lines.
    public func summary(_ prepared: PreparedText, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextSummary {
        try summary(try storage(for: prepared), maxWidth: maxWidth, maxLines: maxLines)
    }

    package func summary(ofStorage storage: AnyObject, maxWidth: Double) throws(TextError) -> TextSummary? {
        guard type(of: storage) == FastStorage.self else { return nil }
        let storage = unsafeDowncast(storage, to: FastStorage.self)
        guard storage.engine == engineTag else { return nil }  // another engine's
        return try summary(storage, maxWidth: maxWidth, maxLines: nil)
    }

    package func prefetch(storage: UnsafeRawPointer) { clb_prefetch(storage) }

    /// A storage's segments without its text: a header of three words (segment count, the
    /// primary line-metrics class, the style's line height as a Float) and the segments' own
    /// words. Not for a text handed to Pango.
    package func packBreaks(ofStorage storage: AnyObject, into words: inout [UInt32]) -> Bool {
        guard type(of: storage) == FastStorage.self else { return false }
        let storage = unsafeDowncast(storage, to: FastStorage.self)
        guard storage.engine == engineTag, storage.delegated == nil else { return false }
        let n = storage.wordCount
        words.append(UInt32(storage.count))
        words.append(UInt32(storage.context.primaryMetric))
        words.append(Float(storage.context.style.lineHeight).bitPattern)
        storage.withUnsafeMutablePointerToElements { words.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
        return true
    }

    /// The summary of `packBreaks`' words, nil when a segment is wider than `maxWidth` (its
    /// text would be broken between grapheme clusters, and the words do not hold the text).
    package func summary(ofPacked words: UnsafeBufferPointer<UInt32>, maxWidth: Double) throws(TextError) -> TextSummary? {
        guard words.count >= 3, let base = words.baseAddress else { return nil }
        // Words that do not hold their segments (not `packBreaks`' own) tell nothing.
        var w = 3
        for _ in 0..<Int(words[0]) {
            guard w < words.count else { return nil }
            w += words[w] & FastSegment.longMarker == 0 ? 1 : 3
        }
        guard w <= words.count else { return nil }
        let units = try PangoTextEngine.pangoWidth(maxWidth)
        let width = units == -1 ? Int32.max : units
        var sink = FastSummarySink(lineHeight: Float(bitPattern: words[2]))
        let filled = FastStorage.withSegments(base + 3, count: Int(words[0])) { segs in
            fill(segs, primary: UInt8(truncatingIfNeeded: words[1]), text: nil, width: width, maxLines: nil, sink: &sink)
        }
        return filled ? sink.summary(truncated: false) : nil
    }

    private func summary(_ storage: FastStorage, maxWidth: Double, maxLines: Int?) throws(TextError) -> TextSummary {
        let units = try PangoTextEngine.pangoWidth(maxWidth)
        let width = units == -1 ? Int32.max : units
        if let delegated = storage.delegated {
            return try reference.layout(delegated, maxWidth: maxWidth, maxLines: maxLines).summary
        }
        var sink = FastSummarySink(style: storage.context.style)
        guard let maxLines = PangoTextEngine.lineLimit(maxLines) else {
            // No line limit: no lines kept.
            fill(storage, width: width, maxLines: nil, sink: &sink)
            return sink.summary(truncated: false)
        }
        // A line limit needs the lines (the last one shown is cut): the thread's own buffer, as
        // `layout` uses.
        let mine = PrepareThreadState.current.entry(for: engineID)
        let truncated = fill(storage, width: width, maxLines: maxLines, into: &mine.lines)
        for line in mine.lines { sink.append(line) }
        return sink.summary(truncated: truncated)
    }

    /// A prepared text is a few bytes a segment (`indexBytes`): layouts may keep them.
    package var preparedTextsAreCompact: Bool { true }

    /// `prepare` holds its locks only for cache look-ups (see Threading above).
    package var preparesConcurrently: Bool { true }

    /// Advance of bytes `range` of a prepared text on one line, trailing whitespace excluded: the
    /// sum of its segments' cached advances, grapheme clusters' advances for a segment cut by the
    /// range. Nil (measure the substring) for a text handed to Pango, a range across a hard break
    /// or outside the text.
    package func advance(of range: Range<Int>, in prepared: PreparedText) -> Double? {
        // Another engine's prepared text is prepared again here (`storage(for:)`).
        guard prepared.storage is FastStorage, let storage = try? self.storage(for: prepared), storage.delegated == nil,
            storage.hasText(prepared.text)
        else { return nil }
        // No lock: the storage is immutable; `graphemeWidths` takes it for the shape cache.
        let count = storage.withText { $0.count }
        guard range.lowerBound >= 0, range.upperBound <= count else { return nil }
        let lo = range.lowerBound
        let hi = storage.contentEnd(lo, range.upperBound)
        guard hi > lo else { return 0 }
        var total: Int64 = 0
        var ok = true
        var start = 0
        storage.forEachSegment { s in
            defer { start = s.end }
            let shapedEnd = s.end - s.separatorLength
            if shapedEnd <= lo { return true }
            if start >= hi { return false }
            if s.separatorLength > 0 && shapedEnd < hi { ok = false; return false }  // across a hard break
            if start >= lo && shapedEnd <= hi {
                total += Int64(s.content) + Int64(s.space)
            } else if start >= lo && storage.contentEnd(start, shapedEnd) == hi {
                total += Int64(s.content)  // the range ends where the segment's spaces begin
            } else {
                var gStart = start
                for g in graphemeWidths(storage, segmentStart: start, segmentEnd: shapedEnd, rtl: s.rightToLeft) {
                    let gEnd = start + Int(g.end)
                    if gStart >= lo && gEnd <= hi { total += Int64(g.width) }
                    gStart = gEnd
                }
            }
            return true
        }
        return ok ? PangoTextEngine.points(Int32(clamping: total)) : nil
    }

    // MARK: Introspection (tests, bench)

    /// Shaped segments held, their estimated bytes, hits and misses of the segment cache.
    package var segmentCacheStatistics: (segments: Int, bytes: Int, hits: Int, misses: Int) { shaper.statistics }

    /// Bytes the prepared (layout-index) form of `prepared` occupies: the storage object with its
    /// segments inline, not counting the text.
    package func indexBytes(_ prepared: PreparedText) -> Int {
        guard let storage = prepared.storage as? FastStorage else { return 0 }
        return storage.byteCost
    }

    /// The layout index this engine keeps for re-layout: prepared texts held (their segments
    /// inline in their storage objects, as allocated) plus the hash table that finds them, in
    /// bytes; the texts themselves (shared with the caller's strings) are not counted.
    package var preparedIndexStatistics: (texts: Int, bytes: Int) {
        shards.reduce((0, 0)) { total, shard in
            let (texts, bytes) = shard.statistics
            return (total.0 + texts, total.1 + bytes)
        }
    }

    /// True when `prepared` was handed to the reference Pango engine (tabs).
    package func isDelegated(_ prepared: PreparedText) -> Bool {
        (prepared.storage as? FastStorage)?.delegated != nil
    }

    /// Drops every cached prepared text (the segment cache stays).
    package func forgetPreparedTexts() {
        for shard in shards { shard.forget() }
    }

    // MARK: Preparing

    /// The storage of `prepared`: its own when this engine made it, else the text prepared again
    /// (a text another engine prepared, or one prepared by no engine).
    func storage(for prepared: PreparedText) throws(TextError) -> FastStorage {
        if let storage = prepared.storage as? FastStorage, storage.engine == engineTag { return storage }
        guard let made = try prepare(prepared.text, style: prepared.style, spans: prepared.spans).storage as? FastStorage else {
            preconditionFailure("FastTextEngine.prepare makes FastStorage")
        }
        return made
    }

    /// What `segment` found: `.segments` planned in the scratch, an empty text, or a text handed
    /// to the reference engine (a tab, or too long).
    enum SegmentPlan { case segments, empty, delegate }

    /// Splits `sanitized` into line-break segments (ICU, per thread) with what each segment's
    /// shape depends on — its paragraph's direction, the script prefix and the character after
    /// its spaces — into `scratch.segments`, with the shape numbers the scratch's memo knows.
    /// Needs no lock: it reads only the text and the scratch.
    private func segment(_ sanitized: String, styleID: UInt32, into scratch: PrepareScratch) -> SegmentPlan {
        var sanitized = sanitized
        let count = sanitized.utf8.count
        if count == 0 { return .empty }
        if count >= 1 << 30 || sanitized.withUTF8({ memchr($0.baseAddress!, 0x09, $0.count) != nil }) { return .delegate }
        if scratch.breaks.count < count + 1 {
            scratch.breaks = [Int32](repeating: 0, count: count + 1)
            scratch.hardBreaks = [UInt8](repeating: 0, count: count + 1)
        }
        scratch.segments.removeAll(keepingCapacity: true)
        sanitized.withUTF8 { bytes in
            let raw = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            let n = scratch.breaks.withUnsafeMutableBufferPointer { b in
                scratch.hardBreaks.withUnsafeMutableBufferPointer { h in
                    clb_line_breaks(raw, Int32(count), b.baseAddress, h.baseAddress, Int32(b.count))
                }
            }
            let boundaries = n > 0 ? Int(n) : 0
            let breaks = scratch.breaks, hardBreaks = scratch.hardBreaks
            var start = 0
            var paragraphRTL = false
            var paragraphStart = true
            var paragraphBegin = 0
            var previousRTL = false
            var wholeKeys = 0  // bytes of whole memo keys written into the scratch
            for k in 0..<max(1, boundaries) {
                let end = boundaries == 0 ? count : Int(breaks[k])
                let hard = boundaries == 0 ? false : hardBreaks[k] != 0 && end <= count
                if paragraphStart {
                    paragraphBegin = start
                    // Direction of this paragraph: its first strong character, else the previous
                    // paragraph's (Pango's auto-dir).
                    var j = k
                    while j < boundaries, hardBreaks[j] == 0 { j += 1 }
                    let paragraphEnd = j < boundaries ? Int(breaks[j]) : count
                    let d = clb_first_strong_direction(raw + start, Int32(paragraphEnd - start))
                    paragraphRTL = d == 1 ? true : d == 0 ? false : previousRTL
                    previousRTL = paragraphRTL
                    paragraphStart = false
                }
                // A hard break's separator is not shaped: \n, or U+2028 / U+2029 (3 bytes).
                var separator = 0
                if hard {
                    if bytes[end - 1] == 0x0A {
                        separator = 1
                    } else if end >= 3, bytes[end - 3] == 0xE2, bytes[end - 2] == 0x80, bytes[end - 1] == 0xA8 || bytes[end - 1] == 0xA9 {
                        separator = 3
                    }
                }
                let shapedEnd = end - separator
                var planned = PlannedSegment(
                    start: start, end: end, separator: separator, rightToLeft: paragraphRTL,
                    prefix: Self.scriptPrefix(bytes, start, shapedEnd, paragraphStart: paragraphBegin),
                    context: separator > 0 ? nil : Self.spaceContext(bytes, start, end))
                // The thread's memo: a segment without neighbours that matter is looked up by its
                // own bytes in the text (nothing copied); another by its whole key, written into
                // the scratch. Only the set is asked for here; the look-ups follow this loop, so
                // that the cache misses of a text's segments overlap.
                if planned.memoInPlace {
                    if shapedEnd - start <= SegmentMemo.keyBytes {
                        planned.memoKeyLength = UInt8(shapedEnd - start)
                        planned.memoHash = SegmentMemo.hash(
                            bytes.baseAddress! + start, length: shapedEnd - start,
                            seed: SegmentMemo.seed(styleID: styleID, rtl: paragraphRTL))
                    }
                } else {
                    let keyLength = FastShaper.keyLength(segment: start..<shapedEnd, prefix: planned.prefix, context: planned.context)
                    if keyLength <= SegmentMemo.keyBytes {
                        let at = scratch.wholeKeySpace(after: wholeKeys)
                        FastShaper.writeKey(
                            at, bytes, segment: start..<shapedEnd, prefix: planned.prefix,
                            context: planned.context, rtl: paragraphRTL, styleID: styleID)
                        planned.memoKeyLength = UInt8(keyLength)
                        planned.memoKeyAt = Int32(wholeKeys)
                        planned.memoHash = SegmentMemo.hash(at, length: keyLength, seed: SegmentMemo.wholeKey)
                        wholeKeys += keyLength
                    }
                }
                if planned.memoKeyLength > 0 { scratch.memo.prefetch(planned.memoHash) }
                scratch.segments.append(planned)
                if separator > 0 { paragraphStart = true }
                start = end
            }
            scratch.segments.withUnsafeMutableBufferPointer { segments in
                for k in segments.indices where segments[k].memoKeyLength > 0 {
                    let (key, seed) = scratch.memoKey(of: segments[k], in: bytes, styleID: styleID)
                    segments[k].known = scratch.memo.find(segments[k].memoHash, seed: seed, key, length: Int(segments[k].memoKeyLength))
                }
            }
        }
        return .segments
    }

    /// Measures each planned segment (from the scratch's memo, else from the shared cache under
    /// the lock) and packs the storage.
    private func makeStorage(
        _ text: String, sanitized: String, style: TextStyle, context: FastStyleContext,
        plan: SegmentPlan, scratch: PrepareScratch, spans: [TextSpan] = [],
        faces: FastFaces? = nil
    ) throws(TextError) -> FastStorage {
        var sanitized = sanitized
        func delegate() throws(TextError) -> FastStorage {
            FastStorage.make(
                text: sanitized, context: context, count: 0, words: [],
                delegated: DelegatedText(try reference.prepare(text, style: style, spans: spans)), engine: engineTag)
        }
        switch plan {
        case .empty: return FastStorage.make(text: sanitized, context: context, count: 0, words: [], delegated: nil, engine: engineTag)
        case .delegate: return try delegate()
        case .segments: break
        }
        scratch.packed.removeAll(keepingCapacity: true)
        var unmodelled = false
        sanitized.withUTF8 { bytes in
            for k in scratch.segments.indices where scratch.segments[k].known == nil {
                scratch.segments[k].known = remember(bytes, scratch.segments[k], style: context, in: scratch)
            }
            for s in scratch.segments {
                let known = s.known!
                let shape = known.summary
                guard !shape.unmodelled else { unmodelled = true; break }
                if let short = FastSegment.packShort(
                    length: s.end - s.start, content: shape.content,
                    spaceIndex: known.spaceIndex < 0 ? nil : Int(known.spaceIndex),
                    metric: shape.metric, hard: s.separator > 0, rightToLeft: s.rightToLeft)
                {
                    scratch.packed.append(short)
                } else if let word = FastSegment.pack(
                    length: s.end - s.start, content: shape.content, space: shape.space,
                    metric: shape.metric, hard: s.separator > 0,
                    wideSeparator: s.separator == 3, rightToLeft: s.rightToLeft)
                {
                    scratch.packed.append(FastSegment.longMarker)
                    scratch.packed.append(UInt32(truncatingIfNeeded: word))
                    scratch.packed.append(UInt32(truncatingIfNeeded: word >> 32))
                } else {
                    unmodelled = true; break
                }
            }
        }
        if unmodelled { return try delegate() }
        return FastStorage.make(
            text: sanitized, context: context, count: scratch.segments.count, words: scratch.packed,
            delegated: nil, engine: engineTag, faces: faces)
    }

    /// The shape numbers of planned segment `s` from the shared cache (`tableLock` only), else
    /// shaped (under `lock`: Pango), kept in the scratch's memo when its key fits.
    private func remember(
        _ bytes: UnsafeBufferPointer<UInt8>, _ s: PlannedSegment, style: FastStyleContext,
        in scratch: PrepareScratch
    ) -> SegmentMemo.Value {
        let segment = s.start..<(s.end - s.separator)
        let length = FastShaper.keyLength(segment: segment, prefix: s.prefix, context: s.context)
        if scratch.key.count < length { scratch.key = [UInt8](repeating: 0, count: max(length, 2 * scratch.key.count)) }
        let shape = scratch.key.withUnsafeMutableBufferPointer { buffer in
            FastShaper.writeKey(
                buffer.baseAddress!, bytes, segment: segment, prefix: s.prefix, context: s.context,
                rtl: s.rightToLeft, styleID: style.id)
            let key = UnsafeRawBufferPointer(start: buffer.baseAddress!, count: length)
            if let known = shaper.cachedSummary(key, hash: fastHash(key)) { return known }
            lock.lockSpinning(); defer { lock.unlock() }
            return shaper.summary(bytes, segment: segment, prefix: s.prefix, context: s.context, rtl: s.rightToLeft, style: style)
        }
        let value = SegmentMemo.Value(summary: shape, spaceIndex: Int8(FastSpaceWidths.index(of: shape.space) ?? -1))
        // Kept in the memo under the key `segment` looked it up by, when that fits.
        if s.memoKeyLength > 0 {
            let (key, seed) = scratch.memoKey(of: s, in: bytes, styleID: style.id)
            scratch.memo.insert(s.memoHash, seed: seed, key, length: Int(s.memoKeyLength), value)
        }
        return value
    }

    /// True when `PangoTextEngine.pangoText` would return `text` unchanged: no control character
    /// to remove or convert (C0 but tab and newline, DEL, C1) and no paragraph too long for Pango.
    /// A byte scan, without decoding.
    static func isClean(_ text: String, style: TextStyle) -> Bool {
        var copy = text
        let maxBytes = max(64, Int(1_000_000 / style.size))
        return copy.withUTF8 { bytes in
            // Most texts: no paragraph can be too long, and eight bytes at a time hold no byte
            // below 0x20 (newlines and tabs included), no DEL and no C1 lead byte (0xC2, which
            // the byte loop below looks at more closely).
            if bytes.count <= maxBytes, !Self.mayHaveControl(bytes) { return true }
            var paragraph = 0
            var i = 0
            while i < bytes.count {
                let b = bytes[i]
                if b < 0x20 {
                    if b == 0x0A { paragraph = 0; i += 1; continue }
                    if b != 0x09 { return false }
                } else if b == 0x7F {
                    return false
                } else if b == 0xC2, i + 1 < bytes.count, bytes[i + 1] >= 0x80, bytes[i + 1] <= 0x9F {
                    return false
                }
                paragraph += 1
                if paragraph > maxBytes { return false }
                i += 1
            }
            return true
        }
    }

    /// True when `bytes` holds a byte below 0x20, 0x7F or 0xC2: tested eight bytes at a time
    /// (the "has a byte less than n" and "has a zero byte" word tricks).
    static func mayHaveControl(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= bytes.count {
                let x = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if (x &- 0x20 &* ones) & ~x & highs != 0 || hasZero(x ^ (0x7F &* ones)) || hasZero(x ^ (0xC2 &* ones)) { return true }
                i += 8
            }
        }
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x20 || b == 0x7F || b == 0xC2 { return true }
            i += 1
        }
        return false
    }

    /// The character after segment `start..<end` that decides its trailing spaces' font (see
    /// `FastShaper.shape`), or nil when it cannot change it: no trailing space, end of text, or an
    /// ASCII segment followed by ASCII.
    static func spaceContext(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Range<Int>? {
        guard end < bytes.count, end > start else { return nil }
        let last = bytes[end - 1]
        guard last == 0x20 || (end - start >= 3 && last == 0x80 && bytes[end - 2] == 0x80 && bytes[end - 3] == 0xE3) else { return nil }
        if bytes[end] < 0x80 {
            var ascii = true
            for i in start..<end where bytes[i] >= 0x80 { ascii = false; break }
            if ascii { return nil }
        }
        // The next character: its first scalar, with a variation selector, skin tone, keycap
        // or second regional indicator that follows (they decide between text and emoji fonts).
        var e = end + scalarLength(bytes[end])
        if e < bytes.count, let first = scalar(bytes, at: end), let next = scalar(bytes, at: e) {
            let v = next.value
            let regional = (0x1F1E6...0x1F1FF).contains(first.value) && (0x1F1E6...0x1F1FF).contains(v)
            if regional || (0xFE00...0xFE0F).contains(v) || (0x1F3FB...0x1F3FF).contains(v) || v == 0x20E3 {
                e += scalarLength(bytes[e])
            }
        }
        return end..<min(e, bytes.count)
    }

    /// For a segment starting with a character that is not a letter (digits, punctuation,
    /// symbols: script-neutral), the last letter before it in the paragraph when that letter is
    /// not Latin: the script run, and with it the font, continues through neutral characters.
    static func scriptPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, paragraphStart: Int) -> Range<Int>? {
        guard start > paragraphStart, start < end else { return nil }
        let first = bytes[start]
        if first < 0x80 {
            // ASCII letters have a script of their own.
            if (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A { return nil }
        } else if let scalar = scalar(bytes, at: start), Self.isLetter(scalar) {
            return nil
        }
        // Walk back over the paragraph to the last letter.
        var i = start
        while i > paragraphStart {
            var j = i - 1
            while j > paragraphStart, bytes[j] & 0xC0 == 0x80 { j -= 1 }
            let b = bytes[j]
            if b < 0x80 {
                if (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A { return nil }  // Latin
            } else if let scalar = scalar(bytes, at: j), Self.isLetter(scalar) {
                return scalar.value < 0x250 ? nil : j..<i
            }
            i = j
        }
        return nil
    }

    /// Alphabetic (has a script of its own), with accented Latin, basic Cyrillic and the common
    /// CJK and Hangul blocks answered without a property look-up.
    @inline(__always)
    static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if clb_is_plain_letter(v) != 0 { return true }
        if (0x4E00...0x9FFF).contains(v) || (0x3400...0x4DBF).contains(v) || (0xAC00...0xD7A3).contains(v)
            || (0x3041...0x3096).contains(v) || (0x30A1...0x30FA).contains(v)
        {
            return true
        }
        // Emoji and their joiners, selectors, flags and tags: no letters (`nonLetterRanges`).
        for r in nonLetterRanges where r.contains(v) { return false }
        return scalar.properties.isAlphabetic
    }

    /// Blocks without an Alphabetic character (checked against the standard library by
    /// `FastTextEngineTests`): emoji pictographs, symbols and dingbats, general punctuation
    /// (ZWJ), combining marks for symbols (keycap), variation selectors, regional indicators, tags.
    static let nonLetterRanges: [ClosedRange<UInt32>] = [
        0x1F300...0x1FAFF, 0x1F1E6...0x1F1FF, 0x2600...0x27BF, 0x2000...0x206F, 0x20D0...0x20FF,
        0xFE00...0xFE0F, 0xE0020...0xE007F
    ]

    /// The scalar whose UTF-8 starts at `i` (valid UTF-8: the text is a Swift string).
    @inline(__always)
    static func scalar(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Unicode.Scalar? {
        let b = UInt32(bytes[i])
        if b < 0x80 { return Unicode.Scalar(b) }
        if b < 0xE0, i + 1 < bytes.count { return Unicode.Scalar((b & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F)) }
        if b < 0xF0, i + 2 < bytes.count {
            return Unicode.Scalar((b & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F))
        }
        guard i + 3 < bytes.count else { return nil }
        return Unicode.Scalar((b & 0x07) << 18 | UInt32(bytes[i + 1] & 0x3F) << 12 | UInt32(bytes[i + 2] & 0x3F) << 6 | UInt32(bytes[i + 3] & 0x3F))
    }

    @inline(__always)
    static func scalarLength(_ lead: UInt8) -> Int { lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4 }

    // MARK: Layout

    /// A line as laid out: its byte range and integer geometry (Pango units).
    struct FastLine {
        var start: Int
        /// End of the line's range (trailing spaces included, the separator not).
        var end: Int
        /// End of the content drawn (trailing whitespace excluded).
        var contentEnd: Int
        var width: Int32
        var metric: FastLineMetrics
        var rightToLeft: Bool
        /// Truncated last line: the ellipsis follows the content.
        var ellipsis = false
    }

    struct FastArrangement {
        var lines: [FastLine]
        var layout: TextLayout
    }

    /// Lines of `storage` in `width` Pango units.
    func arrange(_ storage: FastStorage, width: Int32, maxLines: Int?) -> FastArrangement {
        var lines: [FastLine] = []
        let layout = arrange(storage, width: width, maxLines: maxLines, into: &lines)
        return FastArrangement(lines: lines, layout: layout)
    }

    /// `arrange` into `lines` (emptied first; a caller may reuse its buffer), returning the
    /// layout in points.
    func arrange(_ storage: FastStorage, width: Int32, maxLines: Int?, into lines: inout [FastLine]) -> TextLayout {
        let truncated = fill(storage, width: width, maxLines: maxLines, into: &lines)
        return lines.isEmpty ? .empty : textLayout(lines, style: storage.context.style, truncated: truncated)
    }

    /// The lines of `storage` in `width` Pango units into `lines` (emptied first); true when
    /// `maxLines` cut the text (the last line then ends in an ellipsis).
    func fill(_ storage: FastStorage, width: Int32, maxLines: Int?, into lines: inout [FastLine]) -> Bool {
        lines.removeAll(keepingCapacity: true)
        lines.reserveCapacity(4)
        fill(storage, width: width, maxLines: maxLines, sink: &lines)
        var truncated = false
        if let maxLines, lines.count > maxLines {
            truncated = true
            lines.removeSubrange(maxLines...)
            lines[maxLines - 1] = ellipsize(lines[maxLines - 1], storage: storage, width: width)
        }
        return truncated
    }

    /// Greedy line filling: each line of `storage` in `width` Pango units handed to `lines`, up to
    /// one more than `maxLines` (which tells the text was cut).
    /// Needs no lock: the storage is immutable, and the line-metrics classes it names were
    /// written before it was made (`FastShaper.metricTable`).
    @inline(__always) func fill<Sink: FastLineSink>(_ storage: FastStorage, width: Int32, maxLines: Int?, sink lines: inout Sink) {
        guard storage.count > 0 else { return }
        storage.withSegments { segs in
            _ = fill(segs, primary: storage.context.primaryMetric, text: storage, width: width, maxLines: maxLines, sink: &lines)
        }
    }

    /// `fill` of segments `segs`; `text`, the storage they come from, breaks a segment wider
    /// than the line between its grapheme clusters. Without it (packed segments, `summary(ofPacked:)`)
    /// such a segment stops the filling: false.
    func fill<Sink: FastLineSink>(
        _ segs: UnsafeBufferPointer<FastSegment>, primary primaryIndex: UInt8, text storage: FastStorage?,
        width: Int32, maxLines: Int?, sink lines: inout Sink
    ) -> Bool {
        let count = segs.count
        guard count > 0 else { return true }
        let table = shaper.metricTable
        func metricClass(_ i: UInt8) -> FastLineMetrics { table[Int(i)] }
        let primary = metricClass(primaryIndex)
        let limit = maxLines.map { $0 + 1 } ?? Int.max  // one more tells that the text was cut
        do {
            var k = 0
            var paragraphStart = 0
            while k < count, lines.count < limit {
                // One paragraph: segments up to and including the one with a hard break.
                var lineStart = paragraphStart, lineEnd = paragraphStart, contentEnd = paragraphStart
                var w: Int64 = 0, pending: Int64 = 0
                var has = false
                var metric = metricClass(segs[k].metric)
                let rtl = segs[k].rightToLeft
                func emit() {
                    lines.append(
                        FastLine(
                            start: lineStart, end: lineEnd, contentEnd: contentEnd, width: Int32(clamping: w),
                            metric: metric, rightToLeft: rtl))
                }
                var segStart = paragraphStart
                while k < count {
                    let s = segs[k]
                    let content = Int64(s.content), m = metricClass(s.metric)
                    let segEnd = s.end - s.separatorLength
                    if has && w + pending + content > Int64(width) {
                        emit()
                        if lines.count >= limit { break }
                        lineStart = segStart; w = 0; pending = 0; has = false
                        metric = m
                    }
                    if content > Int64(width) {
                        // Alone wider than the line (so it starts a line): break it between
                        // grapheme clusters; its trailing spaces still hang.
                        guard let storage else { return false }
                        let graphemes = graphemeWidths(
                            storage, segmentStart: segStart, segmentEnd: segEnd, rtl: s.rightToLeft,
                            paragraphStart: paragraphStart)
                        let contentLimit = storage.contentEnd(segStart, segEnd)
                        metric = has ? metric.union(m) : m
                        var previous = segStart
                        for g in graphemes {
                            let gEnd = segStart + Int(g.end)
                            defer { previous = gEnd }
                            if previous >= contentLimit { break }
                            if has && w + Int64(g.width) > Int64(width) {
                                lineEnd = previous; contentEnd = previous
                                emit()
                                if lines.count >= limit { break }
                                lineStart = previous; w = 0; has = false
                                metric = m
                            }
                            w += Int64(g.width); has = true
                            contentEnd = gEnd
                        }
                        if lines.count >= limit { break }
                        contentEnd = contentLimit
                    } else {
                        w += pending + content
                        if has { metric = metric.union(m) } else { metric = m }
                        has = true
                        contentEnd = segEnd  // trailing whitespace is trimmed when drawing
                    }
                    pending = Int64(s.space)
                    lineEnd = segEnd
                    segStart = s.end
                    k += 1
                    if s.hard { break }
                }
                if lines.count >= limit { break }
                emit()
                paragraphStart = segStart
                // A text ending in a hard break has an empty last line.
                if k == count, segs[count - 1].hard, lines.count < limit {
                    lines.append(
                        FastLine(
                            start: count == 0 ? 0 : segs[count - 1].end, end: segs[count - 1].end,
                            contentEnd: segs[count - 1].end, width: 0, metric: primary,
                            rightToLeft: segs[count - 1].rightToLeft))
                }
            }
        }
        return true
    }

    /// Geometry in points from integer lines: Pango's line-spacing rule (the first baseline at
    /// the first line's ascent, then `lineHeight` × the line's font height per line).
    func textLayout(_ lines: [FastLine], style: TextStyle, truncated: Bool) -> TextLayout {
        var out: [TextLine] = []
        out.reserveCapacity(lines.count)
        var baseline: Int32 = 0
        var widest = 0.0
        let factor = Float(style.lineHeight)
        for (i, line) in lines.enumerated() {
            baseline = i == 0 ? line.metric.ascent : baseline + Int32(factor * Float(line.metric.pitch))
            let top = baseline - line.metric.ascent
            let width = PangoTextEngine.points(line.width)
            widest = max(widest, width)
            out.append(
                TextLine(
                    range: line.start..<line.end, width: width, top: PangoTextEngine.points(top),
                    height: PangoTextEngine.points(line.metric.ascent + line.metric.descent),
                    baseline: PangoTextEngine.points(baseline), isRightToLeft: line.rightToLeft))
        }
        for i in out.indices.dropLast() { out[i].height = out[i + 1].top - out[i].top }
        let height = out.last.map { $0.top + $0.height } ?? 0
        return TextLayout(lines: out, width: widest, height: height, isTruncated: truncated)
    }

    /// The last shown line of a cut text: the rest of its paragraph, as many grapheme clusters as
    /// fit with "…" after them (at least the ellipsis).
    private func ellipsize(_ line: FastLine, storage: FastStorage, width: Int32) -> FastLine {
        lock.lock(); defer { lock.unlock() }
        let ellipsis = storage.context.ellipsis?.content ?? 0
        var result = line
        result.ellipsis = true
        var w: Int64 = 0
        var shownEnd = line.start
        var metric = line.metric
        storage.withSegments { segs in
            var segStart = 0
            for k in 0..<storage.count {
                let s = segs[k]
                defer { segStart = s.end }
                if s.end <= line.start { continue }
                let segEnd = s.end - s.separatorLength
                let graphemes = graphemeWidths(storage, segmentStart: segStart, segmentEnd: segEnd, rtl: s.rightToLeft)
                for g in graphemes {
                    let gEnd = segStart + Int(g.end)
                    if gEnd <= line.start { continue }
                    if w + Int64(g.width) + Int64(ellipsis) > Int64(width) { return }
                    w += Int64(g.width)
                    shownEnd = gEnd
                    metric = metric.union(shaper.metricTable[Int(s.metric)])
                }
                if s.hard { return }
            }
        }
        result.end = shownEnd
        result.contentEnd = shownEnd
        result.width = Int32(clamping: w + Int64(ellipsis))
        result.metric = metric
        return result
    }

    /// Grapheme-cluster advances of one segment (re-shaped from the cache when needed).
    func graphemeWidths(
        _ storage: FastStorage, segmentStart: Int, segmentEnd: Int, rtl: Bool,
        paragraphStart: Int? = nil
    ) -> [(end: Int32, width: Int32)] {
        lock.lock(); defer { lock.unlock() }
        if let faces = storage.faces, faces.touches(segmentStart..<segmentEnd) {
            // Piece by piece in their faces, as `prepare` measured them.
            return storage.withText { bytes in
                var out: [(end: Int32, width: Int32)] = []
                faces.forEachPiece(of: segmentStart..<segmentEnd, plain: storage.context) { piece, face in
                    let (before, after, joined) = Self.pieceSurroundings(
                        bytes, piece, of: segmentStart..<segmentEnd,
                        prefix: nil, context: nil)
                    let shape = shaper.shape(bytes, segment: piece, prefix: before, context: after, rtl: rtl, style: face, joined: joined)
                    for g in shape.cachedGraphemeWidths(UnsafeBufferPointer(rebasing: bytes[piece])) {
                        out.append((Int32(piece.lowerBound - segmentStart) + g.end, g.width))
                    }
                }
                return out
            }
        }
        let shape = segmentShape(storage, segmentStart, segmentEnd, rtl: rtl, paragraphStart: paragraphStart)
        return storage.withText { bytes in
            shape.cachedGraphemeWidths(UnsafeBufferPointer(rebasing: bytes[segmentStart..<segmentEnd]))
        }
    }

    /// The cached shape of bytes `start..<end` of the storage's text (a segment without its
    /// separator), as `prepare` looked it up. The caller holds the lock.
    func segmentShape(_ storage: FastStorage, _ start: Int, _ end: Int, rtl: Bool, paragraphStart: Int? = nil) -> FastSegmentShape {
        storage.withText { bytes in
            shaper.shape(
                bytes, segment: start..<end,
                prefix: Self.scriptPrefix(bytes, start, end, paragraphStart: paragraphStart ?? Self.paragraphStart(bytes, before: start)),
                context: Self.isSeparator(bytes, end) ? nil : Self.spaceContext(bytes, start, end),
                rtl: rtl, style: storage.context)
        }
    }

    /// Start of the paragraph holding byte `i`.
    static func paragraphStart(_ bytes: UnsafeBufferPointer<UInt8>, before i: Int) -> Int {
        var j = i
        while j > 0 {
            if bytes[j - 1] == 0x0A { return j }
            if j >= 3, bytes[j - 3] == 0xE2, bytes[j - 2] == 0x80, bytes[j - 1] == 0xA8 || bytes[j - 1] == 0xA9 { return j }
            j -= 1
        }
        return 0
    }

    /// A hard break's separator (\n, U+2028, U+2029) starts at `i`.
    static func isSeparator(_ bytes: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
        guard i < bytes.count else { return false }
        if bytes[i] == 0x0A { return true }
        return bytes[i] == 0xE2 && i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9)
    }
}
