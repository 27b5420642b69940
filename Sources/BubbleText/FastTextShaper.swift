import BubbleCore
import CPango
import CLineBreak
import Foundation

/// One glyph of a shaped piece, in Pango units (1/1024 pt), in visual order within its piece.
struct FastGlyph {
    var glyph: UInt32
    /// Byte offset of the glyph's cluster within its segment.
    var cluster: Int32
    var advance: Int32
    var dx: Int32
    var dy: Int32
}

/// A run of one font and one direction inside a segment, shaped by Pango (HarfBuzz).
struct FastPiece {
    var font: Int32
    /// Bidi embedding level (odd: right to left).
    var level: UInt8
    /// Byte range within the segment.
    var start: Int32
    var end: Int32
    var glyphs: [FastGlyph]
}

/// A line-break segment (a word with the spaces after it) itemized and shaped once, shared by
/// every text that contains it: widths for layout, glyphs for drawing.
final class FastSegmentShape {
    /// Advance of the segment without its trailing whitespace, and of that whitespace.
    let content: Int32
    let space: Int32
    /// Bytes of the segment before its trailing whitespace.
    let contentLength: Int32
    /// Index into the engine's table of line metrics (the max over the pieces' fonts).
    let metric: UInt8
    let pieces: [FastPiece]
    let byteCost: Int
    /// Some character has no font (Pango draws a hex box, whose metrics this engine does not
    /// model): texts containing it are handed to the reference engine.
    let unmodelled: Bool

    init(content: Int32, space: Int32, contentLength: Int32, metric: UInt8, pieces: [FastPiece], keyBytes: Int, unmodelled: Bool = false) {
        self.unmodelled = unmodelled
        self.content = content; self.space = space; self.contentLength = contentLength
        self.metric = metric; self.pieces = pieces
        self.byteCost = 96 + keyBytes + pieces.reduce(0) { $0 + 48 + $1.glyphs.count * MemoryLayout<FastGlyph>.stride }
    }

    /// `graphemeWidths`, kept once computed (the caller holds the engine's lock).
    @exclusivity(unchecked) private var graphemes: [(end: Int32, width: Int32)]?

    func cachedGraphemeWidths(_ bytes: UnsafeBufferPointer<UInt8>) -> [(end: Int32, width: Int32)] {
        if let graphemes { return graphemes }
        let made = graphemeWidths(bytes)
        graphemes = made
        return made
    }

    /// Advance of each grapheme cluster: (end byte within the segment, width), in logical order.
    /// A glyph counts for the grapheme its cluster starts in.
    func graphemeWidths(_ bytes: UnsafeBufferPointer<UInt8>) -> [(end: Int32, width: Int32)] {
        var ends = [Int32](repeating: 0, count: bytes.count + 1)
        let n = ends.withUnsafeMutableBufferPointer { out in
            bytes.withMemoryRebound(to: CChar.self) { clb_grapheme_breaks($0.baseAddress, Int32($0.count), out.baseAddress, Int32(out.count)) }
        }
        guard n > 0 else { return [(Int32(bytes.count), content + space)] }
        var result = ends[0..<Int(n)].map { (end: $0, width: Int32(0)) }
        for piece in pieces {
            for g in piece.glyphs {
                // First grapheme whose end is past the cluster.
                var lo = 0, hi = result.count - 1
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if result[mid].end > g.cluster { hi = mid } else { lo = mid + 1 }
                }
                result[lo].width += g.advance
            }
        }
        return result
    }
}

/// Vertical metrics of a line, in Pango units: the max over the fonts on it.
struct FastLineMetrics: Hashable {
    var ascent: Int32
    var descent: Int32
    /// The font's line height (ascent + descent + line gap): what `lineHeight` multiplies.
    var height: Int32

    /// How far below the line before this line's baseline goes (× the line-height factor): its
    /// font height, or its ascent + descent where the font height is less than half of that — the
    /// colour emoji font reports about a sixth, which put a line of emoji alone over the line
    /// before it (Pango does the same; `PangoTextStorage.lines(of:)` corrects it alike).
    var pitch: Int32 { height * 2 < ascent + descent ? ascent + descent : height }

