import BubbleCore
import BubblePeople
import Foundation
import GRDB
import GRDBSQLite

/// The viewer's queries, each answered from an index in O(log n): `message_seq` for windows,
/// bounds and counts, `message_date` for date jumps and day counts, the FTS index for search.
extension SQLiteStore {
    static let columns = "seq, date, utc_offset, sender, outgoing, system, text, status, status_date, source_id, extra, edited"

    /// A stored message from a row of `columns`; store paths made absolute.
    /// Columns read by position (in `columns`' order; by name, GRDB lowercases the name and
    /// searches for it at each read: a tenth of a window's time).
    /// `at`: where the columns start in the row (after the ones a query reads before them).
    func message(_ row: Row, at c: Int = 0, decoder: JSONDecoder) throws -> StoredMessage {
        try StoreCodec.message(
            MessageRow(
                seq: row[c], date: row[c + 1], utcOffset: row[c + 2], sender: row[c + 3],
                outgoing: row[c + 4], system: row[c + 5], text: row[c + 6], status: row[c + 7],
                statusDate: row[c + 8], sourceID: row[c + 9], extra: row[c + 10], edited: row[c + 11]),
            decoder: decoder, absolute: mediaPath)
    }

    func messages(_ db: Database, sql: String, arguments: StatementArguments) throws -> [StoredMessage] {
        let decoder = JSONDecoder()
        // A cursor over a cached statement: each row read in place, its columns straight from
        // SQLite (`MessageRow(statement:)`: a first layout reads a million rows this way).
        let statement = try db.cachedStatement(sql: sql)
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        var out: [StoredMessage] = []
        while try cursor.next() != nil {
            out.append(try StoreCodec.message(MessageRow(statement: statement.sqliteStatement), decoder: decoder, absolute: mediaPath))
        }
        return out
    }

