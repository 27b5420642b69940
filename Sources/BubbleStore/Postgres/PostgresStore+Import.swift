import BubbleCore
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOFileSystem
import NIOPosix
import PostgresNIO
import Synchronization

/// Imports an export in one transaction: all of it or nothing, and a newer export of a stored
/// conversation adds only what it lacks.
///
/// A new conversation whose messages come in order (by date, when sorted by date) goes straight
/// into `message` by `COPY` while the export is still being read: the reading and PostgreSQL's
/// work (the search vector, the indexes) run on two cores at once. Otherwise (the conversation
/// is stored already, or a message comes out of order) that is rolled back to a savepoint and
/// the rows read meanwhile into a spool file go through a staging table: `COPY` into it, then one
/// `INSERT … SELECT` that skips what is stored and numbers the rest.
extension PostgresStore {
    /// The spool's columns (COPY's text format); `n` is the message's number in the export.
    static let spoolColumns = [
        "conversation_id", "n", "source_key", "date", "utc_offset", "sender", "outgoing", "system", "text", "status", "status_date",
        "source_id", "extra", "edited", "body", "cjk"
    ]
    /// The same rows straight into `message`: a new conversation's messages are numbered as read.
    static let directColumns = spoolColumns.map { $0 == "n" ? "seq" : $0 }

    public func importStream(
        sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
        read: @escaping StoreImportReader
    ) async throws -> StoreImportSummary {
        try await prepare()
        let handed = Handed(read)
        do {
            let done = try await timing.time(#function) {
                try await db.transaction(retry: false) { c in
                    // GIN indexes take new entries into a pending list first; a bigger list for a bulk
                    // load means fewer, larger merges into the index.
                    try await c.run("SET LOCAL gin_pending_list_limit = '64MB'", logger)
                    try await c.run("SAVEPOINT direct", logger)
                    let placeholder = try await c.run(
                        """
                        INSERT INTO conversation (title, source_format, chat_key, added)
                        VALUES ('', \(sourceFormat), \("importing " + UUID().uuidString), \(Date().timeIntervalSince1970)) RETURNING id
                        """, logger
                    ).first!.decode(Int64.self)
                    // The export is read off Swift's cooperative threads (parsing and copying files
                    // block): rows to the spool file, how far it is written to `feed`; pictures
                    // into the store's media.
                    let feed = SpoolFeed(file: NSTemporaryDirectory() + "/bubbles-import-\(UUID().uuidString).copy")
                    async let reading = Self.spoolInPool(
                        sourceFormat: sourceFormat, mediaFolder: mediaFolder, exportFolder: exportFolder, conversation: placeholder,
                        sortByDate: sortByDate, feed: feed, read: handed)
                    let direct: Bool
                    do { direct = try await Self.copyWhileReading(feed, sourceFormat: sourceFormat, on: c, logger) } catch {
                        // The reading's own error first: the spool file it removed is not the cause.
                        feed.abandon()
                        do {
                            let spooled = try await reading
                            try? FileManager.default.removeItem(atPath: spooled.file)
                        } catch  where !(error is CancellationError) { throw error }
                        throw error
                    }
                    let spooled = try await reading
                    defer { try? FileManager.default.removeItem(atPath: spooled.file) }
                    var summary = spooled.summary
                    if direct, let added = try await finishDirect(spooled, into: placeholder, sourceFormat: sourceFormat, title: title, on: c) {
                        summary.conversationID = placeholder
                        summary.conversationsAdded = 1
                        summary.messagesAdded = added
                    } else {
                        try await c.run("ROLLBACK TO SAVEPOINT direct", logger)
                        (summary.conversationID, summary.messagesAdded, summary.messagesSkipped, summary.conversationsAdded) =
                            try await staged(spooled, sourceFormat: sourceFormat, title: title, sortByDate: sortByDate, on: c)
                    }
                    summary.messagesSkipped += spooled.duplicates
                    try await Self.addParticipants(spooled, to: summary.conversationID, on: c, logger)
                    try await Self.recordMedia(c, spooled.files, in: summary.conversationID, logger)
                    return summary
                }
            }
            // A big import changes the table's statistics at once (autovacuum would see it later):
            // the planner needs them to pick the search indexes; and the GIN indexes' pending
            // lists are merged now, not scanned by every search until the next vacuum.
            if done.messagesAdded >= 10_000 {
                _ = try? await db.with { c in
                    try await c.run("SELECT gin_clean_pending_list('message_words'::regclass), gin_clean_pending_list('message_cjk'::regclass)", logger)
                    try await c.run("ANALYZE message", logger)
                }
            }
            return done
        } catch { throw self.error(error) }
    }