    func union(_ o: FastLineMetrics) -> FastLineMetrics {
        FastLineMetrics(ascent: max(ascent, o.ascent), descent: max(descent, o.descent), height: max(height, o.height))
    }
}

/// A font the engine has met: a reference kept so the pointer stays valid, and its metrics.
final class FastFont {
    let pointer: UnsafeMutablePointer<PangoFont>
    let metrics: FastLineMetrics
    /// Its glyphs are pictures (colour emoji: bitmaps, layers or SVG), which a PDF holds as
    /// images without their text.
    let isColor: Bool
    init(_ pointer: UnsafeMutablePointer<PangoFont>, language: OpaquePointer?) {
        self.pointer = pointer
        g_object_ref(pointer)
        isColor = PangoTextEngine.hasColorGlyphs(pointer)
        let m = pango_font_get_metrics(pointer, language)!
        metrics = FastLineMetrics(
            ascent: pango_font_metrics_get_ascent(m), descent: pango_font_metrics_get_descent(m),
            height: pango_font_metrics_get_height(m))
        pango_font_metrics_unref(m)
    }
    deinit { g_object_unref(pointer) }
}

/// Per `TextStyle`: the attributes Pango itemizes with and the primary font.
final class FastStyleContext {
    let id: UInt32
    let style: TextStyle
    let attributes: OpaquePointer
    /// Metric-table index of the style's first font (empty lines use it).
    var primaryMetric: UInt8 = 0
    /// The ellipsis "…" shaped in the style: its advance and glyphs.
    var ellipsis: FastSegmentShape?
    /// How Pango itemizes printable ASCII in a left-to-right paragraph (one item, the primary
    /// font): ASCII-only segments are shaped with it without itemizing.
    var asciiAnalysis: PangoAnalysis?
    var asciiItem: UnsafeMutablePointer<PangoItem>?
    /// This style's contexts in other faces (`TextFace.rawValue` 0…7), made on first use.
    var faces = [Unmanaged<FastStyleContext>?](repeating: nil, count: 8)

    init(id: UInt32, style: TextStyle, attributes: OpaquePointer) {
        self.id = id; self.style = style; self.attributes = attributes
    }
    deinit {
        pango_attr_list_unref(attributes)
        if let asciiItem { pango_item_free(asciiItem) }
    }
}

