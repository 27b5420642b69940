import BubbleCore
import Foundation
import PostgresNIO

/// `bubbles db copy` from and into a PostgreSQL store (rows in by COPY).
extension PostgresStore: CopyableStore {
    package func copyConversations() async throws -> [(id: Int64, conversation: CopiedConversation)] {
        try await read { c in
            var all: [(id: Int64, conversation: CopiedConversation)] = []
            for row in try await c.run("SELECT id, title, source_format, chat_key, added, owner, last_rev FROM conversation ORDER BY id", logger) {
                let (id, title, format, key, added, owner, lastRev) = try row.decode((Int64, String, String, String, Double, String?, Int64).self)
                let participants = try await c.run("SELECT id, name, avatar FROM participant WHERE conversation_id = \(id) ORDER BY position", logger).map {
                    let (pid, name, avatar) = try $0.decode((String, String, String?).self)
                    return CopiedParticipant(id: pid, name: name, avatar: avatar)
                }
                all.append(
                    (
                        id,
                        CopiedConversation(
                            title: title, sourceFormat: format, chatKey: key, added: added, owner: owner, lastRev: lastRev,
                            participants: participants)
                    ))
            }
            return all
        }
    }

    package func copyMessages(of conversation: Int64, after seq: Int64, limit: Int) async throws -> [CopiedMessage] {
        try await read { c in
            try await c.run(
                """
                SELECT seq, source_key, date, utc_offset, sender, outgoing, system, text, status, status_date, source_id, extra, edited,
                       client_id, rev, change
                FROM message WHERE conversation_id = \(conversation) AND seq > \(seq) ORDER BY seq LIMIT \(Int64(limit))
                """, logger
            ).map { row in
                let cells = Array(row)
                func cell<T: PostgresDecodable>(_ i: Int, _: T.Type = T.self) throws -> T { try cells[i].decode(T.self) }
                return CopiedMessage(
                    seq: try cell(0), sourceKey: try cell(1), date: try cell(2), utcOffset: try cell(3), sender: try cell(4),
                    outgoing: try cell(5), system: try cell(6), text: try cell(7), status: try cell(8), statusDate: try cell(9),
                    sourceID: try cell(10), extra: try cell(11), edited: try cell(12), clientID: try cell(13), rev: try cell(14),
                    change: try cell(15))
            }
        }
    }

    package func copyTarget(_ conv: CopiedConversation) async throws -> (id: Int64, lastSeq: Int64) {
        do {
            return try await transaction(retry: false) { c in
                let id: Int64
                if let known = try await c.run(
                    "SELECT id FROM conversation WHERE source_format = \(conv.sourceFormat) AND chat_key = \(conv.chatKey)",
                    logger
                ).first?.decode(Int64.self) {
                    id = known
                } else {
                    id = try await c.run(
                        """
                        INSERT INTO conversation (title, source_format, chat_key, added, owner)
                        VALUES (\(conv.title), \(conv.sourceFormat), \(conv.chatKey), \(conv.added), \(conv.owner)) RETURNING id
                        """, logger
                    ).first!.decode(Int64.self)
                }
                var position = try await c.run("SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = \(id)", logger)
                    .first!.decode(Int64.self)
                for p in conv.participants {
                    let n = try await c.changed(
                        """
                        INSERT INTO participant (conversation_id, id, position, name, avatar) VALUES (\(id), \(p.id), \(position), \(p.name), \(p.avatar))
                        ON CONFLICT DO NOTHING RETURNING 1
                        """, logger)
                    if n > 0 { position += 1 }
                }
                try await Self.recordMedia(c, conv.participants.compactMap { $0.avatar.map { ($0 as NSString).lastPathComponent } }, in: id, logger)
                let last = try await c.run("SELECT coalesce(max(seq), 0) FROM message WHERE conversation_id = \(id)", logger).first!.decode(Int64.self)
                return (id, last)
            }
        } catch { throw self.error(error) }
    }

    package func copyAppend(_ rows: [CopiedMessage], to conversation: Int64, from conv: CopiedConversation) async throws {
        do {
            try await transaction(retry: false) { c in
                if !rows.isEmpty {
                    var copy = CopyRows()
                    for r in rows {
                        let body = Self.searchBody(r.indexBody)
                        copy.int(conversation); copy.int(r.seq); copy.int(r.sourceKey); copy.double(r.date); copy.int(r.utcOffset)
                        copy.text(r.sender); copy.bool(r.outgoing); copy.bool(r.system); copy.text(r.text); copy.text(r.status)
                        copy.double(r.statusDate); copy.text(r.sourceID); copy.text(r.extra); copy.double(r.edited); copy.text(r.clientID)
                        copy.int(r.rev); copy.text(r.change); copy.text(body); copy.bool(body.map(SearchText.mayHaveCJK) ?? false)
                        _ = copy.endRow()
                    }
                    let chunk = copy.take()
                    try await c.copyFrom(
                        table: "message",
                        columns: [
                            "conversation_id", "seq", "source_key", "date", "utc_offset", "sender", "outgoing", "system", "text", "status", "status_date",
                            "source_id", "extra", "edited", "client_id", "rev", "change", "body", "cjk"
                        ], logger: logger
                    ) { writer in try await writer.write(chunk) }
                    // A source key the conversation holds already (under another number): a
                    // target holding other messages, not merged (the store's writers keep a
                    // conversation's source keys unique; no index does).
                    if let clash = try await c.run(
                        """
                        SELECT n.seq, o.seq FROM message n JOIN message o
                            ON o.conversation_id = n.conversation_id AND o.source_key = n.source_key AND o.seq <> n.seq
                        WHERE n.conversation_id = \(conversation) AND n.seq BETWEEN \(rows.first!.seq) AND \(rows.last!.seq) LIMIT 1
                        """, logger
                    ).first {
                        let (copied, held) = try clash.decode((Int64, Int64).self)
                        throw StoreError(
                            path: path,
                            reason:
                                "conversation \"\(conv.title)\" holds message \(held) already as message \(copied) of the copy (the same source key): it holds other messages under the same chat"
                        )
                    }
                }
                try await Self.recordMedia(c, MediaNames.files(in: rows), in: conversation, logger)
                try await c.run(
                    """
                    UPDATE conversation SET last_rev = greatest(last_rev, \(conv.lastRev)), owner = coalesce(owner, \(conv.owner)),
                           last_seq = greatest(last_seq, (SELECT coalesce(max(seq), 0) FROM message WHERE conversation_id = \(conversation)))
                    WHERE id = \(conversation)
                    """, logger)
            }
        } catch { throw self.error(error) }
    }
}