    /// `COPY` into `message` of the spool file's rows as they are written (`feed` says how far).
    /// False (nothing of it kept: the caller rolls back) when they cannot go in directly: the
    /// export's first message is stored already in a conversation of that format (a newer export
    /// of it: the staging path skips what is stored), or a message came out of order.
    static func copyWhileReading(_ feed: SpoolFeed, sourceFormat: String, on c: PostgresConnection, _ logger: Logger) async throws -> Bool {
        var updates = feed.updates.makeAsyncIterator()
        var now = feed.state
        while now.firstKey == nil, !now.done, await updates.next(isolation: #isolation) != nil { now = feed.state }
        guard let firstKey = now.firstKey else { return true }
        let known = try await c.run(
            """
            SELECT EXISTS (SELECT 1 FROM message m JOIN conversation v ON v.id = m.conversation_id
                           WHERE m.source_key = \(firstKey) AND v.source_format = \(sourceFormat))
            """, logger
        ).first!.decode(Bool.self)
        if known { return false }
        do {
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(feed.file)) { handle in
                try await c.copyFrom(table: "message", columns: directColumns, logger: logger) { writer in
                    var offset: Int64 = 0
                    while true {
                        now = feed.state
                        if now.outOfOrder { throw OutOfOrder() }
                        while offset < now.written {
                            let chunk = try await handle.readChunk(fromAbsoluteOffset: offset, length: .bytes(min(1 << 20, now.written - offset)))
                            offset += Int64(chunk.readableBytes)
                            try await writer.write(chunk)
                        }
                        if now.done { break }
                        _ = await updates.next(isolation: #isolation)
                    }
                }
            }
            return true
        } catch is OutOfOrder {
            return false
        }
    }

    private struct OutOfOrder: Error {}

    /// The placeholder conversation the rows went into becomes the export's; nil when the export
    /// turns out to be of a stored conversation (its chat key known here only now, or taken by
    /// an import committed meanwhile): the caller rolls back and takes the staging path.
    private func finishDirect(
        _ spooled: Spooled, into id: Int64, sourceFormat: String, title: String?, on c: PostgresConnection
    ) async throws -> Int? {
        guard
            try await c.run("SELECT 1 FROM conversation WHERE source_format = \(sourceFormat) AND chat_key = \(spooled.chatKey)", logger)
                .isEmpty
        else { return nil }
        let shownTitle = spooled.shownTitle(title)
        do {
            try await c.run(
                """
                UPDATE conversation SET title = \(shownTitle), chat_key = \(spooled.chatKey),
                       last_seq = \(spooled.count) WHERE id = \(id)
                """, logger)
        } catch let e as PSQLError where e.serverInfo?[.sqlState] == "23505" {
            return nil
        }
        return spooled.count
    }

    /// The staging path: the spool into a temporary table, what the stored conversation has
    /// already skipped, the rest numbered after its last message.
    private func staged(
        _ spooled: Spooled, sourceFormat: String, title: String?, sortByDate: Bool, on c: PostgresConnection
    ) async throws -> (conversation: Int64, added: Int, skipped: Int, conversationsAdded: Int) {
        let chatKey = spooled.chatKey
        try await c.run(
            """
            CREATE TEMPORARY TABLE import_message (
                conversation_id BIGINT, n BIGINT, source_key BIGINT, date DOUBLE PRECISION, utc_offset BIGINT, sender TEXT, outgoing BOOLEAN,
                system BOOLEAN, text TEXT, status TEXT, status_date DOUBLE PRECISION, source_id TEXT, extra TEXT,
                edited DOUBLE PRECISION, body TEXT, cjk BOOLEAN) ON COMMIT DROP
            """, logger)
        try await Self.copy(spool: spooled.file, into: "import_message", columns: Self.spoolColumns, on: c, logger)
        let shownTitle = spooled.shownTitle(title)
        let target: Int64, last: Int64
        var skipped = 0, conversationsAdded = 0
        if let row = try await c.run(
            "SELECT id, last_seq FROM conversation WHERE source_format = \(sourceFormat) AND chat_key = \(chatKey) FOR UPDATE",
            logger
        ).first {
            (target, last) = try row.decode((Int64, Int64).self)
            if let title { try await c.run("UPDATE conversation SET title = \(title) WHERE id = \(target)", logger) }
            // What the stored conversation has already.
            skipped = try await c.changed(
                "DELETE FROM import_message i USING message m WHERE m.conversation_id = \(target) AND m.source_key = i.source_key RETURNING 1",
                logger)
        } else {
            target = try await c.run(
                """
                INSERT INTO conversation (title, source_format, chat_key, added)
                VALUES (\(shownTitle), \(sourceFormat), \(chatKey), \(Date().timeIntervalSince1970))
                RETURNING id
                """, logger
            ).first!.decode(Int64.self)
            last = 0
            conversationsAdded = 1
        }
        let order = sortByDate ? "date, n" : "n"
        let inserted = try await c.changed(
            """
            INSERT INTO message (conversation_id, seq, source_key, date, utc_offset, sender, outgoing, system, text, status,
                                 status_date, source_id, extra, edited, body, cjk)
            SELECT \(target), \(last) + row_number() OVER (ORDER BY \(unescaped: order)), source_key, date, utc_offset, sender, outgoing,
                   system, text, status, status_date, source_id, extra, edited, body, cjk
            FROM import_message RETURNING 1
            """, logger)
        try await c.run("UPDATE conversation SET last_seq = \(last + Int64(inserted)) WHERE id = \(target)", logger)
        return (target, inserted, skipped, conversationsAdded)
    }

    /// Participants: new ones after the known ones; names and avatars kept.
    static func addParticipants(_ spooled: Spooled, to target: Int64, on c: PostgresConnection, _ logger: Logger) async throws {
        var position = try await c.run("SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = \(target)", logger)
            .first!.decode(Int64.self)
        for (p, avatar) in zip(spooled.header.participants, spooled.avatars) {
            let inserted = try await c.changed(
                """
                INSERT INTO participant (conversation_id, id, position, name, avatar) VALUES (\(target), \(p.id), \(position), \(p.name), \(avatar))
                ON CONFLICT (conversation_id, id) DO NOTHING RETURNING 1
                """, logger)
            if inserted > 0 { position += 1 }
        }
    }

    /// What reading an export left: its rows in a spool file, what it said of itself, the
    /// pictures and files it brought (already in the store's media).
    struct Spooled: Sendable {
        var file: String
        var header: Conversation
        var chatKey: String
        /// Each participant's avatar as a store path.
        var avatars: [String?]
        /// The store's file names its messages and avatars show.
        var files: Set<String>
        var summary: StoreImportSummary
        var duplicates: Int
        /// Messages spooled (numbered 1…count).
        var count: Int

        /// The title a new conversation gets: `title`, else the export's, else its participants'
        /// names, else "Conversation".
        func shownTitle(_ title: String?) -> String {
            let shown = title ?? header.title ?? header.participants.map(\.name).filter { !$0.isEmpty }.joined(separator: ", ")
            return shown.isEmpty ? "Conversation" : shown
        }
    }

    /// `spool` on NIO's thread pool (parsing and copying files block); `feed` finishes however it
    /// ends, even when the pool does not run it.
    static func spoolInPool(
        sourceFormat: String, mediaFolder: String, exportFolder: String, conversation: Int64, sortByDate: Bool, feed: SpoolFeed,
        read: Handed<StoreImportReader>
    ) async throws -> Spooled {
        defer { feed.finish() }
        return try await NIOThreadPool.singleton.runIfActive {
            try Self.spool(
                sourceFormat: sourceFormat, mediaFolder: mediaFolder, exportFolder: exportFolder, conversation: conversation,
                sortByDate: sortByDate, feed: feed, read: read.value)
        }
    }

    /// Reads the export (`read`), writing its rows in COPY's text format (as conversation
    /// `conversation`'s) to a temporary file, a megabyte at a time, and its files into the media
    /// folder; `feed` learns how far it is written and whether the messages come in order (by
    /// date when `sortByDate`).
    static func spool(
        sourceFormat: String, mediaFolder: String, exportFolder: String, conversation: Int64, sortByDate: Bool, feed: SpoolFeed,
        read: StoreImportReader
    ) throws -> Spooled {
        var media = MediaCopier(mediaFolder: mediaFolder, exportFolder: exportFolder)
        var summary = StoreImportSummary(conversationID: 0)
        let file = feed.file
        guard FileManager.default.createFile(atPath: file, contents: nil), let out = FileHandle(forWritingAtPath: file) else {
            throw StoreError(path: file, reason: "cannot be written (the import's spool file)")
        }
        defer { try? out.close() }
        do {
            var rows = CopyRows()
            var used = Set<Int64>()
            var n: Int64 = 0
            var duplicates = 0
            var firstKey: Int64?
            var lastDate = -Double.infinity
            let encoder = StoreCodec.extraEncoder()
            let (header, chatKey) = try read { m in
                // The identity, as the SQLite store makes it: the export's id, else the content
                // numbered per occurrence.
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
                let date = m.date.timeIntervalSince1970
                if sortByDate, date < lastDate { feed.outOfOrder() }
                lastDate = date
                firstKey = firstKey ?? key
                let body = Self.searchBody(StoreCodec.indexBody(text: m.text, spans: m.spans, attachment: m.attachment))
                rows.int(conversation); rows.int(n); rows.int(key); rows.double(date); rows.int(StoreCodec.utcOffset(m).map(Int64.init))
                rows.text(m.sender); rows.bool(m.direction == .outgoing); rows.bool(m.kind == .system); rows.text(m.text)
                rows.text(m.status?.rawValue); rows.double(m.statusDate?.timeIntervalSince1970); rows.text(m.id)
                rows.text(try StoreCodec.encode(extra, with: encoder)); rows.double(m.edited?.timeIntervalSince1970)
                rows.text(body); rows.bool(body.map(SearchText.mayHaveCJK) ?? false)
                if rows.endRow() {
                    let chunk = rows.take()
                    try out.write(contentsOf: Data(buffer: chunk))
                    try feed.wrote(chunk.readableBytes, firstKey: firstKey!)
                }
            }
            let chunk = rows.take()
            try out.write(contentsOf: Data(buffer: chunk))
            if let firstKey { try feed.wrote(chunk.readableBytes, firstKey: firstKey) }
            let avatars = try header.participants.map { p in try p.avatar.flatMap { try media.store($0, summary: &summary) } }
            return Spooled(
                file: file, header: header, chatKey: chatKey, avatars: avatars, files: media.files, summary: summary, duplicates: duplicates,
                count: Int(n))
        } catch {
            try? FileManager.default.removeItem(atPath: file)
            throw error
        }
    }

    /// `COPY table (columns) FROM STDIN` of a spool file, a megabyte at a time.
    static func copy(spool: String, into table: String, columns: [String], on c: PostgresConnection, _ logger: Logger) async throws {
        let fileSystem = FileSystem.shared
        try await fileSystem.withFileHandle(forReadingAt: FilePath(spool)) { handle in
            try await c.copyFrom(table: table, columns: columns, logger: logger) { writer in
                for try await chunk in handle.readChunks(chunkLength: .mebibytes(1)) {
                    try await writer.write(chunk)
                }
            }
        }
    }
}

/// Rows in COPY's text format (tab-separated, `\N` for null, backslash escapes), gathered a
/// megabyte at a time.
struct CopyRows {
    var buffer = ByteBuffer()
    var rowStarted = false