/// A 64-bit hash of bytes (multiply-xorshift over 8-byte words): for the caches' keys.
@inline(__always)
func fastHash(_ p: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
    var h = seed ^ (UInt64(p.count) &* 0x9E37_79B9_7F4A_7C15)
    var i = 0
    while i + 8 <= p.count {
        h = (h ^ p.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 31
        i += 8
    }
    var tail: UInt64 = 0, shift: UInt64 = 0
    while i < p.count { tail |= UInt64(p[i]) << shift; shift += 8; i += 1 }
    h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
    return h ^ (h >> 29)
}

/// What `prepare` needs of a shaped segment: its numbers, without the object (a look-up that
/// returns this retains nothing).
struct FastSegmentSummary {
    var content: Int32
    var space: Int32
    var metric: UInt8
    var unmodelled: Bool
    init(content: Int32, space: Int32, metric: UInt8, unmodelled: Bool) {
        self.content = content; self.space = space; self.metric = metric; self.unmodelled = unmodelled
    }
    init(_ shape: FastSegmentShape) {
        self.init(content: shape.content, space: shape.space, metric: shape.metric, unmodelled: shape.unmodelled)
    }
}

/// An open-addressing hash table from byte strings to shaped segments (no String, no NFC
/// hashing, no allocation and no reference counting on a look-up: slots, keys and each value's
/// `FastSegmentSummary` are in manually managed buffers). Keys are copied once, on insertion,
/// into one byte arena. Used under the engine's lock only.
final class ByteKeyTable {
    private struct Slot {
        var hash: UInt64
        var keyStart: Int32
        var keyLength: Int32
        var value: Int32
        var summary: FastSegmentSummary
    }
    private static let emptySlot = Slot(
        hash: 0, keyStart: 0, keyLength: 0, value: -1,
        summary: FastSegmentSummary(content: 0, space: 0, metric: 0, unmodelled: false))
    private var slots: UnsafeMutablePointer<Slot>
    private var mask: Int
    private var arena: UnsafeMutablePointer<UInt8>
    private var arenaCount = 0, arenaCapacity: Int
    @exclusivity(unchecked) private(set) var values: [FastSegmentShape] = []

    init(capacity: Int = 1024) {
        var n = 16
        while n < capacity * 2 { n <<= 1 }
        slots = .allocate(capacity: n)
        slots.initialize(repeating: Self.emptySlot, count: n)
        mask = n - 1
        arenaCapacity = 16 * capacity
        arena = .allocate(capacity: arenaCapacity)
    }
    deinit {
        slots.deallocate()
        arena.deallocate()
    }

    var count: Int { values.count }

    /// Index of `key`'s value (`values`) and its summary; value -1: absent.
    @inline(__always)
    func find(_ hash: UInt64, _ key: UnsafeRawBufferPointer) -> (index: Int32, summary: FastSegmentSummary) {
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let s = slots + i
            let v = s.pointee.value
            if v < 0 { return (-1, s.pointee.summary) }
            if s.pointee.hash == hash, Int(s.pointee.keyLength) == key.count,
                key.count == 0 || memcmp(arena + Int(s.pointee.keyStart), key.baseAddress!, key.count) == 0
            {
                return (v, s.pointee.summary)
            }
            i = (i + 1) & mask
        }
    }

    func insert(_ hash: UInt64, _ key: UnsafeRawBufferPointer, _ value: FastSegmentShape) {
        if (values.count + 1) * 2 > mask + 1 { grow() }
        if arenaCount + key.count > arenaCapacity {
            var capacity = arenaCapacity * 2
            while arenaCount + key.count > capacity { capacity *= 2 }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            bigger.update(from: arena, count: arenaCount)
            arena.deallocate()
            arena = bigger; arenaCapacity = capacity
        }
        let slot = Slot(
            hash: hash, keyStart: Int32(arenaCount), keyLength: Int32(key.count), value: Int32(values.count),
            summary: FastSegmentSummary(value))
        if key.count > 0 { (arena + arenaCount).update(from: key.baseAddress!.assumingMemoryBound(to: UInt8.self), count: key.count) }
        arenaCount += key.count
        values.append(value)
        place(slot)
    }

    private func place(_ slot: Slot) {
        var i = Int(truncatingIfNeeded: slot.hash) & mask
        while slots[i].value >= 0 { i = (i + 1) & mask }
        slots[i] = slot
    }

    private func grow() {
        let old = slots, oldCount = mask + 1
        let n = oldCount * 2
        slots = .allocate(capacity: n)
        slots.initialize(repeating: Self.emptySlot, count: n)
        mask = n - 1
        for k in 0..<oldCount where old[k].value >= 0 { place(old[k]) }
        old.deallocate()
    }
}

/// The shaping half of `FastTextEngine`: itemizes (Pango: bidi levels, scripts, fontconfig
/// fallback) and shapes (HarfBuzz through `pango_shape_with_flags`) each distinct segment once,
/// in a cache bounded by bytes. The caller holds `lock`.
final class FastShaper {
    let context: OpaquePointer
    let fontMap: UnsafeMutablePointer<PangoFontMap>
    /// Byte budget of the segment cache (two generations of half of it each).
    let budget: Int
    /// Guards the two generations and the counters: taken alone (a look-up from `prepare`)
    /// or inside the engine's lock, never around it.
    let tableLock = NSLock()
    @exclusivity(unchecked) private var young = ByteKeyTable()
    @exclusivity(unchecked) private var old = ByteKeyTable()
    /// The key being looked up: style, flags, prefix, segment, context.
    private var scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    private var scratchCapacity = 256
    @exclusivity(unchecked) private var youngBytes = 0
    @exclusivity(unchecked) private(set) var oldBytes = 0
    @exclusivity(unchecked) private(set) var hits = 0
    @exclusivity(unchecked) private(set) var misses = 0

