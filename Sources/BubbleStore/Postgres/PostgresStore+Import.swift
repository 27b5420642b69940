import BubbleCore
import Foundation
import NIOCore
import PostgresNIO

/// Imports through `COPY … FROM STDIN` into a temporary table (no indexes, no WAL), then one
/// `INSERT … SELECT` into `message` in the same transaction: all of an export or nothing, and a
/// newer export of a stored conversation adds only what it lacks.
extension PostgresStore {
    static let stagingColumns = ["n", "source_key", "date", "utc_offset", "sender", "outgoing", "system", "text", "status", "status_date",
                                 "source_id", "extra", "edited", "body", "cjk"]

    public func importStream(sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
                             read: (_ add: (Message) throws -> Void) throws -> (header: Conversation, chatKey: String))
        throws -> StoreImportSummary {
        var media = MediaCopier(mediaFolder: mediaFolder, exportFolder: exportFolder)
        var summary = StoreImportSummary(conversationID: 0)
        do {
            let done = try pool.transaction(retry: false) { c in
                // GIN indexes take new entries into a pending list first; a bigger list for a bulk
                // load means fewer, larger merges into the index.
                try c.run("SET LOCAL gin_pending_list_limit = '64MB'", logger)
                try c.run("""
                    CREATE TEMPORARY TABLE import_message (
                        n BIGINT, source_key BIGINT, date DOUBLE PRECISION, utc_offset BIGINT, sender TEXT, outgoing BOOLEAN,
                        system BOOLEAN, text TEXT, status TEXT, status_date DOUBLE PRECISION, source_id TEXT, extra TEXT,
                        edited DOUBLE PRECISION, body TEXT, cjk BOOLEAN) ON COMMIT DROP
                    """, logger)
                let copy = CopyStream(connection: c, table: "import_message", columns: Self.stagingColumns, logger: logger)
                var used = Set<Int64>()
                var n: Int64 = 0
                var duplicates = 0
                let encoder = StoreCodec.extraEncoder()
                let header: Conversation, chatKey: String
                do {
                    (header, chatKey) = try read { m in
                        // The identity, as the SQLite store makes it: the export's id, else the
                        // content numbered per occurrence.
                        let byID = m.id.map { !$0.isEmpty } ?? false
                        var key = byID ? StoreCodec.stableHash(["id", sourceFormat, m.id!]) : StoreCodec.contentKey(m, format: sourceFormat)
                        if byID, used.contains(key) { duplicates += 1; return }
                        let content = key
                        var occurrence = 0
                        while used.contains(key) {
                            occurrence += 1
                            key = StoreCodec.stableHash(["n", String(content), String(occurrence)])
                        }
                        used.insert(key)
                        let extra = try MessageExtra(m) { try media.store($0, summary: &summary) }
                        n += 1
                        let body = Self.searchBody(StoreCodec.indexBody(text: m.text, spans: m.spans, attachment: m.attachment))
                        copy.int(n); copy.int(key); copy.double(m.date.timeIntervalSince1970); copy.int(StoreCodec.utcOffset(m).map(Int64.init))
                        copy.text(m.sender); copy.bool(m.direction == .outgoing); copy.bool(m.kind == .system); copy.text(m.text)
                        copy.text(m.status?.rawValue); copy.double(m.statusDate?.timeIntervalSince1970); copy.text(m.id)
                        copy.text(try StoreCodec.encode(extra, with: encoder)); copy.double(m.edited?.timeIntervalSince1970)
                        copy.text(body); copy.bool(body.map(SearchText.mayHaveCJK) ?? false)
                        try copy.endRow()
                    }
                } catch {
                    copy.cancel()
                    throw error
                }
                try copy.finish()

                let shownTitle = title ?? header.title ?? header.participants.map(\.name).filter { !$0.isEmpty }.joined(separator: ", ")
                let target: Int64, last: Int64
                if let row = try c.run("SELECT id, last_seq FROM conversation WHERE source_format = \(sourceFormat) AND chat_key = \(chatKey) FOR UPDATE",
                                       logger).first {
                    (target, last) = try row.decode((Int64, Int64).self)
                    if let title { try c.run("UPDATE conversation SET title = \(title) WHERE id = \(target)", logger) }
                    // What the stored conversation has already.
                    let present = try c.run("""
                        DELETE FROM import_message i USING message m WHERE m.conversation_id = \(target) AND m.source_key = i.source_key
                        """, logger).metadata.rows ?? 0
                    summary.messagesSkipped = present
                } else {
                    target = try c.run("""
                        INSERT INTO conversation (title, source_format, chat_key, added)
                        VALUES (\(shownTitle.isEmpty ? "Conversation" : shownTitle), \(sourceFormat), \(chatKey), \(Date().timeIntervalSince1970))
                        RETURNING id
                        """, logger).first!.decode(Int64.self)
                    last = 0
                    summary.conversationsAdded = 1
                }
                let order = sortByDate ? "date, n" : "n"
                let added = try c.run("""
                    INSERT INTO message (conversation_id, seq, source_key, date, utc_offset, sender, outgoing, system, text, status,
                                         status_date, source_id, extra, edited, body, cjk)
                    SELECT \(target), \(last) + row_number() OVER (ORDER BY \(unescaped: order)), source_key, date, utc_offset, sender, outgoing,
                           system, text, status, status_date, source_id, extra, edited, body, cjk
                    FROM import_message
                    """, logger).metadata.rows ?? 0
                try c.run("UPDATE conversation SET last_seq = \(last + Int64(added)) WHERE id = \(target)", logger)
                summary.conversationID = target
                summary.messagesAdded = added
                summary.messagesSkipped += duplicates
                // Participants: new ones after the known ones; names and avatars kept.
                var position = try c.run("SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = \(target)", logger)
                    .first!.decode(Int64.self)
                for p in header.participants {
                    let avatar = try p.avatar.flatMap { try media.store($0, summary: &summary) }
                    let inserted = try c.run("""
                        INSERT INTO participant (conversation_id, id, position, name, avatar) VALUES (\(target), \(p.id), \(position), \(p.name), \(avatar))
                        ON CONFLICT (conversation_id, id) DO NOTHING
                        """, logger).metadata.rows ?? 0
                    if inserted > 0 { position += 1 }
                }
                return summary
            }
            // A big import changes the table's statistics at once (autovacuum would see it later):
            // the planner needs them to pick the search indexes; and the GIN indexes' pending
            // lists are merged now, not scanned by every search until the next vacuum.
            if done.messagesAdded >= 10_000 {
                _ = try? pool.with { c in
                    try c.run("SELECT gin_clean_pending_list('message_words'::regclass), gin_clean_pending_list('message_cjk'::regclass)", logger)
                    try c.run("ANALYZE message", logger)
                }
            }
            return done
        } catch { throw self.error(error) }
    }
}

