import BubbleCore
import CPango
import CLineBreak
import Foundation

// What FastTextEngine keeps per prepared text and per thread: packed segments, the storage that
// holds them with the text, the shaped-segment memo, the shards of prepared texts, ICU's breaker.

/// One segment of a prepared text, decoded: where it ends, its advance without trailing
/// whitespace, the whitespace's advance (Pango units), its line-metrics class and flags.
/// Stored in 4 bytes when its numbers are small (`packShort`: most segments), else in 12
/// (`longMarker` and the 8 bytes of `pack`).
struct FastSegment {
    var end: Int
    var content: Int32
    var space: Int32
    var metric: UInt8
    var hard: Bool
    var wideSeparator: Bool
    var rightToLeft: Bool
    var separatorLength: Int { hard ? (wideSeparator ? 3 : 1) : 0 }

    /// Bits: length 0–15 (bytes), content 16–39, space 40–54, metric 55–60, hard 61,
    /// 3-byte separator 62, right to left 63. Nil when a value does not fit (the engine then hands
    /// the text to Pango): a segment over 65,535 bytes, wider than 16,383 pt, with over 31 pt of
    /// trailing spaces, or a 64th line-metrics class.
    static func pack(
        length: Int, content: Int32, space: Int32, metric: UInt8, hard: Bool,
        wideSeparator: Bool, rightToLeft: Bool
    ) -> UInt64? {
        guard length >= 0, length < 1 << 16, content >= 0, content < 1 << 24, space >= 0, space < 1 << 15,
            metric < 1 << 6
        else { return nil }
        return UInt64(length) | UInt64(content) << 16 | UInt64(space) << 40 | UInt64(metric) << 55
            | (hard ? 1 << 61 : 0) | (wideSeparator ? 1 << 62 : 0) | (rightToLeft ? 1 << 63 : 0)
    }

    /// Short form, bit 31 clear: length 0–6 (< 128 bytes), content 7–23 (< 128 pt), right to
    /// left 24, trailing space 25–27 (an index into `FastSpaceWidths`), metric 28–30 (< 8); not a
    /// hard break.
    static func packShort(length: Int, content: Int32, spaceIndex: Int?, metric: UInt8, hard: Bool, rightToLeft: Bool) -> UInt32? {
        guard !hard, length >= 0, length < 128, content >= 0, content < 1 << 17, metric < 8,
            let spaceIndex
        else { return nil }
        return UInt32(length) | UInt32(content) << 7 | (rightToLeft ? 1 << 24 : 0) | UInt32(spaceIndex) << 25 | UInt32(metric) << 28
    }
    static let longMarker: UInt32 = 1 << 31

    init(short word: UInt32, start: Int, spaces: UnsafeMutablePointer<Int32>) {
        end = start + Int(word & 0x7F)
        content = Int32((word >> 7) & 0x1_FFFF)
        rightToLeft = word & (1 << 24) != 0
        space = spaces[Int((word >> 25) & 0x7)]
        metric = UInt8((word >> 28) & 0x7)
        hard = false; wideSeparator = false
    }

    init(_ word: UInt64, start: Int) {
        end = start + Int(word & 0xFFFF)
        content = Int32(truncatingIfNeeded: (word >> 16) & 0xFF_FFFF)
        space = Int32(truncatingIfNeeded: (word >> 40) & 0x7FFF)
        metric = UInt8(truncatingIfNeeded: (word >> 55) & 0x3F)
        hard = word & (1 << 61) != 0
        wideSeparator = word & (1 << 62) != 0
        rightToLeft = word & (1 << 63) != 0
    }
}

/// The trailing-space advances short segments can name: the first seven met (one space in each
/// font, none, a few spaces). Process-wide and append-only; a slot is written once, under a lock,
/// before any segment that names it exists.
enum FastSpaceWidths {
    static let capacity = 7
    nonisolated(unsafe) static let slots: UnsafeMutablePointer<Int32> = {
        let p = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
        p.initialize(repeating: -1, count: capacity)
        return p
    }()
    static let lock = NSLock()
    nonisolated(unsafe) static var used = 0

    static func index(of width: Int32) -> Int? {
        lock.lock(); defer { lock.unlock() }
        for i in 0..<used where slots[i] == width { return i }
        guard used < capacity else { return nil }
        slots[used] = width
        used += 1
        return used - 1
    }
}

