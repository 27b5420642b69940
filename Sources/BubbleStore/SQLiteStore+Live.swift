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

    /// The most a change's text may be (UTF-8 bytes) unless the caller says otherwise.
    public static let defaultMaxText = 64 * 1024

    /// A new conversation of `participants` (the first is the one whose messages are outgoing,
    /// the right-hand side) with no messages yet.
    public func createConversation(title: String, participants: [Participant]) async throws -> StoredConversation {
        let id = try await writeLive { db -> (Int64, StoredChange?) in
            try db.execute(sql: "INSERT INTO conversation (title, source_format, chat_key, added, owner) VALUES (?, 'live', ?, ?, ?)",
                           arguments: [title, "live:" + UUID().uuidString, Date().timeIntervalSince1970, participants.first?.id])
            let id = db.lastInsertedRowID
            for (i, p) in participants.enumerated() {
                try db.execute(sql: "INSERT INTO participant (conversation_id, id, position, name) VALUES (?, ?, ?, ?)",
                               arguments: [id, p.id, i, p.name])
            }
            return (id, nil)
        }
        guard let c = try conversation(id: id) else { throw StoreError(path: path, reason: "lost conversation \(id) after creating it") }
        return c
    }

    /// Adds `new` at the end of `conversation` (the next sequence number), or returns the message
    /// its client id already made.
    public func add(_ new: NewMessage, to conversation: Int64) async throws -> AddedMessage {
        try await writeLive { [self] db -> (AddedMessage, StoredChange?) in
            if let existing = try Row.fetchOne(try db.cachedStatement(sql: "SELECT \(Self.changeColumns) FROM message WHERE conversation_id = ? AND client_id = ?"),
                                               arguments: [conversation, new.clientID]) {
                return (AddedMessage(change: try change(existing, conversation: conversation), existed: true), nil)
            }
            let (owner, senders) = try people(db, conversation)
            guard senders.contains(new.sender) else {
                throw LiveError(.invalid, "sender \"\(new.sender)\" is not in conversation \(conversation); expected one of \(senders.sorted().joined(separator: ", "))")
            }
            var m = Message(sender: new.sender, direction: new.sender == owner ? .outgoing : .incoming, date: new.date,
                            text: new.text, id: new.clientID)
            if new.text != nil, TextSpan.problem(new.spans, text: new.text) == nil { m.spans = new.spans }
            if let photo = new.photo { m.images = [photo] }
            // Committed: "Sent" under the newest message of whoever sees it as theirs (the
            // renderers show a status on outgoing messages only).
            m.status = .sent
            if let target = new.replyTo {
                guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM message WHERE conversation_id = ? AND seq = ?",
                                                 arguments: [conversation, target]) else {
                    throw LiveError(.invalid, "replyTo \(target): conversation \(conversation) has no message \(target)")
                }
                let answered = try message(row, decoder: JSONDecoder()).message
                m.reply = ReplyReference(id: answered.id ?? "seq:\(target)", sender: answered.sender,
                                         text: Self.snippet(answered))
            }
            let rev = try nextRev(db, conversation)
            let seq = (try Int64.fetchOne(try db.cachedStatement(sql: "SELECT max(seq) FROM message WHERE conversation_id = ?"), arguments: [conversation]) ?? 0) + 1
            let extra = MessageExtra(m) { $0 }
            try db.cachedStatement(sql: """
                INSERT INTO message (conversation_id, seq, source_key, date, sender, outgoing, system, text, status, source_id, extra,
                                     client_id, rev, change)
                VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 'message')
                """).execute(arguments: [conversation, seq, Self.stableHash(["live", new.clientID]), new.date.timeIntervalSince1970, new.sender,
                                 m.direction == .outgoing, new.text, m.status?.rawValue, new.clientID, try Self.encode(extra, with: Self.extraEncoder()), new.clientID, rev])
            if let body = Self.indexBody(text: new.text, attachment: nil) {
                try db.cachedStatement(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)").execute(arguments: [db.lastInsertedRowID, body])
            }
            let added = StoredChange(conversation: conversation, rev: rev, kind: .message, message: StoredMessage(seq: seq, message: resolved(m)),
                                     clientID: new.clientID)
            return (AddedMessage(change: added, existed: false), added)
        }
    }

    /// Replaces the text of message `seq`, written by `sender`, and its styled ranges (none:
    /// plain text).
    public func edit(_ seq: Int64, in conversation: Int64, text: String, spans: [TextSpan] = [], by sender: String) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: sender, kind: .edit) { m in
            guard m.attachment?.kind != .deleted else { throw LiveError(.conflict, "message \(seq) is deleted; it cannot be edited") }
            m.text = text
            m.spans = TextSpan.problem(spans, text: text) == nil ? spans : []
            m.edited = Date()
        }
    }

    /// Leaves a tombstone ("This message was deleted") where message `seq`, written by `sender`, was.
    public func delete(_ seq: Int64, in conversation: Int64, by sender: String) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: sender, kind: .delete) { m in
            m.text = nil
            m.images = []
            m.reply = nil
            m.reactions = []
            m.attachment = MediaAttachment(kind: .deleted)
        }
    }

    /// Adds (`on`) or takes back `sender`'s `emoji` on message `seq` (anyone in the conversation
    /// may react). Doing what is already done changes nothing but still gives the message.
    public func react(_ seq: Int64, in conversation: Int64, emoji: String, sender: String, on: Bool) async throws -> StoredChange {
        try await modify(seq, in: conversation, by: nil, reactor: sender, kind: .react) { m in
            guard m.attachment?.kind != .deleted else { throw LiveError(.conflict, "message \(seq) is deleted; it cannot be reacted to") }
            var reactions = m.reactions
            if let i = reactions.firstIndex(where: { $0.emoji == emoji }) {
                var r = reactions[i]
                // Counted up and down (an imported reaction may count people it does not name).
                if on, !r.senders.contains(sender) { r.senders.append(sender); r.count += 1 }
                if !on, r.senders.contains(sender) { r.senders.removeAll { $0 == sender }; r.count -= 1 }
                if r.count <= 0 { reactions.remove(at: i) } else { reactions[i] = r }
            } else if on {
                reactions.append(Reaction(emoji: emoji, count: 1, senders: [sender]))
            }
            m.reactions = reactions
        }
    }

    /// Changes of `conversation` after revision `rev`, in order, at most `limit`: each message as
    /// it is now, with the revision of its latest change (a message changed twice since `rev`
    /// comes once, at its latest revision).
    public func changes(in conversation: Int64, since rev: Int64, limit: Int = 1_000) throws -> [StoredChange] {
        try read { db in
            let decoder = JSONDecoder()
            return try Row.fetchAll(db, sql: """
                SELECT \(Self.changeColumns) FROM message WHERE conversation_id = ? AND rev > ? ORDER BY rev LIMIT ?
                """, arguments: [conversation, rev, max(1, limit)]).map { try change($0, conversation: conversation, decoder: decoder) }
        }
    }

    /// The conversation's latest revision (0 before its first live change); nil when there is no
    /// such conversation.
    public func lastRev(of conversation: Int64) throws -> Int64? {
        try read { db in try Int64.fetchOne(db, sql: "SELECT last_rev FROM conversation WHERE id = ?", arguments: [conversation]) }
    }

    /// The participant whose messages are outgoing: the one named when the conversation was
    /// made, else the author of an outgoing message, else the first participant.
    public func owner(of conversation: Int64) throws -> String? {
        try people(of: conversation).owner
    }

    /// The owner (as `owner(of:)`) and every participant id; a `LiveError` when there is no such
    /// conversation.
    public func people(of conversation: Int64) throws -> (owner: String?, ids: Set<String>) {
        try read { db in try people(db, conversation) }
    }

    /// Copies the file at `file` into the store's media (by its SHA-256, once) and gives its
    /// store path (`media/ab/<sha256>.<ext>`, `ext` taken from `name`).
    public func storeMedia(file: String, name: String) throws -> String {
        var summary = StoreImportSummary(conversationID: 0)
        var copier = MediaCopier(store: self, exportFolder: "/")
        guard let stored = try copier.store(file, summary: &summary, extensionFrom: name) else {
            throw StoreError(path: file, reason: "cannot be read")
        }
        return stored
    }

    /// A store path (`media/…`) made absolute.
    public func mediaPath(_ stored: String) -> String { absolute(stored) }

    // MARK: -

    /// Runs `body` in its own transaction on the writer, then hands the change it made (if any)
    /// to `feed` while still on the writer: changes reach the feed in revision order.
    func writeLive<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> (T, StoredChange?)) async throws -> T {
        do {
            return try await pool.writeWithoutTransaction { db -> T in
                var result: (T, StoredChange?)?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                if let change = result!.1 { self.feed.emit(change) }
                return result!.0
            }
        } catch let e as StoreError { throw e } catch let e as LiveError { throw e } catch let e as DatabaseError {
            throw StoreError(path: path, reason: Self.describe(e))
        }
    }

    private func modify(_ seq: Int64, in conversation: Int64, by author: String?, reactor: String? = nil, kind: ChangeKind,
                        _ change: @escaping @Sendable (inout Message) throws -> Void) async throws -> StoredChange {
        try await writeLive { [self] db -> (StoredChange, StoredChange?) in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, \(Self.columns), client_id, rev FROM message WHERE conversation_id = ? AND seq = ?",
                                             arguments: [conversation, seq]) else {
                if try Int.fetchOne(db, sql: "SELECT 1 FROM conversation WHERE id = ?", arguments: [conversation]) == nil {
                    throw LiveError(.notFound, "no conversation \(conversation)")
                }
                throw LiveError(.notFound, "conversation \(conversation) has no message \(seq)")
            }
            let rowID: Int64 = row["id"]
            var m = try message(row, decoder: JSONDecoder()).message
            let (_, senders) = try people(db, conversation)
            if let author, m.sender != author {
                throw LiveError(.conflict, "message \(seq) is \(m.sender.map { "\"\($0)\"'s" } ?? "a system line"), not \"\(author)\"'s; only its author may change it")
            }
            if let reactor, !senders.contains(reactor) {
                throw LiveError(.invalid, "sender \"\(reactor)\" is not in conversation \(conversation); expected one of \(senders.sorted().joined(separator: ", "))")
            }
            let before = Self.indexBody(text: m.text, attachment: m.attachment)
            let original = m
            try change(&m)
            if m == original {
                // Nothing to do (a reaction already there): no revision, nothing broadcast.
                return (StoredChange(conversation: conversation, rev: row["rev"] ?? 0, kind: kind, message: StoredMessage(seq: seq, message: m),
                                     clientID: row["client_id"]), nil)
            }
            let rev = try nextRev(db, conversation)
            let extra = MessageExtra(m) { relative($0) }
            try db.execute(sql: "UPDATE message SET text = ?, extra = ?, edited = ?, rev = ?, change = ? WHERE id = ?",
                           arguments: [m.text, try Self.encode(extra, with: Self.extraEncoder()), m.edited?.timeIntervalSince1970, rev, kind.rawValue, rowID])
            let after = Self.indexBody(text: m.text, attachment: m.attachment)
            if before != after {
                if let before {
                    try db.execute(sql: "INSERT INTO message_fts (message_fts, rowid, body) VALUES ('delete', ?, ?)", arguments: [rowID, before])
                }
                if let after { try db.execute(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)", arguments: [rowID, after]) }
            }
            let changed = StoredChange(conversation: conversation, rev: rev, kind: kind, message: StoredMessage(seq: seq, message: m),
                                       clientID: row["client_id"])
            return (changed, changed)
        }
    }

    /// The next revision of `conversation` (a 404 when there is none).
    private func nextRev(_ db: Database, _ conversation: Int64) throws -> Int64 {
        guard let rev = try Int64.fetchOne(try db.cachedStatement(sql: "UPDATE conversation SET last_rev = last_rev + 1 WHERE id = ? RETURNING last_rev"),
                                           arguments: [conversation]) else {
            throw LiveError(.notFound, "no conversation \(conversation)")
        }
        return rev
    }

    /// Who owns the conversation (outgoing side) and every participant id.
    private func people(_ db: Database, _ conversation: Int64) throws -> (owner: String?, ids: Set<String>) {
        guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT owner FROM conversation WHERE id = ?"), arguments: [conversation]) else {
            throw LiveError(.notFound, "no conversation \(conversation)")
        }
        let ids = try String.fetchAll(try db.cachedStatement(sql: "SELECT id FROM participant WHERE conversation_id = ? ORDER BY position"), arguments: [conversation])
        let owner: String? = try row["owner"]
            ?? (String.fetchOne(db, sql: "SELECT sender FROM message WHERE conversation_id = ? AND outgoing = 1 AND sender IS NOT NULL LIMIT 1",
                                    arguments: [conversation]))
            ?? ids.first
        return (owner, Set(ids))
    }

    private func change(_ row: Row, conversation: Int64, decoder: JSONDecoder = JSONDecoder()) throws -> StoredChange {
        StoredChange(conversation: conversation, rev: row["rev"] ?? 0, kind: (row["change"] as String?).flatMap(ChangeKind.init(rawValue:)) ?? .message,
                     message: try message(row, decoder: decoder), clientID: row["client_id"])
    }

    /// A message as a reply shows it: its first 100 characters, else what it holds.
    static func snippet(_ m: Message) -> String {
        if let t = m.text, !t.isEmpty { return t.count > 100 ? String(t.prefix(100)) + "…" : t }
        if let a = m.attachment { return a.displayText }
        return m.images.isEmpty ? "Message" : "Photo"
    }

    /// The encoder of `message.extra` (keys sorted).
    static func extraEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// `message.extra` as stored: nil when the message keeps nothing beyond its columns.
    static func encode(_ extra: MessageExtra, with encoder: JSONEncoder) throws -> String? {
        extra.isEmpty ? nil : String(decoding: try encoder.encode(extra), as: UTF8.self)
    }

    /// A message's pictures with absolute paths (as every read gives them).
    private func resolved(_ m: Message) -> Message {
        var m = m
        m.images = m.images.map { var i = $0; i.path = i.path.map(absolute); return i }
        return m
    }

    /// An absolute path inside the media folder as the store keeps it (`media/…`).
    func relative(_ path: String) -> String {
        path.hasPrefix(mediaFolder + "/") ? "media/" + path.dropFirst(mediaFolder.count + 1) : path
    }
}
