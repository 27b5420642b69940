import Foundation
import NIOCore
import PostgresNIO

/// Fans live changes out between the servers of one PostgreSQL store.
///
/// Every live commit carries `NOTIFY bubbles_changes, 'C:REV'` — a hint, never the message
/// (payloads are small and a server that is away misses them). This server LISTENs on a
/// connection of its own; on a hint newer than what it has handed to `feed` for conversation C,
/// it reads the changes after that revision from the database and hands them over in order.
/// Its own commits go to `feed` at once, through the same queue, so nothing is handed over twice
/// or out of order. When the LISTEN connection breaks (the database restarted, the network went
/// away) it connects again with back-off (0.1 s doubling to 5 s) and then reads, for every
/// conversation it has handed changes of, whatever was committed meanwhile: clients see nothing
/// missing. (A client's own socket also fills any gap it sees from the store.)
final class PostgresFeed: @unchecked Sendable {
    /// Weak: the store owns the feed (and stops it when it goes).
    private weak var store: PostgresStore?
    /// Everything that reaches `store.feed` goes through here, one at a time.
    private let queue = DispatchQueue(label: "bubblekit.postgres.feed")
    /// Per conversation, the newest revision handed to `feed` (touched on `queue` only).
    private var handed: [Int64: Int64] = [:]
    private let lock = NSLock()
    private var started = false
    private var stopped = false
    private var connection: PostgresConnection?
    /// How many times the LISTEN connection was made (tests and logs).
    private(set) var connects = 0

    init(store: PostgresStore) { self.store = store }

    /// Connects and listens, in the background, until `stop`.
    func start() {
        lock.lock()
        guard !started else { lock.unlock(); return }
        started = true
        lock.unlock()
        let thread = Thread { [weak self] in self?.loop() }
        thread.name = "bubblekit.postgres.listen"
        thread.start()
    }

    func stop() {
        lock.lock()
        stopped = true
        let c = connection
        lock.unlock()
        c?.discard()
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Listens until stopped; a broken connection is made again with back-off, then caught up.
    private func loop() {
        var delay = 0.1
        while !isStopped {
            // Only the pool is held while listening (the store may go; its deinit stops this).
            guard let pool = store?.pool else { return }
            var made: PostgresConnection?
            do {
                let c = try pool.connect()
                made = c
                lock.lock(); connection = c; connects += 1; let first = connects == 1; lock.unlock()
                let context = c.addListener(channel: PostgresStore.channel) { [weak self] _, note in
                    self?.hint(note.payload)
                }
                let typing = c.addListener(channel: PostgresStore.typingChannel) { [weak self] _, note in
                    self?.typing(note.payload)
                }
                try c.run("LISTEN \(unescaped: PostgresStore.channel)", pool.logger)
                try c.run("LISTEN \(unescaped: PostgresStore.typingChannel)", pool.logger)
                delay = 0.1
                if !first { queue.async { self.catchUpAll() } }
                try? c.closeFuture.wait()
                context.stop()
                typing.stop()
            } catch {}
            // A LISTEN refused (the database shutting down) leaves the connection open: closed here.
            made?.discard()
            lock.lock(); connection = nil; lock.unlock()
            if isStopped { return }
            Thread.sleep(forTimeInterval: delay)
            delay = min(delay * 2, 5)
        }
    }

    /// "C:REV" from another server (or this one: skipped when already handed over).
    private func hint(_ payload: String) {
        let parts = payload.split(separator: ":")
        guard parts.count >= 2, let conversation = Int64(parts[0]), let rev = Int64(parts[1]) else { return }
        queue.async { self.readUp(conversation, to: rev) }
    }

    /// "C:NODE:REV:SENDER" from another server: someone types there, after revision REV.
    private func typing(_ payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 3)
        guard parts.count == 4, let conversation = Int64(parts[0]), let rev = Int64(parts[2]), let store,
              parts[1] != store.nodeID else { return }
        store.feed.emitTyping(conversation, String(parts[3]), after: rev)
    }

    /// A change this server committed: handed over at once when it follows on.
    func committed(_ change: StoredChange) {
        queue.async {
            let known = self.handed[change.conversation]
            if let known, change.rev <= known { return }
            if known == nil || change.rev == known! + 1 {
                self.handed[change.conversation] = change.rev
                self.store?.feed.emit(change)
            } else {
                self.readUp(change.conversation, to: change.rev)
            }
        }
    }

    /// Reads and hands over the changes of `conversation` after the last handed over, up to at
    /// least `rev` (on `queue`). A conversation seen for the first time starts just before `rev`.
    private func readUp(_ conversation: Int64, to rev: Int64) {
        let from = handed[conversation] ?? (rev - 1)
        guard rev > from else { return }
        read(conversation, after: from)
    }

    private func read(_ conversation: Int64, after rev: Int64) {
        var last = rev
        while let store {
            guard let changes = try? store.changes(in: conversation, since: last, limit: 1_000) else { return }
            for change in changes {
                store.feed.emit(change)
                last = change.rev
            }
            handed[conversation] = last
            if changes.count < 1_000 { return }
        }
    }

    /// After a reconnection: what every known conversation missed.
    private func catchUpAll() {
        for (conversation, rev) in handed { read(conversation, after: rev) }
    }
}