/// The runs of a styled text set in other faces (bold, italic, monospace), with the context of
/// each face, in order; bytes outside them are in the storage's own style.
final class FastFaces {
    let runs: [(range: Range<Int>, context: FastStyleContext)]
    init(_ runs: [(range: Range<Int>, context: FastStyleContext)]) { self.runs = runs }

    /// Bytes `range` cut at the runs' edges, handed to `body` in order, each piece with its face's
    /// context (`plain` outside the runs).
    @inline(__always)
    func forEachPiece(of range: Range<Int>, plain: FastStyleContext, _ body: (Range<Int>, FastStyleContext) -> Void) {
        var at = range.lowerBound
        for run in runs where run.range.upperBound > range.lowerBound && run.range.lowerBound < range.upperBound {
            let lo = max(run.range.lowerBound, range.lowerBound), hi = min(run.range.upperBound, range.upperBound)
            if lo > at { body(at..<lo, plain) }
            body(lo..<hi, run.context)
            at = hi
        }
        if at < range.upperBound { body(at..<range.upperBound, plain) }
    }

    /// True when these are exactly `other`'s runs (ranges and faces).
    func same(_ other: [(range: Range<Int>, context: FastStyleContext)]) -> Bool {
        runs.count == other.count && zip(runs, other).allSatisfy { $0.range == $1.range && $0.context === $1.context }
    }

    /// True when a run touches bytes `range`.
    func touches(_ range: Range<Int>) -> Bool {
        runs.contains { $0.range.upperBound > range.lowerBound && $0.range.lowerBound < range.upperBound }
    }
}

/// A text handed whole to the reference Pango engine.
final class DelegatedText {
    let prepared: PreparedText
    init(_ prepared: PreparedText) { self.prepared = prepared }
}

struct FastStorageHeader {
    /// The sanitised text (`PangoTextEngine.pangoText` of what `prepare` got): what the
    /// segments' offsets and the lines' ranges count.
    var text: String
    var context: FastStyleContext
    /// A `DelegatedText` (the text handed to Pango), a `FastFaces` (runs set in other faces than
    /// the style's), or nil: one slot, so plain texts pay nothing for styles.
    var extra: AnyObject?
    var count: Int32
    /// The engine that made it (`FastTextEngine.engineTag`; in the header's padding): its
    /// segments name that engine's line-metric classes, which another engine's differ from.
    var engine: UInt32
}

/// Where `FastTextEngine.fill` puts the lines it makes.
protocol FastLineSink {
    var count: Int { get }
    mutating func append(_ line: FastTextEngine.FastLine)
}

extension Array: FastLineSink where Element == FastTextEngine.FastLine {}

/// `FastTextEngine.textLayout(lines, …).summary` without keeping the lines: the same
/// arithmetic on the baselines, the widest line and the last one.
struct FastSummarySink: FastLineSink {
    private(set) var count = 0
    private var baseline: Int32 = 0
    private var widest = 0.0
    private var last: FastTextEngine.FastLine?
    private let factor: Float

    init(style: TextStyle) { factor = Float(style.lineHeight) }
    init(lineHeight: Float) { factor = lineHeight }

    mutating func append(_ line: FastTextEngine.FastLine) {
        baseline = count == 0 ? line.metric.ascent : baseline + Int32(factor * Float(line.metric.pitch))
        widest = max(widest, PangoTextEngine.points(line.width))
        last = line
        count += 1
    }

    func summary(truncated: Bool) -> TextSummary {
        guard let last else { return TextLayout.empty.summary }
        let top = PangoTextEngine.points(baseline - last.metric.ascent)
        let height = PangoTextEngine.points(last.metric.ascent + last.metric.descent)
        return TextSummary(
            lineCount: count, width: widest, height: top + height,
            lastLineWidth: PangoTextEngine.points(last.width), lastLineTop: top, lastLineHeight: height,
            lastLineIsRightToLeft: last.rightToLeft, isTruncated: truncated)
    }
}

/// What `FastTextEngine.prepare` keeps: its style, the text and its packed segments, inline in
/// one allocation (4 bytes for most segments, 12 for the others, plus a 40-byte header).
/// Immutable.
final class FastStorage: ManagedBuffer<FastStorageHeader, UInt32> {
    static func make(
        text: String, context: FastStyleContext, count: Int, words: [UInt32],
        delegated: DelegatedText?, engine: UInt32, faces: FastFaces? = nil
    ) -> FastStorage {
        let made = unsafeDowncast(
            FastStorage.create(minimumCapacity: words.count) { _ in
                FastStorageHeader(text: text, context: context, extra: delegated ?? faces, count: Int32(count), engine: engine)
            }, to: FastStorage.self)
        made.withUnsafeMutablePointerToElements { e in
            words.withUnsafeBufferPointer { if let base = $0.baseAddress { e.initialize(from: base, count: $0.count) } }
        }
        return made
    }

