import BubbleCore
import Foundation
import GRDB

/// What a message keeps beyond its columns (only messages that have any of it).
struct MessageExtra: Codable {
    var images: [ImageAttachment]?
    var attachment: MediaAttachment?
    var reactions: [Reaction]?
    var reply: ReplyReference?
    var isEmpty: Bool { images == nil && attachment == nil && reactions == nil && reply == nil }
}

extension SQLiteStore {
    /// 64-bit FNV-1a: stable across runs and machines (Swift's `Hasher` is seeded per process).
    static func stableHash(_ parts: [String]) -> Int64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for part in parts {
            for b in part.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            h = (h ^ 0x1F) &* 0x100_0000_01b3   // unit separator between parts
        }
        return Int64(bitPattern: h)
    }

    /// A message's source identity: its format's id when the export has one, else a hash of what
    /// it says and when, with the number of identical messages before it (two "ok" in the same
    /// minute of a WhatsApp export are two messages, and stay two on every re-import).
    static func sourceKey(_ m: Message, format: String, occurrences: inout [Int64: Int]) -> Int64 {
        if let id = m.id, !id.isEmpty { return stableHash(["id", format, id]) }
        let content = stableHash(["c", format, String(m.date.timeIntervalSince1970.bitPattern), m.sender ?? "",
                                  m.direction.rawValue, m.kind.rawValue, m.text ?? "", m.attachment?.fileName ?? "",
                                  m.images.compactMap(\.name).joined(separator: "/")])
        let n = occurrences[content, default: 0]
        occurrences[content] = n + 1
        return n == 0 ? content : stableHash(["n", String(content), String(n)])
    }

    public func add(_ conversation: Conversation, sourceFormat: String, chatKey: String, title: String?,
                    mediaFolder exportFolder: String) throws -> StoreImportSummary {
        var media = MediaCopier(store: self, exportFolder: exportFolder)
        do {
            return try pool.write { db in
                var summary = StoreImportSummary(conversationID: 0)
                let shownTitle = title ?? conversation.title ?? conversation.participants.map(\.name).filter { !$0.isEmpty }
                    .joined(separator: ", ")
                let conversationID: Int64
                if let known = try Int64.fetchOne(db, sql: "SELECT id FROM conversation WHERE source_format = ? AND chat_key = ?",
                                                  arguments: [sourceFormat, chatKey]) {
                    conversationID = known
                    if let title { try db.execute(sql: "UPDATE conversation SET title = ? WHERE id = ?", arguments: [title, known]) }
                } else {
                    try db.execute(sql: "INSERT INTO conversation (title, source_format, chat_key, added) VALUES (?, ?, ?, ?)",
                                   arguments: [shownTitle.isEmpty ? "Conversation" : shownTitle, sourceFormat, chatKey,
                                               Date().timeIntervalSince1970])
                    conversationID = db.lastInsertedRowID
                    summary.conversationsAdded = 1
                }
                summary.conversationID = conversationID
                // Participants: new ones added after the known ones; names and avatars kept.
                var position = try Int.fetchOne(db, sql: "SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = ?",
                                                arguments: [conversationID]) ?? 0
                for p in conversation.participants {
                    let avatar = try p.avatar.flatMap { try media.store($0, summary: &summary) }
                    try db.execute(sql: """
                        INSERT INTO participant (conversation_id, id, position, name, avatar) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (conversation_id, id) DO NOTHING
                        """, arguments: [conversationID, p.id, position, p.name, avatar])
                    if db.changesCount > 0 { position += 1 }
                }
                var known = Set(try Int64.fetchAll(db, sql: "SELECT source_key FROM message WHERE conversation_id = ?",
                                                   arguments: [conversationID]))
                var seq = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM message WHERE conversation_id = ?",
                                             arguments: [conversationID]) ?? 0
                let insert = try db.makeStatement(sql: """
                    INSERT INTO message (conversation_id, seq, source_key, date, utc_offset, sender, outgoing, system, text,
                                         status, status_date, source_id, extra)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                let index = try db.makeStatement(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)")
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                var occurrences: [Int64: Int] = [:]
                for m in conversation.messages {
                    let key = Self.sourceKey(m, format: sourceFormat, occurrences: &occurrences)
                    guard known.insert(key).inserted else { summary.messagesSkipped += 1; continue }
                    seq += 1
                    var extra = MessageExtra()
                    if !m.images.isEmpty {
                        extra.images = try m.images.map { image in
                            var stored = image
                            stored.path = try image.path.flatMap { try media.store($0, summary: &summary) }
                            return stored
                        }
                    }
                    if var a = m.attachment {
                        if let p = a.path { a.path = try media.store(p, summary: &summary) }
                        if let p = a.poster { a.poster = try media.store(p, summary: &summary) }
                        extra.attachment = a
                    }
                    if !m.reactions.isEmpty { extra.reactions = m.reactions }
                    extra.reply = m.reply
                    let extraJSON: String? = extra.isEmpty ? nil : String(decoding: try encoder.encode(extra), as: UTF8.self)
                    let offset: Int? = m.wallTime.map { $0.localSeconds - Int(m.date.timeIntervalSince1970.rounded(.down)) }
                    insert.setUncheckedArguments([conversationID, seq, key, m.date.timeIntervalSince1970, offset, m.sender,
                                                  m.direction == .outgoing, m.kind == .system, m.text, m.status?.rawValue,
                                                  m.statusDate?.timeIntervalSince1970, m.id, extraJSON])
                    try insert.execute()
                    let body = [m.text, m.attachment?.fileName, m.attachment?.title].compactMap { $0 }.joined(separator: " ")
                    if !body.isEmpty {
                        index.setUncheckedArguments([db.lastInsertedRowID, SearchText.indexed(body)])
                        try index.execute()
                    }
                    summary.messagesAdded += 1
                }
                return summary
            }
        } catch let e as StoreError { throw e } catch {
            throw StoreError(path: path, reason: Self.describe(error))
        }
    }
}

/// Copies an export's pictures and files into the store, by content.
struct MediaCopier {
    let store: SQLiteStore
    let exportFolder: String
    /// Export path → stored path (nil: missing), once per import.
    var done: [String: String?] = [:]

    init(store: SQLiteStore, exportFolder: String) {
        self.store = store
        self.exportFolder = exportFolder
    }

    /// The store's path (`media/ab/<sha256>.ext`) of the file at `path` (relative to the export's
    /// folder), copying it in when the store does not hold those bytes yet; nil when it cannot
    /// be read (the message keeps the file's name and shows a placeholder).
    mutating func store(_ path: String, summary: inout StoreImportSummary) throws -> String? {
        if path.hasPrefix("media/") && !path.contains("..") { return path }   // already the store's
        let full = path.hasPrefix("/") ? path : exportFolder + "/" + path
        if let known = done[full] { return known }
        guard let sha = SHA256.file(full) else { done[full] = .some(nil); return nil }
        let ext = (path as NSString).pathExtension.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(8)
        let relative = "media/" + sha.prefix(2) + "/" + sha + (ext.isEmpty ? "" : "." + ext)
        let target = store.mediaFolder + "/" + relative.dropFirst("media/".count)
        if FileManager.default.fileExists(atPath: target) {
            summary.attachmentsSkipped += 1
        } else {
            let folder = (target as NSString).deletingLastPathComponent
            let tmp = folder + "/.tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: full, toPath: tmp)
                guard rename(tmp, target) == 0 else { throw StoreError(path: target, reason: String(cString: strerror(errno))) }
            } catch {
                try? FileManager.default.removeItem(atPath: tmp)
                throw StoreError(path: target, reason: "cannot copy \(full) into the store: \(error.localizedDescription)")
            }
            summary.attachmentsAdded += 1
        }
        done[full] = relative
        return relative
    }
}