    private(set) var fonts: [FastFont] = []
    private var fontIndex: [UnsafeMutablePointer<PangoFont>: Int32] = [:]
    @exclusivity(unchecked) private(set) var metrics: [FastLineMetrics] = []
    /// `metrics` in a buffer that never moves (room for every class): a layout reads entry `i`
    /// without the lock once it holds a prepared text naming class `i` (written before it).
    let metricTable = UnsafeMutablePointer<FastLineMetrics>.allocate(capacity: FastTextEngine.metricClassLimit)
    private var metricIndex: [FastLineMetrics: UInt8] = [:]
    private var styles: [TextStyle: FastStyleContext] = [:]
    private var glyphs: UnsafeMutablePointer<PangoGlyphString>

    init(context: OpaquePointer, fontMap: UnsafeMutablePointer<PangoFontMap>, budget: Int) {
        self.context = context; self.fontMap = fontMap; self.budget = max(1 << 16, budget)
        glyphs = pango_glyph_string_new()
    }
    deinit {
        metricTable.deallocate()
        pango_glyph_string_free(glyphs)
        scratch.deallocate()
    }

    /// Segments held, their estimated bytes, hits and misses.
    var statistics: (segments: Int, bytes: Int, hits: Int, misses: Int) {
        tableLock.lock(); defer { tableLock.unlock() }
        return (young.count + old.count, youngBytes + oldBytes, hits, misses)
    }

    /// The context of a style met before, nil for a new one. (Each thread keeps the contexts
    /// it used lately, `PrepareThreadState`: this is asked once per thread and style.)
    func knownStyleContext(_ style: TextStyle) -> FastStyleContext? { styles[style] }

    func styleContext(_ style: TextStyle) -> FastStyleContext {
        if let hit = styles[style] { return hit }
        let attrs = pango_attr_list_new()!
        let font = pango_font_description_new()!
        pango_font_description_set_family(font, style.family)
        pango_font_description_set_weight(font, PangoWeight(rawValue: UInt32(min(1000, max(100, style.weight.value)))))
        pango_font_description_set_absolute_size(font, style.size * Double(PANGO_SCALE))
        pango_attr_list_insert(attrs, pango_attr_font_desc_new(font))
        pango_font_description_free(font)
        if let language = style.language, !language.isEmpty {
            pango_attr_list_insert(attrs, pango_attr_language_new(pango_language_from_string(language)))
        }
        let made = FastStyleContext(id: UInt32(styles.count), style: style, attributes: attrs)
        styles[style] = made
        // The primary font: what Pango itemizes a Latin letter to.
        let probe = shapeUncached("H", rtl: false, style: made)
        made.primaryMetric = probe.metric
        made.ellipsis = shapeUncached("\u{2026}", rtl: false, style: made)
        // The item Pango makes of ASCII text, kept (with its font reference) for the fast path.
        "Hg 1.".withCString { text in
            let items = pango_itemize_with_base_dir(context, PANGO_DIRECTION_LTR, text, 0, 5, attrs, nil)
            if let items, items.pointee.next == nil, let item = items.pointee.data?.assumingMemoryBound(to: PangoItem.self),
                item.pointee.analysis.font != nil
            {
                made.asciiItem = pango_item_copy(item)
                made.asciiAnalysis = made.asciiItem?.pointee.analysis
            }
            g_list_free_full(items) { pango_item_free($0?.assumingMemoryBound(to: PangoItem.self)) }
        }
        return made
    }

    /// The shape of bytes `segment` of `bytes` (a segment, without any paragraph separator) in a
    /// paragraph of the given direction.
    ///
    /// `context` is the character after the segment when it ends in spaces: Pango gives spaces
    /// the font of the character that follows them, so the spaces' advance depends on it.
    /// `prefix` is the last letter before a segment that starts with script-neutral characters
    /// (digits, punctuation) when that letter is not Latin: Pango's script runs carry over
    /// neutral characters, and the run's language can change their font.
    func shape(
        _ bytes: UnsafeBufferPointer<UInt8>, segment: Range<Int>, prefix: Range<Int>?, context: Range<Int>?,
        rtl: Bool, style: FastStyleContext, joined: Bool = false
    ) -> FastSegmentShape {
        let key = makeKey(bytes, segment: segment, prefix: prefix, context: context, rtl: rtl, style: style, joined: joined)
        let hash = fastHash(key)
        tableLock.lockSpinning()
        let (y, _) = young.find(hash, key)
        if y >= 0 {
            hits += 1
            defer { tableLock.unlock() }
            return young.values[Int(y)]
        }
        let old = promote(hash, key)
        tableLock.unlock()
        if let old { return old }
        return shapeAndKeep(
            bytes, key: key, hash: hash, segment: segment, prefix: prefix, context: context, rtl: rtl, style: style,
            joined: joined)
    }