    var count: Int { Int(header.count) }
    var engine: UInt32 { header.engine }
    var context: FastStyleContext { header.context }
    var delegated: PreparedText? {
        guard let extra = header.extra, type(of: extra) == DelegatedText.self else { return nil }
        return unsafeDowncast(extra, to: DelegatedText.self).prepared
    }
    var faces: FastFaces? {
        guard let extra = header.extra, type(of: extra) == FastFaces.self else { return nil }
        return unsafeDowncast(extra, to: FastFaces.self)
    }

    /// Bytes of this object as allocated: object header, storage header, the element capacity
    /// malloc gave (ManagedBuffer reads it from the allocation), and malloc's own 8 bytes.
    var byteCost: Int { 16 + MemoryLayout<FastStorageHeader>.stride + capacity * MemoryLayout<UInt32>.stride + 8 }

    func hasText(_ text: String) -> Bool {
        var a = header.text, b = text
        return a.withUTF8 { p in b.withUTF8 { q in p.count == q.count && (p.count == 0 || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0) } }
    }

    /// The segments decoded (with absolute ends), in a temporary buffer.
    @inline(__always) func withSegments<R>(_ body: (UnsafeBufferPointer<FastSegment>) -> R) -> R {
        let n = count
        return withUnsafeMutablePointerToElements { words in FastStorage.withSegments(UnsafePointer(words), count: n, body) }
    }

