import Foundation

/// The threads a pipeline makes rows on, by number: at most `count - 1` workers, and the walker.
enum RowPipelineSlots {
    static let count = 8
    static let walker = count - 1
}

/// Measures a conversation's messages on the other cores, ahead of a first layout that walks
/// them in order on the calling thread and stitches their rows together
/// (`ConversationLayouter.rows(for:…)` needs only the message before, so any thread can make
/// them; `stitch` then takes tails and statuses off earlier rows and places the rows).
///
/// Messages go in chunks, claimed in order by the workers and by the walker itself: when the
/// chunk it is to stitch next is still being measured, the walker measures the next unclaimed
/// one instead of waiting, so every thread works whatever measuring and stitching cost. Chunks
/// are measured at most `ahead` chunks in front of the walker (a ring of results). A message
/// that failed is left nil: the walker measures it again and meets the same error in order.
///
/// Used only with an engine that prepares on several threads at once
/// (`TextEngine.preparesConcurrently`), for conversations long enough to pay for the threads.
final class RowPipeline<Made>: @unchecked Sendable {
    /// Fewest messages worth starting workers for.
    static var minimumMessages: Int { 2_048 }
    static var chunk: Int { 32 }
    static var ahead: Int { 64 }

    /// Makes message `i`'s rows (`i`: its index in `messages`), given what the message before it
    /// was; may append to its chunk's `words` (the rows say where theirs are). `slot`: the thread
    /// making them, one of `RowPipelineSlots.count` (no two threads of a pipeline share one; the
    /// walker's and the caller's without a pipeline is the last).
    typealias Make = (_ i: Int, _ after: ConversationLayout.LastMessage?, _ words: inout [UInt32], _ slot: Int) throws(LayoutError) -> Made

    private let messages: [Message], layouter: ConversationLayouter, produce: Make
    /// The index of `messages[0]` in the conversation, and what the message before it was (the
    /// messages continue a layout: `ConversationLayouter.extend`).
    private let base: Int, previous: ConversationLayout.LastMessage?
    private let chunks: Int
    /// Results by message, in a ring of `ahead` chunks: a slot holds rows (is initialised) when
    /// its `filled` flag says so; not until made, nor when measuring failed.
    private let ring: UnsafeMutablePointer<Made>
    private let filled: UnsafeMutablePointer<Bool>
    /// Per chunk in the ring: what its rows put in `words` (emptied when the chunk is made again).
    private let words: UnsafeMutablePointer<[UInt32]>
    private let ringSize = RowPipeline.chunk * RowPipeline.ahead
    /// Per chunk: 0 unclaimed, 1 being measured, 2 measured.
    private let state: UnsafeMutablePointer<UInt8>
    /// Guards `next`, `walking`, `state` and `stopped`; signalled when a chunk is made and when
    /// the walker moves on to the next chunk.
    private let condition = NSCondition()
    @exclusivity(unchecked) private var next = 0
    /// The chunk the walker is in.
    @exclusivity(unchecked) private var walking = 0
    @exclusivity(unchecked) private var stopped = false
    private let group = DispatchGroup()

    /// Hands every message of `messages` to `stitch` in order, with its rows when the other
    /// cores made them by `make` (`walk`) and its chunk's words, nil for the caller to make: all
    /// of them when the pipeline does not start (one core, an engine that prepares on one
    /// thread, a short chat). The rows are lent in place: `stitch` may move what it keeps out of
    /// them, and they are let go on the thread that made them when it can (`make` may leave only
    /// what `stitch` needs). `base`: the index of `messages[0]` in the conversation (`stitch`
    /// gets conversation indices), `previous`: the message before it.
    static func forEachMessage(
        _ messages: [Message], layouter: ConversationLayouter, base: Int = 0, previous: ConversationLayout.LastMessage? = nil,
        make: @escaping Make, _ stitch: (Int, UnsafeMutablePointer<Made>?, borrowing [UInt32]) throws(LayoutError) -> Void
    ) throws(LayoutError) {
        guard let pipeline = start(messages, layouter: layouter, base: base, previous: previous, make: make) else {
            for k in messages.indices { try stitch(base + k, nil, []) }
            return
        }
        defer { pipeline.finish() }
        try pipeline.walk(stitch)
    }

    /// Nil when the engine prepares on one thread, there is one core, or too few messages.
    private static func start(
        _ messages: [Message], layouter: ConversationLayouter, base: Int, previous: ConversationLayout.LastMessage?,
        make: @escaping Make
    ) -> RowPipeline? {
        let cores = UsableCores.count
        guard layouter.measurer.fastPath?.preparesConcurrently == true, cores > 1, messages.count >= minimumMessages else { return nil }
        return RowPipeline(
            messages, layouter: layouter, base: base, previous: previous, make: make, workers: min(RowPipelineSlots.count - 1, cores - 1))
    }

