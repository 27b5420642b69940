import BubbleCore
import Foundation
import GRDB

/// Live conversations: messages added, edited, deleted and reacted to one at a time, each change
/// committed in a transaction of its own with the next revision of its conversation, then handed
/// to `feed` (commit first, then broadcast: a change anyone saw is in the store).
///
/// Exactly once: a message carries its client's UUID, unique in its conversation
/// (`message_client`), so the same id again returns the stored message instead of a copy.
extension SQLiteStore {
    /// Columns of a change: a message's, its revision, what changed last, its client id.
    static let changeColumns = columns + ", rev, change, client_id"

    /// A new conversation of `participants` (the first is the one whose messages are outgoing,
    /// the right-hand side) with no messages yet.
    public func createConversation(title: String, participants: [Participant]) async throws -> StoredConversation {
        let id = try await writeLive { db -> (Int64, [StoredChange]) in
            try db.execute(
                sql: "INSERT INTO conversation (title, source_format, chat_key, added, owner) VALUES (?, 'live', ?, ?, ?)",
                arguments: [title, "live:" + UUID().uuidString, Date().timeIntervalSince1970, participants.first?.id])
            let id = db.lastInsertedRowID
            for (i, p) in participants.enumerated() {
                try db.execute(
                    sql: "INSERT INTO participant (conversation_id, id, position, name) VALUES (?, ?, ?, ?)",
                    arguments: [id, p.id, i, p.name])
            }
            return (id, [])
        }
        guard let c = try await conversation(id: id) else { throw StoreError(path: path, reason: "lost conversation \(id) after creating it") }
        return c
    }