    /// `shape(…)`'s numbers only: what `prepare` needs, found without touching the shape object
    /// (no reference counting) when the segment is in the young generation.
    @inline(__always)
    func summary(
        _ bytes: UnsafeBufferPointer<UInt8>, segment: Range<Int>, prefix: Range<Int>?, context: Range<Int>?,
        rtl: Bool, style: FastStyleContext, joined: Bool = false
    ) -> FastSegmentSummary {
        let key = makeKey(bytes, segment: segment, prefix: prefix, context: context, rtl: rtl, style: style, joined: joined)
        let hash = fastHash(key)
        if let known = cachedSummary(key, hash: hash) { return known }
        return FastSegmentSummary(
            shapeAndKeep(
                bytes, key: key, hash: hash, segment: segment, prefix: prefix,
                context: context, rtl: rtl, style: style, joined: joined))
    }

    /// The summary of the segment whose look-up key is `key`, when either generation has it (an
    /// old one moves to the young generation); nil on a miss. Takes only `tableLock`: any
    /// thread, with or without the engine's lock.
    func cachedSummary(_ key: UnsafeRawBufferPointer, hash: UInt64) -> FastSegmentSummary? {
        tableLock.lockSpinning(); defer { tableLock.unlock() }
        let (y, summary) = young.find(hash, key)
        if y >= 0 { hits += 1; return summary }
        return promote(hash, key).map(FastSegmentSummary.init)
    }

    /// An old generation's hit, moved to the young one; nil when the old has no `key`. The
    /// caller holds `tableLock`.
    private func promote(_ hash: UInt64, _ key: UnsafeRawBufferPointer) -> FastSegmentShape? {
        let (o, _) = old.find(hash, key)
        guard o >= 0 else { return nil }
        hits += 1
        let hit = old.values[Int(o)]
        insert(hash, key, hit)
        return hit
    }

    /// The look-up key in `scratch`: style, flags, prefix, segment, context.
    @inline(__always)
    private func makeKey(
        _ bytes: UnsafeBufferPointer<UInt8>, segment: Range<Int>, prefix: Range<Int>?, context: Range<Int>?,
        rtl: Bool, style: FastStyleContext, joined: Bool = false
    ) -> UnsafeRawBufferPointer {
        let needed = Self.keyLength(segment: segment, prefix: prefix, context: context)
        if needed > scratchCapacity {
            scratch.deallocate()
            scratchCapacity = max(needed, 2 * scratchCapacity)
            scratch = .allocate(capacity: scratchCapacity)
        }
        let n = Self.writeKey(
            scratch, bytes, segment: segment, prefix: prefix, context: context, rtl: rtl, styleID: style.id,
            joined: joined)
        return UnsafeRawBufferPointer(start: scratch, count: n)
    }

    /// Bytes of a segment's look-up key.
    @inline(__always)
    static func keyLength(segment: Range<Int>, prefix: Range<Int>?, context: Range<Int>?) -> Int {
        5 + segment.count + (prefix.map { $0.count + 1 } ?? 0) + (context.map { $0.count + 1 } ?? 0)
    }

