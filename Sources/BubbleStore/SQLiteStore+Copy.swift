import BubbleCore
import Foundation
import GRDB

/// `bubbles db copy` from and into an SQLite store.
extension SQLiteStore: CopyableStore {
    package func copyConversations() async throws -> [(id: Int64, conversation: CopiedConversation)] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT id, title, source_format, chat_key, added, owner, last_rev FROM conversation ORDER BY id").map { row in
                let id: Int64 = row["id"]
                let participants = try Row.fetchAll(
                    db, sql: "SELECT id, name, avatar FROM participant WHERE conversation_id = ? ORDER BY position",
                    arguments: [id]
                ).map { CopiedParticipant(id: $0["id"], name: $0["name"], avatar: $0["avatar"]) }
                return (
                    id,
                    CopiedConversation(
                        title: row["title"], sourceFormat: row["source_format"], chatKey: row["chat_key"], added: row["added"],
                        owner: row["owner"], lastRev: row["last_rev"], participants: participants)
                )
            }
        }
    }

    package func copyMessages(of conversation: Int64, after seq: Int64, limit: Int) async throws -> [CopiedMessage] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, source_key, date, utc_offset, sender, outgoing, system, text, status, status_date, source_id, extra, edited,
                           client_id, rev, change
                    FROM message WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?
                    """, arguments: [conversation, seq, limit]
            ).map { r in
                CopiedMessage(
                    seq: r["seq"], sourceKey: r["source_key"], date: r["date"], utcOffset: r["utc_offset"], sender: r["sender"],
                    outgoing: r["outgoing"], system: r["system"], text: r["text"], status: r["status"], statusDate: r["status_date"],
                    sourceID: r["source_id"], extra: r["extra"], edited: r["edited"], clientID: r["client_id"], rev: r["rev"],
                    change: r["change"])
            }
        }
    }

    package func copyTarget(_ c: CopiedConversation) async throws -> (id: Int64, lastSeq: Int64) {
        do {
            return try await write { db in
                let id: Int64
                if let known = try Int64.fetchOne(
                    db, sql: "SELECT id FROM conversation WHERE source_format = ? AND chat_key = ?",
                    arguments: [c.sourceFormat, c.chatKey])
                {
                    id = known
                } else {
                    try db.execute(
                        sql: "INSERT INTO conversation (title, source_format, chat_key, added, owner) VALUES (?, ?, ?, ?, ?)",
                        arguments: [c.title, c.sourceFormat, c.chatKey, c.added, c.owner])
                    id = db.lastInsertedRowID
                }
                var position =
                    try Int.fetchOne(
                        db, sql: "SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = ?",
                        arguments: [id]) ?? 0
                for p in c.participants {
                    try db.execute(
                        sql: "INSERT INTO participant (conversation_id, id, position, name, avatar) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        arguments: [id, p.id, position, p.name, p.avatar])
                    if db.changesCount > 0 { position += 1 }
                }
                try Self.recordMedia(db, c.participants.compactMap { $0.avatar.map { ($0 as NSString).lastPathComponent } }, in: id)
                return (id, try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM message WHERE conversation_id = ?", arguments: [id]) ?? 0)
            }
        } catch let e as StoreError { throw e } catch { throw Self.storeError(path, error) }
    }

    package func copyAppend(_ rows: [CopiedMessage], to conversation: Int64, from c: CopiedConversation) async throws {
        do {
            try await write { db in
                let insert = try db.makeStatement(
                    sql: """
                        INSERT INTO message (conversation_id, seq, source_key, date, utc_offset, sender, outgoing, system, text, status, status_date,
                                             source_id, extra, edited, client_id, rev, change)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """)
                let index = try db.makeStatement(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)")
                for r in rows {
                    insert.setUncheckedArguments([
                        conversation, r.seq, r.sourceKey, r.date, r.utcOffset, r.sender, r.outgoing, r.system, r.text,
                        r.status, r.statusDate, r.sourceID, r.extra, r.edited, r.clientID, r.rev, r.change
                    ])
                    try insert.execute()
                    if let body = r.indexBody {
                        index.setUncheckedArguments([db.lastInsertedRowID, body])
                        try index.execute()
                    }
                }
                try Self.recordMedia(db, MediaNames.files(in: rows), in: conversation)
                try db.execute(
                    sql: "UPDATE conversation SET last_rev = max(last_rev, ?), owner = coalesce(owner, ?) WHERE id = ?",
                    arguments: [c.lastRev, c.owner, conversation])
            }
        } catch let e as StoreError { throw e } catch { throw Self.storeError(path, error) }
    }
}