    private init(
        _ messages: [Message], layouter: ConversationLayouter, base: Int, previous: ConversationLayout.LastMessage?,
        make: @escaping Make, workers: Int
    ) {
        self.messages = messages
        self.base = base
        self.previous = previous
        self.layouter = layouter
        self.produce = make
        chunks = (messages.count + Self.chunk - 1) / Self.chunk
        ring = .allocate(capacity: ringSize)
        filled = .allocate(capacity: ringSize)
        filled.initialize(repeating: false, count: ringSize)
        words = .allocate(capacity: Self.ahead)
        words.initialize(repeating: [], count: Self.ahead)
        state = .allocate(capacity: chunks)
        state.initialize(repeating: 0, count: chunks)
        for slot in 0..<workers {
            DispatchQueue.global(qos: .userInitiated).async(group: group) { [self] in work(slot) }
        }
    }

    deinit {
        // Rows made but never stitched (the walk stopped at an error).
        for k in 0..<ringSize where filled[k] { (ring + k).deinitialize(count: 1) }
        ring.deallocate()
        filled.deallocate()
        words.deinitialize(count: Self.ahead)
        words.deallocate()
        state.deallocate()
    }

    private func work(_ slot: Int) {
        while true {
            condition.lock()
            while !stopped, next < chunks, next >= walking + Self.ahead { condition.wait() }
            guard !stopped, next < chunks else { condition.unlock(); return }
            let c = claim()
            condition.unlock()
            make(c, slot: slot)
        }
    }

    /// The next chunk, claimed (state 1). The caller holds the condition's lock and has checked
    /// there is one and room for it.
    private func claim() -> Int {
        let c = next
        next += 1
        state[c] = 1
        return c
    }

    /// Measures the messages of chunk `c` into the ring, then marks it made.
    private func make(_ c: Int, slot: Int) {
        // Locals, borrowed by every call below (the properties would be retained and released
        // per message, on objects the other threads touch too).
        let layouter = layouter, produce = produce, ring = ring, filled = filled, ringSize = ringSize
        let previous = previous, words = words + c % Self.ahead
        words.pointee.removeAll(keepingCapacity: true)
        messages.withUnsafeBufferPointer { messages in
            for i in c * Self.chunk..<min(messages.count, (c + 1) * Self.chunk) {
                // Made in place (the slot is empty: the walker has stitched what it held).
                do {
                    try (ring + i % ringSize).initialize(
                        to: produce(i, i == 0 ? previous : Self.last(before: i, messages, layouter), &words.pointee, slot))
                    filled[i % ringSize] = true
                } catch {}  // left empty: the walker measures it again and meets the error
            }
        }
        condition.lock()
        state[c] = 2
        condition.broadcast()
        condition.unlock()
    }

    /// What `joining` needs of the message before `i` (its row is not known here, nor needed).
    private static func last(
        before i: Int, _ messages: UnsafeBufferPointer<Message>,
        _ layouter: ConversationLayouter
    ) -> ConversationLayout.LastMessage? {
        guard i > 0 else { return nil }
        let date = messages[i - 1].date
        return ConversationLayout.LastMessage(
            sender: messages[i - 1].sender, direction: messages[i - 1].direction,
            kind: messages[i - 1].kind, date: date,
            day: layouter.dateTexts.localDay(date), row: -1)
    }

    /// Hands every message's rows to `stitch` in order (nil: measure that message there; it was
    /// not measured, or measuring it failed). While the chunk to stitch next is still being
    /// measured by a worker, this thread measures a later one instead of waiting.
    private func walk(_ stitch: (Int, UnsafeMutablePointer<Made>?, borrowing [UInt32]) throws(LayoutError) -> Void) throws(LayoutError) {
        for c in 0..<chunks {
            condition.lock()
            walking = c
            condition.broadcast()  // room for workers waiting to go ahead
            while state[c] != 2 {
                if next < chunks, next < c + Self.ahead {
                    let d = claim()
                    condition.unlock()
                    make(d, slot: RowPipelineSlots.walker)
                    condition.lock()
                } else {
                    condition.wait()
                }
            }
            condition.unlock()
            for i in c * Self.chunk..<min(messages.count, (c + 1) * Self.chunk) {
                // Lent in place (`stitch` moves out what it keeps: no copy, no retain and release
                // of everything the rows hold), then emptied for the next chunk in this slot.
                let k = i % ringSize
                guard filled[k] else { try stitch(base + i, nil, []); continue }
                defer { (ring + k).deinitialize(count: 1); filled[k] = false }
                try stitch(base + i, ring + k, words[c % Self.ahead])
            }
        }
    }

    /// Stops the workers (they finish their chunk) and waits for them. Called before dropping.
    private func finish() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        group.wait()
    }
}
