import BubbleCore
import BubblePeople
import Foundation
import PostgresNIO

/// The viewer's queries, each from an index: `message_seq` for windows and bounds, `message_date`
/// for date jumps, `message_words` (tsvector) and `message_cjk` (trigrams) for search.
extension PostgresStore {
    public func messages(in conversation: Int64, after seq: Int64, limit: Int) async throws -> [StoredMessage] {
        try await read { c in
            try await messages(
                c,
                "SELECT \(unescaped: Self.columns) FROM message WHERE conversation_id = \(conversation) AND seq > \(seq) ORDER BY seq LIMIT \(Int64(max(0, limit)))"
            )
        }
    }

    public func messages(in conversation: Int64, before seq: Int64, limit: Int) async throws -> [StoredMessage] {
        try await read { c in
            Array(
                try await messages(
                    c,
                    "SELECT \(unescaped: Self.columns) FROM message WHERE conversation_id = \(conversation) AND seq < \(seq) ORDER BY seq DESC LIMIT \(Int64(max(0, limit)))"
                ).reversed())
        }
    }

    public func seq(in conversation: Int64, atOrAfter date: Date) async throws -> Int64? {
        try await read { c in
            try await c.run(
                "SELECT seq FROM message WHERE conversation_id = \(conversation) AND date >= \(date.timeIntervalSince1970) ORDER BY date, seq LIMIT 1",
                logger
            ).first?.decode(Int64.self)
        }
    }

    public func bounds(of conversation: Int64) async throws -> (first: Int64, last: Int64)? {
        try await read { c in
            let a = try await c.run("SELECT seq FROM message WHERE conversation_id = \(conversation) ORDER BY seq LIMIT 1", logger).first?.decode(Int64.self)
            let z = try await c.run("SELECT seq FROM message WHERE conversation_id = \(conversation) ORDER BY seq DESC LIMIT 1", logger).first?.decode(
                Int64.self)
            guard let a, let z else { return nil }
            return (a, z)
        }
    }

    public func count(of conversation: Int64) async throws -> Int {
        try await read { c in try await count(c, conversation) }
    }

    /// Counted again only when the highest sequence number moved (numbers only grow).
    func count(_ c: PostgresConnection, _ id: Int64) async throws -> Int {
        let last = try await c.run("SELECT seq FROM message WHERE conversation_id = \(id) ORDER BY seq DESC LIMIT 1", logger).first?.decode(Int64.self) ?? 0
        if let known = counted.get(id, last: last) { return known }
        let n = Int(try await c.run("SELECT count(*) FROM message WHERE conversation_id = \(id)", logger).first!.decode(Int64.self))
        counted.set(id, last: last, count: n)
        return n
    }

