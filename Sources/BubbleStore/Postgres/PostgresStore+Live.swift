import BubbleCore
import Foundation
import PostgresNIO

/// Live changes on PostgreSQL: each in a transaction of its own that first locks its
/// conversation's row (taking the next revision, and the next sequence number for a message), so
/// the writes of one conversation are ordered across every server; the commit carries a
/// `NOTIFY` for the other servers. Exactly once as in SQLite: a client id is unique in its
/// conversation (`message_client`), and the lock makes "is it there already?" true or false for
/// every server alike.
extension PostgresStore {
    static let changeColumns = columns + ", rev, change, client_id"
    /// The channel servers LISTEN on; payload `"CONVERSATION:REV"`.
    static let channel = "bubbles_changes"
    /// Typing indicators between servers; payload `"CONVERSATION:NODE:REV:SENDER"`.
    static let typingChannel = "bubbles_typing"

    public func createConversation(title: String, participants: [Participant]) async throws -> StoredConversation {
        let id: Int64 = try await writeLive(retry: false) { [self] c in
            let id = try await c.run(
                """
                INSERT INTO conversation (title, source_format, chat_key, added, owner)
                VALUES (\(title), 'live', \("live:" + UUID().uuidString), \(Date().timeIntervalSince1970), \(participants.first?.id)) RETURNING id
                """, logger
            ).first!.decode(Int64.self)
            for (i, p) in participants.enumerated() {
                try await c.run("INSERT INTO participant (conversation_id, id, position, name) VALUES (\(id), \(p.id), \(Int64(i)), \(p.name))", logger)
            }
            return (id, [])
        }
        guard let c = try await conversation(id: id) else { throw StoreError(path: path, reason: "lost conversation \(id) after creating it") }
        return c
    }

    /// One round trip holds the conversation's lock: reads first (a resend, the participants, the
    /// message answered), then a single statement that takes the next numbers from the
    /// conversation's row, inserts and notifies, committed on its own. Two resends racing on two
    /// servers: the second insert meets `message_client` and gives the first one's message.
    public func add(_ new: NewMessage, to conversation: Int64) async throws -> AddedMessage {
        try await writeLive(transaction: false) { [self] c -> (AddedMessage, [StoredChange]) in
            let existing = { [self] () async throws -> AddedMessage? in
                try await c.run(
                    "SELECT \(unescaped: Self.changeColumns) FROM message WHERE conversation_id = \(conversation) AND client_id = \(new.clientID)",
                    logger
                ).first.map { AddedMessage(change: try change($0, conversation: conversation), existed: true) }
            }
            if let found = try await existing() { return (found, []) }
            let (owner, senders) = try await people(c, conversation, lock: false)
            guard senders.contains(new.sender) else { throw StoreCodec.badSender(new.sender, conversation, senders) }
            var answered: (Int64, Message)?
            if let target = new.replyTo {
                guard
                    let row = try await c.run(
                        "SELECT \(unescaped: Self.columns) FROM message WHERE conversation_id = \(conversation) AND seq = \(target)",
                        logger
                    ).first
                else {
                    throw LiveError(.invalid, "replyTo \(target): conversation \(conversation) has no message \(target)")
                }
                answered = (target, try message(row, decoder: JSONDecoder()).message)
            }
            let m = StoreCodec.newMessage(new, owner: owner, answered: answered)
            let extra = try StoreCodec.encode(MessageExtra(m) { $0 }, with: StoreCodec.extraEncoder())
            let body = Self.searchBody(StoreCodec.indexBody(text: new.text, spans: new.spans, attachment: nil))
            let numbers: (Int64, Int64)
            do {
                guard
                    let row = try await c.run(
                        """
                        WITH next AS (
                            UPDATE conversation SET last_seq = last_seq + 1, last_rev = last_rev + 1 WHERE id = \(conversation) RETURNING last_seq, last_rev
                        ), added AS (
                            INSERT INTO message (conversation_id, seq, source_key, date, sender, outgoing, system, text, status, source_id, extra,
                                                 client_id, rev, change, body, cjk)
                            SELECT \(conversation), next.last_seq, \(StoreCodec.stableHash(["live", new.clientID])), \(new.date.timeIntervalSince1970),
                                   \(new.sender), \(m.direction == .outgoing), false, \(new.text), \(m.status?.rawValue), \(new.clientID), \(extra),
                                   \(new.clientID), next.last_rev, 'message', \(body), \(body.map(SearchText.mayHaveCJK) ?? false)
                            FROM next RETURNING seq, rev
                        )
                        SELECT seq, rev, pg_notify(\(Self.channel), \(String(conversation)) || ':' || rev::text) FROM added
                        """, logger
                    ).first
                else {
                    throw LiveError(.notFound, "no conversation \(conversation)")
                }
                let (seq, rev, _) = try row.decode((Int64, Int64, String?).self)
                numbers = (seq, rev)
            } catch let e as PSQLError where e.serverInfo?[.sqlState] == "23505" {
                // The same client id stored meanwhile (by another server): that message.
                if let found = try await existing() { return (found, []) }
                throw e
            }
            let added = StoredChange(
                conversation: conversation, rev: numbers.1, kind: .message,
                message: StoredMessage(seq: numbers.0, message: resolvingImages(m)), clientID: new.clientID)
            return (AddedMessage(change: added, existed: false), [added])
        }
    }

