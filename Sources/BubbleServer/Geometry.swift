import BubbleCore
import BubbleMedia
import BubbleStore
import BubbleText
import CHeap
import Foundation
import Synchronization

/// An open conversation laid out by the layout engine at the reader's column width: every
/// message's top and the whole height, so that the viewer's scrollbar covers the whole
/// conversation and rows land where the engine put them (no jump when they load).
struct ViewGeometry: Sendable {
    /// The engine's scrolling layout (every row's frame; the conversation it laid out).
    var list: ScrollingLayout
    /// Message index → sequence number.
    var seqs: [Int64]
    /// The layouter (and text engine, whose prepared texts the layout keeps) that made it.
    let layouter: Layouter
    /// The conversation's revision it shows (live changes after it are applied by `sync`).
    var rev: Int64 = 0
    /// Messages changed since the layout was made (edits, deletions, reactions), shown in their
    /// rows at once while the conversation is laid out again.
    var changed: [Int: Message] = [:]
    var width: Double { list.width }
    var height: Double { list.height }
    var count: Int { seqs.count }

    /// The index of the message numbered `seq` (the nearest later one when it is gone).
    func index(of seq: Int64) -> Int {
        var lo = 0, hi = seqs.count
        while lo < hi { let mid = (lo + hi) / 2; if seqs[mid] < seq { lo = mid + 1 } else { hi = mid } }
        return min(lo, max(0, seqs.count - 1))
    }

    /// The messages whose rows meet `y ..< y + height`.
    func messages(from y: Double, height: Double) -> Range<Int> {
        let rows = list.rowIndices(in: Rect(x: 0, y: y, width: width, height: max(1, height)))
        guard !rows.isEmpty else {
            // Past the end: the last message; before the start: the first.
            return y >= list.height ? max(0, count - 1)..<count : 0..<min(1, count)
        }
        var first = count, last = -1
        for r in [rows.lowerBound, rows.upperBound - 1] {
            if let k = list.messageIndex(ofRow: r) { first = min(first, k); last = max(last, k) }
        }
        if last < 0 { return max(0, count - 1)..<count }  // only typing rows
        return first..<(last + 1)
    }

    func top(of k: Int) -> Double { list.top(ofMessage: k) ?? 0 }

    /// Message `k` as it is now (a layout that holds its messages: not a compact one).
    func message(_ k: Int) -> Message { changed[k] ?? list.conversation.messages[k] }
}

/// The newest committed revision per conversation, as the store's feed hands changes over.
final class Revisions: Sendable {
    private let newest = Mutex<[Int64: Int64]>([:])
    func saw(_ change: StoredChange) { newest.withLock { $0[change.conversation] = max($0[change.conversation] ?? 0, change.rev) } }
    func latest(_ conversation: Int64) -> Int64 { newest.withLock { $0[conversation] ?? 0 } }
}

/// A layouter handed between tasks: its fast text engine measures from several threads (the
/// first layout already measures on every core).
struct Layouter: @unchecked Sendable {
    let value: ConversationLayouter
}

/// A media resolver handed to the task that builds a geometry (used there alone).
struct Resolver: @unchecked Sendable {
    let value: MediaResolver
}