    public func messages(in conversation: Int64, after seq: Int64, limit: Int) async throws -> [StoredMessage] {
        try await read { [self] db in
            try messages(
                db, sql: "SELECT \(Self.columns) FROM message WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                arguments: [conversation, seq, max(0, limit)])
        }
    }

    public func messages(in conversation: Int64, before seq: Int64, limit: Int) async throws -> [StoredMessage] {
        try await read { [self] db in
            try messages(
                db, sql: "SELECT \(Self.columns) FROM message WHERE conversation_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
                arguments: [conversation, seq, max(0, limit)]
            ).reversed()
        }
    }

    public func seq(in conversation: Int64, atOrAfter date: Date) async throws -> Int64? {
        try await read { db in
            try Int64.fetchOne(
                db, sql: "SELECT seq FROM message WHERE conversation_id = ? AND date >= ? ORDER BY date, seq LIMIT 1",
                arguments: [conversation, date.timeIntervalSince1970])
        }
    }

    public func bounds(of conversation: Int64) async throws -> (first: Int64, last: Int64)? {
        try await read { db in
            // Two look-ups in the index (SQLite answers min() or max() alone from the index; both in
            // one statement scan the conversation).
            guard let a = try Int64.fetchOne(db, sql: "SELECT min(seq) FROM message WHERE conversation_id = ?", arguments: [conversation]),
                let z = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM message WHERE conversation_id = ?", arguments: [conversation])
            else { return nil }
            return (a, z)
        }
    }

    /// Sequence numbers only grow and are never reused, so a count is kept with the highest
    /// number it was made at (`counted`) and made again only when that has changed.
    public func count(of conversation: Int64) async throws -> Int {
        try await read { [self] db in try count(db, conversation) }
    }

    func count(_ db: Database, _ id: Int64) throws -> Int {
        let lastSeq = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM message WHERE conversation_id = ?", arguments: [id]) ?? 0
        if let known = counted.get(id, last: lastSeq) { return known }
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE conversation_id = ?", arguments: [id]) ?? 0
        counted.set(id, last: lastSeq, count: count)
        return count
    }

    public func dayCounts(of conversation: Int64, timeZone: TimeZone) async throws -> [StoreDayCount] {
        try await read { db in
            // One pass over the date index; zone offsets taken per day boundary (DST).
            var counts: [Int: Int] = [:]
            let cursor = try Double.fetchCursor(
                db, sql: "SELECT date FROM message WHERE conversation_id = ? ORDER BY date",
                arguments: [conversation])
            var cachedDay = Int.min, nextBoundary = -Double.infinity, offset = 0.0
            while let t = try cursor.next() {
                if t >= nextBoundary || t < nextBoundary - 86_400 * 2 {
                    offset = Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: t)))
                    cachedDay = Int(((t + offset) / 86_400).rounded(.down))
                    nextBoundary = Double(cachedDay + 1) * 86_400 - offset
                }
                counts[cachedDay, default: 0] += 1
            }
            return counts.keys.sorted().map { StoreDayCount(day: $0, count: counts[$0]!) }
        }
    }

    public func conversations() async throws -> [StoredConversation] {
        try await read { [self] db in
            let people = try peopleDirectory(db)
            return try Int64.fetchAll(db, sql: "SELECT id FROM conversation ORDER BY id").compactMap { try conversation(db, id: $0, people: people) }
        }
    }

    public func conversation(id: Int64) async throws -> StoredConversation? {
        try await read { [self] db in try conversation(db, id: id) }
    }

    /// The conversation with its participants named and its title made from their names when
    /// it was only a number or an id (`PeopleDirectory.name`; `people` nil: the store's).
    func conversation(_ db: Database, id: Int64, people: PeopleDirectory? = nil) throws -> StoredConversation? {
        guard let row = try Row.fetchOne(db, sql: "SELECT title, source_format FROM conversation WHERE id = ?", arguments: [id]) else {
            return nil
        }
        var named = Conversation(
            title: row["title"],
            participants: try Row.fetchAll(
                db, sql: "SELECT id, name, avatar FROM participant WHERE conversation_id = ? ORDER BY position",
                arguments: [id]
            ).map { Participant(id: $0["id"], name: $0["name"], avatar: ($0["avatar"] as String?).map(mediaPath)) })
        let people = try people ?? peopleDirectory(db)
        // Live conversations are between accounts, named by the server: not renamed.
        let format: String = row["source_format"]
        if !people.isEmpty, format != "live" {
            // Who "me" is only matters for the title (asked only when there are people).
            let owner = try String.fetchOne(db, sql: "SELECT \(Self.ownerColumn) FROM conversation c WHERE id = ?", arguments: [id])
            people.name(&named, app: format, me: owner)
        }
        let participants = named.participants
        let first = try Double.fetchOne(db, sql: "SELECT date FROM message WHERE conversation_id = ? ORDER BY date LIMIT 1", arguments: [id])
        let last = try Double.fetchOne(db, sql: "SELECT date FROM message WHERE conversation_id = ? ORDER BY date DESC LIMIT 1", arguments: [id])
        let count = try count(db, id)
        return StoredConversation(
            id: id, title: named.title ?? row["title"], sourceFormat: row["source_format"], participants: participants,
            messageCount: count, first: first.map(Date.init(timeIntervalSince1970:)),
            last: last.map(Date.init(timeIntervalSince1970:)))
    }

    public func load(_ conversation: Int64) async throws -> Conversation {
        try await read { [self] db in
            guard let stored = try self.conversation(db, id: conversation) else {
                throw StoreError(path: path, reason: "has no conversation \(conversation); `bubbles list` shows the ones it has")
            }
            let messages = try messages(
                db, sql: "SELECT \(Self.columns) FROM message WHERE conversation_id = ? ORDER BY seq",
                arguments: [conversation]
            ).map(\.message)
            return Conversation(title: stored.title, participants: stored.participants, messages: messages)
        }
    }

    /// How many of a word's matches are ranked: all of them up to this, else the newest.
    static let searchCandidates = 5_000

    /// Ranked by FTS5's bm25 (over the newest `searchCandidates` matches), then messages holding
    /// the words as written (accents too) first.
    public func search(_ search: StoreSearch) async throws -> [StoreHit] {
        guard let query = SearchText.parse(search.query) else {
            throw StoreError(path: path, reason: "search \"\(search.query)\": expected at least one word to find (words, \"a phrase\", prefix*, -excluded)")
        }
        let limit = max(1, search.limit)
        if search.within?.isEmpty == true { return [] }
        return try await namingSenders(
            read { [self] db in
                // The candidates: every match passing the filters, newest first, at most
                // `candidates` (bm25 over a word in a tenth of a million messages would take 100 ms;
                // over its newest 5,000 matches it takes a few); then ranked by bm25.
                var (filters, arguments) = Self.searchFilters(search)
                arguments.insert(SearchText.match(query), at: 0)
                let sql = """
                    SELECT m.conversation_id, m.seq, m.date, m.sender, m.text, m.extra, f.score,
                           (SELECT name FROM participant p WHERE p.conversation_id = m.conversation_id AND p.id = m.sender) AS sender_name
                    FROM (SELECT message_fts.rowid AS id, bm25(message_fts) AS score
                          FROM message_fts JOIN message m ON m.id = message_fts.rowid
                          WHERE message_fts MATCH ?\(filters)
                          ORDER BY message_fts.rowid DESC LIMIT \(Self.searchCandidates)) AS f
                    JOIN message m ON m.id = f.id
                    ORDER BY f.score LIMIT ?
                    """
                arguments.append(limit * 4)
                let rows: [Row]
                do { rows = try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) } catch let e as DatabaseError {
                    throw StoreError(path: path, reason: "search \"\(search.query)\": \(e.message ?? "not a query SQLite understands")")
                }
                return SearchText.hits(
                    rows.map {
                        (
                            conversation: $0["conversation_id"], seq: $0["seq"], date: $0["date"], sender: $0["sender"],
                            text: $0["text"] ?? "", senderName: $0["sender_name"], extra: $0["extra"]
                        )
                    },
                    query: query, limit: limit)
            })
    }

    /// The filters of a search besides its words (` AND …` on `m`, the message) and their arguments.
    static func searchFilters(_ search: StoreSearch) -> (String, [any DatabaseValueConvertible]) {
        var filters = ""
        var arguments: [any DatabaseValueConvertible] = []
        if let c = search.conversation { filters += " AND m.conversation_id = ?"; arguments.append(c) }
        if let within = search.within { filters += " AND m.conversation_id IN (\(within.map(String.init).joined(separator: ",")))" }
        if let s = search.sender {
            filters +=
                " AND (m.sender = ? OR m.sender IN (SELECT id FROM participant WHERE name = ? COLLATE NOCASE"
                + (search.conversation != nil ? " AND conversation_id = ?" : "") + "))"
            arguments += [s, s]
            if let c = search.conversation { arguments.append(c) }
        }
        if let d = search.since { filters += " AND m.date >= ?"; arguments.append(d.timeIntervalSince1970) }
        if let d = search.until { filters += " AND m.date < ?"; arguments.append(d.timeIntervalSince1970) }
        return (filters, arguments)
    }

    public func searchMatches(_ search: StoreSearch, cap: Int) async throws -> [Int64: [Int64]] {
        guard let query = SearchText.parse(search.query) else {
            throw StoreError(path: path, reason: "search \"\(search.query)\": expected at least one word to find (words, \"a phrase\", prefix*, -excluded)")
        }
        if search.within?.isEmpty == true { return [:] }
        return try await read { [self] db in
            var (filters, arguments) = Self.searchFilters(search)
            arguments.insert(SearchText.match(query), at: 0)
            arguments.append(max(1, cap))
            var out: [Int64: [Int64]] = [:]
            do {
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT m.conversation_id, m.seq FROM message_fts JOIN message m ON m.id = message_fts.rowid
                        WHERE message_fts MATCH ?\(filters) ORDER BY message_fts.rowid LIMIT ?
                        """, arguments: StatementArguments(arguments))
                while let row = try rows.next() { out[row[0], default: []].append(row[1]) }
            } catch let e as DatabaseError {
                throw StoreError(path: path, reason: "search \"\(search.query)\": \(e.message ?? "not a query SQLite understands")")
            }
            return out.mapValues { $0.sorted() }
        }
    }
}

extension MessageRow {
    /// The columns of `SQLiteStore.columns` of the row `statement` stands on, read with SQLite's
    /// C API: what `message(_:at:decoder:)` reads through GRDB's `Row`, without its checks and
    /// conversions per column. Texts that are not UTF-8 are repaired, and end at a NUL byte, as
    /// GRDB reads them (a C string): the same message whichever path reads it.
    init(statement s: SQLiteStatement) {
        func text(_ i: Int32) -> String? {
            guard let p = sqlite3_column_text(s, i) else { return nil }
            let bytes = Int(sqlite3_column_bytes(s, i))
            let end = memchr(p, 0, bytes).map { UnsafeRawPointer($0) - UnsafeRawPointer(p) } ?? bytes
            return String(decoding: UnsafeRawBufferPointer(start: p, count: end), as: UTF8.self)
        }
        func isNull(_ i: Int32) -> Bool { sqlite3_column_type(s, i) == SQLITE_NULL }
        self.init(
            seq: sqlite3_column_int64(s, 0), date: sqlite3_column_double(s, 1),
            utcOffset: isNull(2) ? nil : Int(sqlite3_column_int64(s, 2)), sender: text(3),
            outgoing: sqlite3_column_int64(s, 4) != 0, system: sqlite3_column_int64(s, 5) != 0, text: text(6), status: text(7),
            statusDate: isNull(8) ? nil : sqlite3_column_double(s, 8), sourceID: text(9), extra: text(10),
            edited: isNull(11) ? nil : sqlite3_column_double(s, 11))
    }
}
