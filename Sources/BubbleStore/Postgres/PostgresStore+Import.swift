import BubbleCore
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOFileSystem
import NIOPosix
import PostgresNIO

/// Imports through `COPY … FROM STDIN` into a temporary table (no indexes, no WAL), then one
/// `INSERT … SELECT` into `message` in the same transaction: all of an export or nothing, and a
/// newer export of a stored conversation adds only what it lacks.
extension PostgresStore {
    static let stagingColumns = [
        "n", "source_key", "date", "utc_offset", "sender", "outgoing", "system", "text", "status", "status_date",
        "source_id", "extra", "edited", "body", "cjk"
    ]

    public func importStream(
        sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
        read: @escaping StoreImportReader
    ) async throws -> StoreImportSummary {
        try await prepare()
        // First the export is read, off Swift's cooperative threads (parsing and copying files
        // block): rows go to a spool file in COPY's format, pictures into the store's media.
        let spooled = try await NIOThreadPool.singleton.runIfActive { [mediaFolder, handed = Handed(read)] in
            try Self.spool(sourceFormat: sourceFormat, mediaFolder: mediaFolder, exportFolder: exportFolder, read: handed.value)
        }
        defer { try? FileManager.default.removeItem(atPath: spooled.file) }
        let header = spooled.header, chatKey = spooled.chatKey, avatars = spooled.avatars
        do {
            // Then one transaction: the spool into a staging table, and from it into `message`.
            let done = try await timing.time(#function) {
                try await db.transaction(retry: false) { c in
                    var summary = spooled.summary
                    // GIN indexes take new entries into a pending list first; a bigger list for a bulk
                    // load means fewer, larger merges into the index.
                    try await c.run("SET LOCAL gin_pending_list_limit = '64MB'", logger)
                    try await c.run(
                        """
                        CREATE TEMPORARY TABLE import_message (
                            n BIGINT, source_key BIGINT, date DOUBLE PRECISION, utc_offset BIGINT, sender TEXT, outgoing BOOLEAN,
                            system BOOLEAN, text TEXT, status TEXT, status_date DOUBLE PRECISION, source_id TEXT, extra TEXT,
                            edited DOUBLE PRECISION, body TEXT, cjk BOOLEAN) ON COMMIT DROP
                        """, logger)
                    try await Self.copy(spool: spooled.file, into: "import_message", columns: Self.stagingColumns, on: c, logger)

                    let shownTitle = title ?? header.title ?? header.participants.map(\.name).filter { !$0.isEmpty }.joined(separator: ", ")
                    let target: Int64, last: Int64
                    if let row = try await c.run(
                        "SELECT id, last_seq FROM conversation WHERE source_format = \(sourceFormat) AND chat_key = \(chatKey) FOR UPDATE",
                        logger
                    ).first {
                        (target, last) = try row.decode((Int64, Int64).self)
                        if let title { try await c.run("UPDATE conversation SET title = \(title) WHERE id = \(target)", logger) }
                        // What the stored conversation has already.
                        summary.messagesSkipped = try await c.changed(
                            """
                            DELETE FROM import_message i USING message m WHERE m.conversation_id = \(target) AND m.source_key = i.source_key RETURNING 1
                            """, logger)
                    } else {
                        target = try await c.run(
                            """
                            INSERT INTO conversation (title, source_format, chat_key, added)
                            VALUES (\(shownTitle.isEmpty ? "Conversation" : shownTitle), \(sourceFormat), \(chatKey), \(Date().timeIntervalSince1970))
                            RETURNING id
                            """, logger
                        ).first!.decode(Int64.self)
                        last = 0
                        summary.conversationsAdded = 1
                    }
                    let order = sortByDate ? "date, n" : "n"
                    let added = try await c.changed(
                        """
                        INSERT INTO message (conversation_id, seq, source_key, date, utc_offset, sender, outgoing, system, text, status,
                                             status_date, source_id, extra, edited, body, cjk)
                        SELECT \(target), \(last) + row_number() OVER (ORDER BY \(unescaped: order)), source_key, date, utc_offset, sender, outgoing,
                               system, text, status, status_date, source_id, extra, edited, body, cjk
                        FROM import_message RETURNING 1
                        """, logger)
                    try await c.run("UPDATE conversation SET last_seq = \(last + Int64(added)) WHERE id = \(target)", logger)
                    summary.conversationID = target
                    summary.messagesAdded = added
                    summary.messagesSkipped += spooled.duplicates
                    // Participants: new ones after the known ones; names and avatars kept.
                    var position = try await c.run("SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = \(target)", logger)
                        .first!.decode(Int64.self)
                    for (p, avatar) in zip(header.participants, avatars) {
                        let inserted = try await c.changed(
                            """
                            INSERT INTO participant (conversation_id, id, position, name, avatar) VALUES (\(target), \(p.id), \(position), \(p.name), \(avatar))
                            ON CONFLICT (conversation_id, id) DO NOTHING RETURNING 1
                            """, logger)
                        if inserted > 0 { position += 1 }
                    }
                    try await Self.recordMedia(c, spooled.files, in: target, logger)
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
    }

    /// Reads the export (`read`), writing its rows in COPY's text format to a temporary file
    /// (nothing is kept in memory but a megabyte of rows) and its files into the media folder.
    static func spool(sourceFormat: String, mediaFolder: String, exportFolder: String, read: StoreImportReader) throws -> Spooled {
        var media = MediaCopier(mediaFolder: mediaFolder, exportFolder: exportFolder)
        var summary = StoreImportSummary(conversationID: 0)
        let file = NSTemporaryDirectory() + "/bubbles-import-\(UUID().uuidString).copy"
        guard FileManager.default.createFile(atPath: file, contents: nil), let out = FileHandle(forWritingAtPath: file) else {
            throw StoreError(path: file, reason: "cannot be written (the import's spool file)")
        }
        defer { try? out.close() }
        do {
            var rows = CopyRows()
            var used = Set<Int64>()
            var n: Int64 = 0
            var duplicates = 0
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
                let body = Self.searchBody(StoreCodec.indexBody(text: m.text, spans: m.spans, attachment: m.attachment))
                rows.int(n); rows.int(key); rows.double(m.date.timeIntervalSince1970); rows.int(StoreCodec.utcOffset(m).map(Int64.init))
                rows.text(m.sender); rows.bool(m.direction == .outgoing); rows.bool(m.kind == .system); rows.text(m.text)
                rows.text(m.status?.rawValue); rows.double(m.statusDate?.timeIntervalSince1970); rows.text(m.id)
                rows.text(try StoreCodec.encode(extra, with: encoder)); rows.double(m.edited?.timeIntervalSince1970)
                rows.text(body); rows.bool(body.map(SearchText.mayHaveCJK) ?? false)
                if rows.endRow() { try out.write(contentsOf: Data(buffer: rows.take())) }
            }
            try out.write(contentsOf: Data(buffer: rows.take()))
            let avatars = try header.participants.map { p in try p.avatar.flatMap { try media.store($0, summary: &summary) } }
            return Spooled(file: file, header: header, chatKey: chatKey, avatars: avatars, files: media.files, summary: summary, duplicates: duplicates)
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