    /// Adds `new` at the end of `conversation` (the next sequence number), or returns the message
    /// its client id already made.
    public func add(_ new: NewMessage, to conversation: Int64) async throws -> AddedMessage {
        try await writeLive { [self] db -> (AddedMessage, [StoredChange]) in
            if let existing = try Row.fetchOne(
                try db.cachedStatement(sql: "SELECT \(Self.changeColumns) FROM message WHERE conversation_id = ? AND client_id = ?"),
                arguments: [conversation, new.clientID])
            {
                return (AddedMessage(change: try change(existing, conversation: conversation), existed: true), [])
            }
            let (owner, senders) = try people(db, conversation)
            guard senders.contains(new.sender) else { throw StoreCodec.badSender(new.sender, conversation, senders) }
            var answered: (Int64, Message)?
            if let target = new.replyTo {
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT \(Self.columns) FROM message WHERE conversation_id = ? AND seq = ?",
                        arguments: [conversation, target])
                else {
                    throw LiveError(.invalid, "replyTo \(target): conversation \(conversation) has no message \(target)")
                }
                answered = (target, try message(row, decoder: JSONDecoder()).message)
            }
            let m = StoreCodec.newMessage(new, owner: owner, answered: answered)
            let rev = try nextRev(db, conversation)
            let seq =
                (try Int64.fetchOne(try db.cachedStatement(sql: "SELECT max(seq) FROM message WHERE conversation_id = ?"), arguments: [conversation]) ?? 0) + 1
            let extra = MessageExtra(m) { $0 }
            try db.cachedStatement(
                sql: """
                    INSERT INTO message (conversation_id, seq, source_key, date, sender, outgoing, system, text, status, source_id, extra,
                                         client_id, rev, change)
                    VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 'message')
                    """
            ).execute(arguments: [
                conversation, seq, StoreCodec.stableHash(["live", new.clientID]), new.date.timeIntervalSince1970, new.sender,
                m.direction == .outgoing, new.text, m.status?.rawValue, new.clientID, try StoreCodec.encode(extra, with: StoreCodec.extraEncoder()),
                new.clientID, rev
            ])
            if let body = StoreCodec.indexBody(text: new.text, spans: new.spans, attachment: nil) {
                try db.cachedStatement(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)").execute(arguments: [db.lastInsertedRowID, body])
            }
            let added = StoredChange(
                conversation: conversation, rev: rev, kind: .message, message: StoredMessage(seq: seq, message: resolvingImages(m)),
                clientID: new.clientID)
            return (AddedMessage(change: added, existed: false), [added])
        }
    }

    /// Replaces the text of message `seq`, written by `sender`, and its styled ranges (none:
    /// plain text).
    public func edit(_ seq: Int64, in conversation: Int64, text: String, spans: [TextSpan], by sender: String) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: sender, kind: .edit) { m in try StoreCodec.edit(&m, seq: seq, text: text, spans: spans) }
    }

    /// Leaves a tombstone ("This message was deleted") where message `seq`, written by `sender`, was.
    public func delete(_ seq: Int64, in conversation: Int64, by sender: String) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: sender, kind: .delete) { m in try StoreCodec.delete(&m, seq: seq) }
    }

    /// Adds (`on`) or takes back `sender`'s `emoji` on message `seq` (anyone in the conversation
    /// may react). Doing what is already done changes nothing but still gives the message.
    public func react(_ seq: Int64, in conversation: Int64, emoji: String, sender: String, on: Bool) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: nil, reactor: sender, kind: .react) { m in
            try StoreCodec.react(&m, seq: seq, emoji: emoji, sender: sender, on: on)
        }
    }

    /// Changes of `conversation` after revision `rev`, in order, at most `limit`: each message as
    /// it is now, with the revision of its latest change (a message changed twice since `rev`
    /// comes once, at its latest revision).
    public func changes(in conversation: Int64, since rev: Int64, limit: Int) async throws -> [StoredChange] {
        try await read { [self] db in
            let decoder = JSONDecoder()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.changeColumns) FROM message WHERE conversation_id = ? AND rev > ? ORDER BY rev LIMIT ?
                    """, arguments: [conversation, rev, max(1, limit)]
            ).map { try change($0, conversation: conversation, decoder: decoder) }
        }
    }

    /// The conversation's latest revision (0 before its first live change); nil when there is no
    /// such conversation.
    public func lastRev(of conversation: Int64) async throws -> Int64? {
        try await read { db in try Int64.fetchOne(db, sql: "SELECT last_rev FROM conversation WHERE id = ?", arguments: [conversation]) }
    }

    /// The owner (as `owner(of:)`) and every participant id; a `LiveError` when there is no such
    /// conversation.
    public func people(of conversation: Int64) async throws -> (owner: String?, ids: Set<String>) {
        try await read { [self] db in try people(db, conversation) }
    }

    /// A SQLite file is served by one process: there is no other server to tell.
    public func broadcastTyping(_ conversation: Int64, sender: String, after rev: Int64) async {}

    // MARK: -

    /// Runs `body` in its own transaction on the writer, then hands the change it made (if any)
    /// to `feed` while still on the writer: changes reach the feed in revision order.
    func writeLive<T: Sendable>(
        call function: String = #function, _ body: @escaping @Sendable (Database) throws -> (T, [StoredChange])
    ) async throws -> T {
        do {
            return try await timing.time(function) {
                try await pool.writeWithoutTransaction { db -> T in
                    var result: (T, [StoredChange])?
                    try db.inTransaction {
                        result = try body(db)
                        return .commit
                    }
                    for change in result!.1 { self.feed.emit(change) }
                    return result!.0
                }
            }
        } catch let e as StoreError { throw e } catch let e as LiveError { throw e } catch let e as DatabaseError {
            throw Self.storeError(path, e)
        }
    }

    private func modify(
        call function: String = #function, _ seq: Int64, in conversation: Int64, by author: String?, reactor: String? = nil, kind: ChangeKind,
        _ change: @escaping @Sendable (inout Message) throws -> Void
    ) async throws -> StoredChange {
        try await writeLive(call: function) { [self] db -> (StoredChange, [StoredChange]) in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, \(Self.columns), client_id, rev FROM message WHERE conversation_id = ? AND seq = ?",
                    arguments: [conversation, seq])
            else {
                if try Int.fetchOne(db, sql: "SELECT 1 FROM conversation WHERE id = ?", arguments: [conversation]) == nil {
                    throw LiveError(.notFound, "no conversation \(conversation)")
                }
                throw LiveError(.notFound, "conversation \(conversation) has no message \(seq)")
            }
            let rowID: Int64 = row["id"]
            var m = try message(row, at: 1, decoder: JSONDecoder()).message
            let (_, senders) = try people(db, conversation)
            try StoreCodec.checkChange(m, seq: seq, author: author, reactor: reactor, conversation: conversation, senders: senders)
            let before = StoreCodec.indexBody(text: m.text, spans: m.spans, attachment: m.attachment)
            let original = m
            try change(&m)
            if m == original {
                // Nothing to do (a reaction already there): no revision, nothing broadcast.
                return (
                    StoredChange(
                        conversation: conversation, rev: row["rev"] ?? 0, kind: kind, message: StoredMessage(seq: seq, message: m),
                        clientID: row["client_id"]), []
                )
            }
            let rev = try nextRev(db, conversation)
            let extra = MessageExtra(m) { relative($0) }
            try db.execute(
                sql: "UPDATE message SET text = ?, extra = ?, edited = ?, rev = ?, change = ? WHERE id = ?",
                arguments: [m.text, try StoreCodec.encode(extra, with: StoreCodec.extraEncoder()), m.edited?.timeIntervalSince1970, rev, kind.rawValue, rowID])
            let after = StoreCodec.indexBody(text: m.text, spans: m.spans, attachment: m.attachment)
            if before != after {
                if let before {
                    try db.execute(sql: "INSERT INTO message_fts (message_fts, rowid, body) VALUES ('delete', ?, ?)", arguments: [rowID, before])
                }
                if let after { try db.execute(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)", arguments: [rowID, after]) }
            }
            let changed = StoredChange(
                conversation: conversation, rev: rev, kind: kind, message: StoredMessage(seq: seq, message: m),
                clientID: row["client_id"])
            // A deleted message leaves the replies that quoted it too (each a change of its own).
            let quotes = kind == .delete ? try forgetQuotes(of: StoreCodec.quoteID(of: original, seq: seq), after: seq, in: conversation, db) : []
            return (changed, [changed] + quotes)
        }
    }

    /// The replies after `seq` that quote the message `id`: their quote's text replaced
    /// (`StoreCodec.deletedQuote`), each with the next revision.
    private func forgetQuotes(of id: String, after seq: Int64, in conversation: Int64, _ db: Database) throws -> [StoredChange] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT id, \(Self.columns), client_id FROM message
                WHERE conversation_id = ? AND seq > ? AND extra LIKE '%"reply"%' AND json_extract(extra, '$.reply.id') = ?
                ORDER BY seq
                """, arguments: [conversation, seq, id])
        var changes: [StoredChange] = []
        let decoder = JSONDecoder()
        for row in rows {
            var reply = try message(row, at: 1, decoder: decoder)
            guard StoreCodec.forgetQuote(&reply.message) else { continue }
            let rev = try nextRev(db, conversation)
            let extra = MessageExtra(reply.message) { relative($0) }
            try db.execute(
                sql: "UPDATE message SET extra = ?, rev = ?, change = 'edit' WHERE id = ?",
                arguments: [try StoreCodec.encode(extra, with: StoreCodec.extraEncoder()), rev, row["id"] as Int64])
            changes.append(StoredChange(conversation: conversation, rev: rev, kind: .edit, message: reply, clientID: row["client_id"]))
        }
        return changes
    }

    /// The next revision of `conversation` (a 404 when there is none).
    private func nextRev(_ db: Database, _ conversation: Int64) throws -> Int64 {
        guard
            let rev = try Int64.fetchOne(
                try db.cachedStatement(sql: "UPDATE conversation SET last_rev = last_rev + 1 WHERE id = ? RETURNING last_rev"),
                arguments: [conversation])
        else {
            throw LiveError(.notFound, "no conversation \(conversation)")
        }
        return rev
    }

    /// Who owns the conversation (outgoing side) and every participant id.
    private func people(_ db: Database, _ conversation: Int64) throws -> (owner: String?, ids: Set<String>) {
        guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT owner FROM conversation WHERE id = ?"), arguments: [conversation]) else {
            throw LiveError(.notFound, "no conversation \(conversation)")
        }
        let ids = try String.fetchAll(
            try db.cachedStatement(sql: "SELECT id FROM participant WHERE conversation_id = ? ORDER BY position"), arguments: [conversation])
        let owner: String? =
            try row["owner"]
            ?? (String.fetchOne(
                db, sql: "SELECT sender FROM message WHERE conversation_id = ? AND outgoing = 1 AND sender IS NOT NULL LIMIT 1",
                arguments: [conversation]))
            ?? ids.first
        return (owner, Set(ids))
    }

    private func change(_ row: Row, conversation: Int64, decoder: JSONDecoder = JSONDecoder()) throws -> StoredChange {
        // `changeColumns`: `columns`, then rev, change, client_id.
        StoredChange(
            conversation: conversation, rev: row[12] ?? 0, kind: (row[13] as String?).flatMap(ChangeKind.init(rawValue:)) ?? .message,
            message: try message(row, decoder: decoder), clientID: row[14])
    }
}
