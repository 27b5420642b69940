import BubbleCore
import Foundation
import GRDB

extension SQLiteStore {
    /// Imports messages as `read` hands them over (to `add`), in one write transaction: nothing
    /// is kept in memory but the current message, so an import's memory does not grow with the
    /// export. `read` returns the conversation's header (title, participants; its messages are
    /// ignored) and its chat key once it has read everything; if it throws, the transaction is
    /// rolled back and the database is as it was.
    ///
    /// Messages go into a conversation of their own first; at the end it becomes the stored
    /// conversation of (format, chat key), or its new messages move into the one already there
    /// (appended after its last sequence number, in the export's order — by date with
    /// `sortByDate`) and the ones it already had are dropped.
    ///
    /// The whole import runs on GRDB's writer thread (`read` parses files and copies pictures
    /// there, off Swift's cooperative threads) while the calling task is suspended.
    public func importStream(
        sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
        read: @escaping StoreImportReader
    ) async throws -> StoreImportSummary {
        let created = CreatedFiles()
        do {
            return try await timing.time(#function) {
                try await pool.write { [mediaFolder, handed = Handed(read)] db in
                    var media = MediaCopier(mediaFolder: mediaFolder, exportFolder: exportFolder)
                    media.created = created
                    var summary = StoreImportSummary(conversationID: 0)
                    let importing = "\u{0}importing \(UUID().uuidString)"
                    try db.execute(
                        sql: "INSERT INTO conversation (title, source_format, chat_key, added) VALUES ('', ?, ?, ?)",
                        arguments: [sourceFormat, importing, Date().timeIntervalSince1970])
                    let provisional = db.lastInsertedRowID
                    let read = try Self.insertMessages(db, into: provisional, format: sourceFormat, read: handed.value, media: &media, summary: &summary)
                    if sortByDate && !read.inOrder { try Self.sortByDate(db, provisional) }

                    let header = read.header
                    let shownTitle = title ?? header.title ?? header.participants.map(\.name).filter { !$0.isEmpty }.joined(separator: ", ")
                    let target: Int64
                    // Not the conversation being filled itself (whose placeholder key an empty chat key
                    // would otherwise match: a file without title or participants was "already present").
                    if let known = try Int64.fetchOne(
                        db, sql: "SELECT id FROM conversation WHERE source_format = ? AND chat_key = ? AND id <> ?",
                        arguments: [sourceFormat, read.chatKey, provisional])
                    {
                        target = known
                        if let title { try db.execute(sql: "UPDATE conversation SET title = ? WHERE id = ?", arguments: [title, known]) }
                        summary.messagesSkipped = try Self.moveNew(db, from: provisional, into: known, read: read.count)
                    } else {
                        target = provisional
                        try db.execute(
                            sql: "UPDATE conversation SET title = ?, chat_key = ? WHERE id = ?",
                            arguments: [shownTitle.isEmpty ? "Conversation" : shownTitle, read.chatKey, provisional])
                        summary.conversationsAdded = 1
                    }
                    summary.conversationID = target
                    summary.messagesAdded = Int(read.count) - summary.messagesSkipped
                    summary.messagesSkipped += read.duplicates
                    try Self.addParticipants(db, header.participants, to: target, media: &media, summary: &summary)
                    try Self.recordMedia(db, media.files, in: target)
                    return summary
                }
            }
        } catch {
            await removeUnnamed(created.paths)
            if let e = error as? DatabaseError { throw Self.storeError(path, e) }
            throw error
        }
    }

    /// What reading an export into the provisional conversation gave.
    private struct ReadMessages {
        var header: Conversation
        var chatKey: String
        /// Rows inserted (the highest sequence number).
        var count: Int64
        /// Whether their dates never went back.
        var inOrder: Bool
        /// Messages whose export id was seen before in the same export (not stored again).
        var duplicates: Int
    }