    /// What was gathered, leaving the buffer empty.
    mutating func take() -> ByteBuffer {
        let out = buffer
        buffer = ByteBuffer()
        buffer.reserveCapacity(1 << 20 + 4096)
        return out
    }
}

/// Rows in COPY's text format: tab-separated, `\N` for null, backslash escapes.
extension CopyRows {
    private mutating func separator() {
        if !rowStarted { rowStarted = true } else { buffer.writeInteger(UInt8(ascii: "\t")) }
    }

    mutating func null() { separator(); buffer.writeStaticString("\\N") }

    mutating func int(_ v: Int64?) {
        guard let v else { return null() }
        separator(); buffer.writeString(String(v))
    }

    mutating func double(_ v: Double?) {
        guard let v else { return null() }
        separator(); buffer.writeString("\(v)")
    }

    mutating func bool(_ v: Bool) { separator(); buffer.writeInteger(UInt8(ascii: v ? "t" : "f")) }

    mutating func text(_ v: String?) {
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
                default: buffer.writeStaticString("\u{FFFD}")  // PostgreSQL text holds no NUL
                }
                start = i + 1
            }
            buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        }
    }

    /// Ends the row; whether the buffer holds a megabyte (time to `take` it).
    mutating func endRow() -> Bool {
        buffer.writeInteger(UInt8(ascii: "\n"))
        rowStarted = false
        return buffer.readableBytes >= 1 << 20
    }
}