    /// Writes a segment's look-up key (style, flags, prefix, segment, context) at `out`, which
    /// has room for `keyLength` bytes; returns its length. Any thread (it reads only `bytes`).
    @inline(__always) @discardableResult
    static func writeKey(
        _ out: UnsafeMutablePointer<UInt8>, _ bytes: UnsafeBufferPointer<UInt8>, segment: Range<Int>,
        prefix: Range<Int>?, context: Range<Int>?, rtl: Bool, styleID: UInt32, joined: Bool = false
    ) -> Int {
        var n = 0
        @inline(__always) func put(_ r: Range<Int>) {
            if !r.isEmpty { (out + n).update(from: bytes.baseAddress! + r.lowerBound, count: r.count) }
            n += r.count
        }
        var id = styleID.littleEndian
        withUnsafeBytes(of: &id) { (out + n).update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: 4) }
        n += 4
        out[n] = (rtl ? 1 : 0) | (prefix != nil ? 2 : 0) | (context != nil ? 4 : 0) | (joined ? 8 : 0); n += 1
        if let prefix { put(prefix); out[n] = 1; n += 1 }
        put(segment)
        if let context { out[n] = 0; n += 1; put(context) }
        return n
    }

    /// Shapes a segment neither generation has and keeps it (unless another thread did since
    /// the look-up). The caller holds the engine's lock (Pango), not `tableLock`.
    private func shapeAndKeep(
        _ bytes: UnsafeBufferPointer<UInt8>, key: UnsafeRawBufferPointer, hash: UInt64,
        segment: Range<Int>, prefix: Range<Int>?, context: Range<Int>?,
        rtl: Bool, style: FastStyleContext, joined: Bool = false
    ) -> FastSegmentShape {
        // Shaping may build other keys (the style's probes): keep this one apart.
        let ownKey = [UInt8](key)
        func string(_ r: Range<Int>?) -> String? { r.map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0]), as: UTF8.self) } }
        let made = shapeUncached(
            string(segment)!, prefix: string(prefix), context: string(context), rtl: rtl, style: style,
            joined: joined)
        tableLock.lockSpinning(); defer { tableLock.unlock() }
        misses += 1
        return ownKey.withUnsafeBytes { key in
            // Looked up once more under `tableLock`: the young generation never holds a key twice,
            // whatever the caller looked up before taking the engine's lock.
            let (y, _) = young.find(hash, key)
            if y >= 0 { return young.values[Int(y)] }
            insert(hash, key, made)
            return made
        }
    }

    /// The caller holds `tableLock`.
    private func insert(_ hash: UInt64, _ key: UnsafeRawBufferPointer, _ shape: FastSegmentShape) {
        let cost = shape.byteCost + key.count + 48
        if youngBytes + cost > budget / 2 {
            old = young; oldBytes = youngBytes
            young = ByteKeyTable(); youngBytes = 0
        }
        young.insert(hash, key, shape)
        youngBytes += cost
    }

    func fontID(_ font: UnsafeMutablePointer<PangoFont>, language: OpaquePointer?) -> Int32 {
        if let id = fontIndex[font] { return id }
        let id = Int32(fonts.count)
        fonts.append(FastFont(font, language: language))
        fontIndex[font] = id
        return id
    }

    func metricID(_ m: FastLineMetrics) -> UInt8 {
        if let id = metricIndex[m] { return id }
        guard metrics.count < FastTextEngine.metricClassLimit else { return UInt8(FastTextEngine.metricClassLimit) }
        let id = UInt8(metrics.count)
        metrics.append(m)
        (metricTable + Int(id)).initialize(to: m)
        metricIndex[m] = id
        return id
    }

    /// Itemizes `text` on its own (base direction from its paragraph) and shapes every item.
    /// `joined`: a piece of a word cut by a face edge (`FastFaces`): HarfBuzz sees the prefix and
    /// the context as the text around it, as Pango shapes an item with its paragraph around it,
    /// so letters keep their joining forms across the edge.
    func shapeUncached(
        _ text: String, prefix: String? = nil, context: String? = nil, rtl: Bool, style: FastStyleContext,
        joined: Bool = false
    ) -> FastSegmentShape {
        let bytes = Array(text.utf8)
        let length = Int32(bytes.count)
        let p = Int32(prefix?.utf8.count ?? 0)
        let itemized = p + length + Int32(context?.utf8.count ?? 0)
        // Trailing whitespace hangs: its bytes and advance are kept apart.
        var contentLength = length
        while contentLength > 0 {
            let b = bytes[Int(contentLength) - 1]
            if b == 0x20 || b == 0x09 { contentLength -= 1; continue }
            // U+3000 ideographic space, U+00A0 is not breaking-trailing (kept as content).
            if contentLength >= 3, b == 0x80, bytes[Int(contentLength) - 2] == 0x80, bytes[Int(contentLength) - 3] == 0xE3 {
                contentLength -= 3; continue
            }
            break
        }
        guard length > 0 else {
            return FastSegmentShape(content: 0, space: 0, contentLength: 0, metric: style.primaryMetric, pieces: [], keyBytes: 0)
        }
        var all = Array((prefix ?? "").utf8) + bytes
        if let context { all += context.utf8 }
        all.append(0)
        var pieces: [FastPiece] = []
        var content: Int32 = 0, space: Int32 = 0
        var lineMetric: FastLineMetrics?
        var unmodelled = false
        all.withUnsafeBufferPointer { buf in
            let base = UnsafeRawPointer(buf.baseAddress!).assumingMemoryBound(to: CChar.self)
            // (offset, length, analysis) of each item over `all`.
            var runs: [(Int32, Int32, PangoAnalysis)] = []
            var items: UnsafeMutablePointer<GList>?
            defer { if let items { g_list_free_full(items) { pango_item_free($0?.assumingMemoryBound(to: PangoItem.self)) } } }
            if !rtl, let ascii = style.asciiAnalysis, buf.dropLast().allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                runs.append((0, itemized, ascii))
            } else {
                items = pango_itemize_with_base_dir(
                    self.context, rtl ? PANGO_DIRECTION_RTL : PANGO_DIRECTION_LTR,
                    base, 0, itemized, style.attributes, nil)
                var node = items
                while let n = node {
                    node = n.pointee.next
                    guard let item = n.pointee.data?.assumingMemoryBound(to: PangoItem.self) else { continue }
                    runs.append((item.pointee.offset, item.pointee.length, item.pointee.analysis))
                }
            }
            for (itemOffset, itemLength, itemAnalysis) in runs {
                // Only the segment's own bytes: not the prefix, not the context character.
                let itemStart = max(itemOffset, p), itemEnd = min(itemOffset + itemLength, p + length)
                guard itemStart < itemEnd else { continue }
                let offset = itemStart - p, count = itemEnd - itemStart
                var analysis = itemAnalysis
                let fid: Int32
                if joined {
                    pango_shape_with_flags(base + Int(itemStart), count, base, itemized, &analysis, glyphs, PANGO_SHAPE_NONE)
                } else {
                    pango_shape_with_flags(base + Int(itemStart), count, base + Int(itemStart), count, &analysis, glyphs, PANGO_SHAPE_NONE)
                }
                if let font = analysis.font {
                    fid = fontID(font, language: analysis.language)
                    // As Pango: ascent and descent from the glyphs' logical extents, the line
                    // height (what line spacing multiplies) from the font's metrics.
                    var logical = PangoRectangle()
                    pango_glyph_string_extents(glyphs, font, nil, &logical)
                    let m = FastLineMetrics(
                        ascent: -logical.y, descent: logical.y + logical.height,
                        height: fonts[Int(fid)].metrics.height)
                    lineMetric = lineMetric.map { $0.union(m) } ?? m
                } else {
                    fid = -1
                    unmodelled = true
                }
                let g = glyphs.pointee
                var out: [FastGlyph] = []
                out.reserveCapacity(Int(g.num_glyphs))
                for i in 0..<Int(g.num_glyphs) {
                    let info = g.glyphs[i]
                    let cluster = offset + g.log_clusters[i]
                    if info.glyph & PANGO_GLYPH_UNKNOWN_FLAG != 0 { unmodelled = true }
                    out.append(
                        FastGlyph(
                            glyph: info.glyph, cluster: cluster, advance: info.geometry.width,
                            dx: info.geometry.x_offset, dy: info.geometry.y_offset))
                    if cluster < contentLength { content += info.geometry.width } else { space += info.geometry.width }
                }
                pieces.append(FastPiece(font: fid, level: analysis.level, start: offset, end: offset + count, glyphs: out))
            }
        }
        let metric = lineMetric.map { metricID($0) } ?? style.primaryMetric
        // Beyond the metric classes a packed segment can name: hand the text to Pango.
        if Int(metric) >= FastTextEngine.metricClassLimit { unmodelled = true }
        return FastSegmentShape(
            content: content, space: space, contentLength: contentLength, metric: metric,
            pieces: pieces, keyBytes: Int(length), unmodelled: unmodelled)
    }
}