    /// Runs `read`, inserting each message it hands over into `provisional` (sequence numbers
    /// from 1, in the export's order) with its search entry; pictures copied by `media`.
    private static func insertMessages(
        _ db: Database, into provisional: Int64, format sourceFormat: String, read: StoreImportReader,
        media: inout MediaCopier, summary: inout StoreImportSummary
    ) throws -> ReadMessages {
        let insert = try db.makeStatement(
            sql: """
                INSERT OR IGNORE INTO message (conversation_id, seq, source_key, date, utc_offset, sender, outgoing, system, text,
                                               status, status_date, source_id, extra, edited)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        let index = try db.makeStatement(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)")
        let encoder = StoreCodec.extraEncoder()
        var seq: Int64 = 0
        var inOrder = true
        var lastDate = -Double.infinity
        var duplicates = 0
        let (header, chatKey) = try read { m in
            let extra = try MessageExtra(m) { try media.store($0, summary: &summary) }
            let extraJSON = try StoreCodec.encode(extra, with: encoder)
            let offset = StoreCodec.utcOffset(m)
            let date = m.date.timeIntervalSince1970
            // The identity: the export's id (a repeated id is the same message), else the
            // content, numbered per occurrence (two identical "ok" stay two).
            let byID = m.id.map { !$0.isEmpty } ?? false
            var key = byID ? StoreCodec.stableHash(["id", sourceFormat, m.id!]) : StoreCodec.contentKey(m, format: sourceFormat)
            let content = key
            var occurrence = 0
            while true {
                insert.setUncheckedArguments([
                    provisional, seq + 1, key, date, offset, m.sender, m.direction == .outgoing,
                    m.kind == .system, m.text, m.status?.rawValue,
                    m.statusDate?.timeIntervalSince1970, m.id, extraJSON, m.edited?.timeIntervalSince1970
                ])
                try insert.execute()
                if db.changesCount > 0 { break }
                if byID { duplicates += 1; return }
                occurrence += 1
                key = StoreCodec.stableHash(["n", String(content), String(occurrence)])
            }
            seq += 1
            if date < lastDate { inOrder = false }
            lastDate = date
            if let body = StoreCodec.indexBody(text: m.text, spans: m.spans, attachment: m.attachment) {
                index.setUncheckedArguments([db.lastInsertedRowID, body])
                try index.execute()
            }
        }
        return ReadMessages(header: header, chatKey: chatKey, count: seq, inOrder: inOrder, duplicates: duplicates)
    }

    /// Renumbers `conversation` by date, the export's order among equal dates (sequence numbers
    /// made negative first: they are unique).
    private static func sortByDate(_ db: Database, _ conversation: Int64) throws {
        try db.execute(sql: "UPDATE message SET seq = -seq WHERE conversation_id = ?", arguments: [conversation])
        try db.execute(
            sql: """
                UPDATE message SET seq = ranked.r
                FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY date, -seq) AS r FROM message WHERE conversation_id = ?) AS ranked
                WHERE message.id = ranked.id
                """, arguments: [conversation])
    }

    /// A newer export of a stored conversation: drops from `provisional` what `known` has (and
    /// its search entries), appends the rest after `known`'s last sequence number, and removes
    /// `provisional`. Gives how many of its `read` messages were there already.
    private static func moveNew(_ db: Database, from provisional: Int64, into known: Int64, read: Int64) throws -> Int {
        let last = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM message WHERE conversation_id = ?", arguments: [known]) ?? 0
        let present = try Row.fetchCursor(
            db,
            sql: """
                SELECT p.id, p.text, p.extra FROM message p
                WHERE p.conversation_id = ? AND EXISTS (SELECT 1 FROM message e WHERE e.conversation_id = ? AND e.source_key = p.source_key)
                """, arguments: [provisional, known])
        var dropped: [Int64] = []
        let decoder = JSONDecoder()
        let unindex = try db.makeStatement(sql: "INSERT INTO message_fts (message_fts, rowid, body) VALUES ('delete', ?, ?)")
        func deleteDropped() throws {
            guard !dropped.isEmpty else { return }
            try db.execute(sql: "DELETE FROM message WHERE id IN (\(dropped.map(String.init).joined(separator: ",")))")
            dropped.removeAll(keepingCapacity: true)
        }
        while let row = try present.next() {
            let id: Int64 = row["id"]
            let extra = try (row["extra"] as String?).flatMap { try decoder.decode(MessageExtra.self, from: Data($0.utf8)) }
            if let body = StoreCodec.indexBody(text: row["text"], spans: extra?.spans ?? [], attachment: extra?.attachment) {
                unindex.setUncheckedArguments([id, body])
                try unindex.execute()
            }
            dropped.append(id)
            if dropped.count == 10_000 { try deleteDropped() }
        }
        try deleteDropped()
        let skipped = Int(read) - (try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE conversation_id = ?", arguments: [provisional]) ?? 0)
        try db.execute(
            sql: """
                UPDATE message SET conversation_id = ?, seq = ? + ranked.r
                FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY seq) AS r FROM message WHERE conversation_id = ?) AS ranked
                WHERE message.id = ranked.id
                """, arguments: [known, last, provisional])
        try db.execute(sql: "DELETE FROM conversation WHERE id = ?", arguments: [provisional])
        return skipped
    }

    /// New participants after the known ones; names and avatars of known ones kept.
    private static func addParticipants(
        _ db: Database, _ participants: [Participant], to target: Int64, media: inout MediaCopier, summary: inout StoreImportSummary
    ) throws {
        var position =
            try Int.fetchOne(db, sql: "SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = ?", arguments: [target]) ?? 0
        for p in participants {
            let avatar = try p.avatar.flatMap { try media.store($0, summary: &summary) }
            try db.execute(
                sql: """
                    INSERT INTO participant (conversation_id, id, position, name, avatar) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (conversation_id, id) DO NOTHING
                    """, arguments: [target, p.id, position, p.name, avatar])
            if db.changesCount > 0 { position += 1 }
        }
    }

    /// The files an import that failed had copied in, unless a conversation names them (another
    /// import of the same bytes committed meanwhile): media are written before the rows that
    /// name them, so a rolled-back import leaves no file behind (`db check` finds those a
    /// killed one leaves).
    func removeUnnamed(_ paths: [String]) async {
        guard !paths.isEmpty else { return }
        let named =
            (try? await read { db in
                Set(
                    try String.fetchAll(
                        db, sql: "SELECT file FROM conversation_media WHERE file IN (SELECT value FROM json_each(?))",
                        arguments: [String(decoding: try JSONEncoder().encode(paths.map { ($0 as NSString).lastPathComponent }), as: UTF8.self)]))
            }) ?? Set(paths.map { ($0 as NSString).lastPathComponent })
        for path in paths where !named.contains((path as NSString).lastPathComponent) { unlink(path) }
    }
}

/// The files an import copied into the store's media folder (read after it failed).
final class CreatedFiles: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ path: String) { lock.lock(); list.append(path); lock.unlock() }
    var paths: [String] { lock.lock(); defer { lock.unlock() }; return list }
}

/// Copies an export's pictures and files into the store, by content.
struct MediaCopier {
    /// The store's media folder.
    let mediaFolder: String
    let exportFolder: String
    /// Export path → stored path (nil: missing), once per import.
    var done: [String: String?] = [:]
    /// The store's file names (`<sha256>.ext`) this import's conversation shows.
    var files: Set<String> = []
    /// Where the files this import copied in are noted (removed again if it fails).
    var created: CreatedFiles?

    init(mediaFolder: String, exportFolder: String) {
        self.mediaFolder = mediaFolder
        self.exportFolder = exportFolder
    }

    /// The store's path (`media/ab/<sha256>.ext`) of the file at `path` (relative to the export's
    /// folder), copying it in when the store does not hold those bytes yet; nil when it cannot
    /// be read (the message keeps the file's name and shows a placeholder).
    mutating func store(_ path: String, summary: inout StoreImportSummary, extensionFrom name: String? = nil) throws -> String? {
        if path.hasPrefix("media/") && !path.contains("..") {  // already the store's
            files.insert((path as NSString).lastPathComponent)
            return path
        }
        let full = path.hasPrefix("/") ? path : exportFolder + "/" + path
        if let known = done[full] {
            if let known { files.insert((known as NSString).lastPathComponent) }
            return known
        }
        guard let sha = (try? DurableFile.digest(full))?.1 else { done[full] = .some(nil); return nil }
        let ext = PathText.fileExtension(name ?? path).lowercased().filter { $0.isLetter || $0.isNumber }.prefix(8)
        let relative = "media/" + sha.prefix(2) + "/" + sha + (ext.isEmpty ? "" : "." + ext)
        let target = mediaFolder + "/" + relative.dropFirst("media/".count)
        if FileManager.default.fileExists(atPath: target) {
            summary.attachmentsSkipped += 1
        } else {
            try Self.copy(full, to: target)
            created?.add(target)
            summary.attachmentsAdded += 1
        }
        done[full] = relative
        files.insert((relative as NSString).lastPathComponent)
        return relative
    }

    /// Copies `source` to `target` through a temporary file in the target's folder and a rename:
    /// a reader never sees half a file, a crash leaves only a `.tmp-` file.
    static func copy(_ source: String, to target: String) throws {
        do { try DurableFile.copy(source, to: target) } catch let e as StoreError {
            throw StoreError(path: target, reason: "cannot copy \(source) into the store: \(e.reason)", outOfSpace: e.outOfSpace)
        }
    }
}
