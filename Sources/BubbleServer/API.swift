import BubbleCore
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore

/// `/api/v1`: conversations, windows of messages by sequence number or date, days, search.
struct API: Sendable {
    let store: any ConversationStore
    let accounts: any AccountStore
    static let defaultLimit = 100, maxLimit = 1_000

    /// ISO 8601 in UTC to the second (`2021-03-05T13:22:11Z`), written directly: a formatter
    /// made per message cost ~0.1 ms each, most of a window's time.
    static func iso(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var p = tm()
        gmtime_r(&t, &p)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", p.tm_year + 1900, p.tm_mon + 1, p.tm_mday, p.tm_hour, p.tm_min, p.tm_sec)
    }

    /// The UTC day of `date`: `2021-03-05`.
    static func day(_ date: Date) -> String { String(iso(date).prefix(10)) }

    /// The conversations `identity` reaches (all of them in single-owner mode).
    /// The conversations `identity` reads, each with how many messages they have not read.
    func conversations(for identity: Identity) async throws -> [ConversationJSON] {
        let visible = try await API.visible(store, accounts, identity)
        let unread = try await accounts.unread(visible.map(\.id), user: ReadMarks.account(identity), own: identity.speaker)
        return visible.map { c in
            var json = ConversationJSON(c)
            json.unread = unread[c.id] ?? 0
            return json
        }
    }

    static func visible(_ store: any ConversationStore, _ accounts: any AccountStore, _ identity: Identity) async throws -> [StoredConversation] {
        switch identity {
        case .anonymous: return []
        case .owner: return try await store.conversations()
        case .user(let user, _):
            let mine = try await accounts.readableConversations(of: user)
            return try await store.conversations().filter { mine.contains($0.id) }
        }
    }

    /// The conversations a search by `identity` may see (nil: all; nobody sees none, whatever
    /// route let the request through).
    static func within(_ accounts: any AccountStore, _ identity: Identity) async throws -> Set<Int64>? {
        switch identity {
        case .anonymous: return []
        case .owner: return nil
        case .user(let user, _): return try await accounts.readableConversations(of: user)
        }
    }

    func known(_ id: Int64) async throws -> StoredConversation {
        guard let c = try await store.conversation(id: id) else { throw APIError.notFound("no conversation \(id)") }
        return c
    }

    func conversation(_ id: Int64) async throws -> ConversationJSON { ConversationJSON(try await known(id)) }

    /// The window a request asks for: `after=SEQ`, `before=SEQ`, `at=SEQ` (centred on it) or
    /// `date=ISO` (from the first message at or after it), `limit` 1…1000; none: the newest.
    func window(_ id: Int64, _ query: Parameters) async throws -> (messages: [StoredMessage], conversation: StoredConversation) {
        let c = try await known(id)
        let limit = try Self.integer(query, "limit", range: 1...Int64(Self.maxLimit)).map(Int.init) ?? Self.defaultLimit
        let given = ["after", "before", "at", "date"].filter { query[Substring($0)] != nil }
        guard given.count <= 1 else { throw APIError.badRequest("give one of after, before, at and date, not \(given.joined(separator: " and "))") }
        if let after = try Self.integer(query, "after", range: 0...Int64.max) {
            return (try await store.messages(in: id, after: after, limit: limit), c)
        }
        if let before = try Self.integer(query, "before", range: 1...Int64.max) {
            return (try await store.messages(in: id, before: before, limit: limit), c)
        }
        if let at = try Self.integer(query, "at", range: 1...Int64.max) {
            let head = try await store.messages(in: id, before: at, limit: limit / 2)
            return (head + (try await store.messages(in: id, after: at - 1, limit: limit - head.count)), c)
        }
        if let date = try Self.date(query, "date") {
            guard let seq = try await store.seq(in: id, atOrAfter: date) else { return ([], c) }
            return (try await store.messages(in: id, after: seq - 1, limit: limit), c)
        }
        let last = try await store.bounds(of: id)?.last ?? 0
        return (try await store.messages(in: id, before: last + 1, limit: limit), c)
    }

    func messages(_ id: Int64, _ query: Parameters) async throws -> WindowJSON {
        let (window, c) = try await self.window(id, query)
        var names: [String: String] = [:]
        for p in c.participants where names[p.id] == nil { names[p.id] = p.name }
        return WindowJSON(conversation: id, messages: window.map { MessageJSON($0, names: names, media: store.mediaFolder) })
    }

