import Foundation
import NIOCore
import PostgresNIO
import Synchronization

/// Fans live changes out between the servers of one PostgreSQL store; runs with the store (a
/// `Service`'s child task).
///
/// Every live commit carries `NOTIFY bubbles_changes, 'C:REV'` — a hint, never the message
/// (payloads are small and a server that is away misses them). This server LISTENs on a
/// connection of its own; on a hint newer than what it has handed to `feed` for conversation C,
/// it reads the changes after that revision from the database and hands them over in order.
/// Its own commits go to `feed` at once, through the same queue of events, so nothing is handed
/// over twice or out of order. When the LISTEN connection breaks (the database restarted, the
/// network went away) it connects again with back-off (0.1 s doubling to 5 s) and then reads,
/// for every conversation it has handed changes of, whatever was committed meanwhile: clients
/// see nothing missing. (A client's own socket also fills any gap it sees from the store.)
final class PostgresFeed: Sendable {
    enum Event: Sendable {
        /// "C:REV" from a server (this one too: skipped when already handed over).
        case hint(conversation: Int64, rev: Int64)
        /// A change this server committed.
        case committed(StoredChange)
        /// The LISTEN connection was made again: what every known conversation missed.
        case reconnected
    }

    private let db: PostgresDB
    private let feed: ChangeFeed
    private let events: AsyncStream<Event>
    private let post: AsyncStream<Event>.Continuation
    /// How many times the LISTEN connection was made (tests and logs).
    let connects = Mutex(0)
    /// This process among the store's servers (its own typing notifications are not passed on twice).
    let nodeID = UUID().uuidString.prefix(8).lowercased()
    /// Reads a conversation's changes after a revision (the store's `changes`; set by the store,
    /// which it holds weakly: the store owns the feed).
    let reader = ClosureSlot<@Sendable (_ conversation: Int64, _ after: Int64) async throws -> [StoredChange]>()

    init(db: PostgresDB, feed: ChangeFeed) {
        self.db = db
        self.feed = feed
        (events, post) = AsyncStream.makeStream(of: Event.self)
    }

    /// A change this server committed: handed over in order with the others.
    func committed(_ change: StoredChange) { post.yield(.committed(change)) }

    /// Listens, and hands changes over, until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.handOver() }
            group.addTask { await self.listen() }
        }
    }

    /// The one consumer of `events`: every change reaches `feed` from here, in revision order.
    private func handOver() async {
        /// Per conversation, the newest revision handed to `feed`.
        var handed: [Int64: Int64] = [:]
        await withTaskCancellationHandler {
            for await event in events {
                switch event {
                case .committed(let change):
                    let known = handed[change.conversation]
                    if let known, change.rev <= known { continue }
                    if known == nil || change.rev == known! + 1 {
                        handed[change.conversation] = change.rev
                        feed.emit(change)
                    } else {
                        handed[change.conversation] = await read(change.conversation, after: known!)
                    }
                case .hint(let conversation, let rev):
                    // A conversation seen for the first time starts just before `rev`.
                    let from = handed[conversation] ?? (rev - 1)
                    if rev > from { handed[conversation] = await read(conversation, after: from) }
                case .reconnected:
                    for (conversation, rev) in handed { handed[conversation] = await read(conversation, after: rev) }
                }
            }
        } onCancel: {
            post.finish()
        }
    }

    /// Hands over the changes of `conversation` after `rev`; the last one handed over.
    private func read(_ conversation: Int64, after rev: Int64) async -> Int64 {
        var last = rev
        while !Task.isCancelled {
            guard let reader = reader.value, let changes = try? await reader(conversation, last) else { return last }
            for change in changes {
                feed.emit(change)
                last = change.rev
            }
            if changes.count < 1_000 { break }
        }
        return last
    }

    /// Listens until cancelled; a broken connection is made again with back-off, then caught up.
    private func listen() async {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let n = connects.withLock {
                    $0 += 1; return $0
                }
                let c = try await db.connect(id: 1_000_000 + n)
                do {
                    try await c.listen(on: PostgresStore.channel) { changes in
                        try await c.listen(on: PostgresStore.typingChannel) { typing in
                            try await c.listen(on: PostgresStore.accessChannel) { access in
                                try await c.listen(on: PostgresStore.readsChannel) { reads in
                                    delay = .milliseconds(100)
                                    if n > 1 { post.yield(.reconnected) }
                                    try await withThrowingTaskGroup(of: Void.self) { group in
                                        group.addTask {
                                            for try await note in changes { self.hint(note.payload) }
                                        }
                                        group.addTask {
                                            for try await note in typing { self.typing(note.payload) }
                                        }
                                        group.addTask {
                                            // Read marks moved on any server (this one too).
                                            for try await note in reads {
                                                if let mark = ReadMark(payload: note.payload) { self.feed.emitRead(mark) }
                                            }
                                        }
                                        group.addTask {
                                            // Access changes of any server or command: told at once.
                                            for try await note in access {
                                                if let change = AccessChange(payload: note.payload) { self.feed.emitAccess(change) }
                                            }
                                        }
                                        // Any ends when the connection does.
                                        try await group.next()
                                        group.cancelAll()
                                    }
                                }
                            }
                        }
                    }
                } catch {}
                try? await c.close()
            } catch {}
            if Task.isCancelled { return }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    /// "C:REV" from another server (or this one).
    private func hint(_ payload: String) {
        let parts = payload.split(separator: ":")
        guard parts.count >= 2, let conversation = Int64(parts[0]), let rev = Int64(parts[1]) else { return }
        post.yield(.hint(conversation: conversation, rev: rev))
    }

    /// "C:NODE:REV:SENDER" from another server: someone types there, after revision REV.
    private func typing(_ payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 3)
        guard parts.count == 4, let conversation = Int64(parts[0]), let rev = Int64(parts[2]), parts[1] != nodeID else { return }
        feed.emitTyping(conversation, String(parts[3]), after: rev)
    }
}