/// The geometries of the conversations being viewed, per conversation and theme: built on the
/// first request (messages read from the store in chunks, laid out on every core), re-laid out
/// from the prepared texts when a reader's column has another width (~0.3–0.5 µs a message),
/// the least recently used dropped past `capacity` messages in all.
actor Geometries {
    /// A conversation in a theme, seen by `perspective` (their messages on the right), or as
    /// stored when nil.
    struct Key: Hashable { var conversation: Int64; var theme: String; var perspective: String? = nil }

    /// `m` as `perspective` sees it: their messages outgoing, everyone else's incoming.
    static func seen(_ m: Message, by perspective: String?) -> Message {
        guard let perspective, m.kind == .message, let sender = m.sender else { return m }
        var m = m
        m.direction = sender == perspective ? .outgoing : .incoming
        return m
    }
    /// `messages` as a layout seen by `perspective` takes them: pictures measured and videos
    /// given their frames, as every renderer does before laying out (only messages with media
    /// are rewritten).
    static func seen(_ messages: [Message], by perspective: String?, resolver: MediaResolver) -> [Message] {
        // No perspective: the messages as they are (not copied one by one).
        resolver.resolve(Conversation(messages: perspective == nil ? messages : messages.map { seen($0, by: perspective) })).0.messages
    }

    enum State { case building(done: Int, total: Int), ready(ViewGeometry) }

    let store: any ConversationReading & LiveStore
    let pictures: any PictureDecoder
    let capacity: Int
    /// Conversations of at least this many messages are laid out compactly
    /// (`ConversationLayouter.compact`): the layout keeps no messages, windows read theirs from
    /// the store, a re-layout reads those it measures in full.
    let compactFrom: Int
    /// One text engine for every layout: its shaped-segment cache (64 MB at most) and its
    /// prepared texts are shared, not one set per conversation and reader.
    let engine: any TextEngine = FastTextEngine(preparedCapacity: 16_384)
    private var states: [Key: State] = [:]
    private var used: [Key: UInt64] = [:]
    private var clock: UInt64 = 0
    private var failures: [Key: String] = [:]
    /// Readers waiting for a layout being built (`waitForBuild`), resumed when it is ready or fails.
    private var builds: [Key: [CheckedContinuation<Void, Never>]] = [:]

    let metrics: ServerMetrics?

    /// The newest revision the store's feed has committed, per conversation (this server's
    /// changes and, on PostgreSQL, the other nodes'): a window request asks the store for changes
    /// only when it is past the geometry's.
    let revisions = Revisions()

    init(
        store: any ConversationReading & LiveStore, pictures: any PictureDecoder, capacity: Int = 3_000_000, compactFrom: Int = relayoutAtOnce,
        metrics: ServerMetrics? = nil
    ) {
        self.store = store
        self.compactFrom = compactFrom
        self.metrics = metrics
        self.pictures = pictures
        self.capacity = capacity
        store.feed.listen { [revisions] change in revisions.saw(change) }
    }

    /// The geometry at `width`, or how far its first build has come (it is started when
    /// needed; `wait` waits for it instead).
    func geometry(_ key: Key, width: Double, theme: Theme, wait: Bool = false) async throws -> Result<ViewGeometry, Progress> {
        clock += 1
        used[key] = clock
        if let reason = failures.removeValue(forKey: key) { throw StoreError(path: store.path, reason: reason) }
        switch states[key] {
        case .ready(let g) where abs(g.width - width) < 0.5:
            return .success(try await sync(key, g, theme: theme))
        case .ready(let g):
            // Another width: a layout of its own (the first stays for its readers), made from
            // the first by re-layout and sharing its records.
            let slot = Int(width.rounded())
            if let other = widths[key]?[slot] {
                clock += 1
                widthUsed[key, default: [:]][slot] = clock
                return .success(try await sync(key, other, slot: slot, theme: theme))
            }
            let layouter = g.layouter, list = g.list
            let relaid: ScrollingLayout
            if list.isCompact {
                // The rows the formula cannot tell are measured with their messages, read from the store.
                let pending = try await Task.detached(priority: .userInitiated) { () throws -> PendingRelayout in
                    try layouter.value.relayout(list, width: width)
                }.value
                let given = try await messages(pending.messagesToMeasure, of: g, key: key, theme: theme)
                relaid = try await Task.detached(priority: .userInitiated) { () throws -> ScrollingLayout in
                    try layouter.value.finish(list, pending, messages: given)
                }.value
            } else {
                relaid = try await Task.detached(priority: .userInitiated) { () throws -> ScrollingLayout in
                    try layouter.value.scrollingLayout(list, width: width)
                }.value
            }
            var next = ViewGeometry(list: relaid, seqs: g.seqs, layouter: layouter, rev: g.rev)
            next.changed = g.changed
            // The first layout may have been replaced meanwhile (laid out again): this one
            // is of the old one, and goes with it.
            guard case .ready(let base) = states[key], base.rev == g.rev, base.count == g.count else {
                return .success(try await sync(key, next, slot: nil, theme: theme, keep: false))
            }
            clock += 1
            widths[key, default: [:]][slot] = next
            widthUsed[key, default: [:]][slot] = clock
            // The least recently used widths go past `widthsPerKey`.
            while let used = widthUsed[key], used.count > Self.widthsPerKey, let oldest = used.min(by: { $0.value < $1.value })?.key {
                widths[key]?[oldest] = nil
                widthUsed[key]?[oldest] = nil
            }
            return .success(try await sync(key, next, slot: slot, theme: theme))
        case .building(let done, let total):
            if wait { return try await waitForBuild(key, width: width, theme: theme) }
            return .failure(Progress(done: done, total: total))
        case nil:
            let total = try await store.count(of: key.conversation)
            states[key] = .building(done: 0, total: total)
            let layouter = Layouter(value: ConversationLayouter(style: theme.layoutStyle, engine: engine, timeZone: Pages.timeZone))
            let resolver = Resolver(value: MediaResolver(decoder: pictures, baseFolder: store.mediaFolder, style: theme.layoutStyle))
            Task.detached(priority: .userInitiated) { [store, compactFrom] in
                do {
                    let g = try await Self.build(
                        key, store: store, layouter: layouter, resolver: resolver, width: width,
                        compactFrom: compactFrom
                    ) { done in
                        await self.progress(key, done: done, total: total)
                    }
                    await self.finish(key, g)
                } catch {
                    await self.fail(key, error)
                }
            }
            if wait { return try await waitForBuild(key, width: width, theme: theme) }
            return .failure(Progress(done: 0, total: total))
        }
    }

    struct Progress: Error { var done: Int; var total: Int }

    /// Messages `indices` of `g`'s conversation as its layout saw them (perspective, media
    /// measured), read from the store in runs of nearby messages.
    nonisolated func messages(_ indices: [Int], of g: ViewGeometry, key: Key, theme: Theme) async throws -> [Int: Message] {
        var out: [Int: Message] = [:]
        out.reserveCapacity(indices.count)
        var i = 0
        while i < indices.count {
            // One read for a run of indices at most 64 apart (up to 5,000 messages).
            var j = i
            while j + 1 < indices.count, indices[j + 1] - indices[j] <= 64, indices[j + 1] - indices[i] < 5_000 { j += 1 }
            let lo = indices[i], hi = indices[j]
            let read = try await window(lo..<(hi + 1), of: g, key: key, theme: theme)
            for k in indices[i...j] { out[k] = read[k - lo] }
            i = j + 1
        }
        return out
    }

    /// Messages `range` of `g`'s conversation as its layout saw them, read from the store (a
    /// compact layout holds none): seen from the key's perspective, photos measured.
    nonisolated func window(_ range: Range<Int>, of g: ViewGeometry, key: Key, theme: Theme) async throws -> [Message] {
        guard !range.isEmpty else { return [] }
        let first = g.seqs[range.lowerBound], last = g.seqs[range.upperBound - 1]
        let stored = try await store.messages(in: key.conversation, after: first - 1, limit: range.count)
        // Messages keep their numbers (a deleted one stays, as a tombstone): the same numbers, in order.
        guard stored.count == range.count, stored.first?.seq == first, stored.last?.seq == last else {
            throw StoreError(path: store.path, reason: "conversation \(key.conversation) changed under its layout (messages \(first)–\(last))")
        }
        return Self.seen(
            stored.map(\.message), by: key.perspective,
            resolver: MediaResolver(decoder: pictures, baseFolder: store.mediaFolder, style: theme.layoutStyle))
    }

    /// Whether the conversation is laid out (or being laid out) in that theme.
    func has(_ key: Key) -> Bool { states[key] != nil }

    /// Waits (`wait=1`) for the layout being built: woken by `finish` or `fail`, no polling. A
    /// build always ends in one of them, so a waiter whose client went away waits for it too.
    private func waitForBuild(_ key: Key, width: Double, theme: Theme) async throws -> Result<ViewGeometry, Progress> {
        while true {
            if let reason = failures.removeValue(forKey: key) { throw StoreError(path: store.path, reason: reason) }
            if case .ready = states[key] { return try await geometry(key, width: width, theme: theme) }
            if states[key] == nil { throw StoreError(path: store.path, reason: "the conversation's layout was dropped") }
            await withCheckedContinuation { builds[key, default: []].append($0) }
        }
    }

    /// Resumes the readers waiting for `key`'s build.
    private func wake(_ key: Key) {
        for waiter in builds.removeValue(forKey: key) ?? [] { waiter.resume() }
    }

    private func progress(_ key: Key, done: Int, total: Int) {
        if case .building = states[key] { states[key] = .building(done: done, total: total) }
    }

    private func finish(_ key: Key, _ g: ViewGeometry) {
        var g = g
        // Another reader's layout of the same conversation (other side, theme or width) lends
        // its message numbers and, when equal, its packed breaks: one copy of each.
        for (k, state) in states where k.conversation == key.conversation {
            guard case .ready(let other) = state, other.seqs == g.seqs else { continue }
            g.seqs = other.seqs
            if g.list.shareBreaks(with: other.list) { break }
        }
        states[key] = .ready(g)
        wake(key)
        // What the reader's own copies took goes back to the system.
        if g.list.isCompact { _ = bk_heap_trim() }
        // The least recently used go first once the messages laid out pass the capacity.
        var held = states.values.reduce(0) { n, s in if case .ready(let g) = s { return n + g.count } else { return n } }
        for (k, _) in used.sorted(by: { $0.value < $1.value }) where held > capacity && k != key {
            if case .ready(let old) = states[k] { held -= old.count; states[k] = nil; used[k] = nil; widths[k] = nil; widthUsed[k] = nil }
        }
        measure()
    }

    /// What the layouts hold, for `/metrics`: messages, and the bytes of the layouts' arrays and
    /// of the message records they keep (an estimate: the texts' own storage is not counted).
    private func measure() {
        guard let metrics else { return }
        var messages = 0, bytes = 0
        for case .ready(let g) in states.values {
            messages += g.count
            bytes += Int(g.list.bytesPerMessage * Double(g.count)) + g.count * ((g.list.isCompact ? 0 : MemoryLayout<Message>.stride) + 8)
        }
        // Other widths: their own frames (the records are shared until a change).
        for g in widths.values.flatMap(\.values) { bytes += g.list.rowCount * 12 }
        metrics.layoutMessages.record(messages)
        metrics.layoutBytes.record(bytes)
    }

    private func fail(_ key: Key, _ error: Error) {
        states[key] = nil
        failures[key] = (error as? StoreError)?.reason ?? "\(error)"
        wake(key)
    }

    /// Conversations up to this many messages are laid out again at once when a message in them
    /// changes (~0.1 s); longer ones show the change at once in the old frames and are laid out
    /// again in the background.
    static let relayoutAtOnce = 20_000

    /// `g` brought up to the store's revision: new messages appended by the layout engine (one
    /// message measured each), changed ones shown at once and laid out again. The changes are
    /// read first (the actor may serve other requests meanwhile); then they are applied to the
    /// geometry as it is by then, without suspending, each change once (by revision).
    /// `slot`: the width of a layout kept beside the first one (nil: the first); `keep` false:
    /// a layout kept nowhere (brought up to date for one answer).
    private func sync(_ key: Key, _ g: ViewGeometry, slot: Int? = nil, theme: Theme, keep: Bool = true) async throws -> ViewGeometry {
        // The feed says when something was committed past the geometry (no store read otherwise).
        guard revisions.latest(key.conversation) > g.rev else { return g }
        var changes: [StoredChange] = []
        var from = g.rev
        while true {
            let more = try await store.changes(in: key.conversation, since: from, limit: 5_000)
            changes += more
            guard let last = more.last, more.count == 5_000 else { break }
            from = last.rev
        }
        guard !changes.isEmpty else { return g }
        // What the geometry is now (another request may have brought it further meanwhile).
        let current: ViewGeometry
        if !keep {
            current = g
        } else if let slot {
            guard let kept = widths[key]?[slot] else { return g }
            current = kept
        } else {
            guard case .ready(let kept) = states[key] else { return g }
            current = kept
        }
        var next = current
        // The stored copy goes, so that appending does not copy the arrays (a request still
        // holding the old value keeps its own).
        if keep, let slot { widths[key]?[slot] = nil } else if keep { states[key] = nil }
        defer { if keep, let slot { widths[key]?[slot] = next } else if keep { states[key] = .ready(next) } }
        let resolver = MediaResolver(decoder: pictures, baseFolder: store.mediaFolder, style: theme.layoutStyle)
        var relayout = false
        for c in changes where c.rev > next.rev {
            let message = Self.seen([c.message.message], by: key.perspective, resolver: resolver)[0]
            if c.message.seq > (next.seqs.last ?? 0) {
                try next.layouter.value.append(message, to: &next.list)
                next.seqs.append(c.message.seq)
            } else if c.kind == .message {
                // Added while the layout read the conversation: it has it already.
            } else {
                // A compact layout's windows read messages as they are now from the store.
                if !next.list.isCompact { next.changed[next.index(of: c.message.seq)] = message }
                relayout = true
            }
            next.rev = c.rev
        }
        guard relayout else { return next }
        if next.count <= Self.relayoutAtOnce, !next.list.isCompact {
            var conversation = next.list.conversation
            for (k, m) in next.changed { conversation.messages[k] = m }
            next.list = try next.layouter.value.scrollingLayout(conversation, width: next.width)
            next.changed = [:]
        } else if !relaying.contains(key) {
            // The first layout is laid out again (its width); the others are made from it anew.
            relaying.insert(key)
            var width = next.width
            if slot != nil || !keep, case .ready(let base) = states[key] { width = base.width }
            let layouter = next.layouter, resolver = Resolver(value: resolver)
            Task.detached(priority: .utility) { [store, compactFrom] in
                let fresh = try? await Self.build(
                    key, store: store, layouter: layouter, resolver: resolver, width: width,
                    compactFrom: compactFrom
                ) { _ in }
                await self.replace(key, fresh)
            }
        }
        return next
    }

    private var relaying: Set<Key> = []

    /// Layouts at other widths than the first, per conversation and theme (readers whose columns
    /// differ): each keeps its own frames and shares the first one's records until a change.
    private var widths: [Key: [Int: ViewGeometry]] = [:]
    private var widthUsed: [Key: [Int: UInt64]] = [:]
    static let widthsPerKey = 3

    /// A conversation laid out again in the background takes the place of the one shown (the
    /// changes after its revision are applied by the next `sync`).
    private func replace(_ key: Key, _ fresh: ViewGeometry?) {
        relaying.remove(key)
        guard let fresh, case .ready = states[key] else { return }
        states[key] = .ready(fresh)
        widths[key] = nil
        widthUsed[key] = nil
    }

    /// Forgets a conversation's geometries (its messages changed).
    func invalidate(_ conversation: Int64) {
        for k in states.keys where k.conversation == conversation {
            if case .ready = states[k] { states[k] = nil }
            widths[k] = nil
            widthUsed[k] = nil
        }
    }

    /// How many messages a first layout reads at a time.
    static let chunkSize = 20_000

    /// Reads the conversation in chunks and lays it out.
    static func build(
        _ key: Key, store: any ConversationReading & LiveStore, layouter: Layouter, resolver: Resolver, width: Double,
        compactFrom: Int, progress: @Sendable (Int) async -> Void
    ) async throws -> ViewGeometry {
        let id = key.conversation
        guard let c = try await store.conversation(id: id) else { throw StoreError(path: store.path, reason: "has no conversation \(id)") }
        // The revision first: whatever changes while the messages are read is applied again by `sync`.
        let rev = try await store.lastRev(of: id) ?? 0
        // A long conversation is laid out chunk by chunk as it is read, compact from the first
        // chunk: it never holds all its messages. A short one is read, then laid out whole.
        let compact = c.messageCount >= compactFrom
        var held: [Message] = []
        var seqs: [Int64] = []
        seqs.reserveCapacity(c.messageCount)
        var laid: ScrollingLayout?
        // The next chunk is read (and its media resolved) while this one is laid out.
        @Sendable func read(after: Int64) async throws -> (messages: [Message], seqs: [Int64]) {
            var chunk = try await store.messages(in: id, after: after, limit: Self.chunkSize)
            let seqs = chunk.map(\.seq)
            // Moved out from the end, not copied (a copy takes a reference on each of a message's strings).
            var messages: [Message] = []
            messages.reserveCapacity(chunk.count)
            while let stored = chunk.popLast() { messages.append(stored.message) }
            messages.reverse()
            return (Self.seen(messages, by: key.perspective, resolver: resolver.value), seqs)
        }
        var next = Task { try await read(after: 0) }
        defer { next.cancel() }
        while true {
            let (messages, chunkSeqs) = try await next.value
            guard let last = chunkSeqs.last else { break }
            next = Task { try await read(after: last) }
            seqs += chunkSeqs
            if compact {
                if laid == nil {
                    // Compact from the first message: every chunk is added as the later ones are.
                    var list = try layouter.value.scrollingLayout(
                        Conversation(title: c.title, participants: c.participants, messages: []), width: width)
                    layouter.value.compact(&list)
                    // Room for the whole conversation: the arrays grow once, not by doubling.
                    list.reserveCapacity(c.messageCount + 1_024)
                    laid = list
                }
                try layouter.value.extend(&laid!, with: messages)
            } else {
                held += messages
            }
            await progress(seqs.count)
        }
        var list: ScrollingLayout
        if let laid {
            list = laid
            // What the chunks' messages and prepared texts took goes back to the system (glibc
            // keeps freed small blocks in its arenas otherwise).
            _ = bk_heap_trim()
        } else {
            list = try layouter.value.scrollingLayout(Conversation(title: c.title, participants: c.participants, messages: held), width: width)
            held = []  // before the arrays are grown below
        }
        // Room for a live conversation to grow without copying its arrays at each message.
        list.reserveCapacity(seqs.count + 1_024)
        return ViewGeometry(list: list, seqs: seqs, layouter: layouter, rev: rev)
    }
}