    public func dayCounts(of conversation: Int64, timeZone: TimeZone) async throws -> [StoreDayCount] {
        try await read { c in
            // Days counted in the database by UTC hour (zone offsets change on the hour at most),
            // then folded into the asked zone's days here: 24 rows a day instead of every date.
            var counts: [Int: Int] = [:]
            for row in try await c.run(
                """
                SELECT floor(date / 3600)::bigint AS hour, count(*) FROM message WHERE conversation_id = \(conversation) GROUP BY 1 ORDER BY 1
                """, logger)
            {
                let (hour, n) = try row.decode((Int64, Int64).self)
                let t = Double(hour) * 3600
                let offset = Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: t)))
                counts[Int(((t + offset) / 86_400).rounded(.down)), default: 0] += Int(n)
            }
            return counts.keys.sorted().map { StoreDayCount(day: $0, count: counts[$0]!) }
        }
    }

    public func conversations() async throws -> [StoredConversation] {
        try await read { c in
            var all: [StoredConversation] = []
            let people = try await peopleDirectory(c)
            for row in try await c.run("SELECT id FROM conversation ORDER BY id", logger) {
                if let found = try await conversation(c, id: try row.decode(Int64.self), people: people) { all.append(found) }
            }
            return all
        }
    }

    public func conversation(id: Int64) async throws -> StoredConversation? {
        try await read { c in try await conversation(c, id: id) }
    }

    /// The conversation with its participants named and its title made from their names when
    /// it was only a number or an id (`PeopleDirectory.name`; `people` nil: the store's).
    func conversation(_ c: PostgresConnection, id: Int64, people: PeopleDirectory? = nil) async throws -> StoredConversation? {
        guard let row = try await c.run("SELECT title, source_format FROM conversation WHERE id = \(id)", logger).first else { return nil }
        let (storedTitle, format) = try row.decode((String, String).self)
        var named = Conversation(
            title: storedTitle,
            participants: try await c.run(
                "SELECT id, name, avatar FROM participant WHERE conversation_id = \(id) ORDER BY position", logger
            ).map {
                let (pid, name, avatar) = try $0.decode((String, String, String?).self)
                return Participant(id: pid, name: name, avatar: avatar.map(mediaPath))
            })
        var directory = people
        if directory == nil, format != "live" { directory = try await peopleDirectory(c) }
        // Live conversations are between accounts, named by the server: not renamed.
        if let directory, !directory.isEmpty, format != "live" {
            // Who "me" is only matters for the title (asked only when there are people).
            let owner = try await c.run("SELECT \(unescaped: Self.ownerColumn) FROM conversation c WHERE id = \(id)", logger).first?.decode(String?.self) ?? nil
            directory.name(&named, app: format, me: owner)
        }
        let participants = named.participants, title = named.title ?? storedTitle
        let first = try await c.run("SELECT date FROM message WHERE conversation_id = \(id) ORDER BY date LIMIT 1", logger).first?.decode(Double.self)
        let last = try await c.run("SELECT date FROM message WHERE conversation_id = \(id) ORDER BY date DESC LIMIT 1", logger).first?.decode(Double.self)
        return StoredConversation(
            id: id, title: title, sourceFormat: format, participants: participants, messageCount: try await count(c, id),
            first: first.map(Date.init(timeIntervalSince1970:)), last: last.map(Date.init(timeIntervalSince1970:)))
    }

    public func load(_ conversation: Int64) async throws -> Conversation {
        try await read { c in
            guard let stored = try await self.conversation(c, id: conversation) else {
                throw StoreError(path: path, reason: "has no conversation \(conversation); `bubbles list` shows the ones it has")
            }
            let all = try await messages(c, "SELECT \(unescaped: Self.columns) FROM message WHERE conversation_id = \(conversation) ORDER BY seq")
            return Conversation(title: stored.title, participants: stored.participants, messages: all.map(\.message))
        }
    }

    // MARK: search

    /// The same query language as the SQLite store (words, "phrases", prefix*, -excluded) and the
    /// same hits. Words go through the tsvector (`bubbles_search`: `simple` with accents
    /// removed, so "cafe" finds "café"); a term with Chinese, Japanese or Korean is a substring
    /// of the text, found through the trigram index of the messages that hold CJK.
    public func search(_ search: StoreSearch) async throws -> [StoreHit] {
        guard let query = SearchText.parse(search.query) else {
            throw StoreError(path: path, reason: "search \"\(search.query)\": expected at least one word to find (words, \"a phrase\", prefix*, -excluded)")
        }
        let limit = max(1, search.limit)
        guard let (conditions, binds, rank) = Self.searchConditions(search, query) else { return [] }
        // The newest `searchCandidates` matches, ranked (as the SQLite store does with bm25).
        let sql = """
            SELECT f.conversation_id, f.seq, f.date, f.sender, f.text,
                   (SELECT name FROM participant p WHERE p.conversation_id = f.conversation_id AND p.id = f.sender) AS sender_name, f.extra
            FROM (SELECT m.conversation_id, m.seq, m.date, m.sender, m.text, m.extra, \(rank) AS score
                  FROM message m WHERE \(conditions.joined(separator: " AND "))
                  ORDER BY m.id DESC LIMIT \(SQLiteStore.searchCandidates)) AS f
            ORDER BY f.score DESC, f.date DESC LIMIT \(limit * 4)
            """
        let rows: [(Int64, Int64, Double, String?, String?, String?, String?)]
        try await prepare()
        do {
            rows = try await db.with { c in
                try await c.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger).map {
                    try $0.decode((Int64, Int64, Double, String?, String?, String?, String?).self)
                }
            }
        } catch {
            throw StoreError(path: path, reason: "search \"\(search.query)\": \(PostgresDB.describe(error))")
        }
        return try await namingSenders(
            SearchText.hits(
                rows.map { (conversation: $0.0, seq: $0.1, date: $0.2, sender: $0.3, text: $0.4 ?? "", senderName: $0.5, extra: $0.6) },
                query: query, limit: limit))
    }

    /// A search's conditions on `m` (the message), their binds and its rank expression; nil when
    /// nothing can match.
    static func searchConditions(_ search: StoreSearch, _ query: SearchText.Query) -> (conditions: [String], binds: PostgresBindings, rank: String)? {
        var binds = PostgresBindings()
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String { binds.append(value); return "$\(binds.count)" }
        var conditions: [String] = []
        var included: [String] = []
        for term in query.terms {
            // A CJK term of three characters or more: a substring, through the trigram index;
            // shorter ones are the bigram tokens of `body` (a lone character a prefix), as in SQLite.
            if term.text.unicodeScalars.contains(where: { SearchText.isCJK($0.value) }) && term.text.unicodeScalars.count >= 3 {
                let pattern =
                    "%"
                    + term.text.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
                conditions.append((term.excluded ? "NOT " : "") + "(m.cjk AND lower(m.text) LIKE \(bind(pattern)))")
            } else if let t = Self.tsquery(term) {
                if term.excluded { conditions.append("NOT (m.words @@ to_tsquery('bubbles_search', \(bind(t))))") } else { included.append(t) }
            }
        }
        var rank = "0::real"
        if !included.isEmpty {
            let q = bind(included.joined(separator: " & "))
            conditions.insert("m.words @@ to_tsquery('bubbles_search', \(q))", at: 0)
            rank = "ts_rank(m.words, to_tsquery('bubbles_search', \(q)))"
        }
        guard !conditions.isEmpty else { return nil }
        if let c = search.conversation { conditions.append("m.conversation_id = \(bind(c))") }
        if let within = search.within {
            if within.isEmpty { return nil }
            conditions.append("m.conversation_id IN (\(within.map(String.init).joined(separator: ",")))")
        }
        if let s = search.sender {
            let v = bind(s)
            conditions.append(
                "(m.sender = \(v) OR m.sender IN (SELECT id FROM participant WHERE lower(name) = lower(\(v))"
                    + (search.conversation != nil ? " AND conversation_id = m.conversation_id" : "") + "))")
        }
        if let d = search.since { conditions.append("m.date >= \(bind(d.timeIntervalSince1970))") }
        if let d = search.until { conditions.append("m.date < \(bind(d.timeIntervalSince1970))") }
        return (conditions, binds, rank)
    }

    public func searchMatches(_ search: StoreSearch, cap: Int) async throws -> [Int64: [Int64]] {
        guard let query = SearchText.parse(search.query) else {
            throw StoreError(path: path, reason: "search \"\(search.query)\": expected at least one word to find (words, \"a phrase\", prefix*, -excluded)")
        }
        guard let (conditions, binds, _) = Self.searchConditions(search, query) else { return [:] }
        let sql = "SELECT m.conversation_id, m.seq FROM message m WHERE \(conditions.joined(separator: " AND ")) ORDER BY m.id LIMIT \(max(1, cap))"
        try await prepare()
        var out: [Int64: [Int64]] = [:]
        do {
            try await db.with { c in
                for row in try await c.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger) {
                    let (conversation, seq) = try row.decode((Int64, Int64).self)
                    out[conversation, default: []].append(seq)
                }
            }
        } catch {
            throw StoreError(path: path, reason: "search \"\(search.query)\": \(PostgresDB.describe(error))")
        }
        return out.mapValues { $0.sorted() }
    }

    /// A term as tsquery text: each word quoted (nothing in it is tsquery syntax), a phrase's
    /// words joined with `<->`, a prefix marked `:*`.
    static func tsquery(_ term: SearchText.Query.Term) -> String? {
        // The words as PostgreSQL's parser would split them: letters and digits (CJK as the
        // bigrams `body` holds; a lone CJK character is a prefix of them).
        let lone = term.text.unicodeScalars.count == 1 && SearchText.isCJK(term.text.unicodeScalars.first!.value)
        let words = SearchText.indexed(term.text).lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
        guard !words.isEmpty else { return nil }
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'" }
        var out = quoted.joined(separator: " <-> ")
        if term.prefix || lone { out += ":*" }  // binds to the last word
        return quoted.count > 1 ? "(" + out + ")" : out
    }
}