/// Rows handed from a thread that reads an export to a `COPY … FROM STDIN` running as a task:
/// the reader fills a buffer and posts it when it holds a megabyte; at most four wait (the
/// reader waits for room, so memory stays flat); the copy's failure stops the reader.
final class CopyStream: @unchecked Sendable {
    var buffer = ByteBuffer()
    var rowStarted = false
    private let continuation: AsyncStream<ByteBuffer>.Continuation
    private let room = DispatchSemaphore(value: 4)
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var failure: (any Error)?
    private var ended = false

    init(connection: PostgresConnection, table: String, columns: [String], logger: Logger) {
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        self.continuation = continuation
        // On threads of its own: the reader blocks its thread while it waits for room, and may
        // be on one of Swift's few cooperative threads, which the copy must not need.
        Task(executorPreference: QueueExecutor.shared) { [room, done] in
            do {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    for await chunk in stream {
                        try await writer.write(chunk)
                        room.signal()
                    }
                }
            } catch {
                self.setFailure(error)
            }
            self.setFailure(nil)
            for _ in 0..<8 { room.signal() }
            done.signal()
        }
    }

    /// Called once by the copy as it ends (with its error, if any).
    private func setFailure(_ error: (any Error)?) {
        lock.lock(); defer { lock.unlock() }
        if let error { failure = error } else { ended = true }
    }

    private func check() throws {
        lock.lock(); defer { lock.unlock() }
        if let failure { throw failure }
        if ended { throw StoreError(path: "COPY", reason: "ended before the import did") }
    }

    func post() throws {
        room.wait()
        try check()
        continuation.yield(buffer)
        buffer = ByteBuffer()
        buffer.reserveCapacity(1 << 20 + 4096)
    }

    /// Sends what is left and waits for PostgreSQL to take it all.
    func finish() throws {
        if buffer.readableBytes > 0 { try post() }
        continuation.finish()
        done.wait()
        lock.lock(); defer { lock.unlock() }
        if let failure { throw failure }
    }

    /// Ends the copy early (the transaction around it is rolled back).
    func cancel() {
        continuation.finish()
        done.wait()
    }
}

/// Rows in COPY's text format: tab-separated, `\N` for null, backslash escapes.
extension CopyStream {
    private func separator() {
        if !rowStarted { rowStarted = true } else { buffer.writeInteger(UInt8(ascii: "\t")) }
    }

    func null() { separator(); buffer.writeStaticString("\\N") }

    func int(_ v: Int64?) {
        guard let v else { return null() }
        separator(); buffer.writeString(String(v))
    }

    func double(_ v: Double?) {
        guard let v else { return null() }
        separator(); buffer.writeString("\(v)")
    }

    func bool(_ v: Bool) { separator(); buffer.writeInteger(UInt8(ascii: v ? "t" : "f")) }

    func text(_ v: String?) {
        guard var v else { return null() }
        separator()
        v.withUTF8 { bytes in
            var start = 0
            for (i, b) in bytes.enumerated() where b == 0x5C || b == 0x09 || b == 0x0A || b == 0x0D || b == 0 {
                buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start..<i]))
                switch b {
                case 0x5C: buffer.writeStaticString("\\\\")
                case 0x09: buffer.writeStaticString("\\t")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0D: buffer.writeStaticString("\\r")
                default: buffer.writeStaticString("\u{FFFD}")   // PostgreSQL text holds no NUL
                }
                start = i + 1
            }
            buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        }
    }

    /// Ends the row; posts the buffer once it holds a megabyte.
    func endRow() throws {
        buffer.writeInteger(UInt8(ascii: "\n"))
        rowStarted = false
        if buffer.readableBytes >= 1 << 20 { try post() }
    }
}

/// Runs tasks on a dispatch queue of their own, off Swift's cooperative threads (which a
/// blocking caller may hold: a task it waits for must not need one).
final class QueueExecutor: TaskExecutor {
    static let shared = QueueExecutor()
    private let queue = DispatchQueue(label: "bubblekit.postgres.copy", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