/// How far the thread reading an export has written its spool file, for the `COPY` that follows
/// it: bytes written (whole rows), the export's first message's source key, whether a message
/// came out of order, whether the reading is done. `abandon` (the transaction failed): the
/// reader's next `wrote` throws and it stops.
final class SpoolFeed: Sendable {
    struct State: Sendable {
        var written: Int64 = 0
        var firstKey: Int64?
        var outOfOrder = false
        var done = false
        var abandoned = false
    }

    let file: String
    /// One element after each change (the newest only: a reader behind takes them together).
    let updates: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let current = Mutex(State())

    init(file: String) {
        self.file = file
        (updates, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    var state: State { current.withLock { $0 } }

    private func change(_ body: (inout State) -> Void) {
        current.withLock { body(&$0) }
        continuation.yield()
    }

    /// The reader's: `bytes` more written and flushed.
    func wrote(_ bytes: Int, firstKey: Int64) throws {
        if current.withLock({ $0.abandoned }) { throw CancellationError() }
        change {
            $0.written += Int64(bytes); $0.firstKey = firstKey
        }
    }

    /// The reader's: a message dated before the one above.
    func outOfOrder() {
        if !current.withLock({ $0.outOfOrder }) { change { $0.outOfOrder = true } }
    }

    /// The reader's, when it is done (or failed).
    func finish() {
        change { $0.done = true }
        continuation.finish()
    }

    /// The writer's: the transaction failed; the reader stops.
    func abandon() { current.withLock { $0.abandoned = true } }
}