    func days(_ id: Int64, _ query: Parameters) async throws -> DaysJSON {
        _ = try await known(id)
        let zone =
            try query["tz"].map { raw -> TimeZone in
                guard let z = TimeZone(identifier: String(raw)) else {
                    throw APIError.badRequest("tz \"\(raw)\" is not a time zone; expected an IANA name such as Europe/Berlin")
                }
                return z
            } ?? TimeZone(identifier: "UTC")!
        let days = try await store.dayCounts(of: id, timeZone: zone).map { d in
            DaysJSON.Day(date: Self.day(Date(timeIntervalSince1970: Double(d.day) * 86_400)), count: d.count)
        }
        return DaysJSON(conversation: id, timeZone: zone.identifier, days: days)
    }

    func search(_ query: Parameters, for identity: Identity) async throws -> SearchJSON {
        guard let q = query["q"], !q.trimmingCharacters(in: CharacterSet.whitespaces).isEmpty else {
            throw APIError.badRequest("q is missing; expected the words to find")
        }
        let conversation = try Self.integer(query, "conversation", range: 1...Int64.max)
        let limit = try Self.integer(query, "limit", range: 1...200).map(Int.init) ?? 50
        let within = try await Self.within(accounts, identity)
        if let conversation {
            guard within?.contains(conversation) ?? true else { throw APIError.notFound("no conversation \(conversation)") }
            _ = try await known(conversation)
        }
        let hits: [StoreHit]
        do { hits = try await store.search(StoreSearch(String(q), conversation: conversation, limit: limit, within: within)) } catch let e as StoreError {
            throw APIError.badRequest(e.reason.replacingOccurrences(of: "search ", with: "q: "))
        }
        let matches = try await store.searchMatches(StoreSearch(String(q), conversation: conversation, within: within), cap: Self.matchCap)
        var json = SearchJSON(
            hits: hits.map { h in
                SearchJSON.Hit(
                    conversation: h.conversation, seq: h.seq, date: Self.iso(h.date), sender: h.senderName ?? h.sender, senderID: h.sender,
                    text: h.text, snippet: h.snippet, parts: h.snippetParts)
            })
        json.total = matches.values.reduce(0) { $0 + $1.count }
        json.conversations = matches.map { SearchJSON.Count(id: $0.key, count: $0.value.count) }.sorted { ($0.count, -$0.id) > ($1.count, -$1.id) }
        return json
    }

    /// The most matches counted or listed for one search.
    static let matchCap = 100_000

    /// `GET /api/v1/conversations/{id}/matches?q=`: every message of the conversation the words
    /// match, in order — `{"q", "count", "seqs"}` (in-conversation search: "3 of 1,204", ↑/↓).
    func matches(_ id: Int64, _ query: Parameters) async throws -> Response {
        guard let q = query["q"], !q.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw APIError.badRequest("q is missing; expected the words to find")
        }
        let found: [Int64: [Int64]]
        do { found = try await store.searchMatches(StoreSearch(String(q), conversation: id), cap: Self.matchCap) } catch let e as StoreError {
            throw APIError.badRequest(e.reason.replacingOccurrences(of: "search ", with: "q: "))
        }
        let seqs = found[id] ?? []
        return Pages.json { out in
            out.field("q", String(q)); out.field("count", seqs.count); out.key("seqs"); out.array(seqs)
        }
    }

    /// An integer parameter in `range`, nil when absent, a 400 naming it when not.
    static func integer(_ query: Parameters, _ name: String, range: ClosedRange<Int64>) throws -> Int64? {
        guard let raw = query[Substring(name)] else { return nil }
        guard let v = Int64(raw), range.contains(v) else {
            let upper = range.upperBound == Int64.max ? "" : " and \(range.upperBound)"
            throw APIError.badRequest(
                "\(name) \"\(raw)\" is not a whole number" + (upper.isEmpty ? " ≥ \(range.lowerBound)" : " between \(range.lowerBound)\(upper)"))
        }
        return v
    }

    /// A date parameter, nil when absent, a 400 naming it when it is not a date.
    static func date(_ query: Parameters, _ name: String) throws -> Date? {
        guard let raw = query[Substring(name)] else { return nil }
        guard let d = date(String(raw)) else {
            throw APIError.badRequest("\(name) \"\(raw)\" is not a date; expected YYYY-MM-DD or an ISO 8601 date and time")
        }
        return d
    }

    /// `2024-03-01` (UTC midnight) or an ISO 8601 date and time.
    static func date(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withFullDate]
        return f.date(from: s)
    }
}

typealias Parameters = FlatDictionary<Substring, Substring>