    /// `count` segments packed at `words` decoded (with absolute ends), in a temporary buffer.
    @inline(__always) static func withSegments<R>(_ words: UnsafePointer<UInt32>, count n: Int, _ body: (UnsafeBufferPointer<FastSegment>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: FastSegment.self, capacity: max(1, n)) { buffer in
            var k = 0
            forEachSegment(words, count: n) { s in
                buffer.initializeElement(at: k, to: s)
                k += 1
                return true
            }
            return body(UnsafeBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// The segments decoded one at a time, in order, until `body` returns false (no buffer: for
    /// a caller that may stop early).
    func forEachSegment(_ body: (FastSegment) -> Bool) {
        let n = count
        withUnsafeMutablePointerToElements { words in FastStorage.forEachSegment(UnsafePointer(words), count: n, body) }
    }

    /// The words segments `0..<count` take (1 for a short one, 3 for a long one).
    var wordCount: Int {
        var w = 0
        withUnsafeMutablePointerToElements { words in
            for _ in 0..<count { w += words[w] & FastSegment.longMarker == 0 ? 1 : 3 }
        }
        return w
    }

    /// `count` segments packed at `words` decoded one at a time, in order, until `body` returns
    /// false.
    static func forEachSegment(_ words: UnsafePointer<UInt32>, count n: Int, _ body: (FastSegment) -> Bool) {
        let spaces = FastSpaceWidths.slots  // read once, not per segment
        do {
            var start = 0, w = 0
            for _ in 0..<n {
                let s: FastSegment
                if words[w] & FastSegment.longMarker == 0 {
                    s = FastSegment(short: words[w], start: start, spaces: spaces); w += 1
                } else {
                    s = FastSegment(UInt64(words[w + 1]) | UInt64(words[w + 2]) << 32, start: start); w += 3
                }
                if !body(s) { return }
                start = s.end
            }
        }
    }

    /// The sanitised text's UTF-8 (what the segments' offsets count).
    func withText<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var t = header.text
        return t.withUTF8(body)
    }

    /// End of bytes `start..<end` without their trailing whitespace.
    func contentEnd(_ start: Int, _ end: Int) -> Int {
        withText { bytes in
            var e = end
            while e > start {
                let b = bytes[e - 1]
                if b == 0x20 || b == 0x09 { e -= 1; continue }
                if e - start >= 3, b == 0x80, bytes[e - 2] == 0x80, bytes[e - 3] == 0xE3 { e -= 3; continue }
                break
            }
            return e
        }
    }
}

/// ICU's line breaker (the segmenter `FastTextEngine` uses), for tests and tools.
enum LineBreaker {
    /// Break opportunities of `text` after offset 0 as UTF-8 byte offsets, each with whether it
    /// is mandatory. The end of the text is always the last.
    /// `icuOnly`: always through ICU, not the plain-prose shortcut (what it is tested against).
    static func breaks(_ text: String, icuOnly: Bool = false) -> [(offset: Int, hard: Bool)] {
        var copy = text
        return copy.withUTF8 { bytes in
            guard bytes.count > 0 else { return [] }
            var out = [Int32](repeating: 0, count: bytes.count + 1)
            var hard = [UInt8](repeating: 0, count: bytes.count + 1)
            let n = bytes.withMemoryRebound(to: CChar.self) { raw in
                icuOnly
                    ? clb_line_breaks_icu(raw.baseAddress, Int32(raw.count), &out, &hard, Int32(out.count))
                    : clb_line_breaks(raw.baseAddress, Int32(raw.count), &out, &hard, Int32(out.count))
            }
            return (0..<max(0, Int(n))).map { (Int(out[$0]), hard[$0] != 0) }
        }
    }
}

/// A segment as `FastTextEngine.segment` plans it: its bytes (`end` after its separator), the
/// separator's length (a hard break), its paragraph's direction, and the neighbours its shape
/// depends on.
struct PlannedSegment {
    // 32-bit offsets (texts over 1 GB go to Pango): a few words a segment to copy.
    private var start32: Int32, end32: Int32
    private var prefix32: (Int32, Int32), context32: (Int32, Int32)  // (-1, -1): none
    private var separator8: UInt8
    var rightToLeft: Bool
    var known: SegmentMemo.Value?
    /// The segment's key in the thread's memo: its length (0: it does not fit, no look-up), where
    /// it is in the scratch's whole keys (-1: the segment's own bytes in the text), its hash.
    var memoKeyLength: UInt8 = 0
    var memoKeyAt: Int32 = -1
    var memoHash: UInt64 = 0
    /// The memo looks the segment up by its own bytes (no neighbours in its key; not empty).
    var memoInPlace: Bool { prefix32.0 < 0 && context32.0 < 0 && end32 - Int32(separator8) > start32 }

    init(start: Int, end: Int, separator: Int, rightToLeft: Bool, prefix: Range<Int>?, context: Range<Int>?) {
        start32 = Int32(start); end32 = Int32(end); separator8 = UInt8(separator); self.rightToLeft = rightToLeft
        prefix32 = prefix.map { (Int32($0.lowerBound), Int32($0.upperBound)) } ?? (-1, -1)
        context32 = context.map { (Int32($0.lowerBound), Int32($0.upperBound)) } ?? (-1, -1)
    }
    var start: Int { Int(start32) }
    var end: Int { Int(end32) }
    var separator: Int { Int(separator8) }
    var prefix: Range<Int>? { prefix32.0 < 0 ? nil : Int(prefix32.0)..<Int(prefix32.1) }
    var context: Range<Int>? { context32.0 < 0 ? nil : Int(context32.0)..<Int(context32.1) }
}

/// The shape summaries (and space indexes) of the segments one `PrepareScratch` looked up
/// lately, read and written without the engine's lock by the thread that holds the scratch, so
/// most segments of a text need no shared look-up. Two-way set-associative: a set keeps the
/// last two keys that hashed to it (a chat's vocabulary has more words than the sets, and a
/// direct-mapped table lost a quarter of its look-ups to collisions).
///
/// A key is a segment's bytes with a seed that stands for the rest of what its shape depends
/// on — the style and the paragraph's direction (`seed(styleID:rtl:)`) — for a segment whose
/// neighbours do not matter: looked up in place, in the text. Other segments (a script prefix
/// or a space context) use their whole `FastShaper` key, with the seed `wholeKey`. Keys of up
/// to `keyBytes` bytes; longer ones always go to the shared cache. Values are what the shared
/// cache gives for the same key: shapes depend only on the key.
final class SegmentMemo {
    struct Value {
        var summary: FastSegmentSummary
        var spaceIndex: Int8  // -1: none (the table of space widths was full)
    }
    /// One cache line: the key's hash, seed and length, the value, and the key's bytes.
    private struct Slot {
        var hash: UInt64 = 0
        var seed: UInt64 = 0
        var value = Value(summary: FastSegmentSummary(content: 0, space: 0, metric: 0, unmodelled: false), spaceIndex: -1)
        var length: UInt8 = 0  // 0: empty (no key is empty)
        var key: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }
    static let sets = 4_096
    static let keyBytes = 32
    /// The seed of a whole `FastShaper` key (which holds the style and the direction itself).
    static let wholeKey: UInt64 = 1 << 40
    /// Two slots a set, side by side, each set on two whole cache lines.
    private let slots: UnsafeMutablePointer<Slot>
    private static let keyOffset = MemoryLayout<Slot>.offset(of: \Slot.key)!

    init() {
        precondition(MemoryLayout<Slot>.stride == 64)
        slots = UnsafeMutableRawPointer.allocate(byteCount: 2 * Self.sets * 64, alignment: 64)
            .bindMemory(to: Slot.self, capacity: 2 * Self.sets)
        slots.initialize(repeating: Slot(), count: 2 * Self.sets)
    }
    deinit {
        slots.deinitialize(count: 2 * Self.sets)
        UnsafeMutableRawPointer(slots).deallocate()
    }

    /// The seed of a segment looked up by its own bytes.
    @inline(__always)
    static func seed(styleID: UInt32, rtl: Bool) -> UInt64 { UInt64(styleID) | (rtl ? 1 << 32 : 0) }

    @inline(__always)
    static func hash(_ bytes: UnsafePointer<UInt8>, length: Int, seed: UInt64) -> UInt64 {
        fastHash(UnsafeRawBufferPointer(start: bytes, count: length), seed: seed &* 0xD6E8_FEB8_6659_FD93)
    }

    @inline(__always)
    private func set(_ hash: UInt64) -> Int { 2 * (Int(truncatingIfNeeded: hash) & (Self.sets - 1)) }

    /// Asks for the cache lines of `hash`'s set, without waiting for them.
    @inline(__always)
    func prefetch(_ hash: UInt64) { clb_prefetch_pair(slots + set(hash)) }

    func find(_ hash: UInt64, seed: UInt64, _ bytes: UnsafePointer<UInt8>, length: Int) -> Value? {
        let i = set(hash)
        for j in i...(i + 1) {
            let slot = slots + j
            if slot.pointee.hash == hash, slot.pointee.seed == seed, Int(slot.pointee.length) == length,
                memcmp(UnsafeRawPointer(slot) + Self.keyOffset, bytes, length) == 0
            {
                return slot.pointee.value
            }
        }
        return nil
    }

    /// Keeps `value` for the key `bytes` (`length` ≤ `keyBytes`) with `seed`: first in its set,
    /// where the one that was first becomes second.
    func insert(_ hash: UInt64, seed: UInt64, _ bytes: UnsafePointer<UInt8>, length: Int, _ value: Value) {
        let i = set(hash)
        slots[i + 1] = slots[i]
        slots[i] = Slot(hash: hash, seed: seed, value: value, length: UInt8(length))
        (UnsafeMutableRawPointer(slots + i) + Self.keyOffset).copyMemory(from: bytes, byteCount: length)
    }
}

/// The buffers of one `FastTextEngine.prepare`: line breaks from ICU, the planned segments and
/// the packed words.
/// One thread uses a scratch (its own: `PrepareThreadState`): no dynamic exclusivity checks.
final class PrepareScratch {
    var inUse = false
    @exclusivity(unchecked) var breaks: [Int32] = []
    @exclusivity(unchecked) var hardBreaks: [UInt8] = []
    @exclusivity(unchecked) var segments: [PlannedSegment] = []
    @exclusivity(unchecked) var packed: [UInt32] = []
    /// A segment's look-up key for the shared cache.
    @exclusivity(unchecked) var key = [UInt8](repeating: 0, count: 64)
    let memo = SegmentMemo()
    /// The whole memo keys of one text's segments (`PlannedSegment.memoKeyAt`), end to end.
    private var wholeKeys = UnsafeMutablePointer<UInt8>.allocate(capacity: 1_024)
    private var wholeKeyCapacity = 1_024

    deinit { wholeKeys.deallocate() }

    /// Room for one more whole key after the first `used` bytes (kept) of the whole keys.
    func wholeKeySpace(after used: Int) -> UnsafeMutablePointer<UInt8> {
        if used + SegmentMemo.keyBytes > wholeKeyCapacity {
            let capacity = 2 * (used + SegmentMemo.keyBytes)
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            grown.update(from: wholeKeys, count: used)
            wholeKeys.deallocate()
            wholeKeys = grown
            wholeKeyCapacity = capacity
        }
        return wholeKeys + used
    }

    /// The memo key of planned segment `s` (of text `bytes`, in style `styleID`) and its seed.
    @inline(__always)
    func memoKey(of s: PlannedSegment, in bytes: UnsafeBufferPointer<UInt8>, styleID: UInt32) -> (UnsafePointer<UInt8>, UInt64) {
        s.memoKeyAt < 0
            ? (bytes.baseAddress! + s.start, SegmentMemo.seed(styleID: styleID, rtl: s.rightToLeft))
            : (UnsafePointer(wholeKeys + Int(s.memoKeyAt)), SegmentMemo.wholeKey)
    }
}

/// A lock that can be tried: `lockSpinning` tries a while before sleeping. The sections
/// `FastTextEngine.prepare` holds its locks for are short, and putting a thread to sleep and
/// waking it (a system call each way) costs more than that wait.
protocol TryLocking: NSLocking {
    func `try`() -> Bool
}
extension NSLock: TryLocking {}
extension NSRecursiveLock: TryLocking {}
extension TryLocking {
    @inline(__always)
    func lockSpinning() {
        var tries = 0
        while !self.try() {
            tries += 1
            if tries == 4_096 { lock(); return }
        }
    }
}

/// One shard of a `FastTextEngine`'s prepared texts: a dictionary by hash of (style, text) and
/// its lock. Full, it starts again empty (the layouts that hold prepared texts keep them).
final class PreparedShard: @unchecked Sendable {
    static let count = 16
    private let lock = NSLock()
    private let capacity: Int
    @exclusivity(unchecked) private var texts: [UInt64: FastStorage] = [:]

    init(capacity: Int) { self.capacity = capacity }

    /// The prepared text of `text` in `context`, when kept.
    func find(_ key: UInt64, context: FastStyleContext, text: String) -> FastStorage? {
        lock.lockSpinning(); defer { lock.unlock() }
        guard let hit = texts[key], hit.context === context, hit.hasText(text) else { return nil }
        return hit
    }

    func insert(_ key: UInt64, _ storage: FastStorage) {
        // The texts let go when the shard is full are freed after the lock, not while other
        // threads wait for it.
        var dropped: [UInt64: FastStorage] = [:]
        lock.lockSpinning()
        if texts.count >= capacity {
            swap(&dropped, &texts)
            texts.reserveCapacity(capacity)
        }
        texts[key] = storage
        lock.unlock()
        _ = consume dropped
    }

    func forget() {
        lock.lock(); defer { lock.unlock() }
        texts = [:]
    }

    /// Texts kept, and bytes: the hash table and the storages with their segments.
    var statistics: (texts: Int, bytes: Int) {
        lock.lock(); defer { lock.unlock() }
        var bytes = texts.capacity * (MemoryLayout<UInt64>.stride + MemoryLayout<FastStorage>.stride)
        for storage in texts.values { bytes += storage.byteCost }
        return (texts.count, bytes)
    }
}

/// What a thread keeps for the fast engines it prepares with (the last four): its scratch
/// buffers and segment memo, and the contexts of the styles it used lately. Found through a
/// pthread key, so `prepare` takes no lock for them.
final class PrepareThreadState {
    final class Entry {
        let engine: UInt64
        let scratch = PrepareScratch()
        /// The contexts of the styles this thread used lately, not retained: the engine's shaper
        /// keeps every context it makes while the engine lives, and only that engine reads its
        /// entry (so an entry left behind by an engine that is gone keeps nothing alive).
        @exclusivity(unchecked) var contexts: [(style: TextStyle, context: Unmanaged<FastStyleContext>)] = []
        /// Lines being laid out (`layout`, `summary` with a line limit).
        @exclusivity(unchecked) var lines: [FastTextEngine.FastLine] = []
        init(engine: UInt64) { self.engine = engine }
    }
    @exclusivity(unchecked) private var entries: [Entry] = []

    func entry(for engine: UInt64) -> Entry {
        if let last = entries.last, last.engine == engine { return last }
        if let i = entries.firstIndex(where: { $0.engine == engine }) {
            let found = entries.remove(at: i)
            entries.append(found)
            return found
        }
        if entries.count == 4 { entries.removeFirst() }
        let made = Entry(engine: engine)
        entries.append(made)
        return made
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { state in
            if let state { Unmanaged<PrepareThreadState>.fromOpaque(state).release() }
        }
        return key
    }()

    /// This thread's state (made on first use, released when the thread ends).
    static var current: PrepareThreadState {
        if let raw = pthread_getspecific(key) { return Unmanaged<PrepareThreadState>.fromOpaque(raw).takeUnretainedValue() }
        let made = PrepareThreadState()
        pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
        return made
    }
}
