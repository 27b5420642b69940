import BubbleCore
import BubbleStore
import BubbleText
import Foundation

/// An open conversation laid out by the layout engine at the reader's column width: every
/// message's top and the whole height, so that the viewer's scrollbar covers the whole
/// conversation and rows land where the engine put them (no jump when they load).
struct ViewGeometry: Sendable {
    /// The engine's scrolling layout (every row's frame; the conversation it laid out).
    let list: ScrollingLayout
    /// Message index → sequence number.
    let seqs: [Int64]
    /// The layouter (and text engine, whose prepared texts the layout keeps) that made it.
    let layouter: Layouter
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
        if last < 0 { return max(0, count - 1)..<count }   // only typing rows
        return first..<(last + 1)
    }

    func top(of k: Int) -> Double { list.top(ofMessage: k) ?? 0 }
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
    struct Key: Hashable { var conversation: Int64; var theme: String }
    enum State { case building(done: Int, total: Int), ready(ViewGeometry) }

    let store: SQLiteStore
    let pictures: any PictureDecoder
    let capacity: Int
    private var states: [Key: State] = [:]
    private var used: [Key: UInt64] = [:]
    private var clock: UInt64 = 0
    private var failures: [Key: String] = [:]

    init(store: SQLiteStore, pictures: any PictureDecoder, capacity: Int = 3_000_000) {
        self.store = store
        self.pictures = pictures
        self.capacity = capacity
    }

    /// The geometry at `width`, or how far its first build has come (it is started when
    /// needed; `wait` waits for it instead).
    func geometry(_ key: Key, width: Double, theme: Theme, wait: Bool = false) async throws -> Result<ViewGeometry, Progress> {
        clock += 1
        used[key] = clock
        if let reason = failures.removeValue(forKey: key) { throw StoreError(path: store.path, reason: reason) }
        switch states[key] {
        case .ready(let g) where abs(g.width - width) < 0.5:
            return .success(g)
        case .ready(let g):
            // Another width: the same conversation re-laid out from what the layout kept.
            let layouter = g.layouter, list = g.list
            let relaid = try await Task.detached(priority: .userInitiated) { () throws -> ScrollingLayout in
                try layouter.value.scrollingLayout(list, width: width)
            }.value
            let next = ViewGeometry(list: relaid, seqs: g.seqs, layouter: layouter)
            states[key] = .ready(next)
            return .success(next)
        case .building(let done, let total):
            if wait { return try await waitForBuild(key, width: width, theme: theme) }
            return .failure(Progress(done: done, total: total))
        case nil:
            let total = try store.count(of: key.conversation)
            states[key] = .building(done: 0, total: total)
            let layouter = Layouter(value: ConversationLayouter(style: theme.layoutStyle, engine: TextEngineKind.fast.makeEngine(),
                                                                timeZone: Pages.timeZone))
            let resolver = Resolver(value: MediaResolver(decoder: pictures, baseFolder: store.mediaFolder, style: theme.layoutStyle))
            Task.detached(priority: .userInitiated) { [store] in
                do {
                    let g = try await Self.build(key.conversation, store: store, layouter: layouter, resolver: resolver, width: width) { done in
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

    /// Whether the conversation is laid out (or being laid out) in that theme.
    func has(_ key: Key) -> Bool { states[key] != nil }

    private func waitForBuild(_ key: Key, width: Double, theme: Theme) async throws -> Result<ViewGeometry, Progress> {
        while true {
            if let reason = failures.removeValue(forKey: key) { throw StoreError(path: store.path, reason: reason) }
            if case .ready = states[key] { return try await geometry(key, width: width, theme: theme) }
            if states[key] == nil { throw StoreError(path: store.path, reason: "the conversation's layout was dropped") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    private func progress(_ key: Key, done: Int, total: Int) {
        if case .building = states[key] { states[key] = .building(done: done, total: total) }
    }

    private func finish(_ key: Key, _ g: ViewGeometry) {
        states[key] = .ready(g)
        // The least recently used go first once the messages laid out pass the capacity.
        var held = states.values.reduce(0) { n, s in if case .ready(let g) = s { return n + g.count } else { return n } }
        for (k, _) in used.sorted(by: { $0.value < $1.value }) where held > capacity && k != key {
            if case .ready(let old) = states[k] { held -= old.count; states[k] = nil; used[k] = nil }
        }
    }

    private func fail(_ key: Key, _ error: Error) {
        states[key] = nil
        failures[key] = (error as? StoreError)?.reason ?? "\(error)"
    }

    /// Forgets a conversation's geometries (its messages changed).
    func invalidate(_ conversation: Int64) {
        for k in states.keys where k.conversation == conversation {
            if case .ready = states[k] { states[k] = nil }
        }
    }

    /// Reads the conversation in chunks and lays it out.
    static func build(_ id: Int64, store: SQLiteStore, layouter: Layouter, resolver: Resolver, width: Double,
                      progress: @Sendable (Int) async -> Void) async throws -> ViewGeometry {
        guard let c = try store.conversation(id: id) else { throw StoreError(path: store.path, reason: "has no conversation \(id)") }
        var messages: [Message] = []
        var seqs: [Int64] = []
        messages.reserveCapacity(c.messageCount)
        seqs.reserveCapacity(c.messageCount)
        var after: Int64 = 0
        while true {
            let chunk = try store.messages(in: id, after: after, limit: 20_000)
            guard let last = chunk.last else { break }
            for s in chunk { messages.append(s.message); seqs.append(s.seq) }
            after = last.seq
            await progress(messages.count)
        }
        // Pictures measured, videos given their frames, as every renderer does before laying out
        // (the messages handed over, not copied: only those with media are rewritten).
        var conversation = Conversation(title: c.title, participants: c.participants, messages: messages)
        messages = []
        conversation = resolver.value.resolve(conversation).0
        let list = try layouter.value.scrollingLayout(conversation, width: width)
        return ViewGeometry(list: list, seqs: seqs, layouter: layouter)
    }
}