    public func edit(_ seq: Int64, in conversation: Int64, text: String, spans: [TextSpan], by sender: String) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: sender, kind: .edit) { m in try StoreCodec.edit(&m, seq: seq, text: text, spans: spans) }
    }

    public func delete(_ seq: Int64, in conversation: Int64, by sender: String) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: sender, kind: .delete) { m in try StoreCodec.delete(&m, seq: seq) }
    }

    public func react(_ seq: Int64, in conversation: Int64, emoji: String, sender: String, on: Bool) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: nil, reactor: sender, kind: .react) { m in
            try StoreCodec.react(&m, seq: seq, emoji: emoji, sender: sender, on: on)
        }
    }

    public func changes(in conversation: Int64, since rev: Int64, limit: Int) async throws -> [StoredChange] {
        try await read { c in
            let decoder = JSONDecoder()
            return try await c.run(
                """
                SELECT \(unescaped: Self.changeColumns) FROM message WHERE conversation_id = \(conversation) AND rev > \(rev) ORDER BY rev LIMIT \(Int64(max(1, limit)))
                """, logger
            ).map { try change($0, conversation: conversation, decoder: decoder) }
        }
    }

    public func lastRev(of conversation: Int64) async throws -> Int64? {
        try await read { c in try await c.run("SELECT last_rev FROM conversation WHERE id = \(conversation)", logger).first?.decode(Int64.self) }
    }

    public func people(of conversation: Int64) async throws -> (owner: String?, ids: Set<String>) {
        try await read { c in try await people(c, conversation, lock: false) }
    }

    /// `NOTIFY bubbles_typing, 'C:NODE:REV:SENDER'`, sent in the background (a typing indicator
    /// that is lost costs nothing).
    public func broadcastTyping(_ conversation: Int64, sender: String, after rev: Int64) async {
        let payload = "\(conversation):\(nodeID):\(rev):\(sender)"
        guard payload.utf8.count < 7_000 else { return }
        _ = try? await timing.time(#function) {
            try await db.with(retry: false) { c in try await c.run("SELECT pg_notify(\(Self.typingChannel), \(payload))", logger) }
        }
    }

    // MARK: -

    /// Runs `body` in a transaction of its own; the change it made goes to the feed after the
    /// commit. `retry`: run it again on a new connection when the database went away (safe for
    /// changes that find what they already did: a message by its client id).
    func writeLive<T: Sendable>(
        call function: String = #function, retry: Bool = true, transaction: Bool = true,
        _ body: (PostgresConnection) async throws -> (T, [StoredChange])
    ) async throws -> T {
        try await prepare()
        do {
            let (result, changes) = try await timing.time(function) {
                transaction ? try await db.transaction(retry: retry, body) : try await db.with(retry: retry, body)
            }
            for change in changes { listener.committed(change) }
            return result
        } catch { throw self.error(error) }
    }

    private func modify(
        call function: String = #function, _ seq: Int64, in conversation: Int64, by author: String?, reactor: String? = nil, kind: ChangeKind,
        _ apply: @escaping @Sendable (inout Message) throws -> Void
    ) async throws -> StoredChange {
        try await writeLive(call: function) { [self] c -> (StoredChange, [StoredChange]) in
            let (_, senders) = try await lockPeople(c, conversation)
            guard
                let row = try await c.run(
                    "SELECT id, \(unescaped: Self.changeColumns) FROM message WHERE conversation_id = \(conversation) AND seq = \(seq)",
                    logger
                ).first
            else {
                throw LiveError(.notFound, "conversation \(conversation) has no message \(seq)")
            }
            let rowID = try row.decode(Int64.self)
            let before = try change(row, conversation: conversation, skip: 1)
            var m = before.message.message
            try StoreCodec.checkChange(m, seq: seq, author: author, reactor: reactor, conversation: conversation, senders: senders)
            let original = m
            try apply(&m)
            if m == original {
                // Nothing to do (a reaction already there): no revision, nothing broadcast.
                return (
                    StoredChange(
                        conversation: conversation, rev: before.rev, kind: kind, message: StoredMessage(seq: seq, message: m),
                        clientID: before.clientID), []
                )
            }
            let rev = try await c.run("UPDATE conversation SET last_rev = last_rev + 1 WHERE id = \(conversation) RETURNING last_rev", logger)
                .first!.decode(Int64.self)
            let extra = try StoreCodec.encode(MessageExtra(m) { relative($0) }, with: StoreCodec.extraEncoder())
            let body = Self.searchBody(StoreCodec.indexBody(text: m.text, spans: m.spans, attachment: m.attachment))
            try await c.run(
                """
                UPDATE message SET text = \(m.text), extra = \(extra), edited = \(m.edited?.timeIntervalSince1970), rev = \(rev),
                       change = \(kind.rawValue), body = \(body), cjk = \(body.map(SearchText.mayHaveCJK) ?? false)
                WHERE id = \(rowID)
                """, logger)
            let changed = StoredChange(
                conversation: conversation, rev: rev, kind: kind, message: StoredMessage(seq: seq, message: m),
                clientID: before.clientID)
            // A deleted message leaves the replies that quoted it too (each a change of its own).
            let quotes = kind == .delete ? try await forgetQuotes(of: StoreCodec.quoteID(of: original, seq: seq), after: seq, in: conversation, c) : []
            try await notify(c, conversation, quotes.last?.rev ?? rev)
            return (changed, [changed] + quotes)
        }
    }

    /// The replies after `seq` that quote the message `id`: their quote's text replaced
    /// (`StoreCodec.deletedQuote`), each with the next revision.
    private func forgetQuotes(of id: String, after seq: Int64, in conversation: Int64, _ c: PostgresConnection) async throws -> [StoredChange] {
        let rows = try await c.run(
            """
            SELECT id, \(unescaped: Self.changeColumns) FROM message
            WHERE conversation_id = \(conversation) AND seq > \(seq) AND extra LIKE '%"reply"%' AND (extra::jsonb -> 'reply' ->> 'id') = \(id)
            ORDER BY seq
            """, logger)
        var changes: [StoredChange] = []
        for row in rows {
            let rowID = try row.decode(Int64.self)
            let stored = try change(row, conversation: conversation, skip: 1)
            var reply = stored.message
            guard StoreCodec.forgetQuote(&reply.message) else { continue }
            let rev = try await c.run("UPDATE conversation SET last_rev = last_rev + 1 WHERE id = \(conversation) RETURNING last_rev", logger)
                .first!.decode(Int64.self)
            let extra = try StoreCodec.encode(MessageExtra(reply.message) { relative($0) }, with: StoreCodec.extraEncoder())
            try await c.run("UPDATE message SET extra = \(extra), rev = \(rev), change = 'edit' WHERE id = \(rowID)", logger)
            changes.append(StoredChange(conversation: conversation, rev: rev, kind: .edit, message: reply, clientID: stored.clientID))
        }
        return changes
    }

    /// Locks the conversation's row (every write of a conversation takes it, so they are
    /// ordered) and gives its owner and participants; a `LiveError` when there is none.
    private func lockPeople(_ c: PostgresConnection, _ conversation: Int64) async throws -> (owner: String?, ids: Set<String>) {
        try await people(c, conversation, lock: true)
    }

    private func people(_ c: PostgresConnection, _ conversation: Int64, lock: Bool) async throws -> (owner: String?, ids: Set<String>) {
        guard let row = try await c.run("SELECT owner FROM conversation WHERE id = \(conversation) \(unescaped: lock ? "FOR UPDATE" : "")", logger).first else {
            throw LiveError(.notFound, "no conversation \(conversation)")
        }
        let ids = try await c.run("SELECT id FROM participant WHERE conversation_id = \(conversation) ORDER BY position", logger).map {
            try $0.decode(String.self)
        }
        var owner = try row.decode(String?.self)
        if owner == nil {
            owner =
                try await c.run("SELECT sender FROM message WHERE conversation_id = \(conversation) AND outgoing AND sender IS NOT NULL LIMIT 1", logger)
                .first?.decode(String?.self) ?? nil
        }
        return (owner ?? ids.first, Set(ids))
    }

    private func notify(_ c: PostgresConnection, _ conversation: Int64, _ rev: Int64) async throws {
        try await c.run("SELECT pg_notify(\(Self.channel), \("\(conversation):\(rev)"))", logger)
    }

    /// A change from a row of `changeColumns` (after `skip` leading columns).
    func change(_ row: PostgresRow, conversation: Int64, decoder: JSONDecoder = JSONDecoder(), skip: Int = 0) throws -> StoredChange {
        let cells = Array(row)
        let tail = cells.suffix(3)
        let rev = try tail[tail.startIndex].decode(Int64?.self) ?? 0
        let kind = try tail[tail.startIndex + 1].decode(String?.self).flatMap(ChangeKind.init(rawValue:)) ?? .message
        let clientID = try tail[tail.startIndex + 2].decode(String?.self)
        let m = try message(row, decoder: decoder, skip: skip)
        return StoredChange(conversation: conversation, rev: rev, kind: kind, message: m, clientID: clientID)
    }
}
