import BubbleCore
import BubbleImport
import Foundation
import GRDB
import Testing
import BubbleTestSupport
@testable import BubbleStore

let t0 = Date(timeIntervalSince1970: 1_700_000_000)

/// A new temporary folder for one test (the test removes it).
func folder() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-store-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

private func message(_ i: Int, text: String? = nil, id: String? = nil) -> Message {
    var m = Message(
        sender: i % 2 == 0 ? "me" : "ana", direction: i % 2 == 0 ? .outgoing : .incoming,
        date: t0.addingTimeInterval(Double(i) * 60), text: text ?? "message \(i)")
    m.id = id
    return m
}

private func chat(_ messages: [Message]) -> Conversation {
    Conversation(
        title: "Ana", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")],
        messages: messages)
}

/// Everything the store holds, as text: compared before and after a failed import.
private func checksum(_ path: String) throws -> String {
    let queue = try DatabaseQueue(path: path)
    return try queue.read { db in
        var out = ""
        for table in ["conversation", "participant", "message", "media"] {
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2") { out += "\(table) \(row)\n" }
        }
        out += "fts \(try Int.fetchOne(db, sql: "SELECT count(*) FROM message_fts") ?? -1)"
        return out
    }
}

/// The backends every store test runs on.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }

    /// A new empty store: an SQLite file in `dir`, or a new database on the tests' PostgreSQL
    /// with its media in `dir`.
    /// A PostgreSQL store runs in a task of its own until it goes (`PostgresStore.start()`).
    func make(_ dir: String) throws -> any ConversationStore {
        try Self.open(self == .sqlite ? dir + "/db.sqlite" : try TestPostgres.shared().createDatabase(), media: dir)
    }

    /// The store at `location` (an SQLite path or a PostgreSQL URL, its media in `media`), made
    /// when missing; a PostgreSQL one runs until it goes.
    static func open(_ location: String, media: String) throws -> any ConversationStore {
        guard PostgresLocation.isPostgres(location) else { return try SQLiteStore(path: location) }
        let store = try PostgresStore(url: location, mediaFolder: media + "/db-media")
        store.start()
        return store
    }
}

/// Everything a store holds, read through its API: compared before and after a failed import.
private func contents(_ store: any ConversationStore) async throws -> String {
    var out = ""
    for c in try await store.conversations() {
        out += "\(c)\n"
        for m in try await store.load(c.id).messages { out += "\(m)\n" }
    }
    out += "hits \(try await store.search(StoreSearch("text", limit: 100_000)).count)"
    return out
}

@Suite("BubbleStore: SQLite through GRDB")
struct StoreTests {
    @Test("a new file gets the schema: WAL, foreign keys, our application id, every table")
    func migrationsFromEmpty() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/sub/bubbles.sqlite"
        let store = try SQLiteStore(path: path)
        try await store.pool.read { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal")
            #expect(try Int.fetchOne(db, sql: "PRAGMA foreign_keys") == 1)
            #expect(try Int32.fetchOne(db, sql: "PRAGMA application_id") == SQLiteStore.applicationID)
            let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"))
            #expect(tables.isSuperset(of: ["conversation", "participant", "message", "media", "message_fts"]))
        }
        #expect(try await store.conversations().isEmpty)
        // Opening it again migrates nothing and keeps it.
        _ = try SQLiteStore(path: path)
    }

    @Test("round trip: what the importer produced comes back — text, time zones, reactions, replies, photos, files", arguments: Backend.allCases)
    func roundTrip(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let photo = dir + "/photo.png"
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]).write(to: URL(fileURLWithPath: photo))
        var messages = (0..<5).map { message($0, id: "s\($0)") }
        messages[1].wallTime = WallTime(year: 2023, month: 11, day: 15, hour: 1, minute: 14, second: 20)
        messages[1].reactions = [Reaction(emoji: "❤️", count: 2, senders: ["me", "ana"])]
        messages[2].reply = ReplyReference(id: "s1", sender: "ana", text: "message 1")
        messages[3].images = [ImageAttachment(path: "photo.png", width: 640, height: 480, name: "IMG_1.png")]
        messages[3].status = .read
        messages[3].statusDate = t0.addingTimeInterval(999)
        messages[4].attachment = MediaAttachment(kind: .voice, fileName: "PTT-1.opus", path: "missing.opus")
        let original = chat(messages)
        let store = try backend.make(dir)
        let summary = try await store.add(original, sourceFormat: "native", chatKey: "ana", title: nil, mediaFolder: dir)
        #expect(summary.messagesAdded == 5 && summary.conversationsAdded == 1 && summary.attachmentsAdded == 1)
        let back = try await store.load(summary.conversationID)
        #expect(back.title == "Ana")
        #expect(back.participants == original.participants)
        #expect(back.messages.count == 5)
        for (a, b) in zip(back.messages, original.messages) where a.images.isEmpty && a.attachment == nil {
            #expect(a == b)
        }
        #expect(back.messages[1].wallTime == messages[1].wallTime)
        // The photo is the store's copy, named by its SHA-256, with the same bytes.
        let stored = try #require(back.messages[3].images.first?.path)
        #expect(stored.hasPrefix(store.mediaFolder + "/"))
        #expect(FileManager.default.contents(atPath: stored) == FileManager.default.contents(atPath: photo))
        #expect(back.messages[3].images.first?.name == "IMG_1.png")
        // A file that could not be read keeps its name, and no path outside the store.
        #expect(back.messages[4].attachment?.fileName == "PTT-1.opus")
        #expect(back.messages[4].attachment?.path == nil)
    }

    @Test("importing the same export twice adds nothing; a newer export adds only its new tail", arguments: Backend.allCases)
    func reimport(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        // No source ids (as WhatsApp): identity by content, and two identical messages stay two.
        var first = (0..<100).map { message($0) }
        first.append(first[99])
        let a = try await store.add(chat(first), sourceFormat: "whatsapp", chatKey: "ana", title: nil, mediaFolder: dir)
        #expect(a.messagesAdded == 101)
        let again = try await store.add(chat(first), sourceFormat: "whatsapp", chatKey: "ana", title: nil, mediaFolder: dir)
        #expect(again.messagesAdded == 0 && again.messagesSkipped == 101 && again.conversationsAdded == 0)
        let newer = try await store.add(
            chat(first + (100..<130).map { message($0) }), sourceFormat: "whatsapp", chatKey: "ana",
            title: nil, mediaFolder: dir)
        #expect(newer.messagesAdded == 30 && newer.messagesSkipped == 101)
        #expect(try await store.count(of: a.conversationID) == 131)
        let tail = try await store.messages(in: a.conversationID, after: 101, limit: 100)
        #expect(tail.map(\.seq) == Array(102...131))
        #expect(tail.first?.message.text == "message 100")
        // With source ids: ids decide, even when the text was edited.
        var ids = (0..<10).map { message($0, id: "m\($0)") }
        let b = try await store.add(chat(ids), sourceFormat: "telegram", chatKey: "1", title: nil, mediaFolder: dir)
        ids[3].text = "edited"
        let c = try await store.add(chat(ids), sourceFormat: "telegram", chatKey: "1", title: nil, mediaFolder: dir)
        #expect(b.messagesAdded == 10 && c.messagesAdded == 0 && c.conversationID == b.conversationID)
        #expect(try await store.conversations().count == 2)
    }

    @Test("a bad record at message 5,000 of 10,000 leaves the database as it was, and the error names the place", arguments: Backend.allCases)
    func failedImportChangesNothing(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        _ = try await store.add(chat((0..<50).map { message($0) }), sourceFormat: "sms", chatKey: "+1555", title: nil, mediaFolder: dir)
        let before = try await contents(store)
        let rawBefore = try (store as? SQLiteStore).map { try checksum($0.path) }
        // An SMS backup whose 5,000th record is broken XML (an attribute without a name).
        var xml = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"10000\">\n"
        for i in 0..<10_000 {
            let broken = i == 4_999 ? " =\"x\"" : ""
            xml +=
                "  <sms protocol=\"0\" address=\"+1555\" date=\"\(1_700_000_000_000 + i * 60_000)\" type=\"\(i % 2 + 1)\" body=\"text \(i)\"\(broken) read=\"1\" status=\"-1\" contact_name=\"Ana\" />\n"
        }
        xml += "</smses>\n"
        let file = dir + "/backup.xml"
        try xml.write(toFile: file, atomically: true, encoding: .utf8)
        // Streamed: 4,999 messages are in the transaction when the importer meets the bad record.
        var delivered = 0
        await #expect {
            _ = try await store.importStream(sourceFormat: "sms", title: nil, mediaFolder: dir, sortByDate: true) { add in
                let result = try withoutActuallyEscaping(add) { add in
                    try Importer.load(
                        path: file,
                        messages: {
                            try add($0); delivered += 1
                        })
                }
                return (result.conversation, "+1555")
            }
        } throws: { error in
            let text = "\(error)"
            return text.contains("backup.xml") && text.contains("line 5002")
        }
        #expect(delivered >= 4_999)
        #expect(try await contents(store) == before)
        #expect(try (store as? SQLiteStore).map { try checksum($0.path) } == rawBefore)
        // The same backup without the bad record goes in whole, its messages by date.
        try xml.replacingOccurrences(of: " =\"x\"", with: "").write(toFile: file, atomically: true, encoding: .utf8)
        let ok = try await store.importStream(sourceFormat: "sms", title: nil, mediaFolder: dir, sortByDate: true) { add in
            let result = try withoutActuallyEscaping(add) { add in try Importer.load(path: file, messages: add) }
            return (result.conversation, "+1555")
        }
        #expect(ok.messagesAdded == 10_000 && ok.conversationsAdded == 0)
        #expect(try await store.count(of: ok.conversationID) == 10_050)
    }

    @Test("messages that arrive out of date order are numbered by date when the format asks for it", arguments: Backend.allCases)
    func sortedByDate(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let shuffled = [3, 0, 2, 1, 4].map { message($0) }
        let s = try await store.importStream(sourceFormat: "sms", title: nil, mediaFolder: dir, sortByDate: true) { add in
            for m in shuffled { try add(m) }
            return (chat([]), "x")
        }
        let texts = try await store.messages(in: s.conversationID, after: 0, limit: 10).map { $0.message.text! }
        #expect(texts == (0..<5).map { "message \($0)" })
        let kept = try await store.importStream(sourceFormat: "whatsapp", title: nil, mediaFolder: dir, sortByDate: false) { add in
            for m in shuffled { try add(m) }
            return (chat([]), "y")
        }
        #expect(try await store.messages(in: kept.conversationID, after: 0, limit: 10).map { $0.message.text! } == shuffled.map { $0.text! })
    }

    @Test("search: accents folded, Cyrillic, Arabic, Chinese two-character words, words beside emoji; exact matches first", arguments: Backend.allCases)
    func search(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let texts = [
            "On se retrouve au cafe du coin", "Un café au lait, s'il te plaît", "Встретимся завтра в Москве",
            "مرحبا يا صديقي، كيف حالك", "我们明天见面吧", "🎉party tonight🎉", "nothing to see here", "Москва слезам не верит",
            "明白了，谢谢", "café", "Cafeteria opens at nine"
        ]
        let c = try await store.add(
            chat(texts.enumerated().map { message($0.offset, text: $0.element) }), sourceFormat: "native",
            chatKey: "s", title: nil, mediaFolder: dir)
        func seqs(_ q: String, _ configure: (inout StoreSearch) -> Void = { _ in }) async throws -> [Int64] {
            var s = StoreSearch(q)
            configure(&s)
            return try await store.search(s).map(\.seq)
        }
        #expect(Set(try await seqs("cafe")) == [1, 2, 10])
        #expect(try await seqs("café").prefix(2).sorted() == [2, 10])  // exact first
        #expect(try await seqs("москве") == [3])
        #expect(Set(try await seqs("Москв*")) == [3, 8])
        #expect(try await seqs("صديقي") == [4])
        #expect(try await seqs("明天") == [5])
        #expect(try await seqs("明").sorted() == [5, 9])
        #expect(try await seqs("见面") == [5])
        #expect(try await seqs("天见面") == [5])
        #expect(try await seqs("明 -谢谢") == [5])
        #expect(try await seqs("明 -coin -lait").sorted() == [5, 9])
        #expect(try await seqs("party") == [6])
        #expect(Set(try await seqs("caf*")) == [1, 2, 10, 11])
        #expect(try await seqs("caf* -lait -coin").sorted() == [10, 11])
        #expect(try await seqs("\"au cafe\"") == [1])
        #expect(try await seqs("cafe") { $0.until = t0.addingTimeInterval(30) } == [1])
        #expect(Set(try await seqs("cafe") { $0.sender = "Ana" }) == [2, 10])
        #expect(try await seqs("cafe") { $0.conversation = c.conversationID + 1 }.isEmpty)
        let hit = try #require(try await store.search(StoreSearch("lait")).first)
        #expect(hit.snippet == "Un café au [lait], s'il te plaît")
        #expect(hit.conversation == c.conversationID && hit.sender == "ana")
        await #expect(throws: StoreError.self) { try await store.search(StoreSearch("-only")) }
        await #expect(throws: StoreError.self) { try await store.search(StoreSearch("   ")) }
    }

    @Test("the bulk read takes each column as stored, as the row read does: NULLs absent, bytes that are not UTF-8 repaired, a NUL ends a text")
    func bulkReadMatchesRowRead() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var messages = (0..<6).map { message($0, id: $0 == 2 ? nil : "source-id-\($0)-long-enough-for-the-heap") }
        messages[1].wallTime = WallTime(year: 2023, month: 11, day: 15, hour: 1, minute: 14, second: 20)
        messages[1].edited = t0.addingTimeInterval(3_601.5)
        messages[2].status = .read
        messages[2].statusDate = t0.addingTimeInterval(999.25)
        messages[3] = .system("Ana changed the group name", date: t0.addingTimeInterval(180))
        messages[4].reactions = [Reaction(emoji: "❤️", count: 1, senders: ["ana"])]
        messages[5].text = nil
        messages[5].sender = nil
        let store = try SQLiteStore(path: dir + "/db.sqlite")
        let id = try await store.add(chat(messages), sourceFormat: "native", chatKey: "b", title: nil, mediaFolder: dir).conversationID
        // Texts another writer left: not UTF-8 ("a", 0xFF, "b"; a lone continuation byte), and
        // one with a NUL byte inside.
        try await store.pool.write { db in
            try db.execute(sql: "UPDATE message SET text = CAST(X'61FF62' AS TEXT) WHERE seq = 1")
            try db.execute(sql: "UPDATE message SET text = CAST(X'80' AS TEXT) WHERE seq = 5")
            try db.execute(sql: "UPDATE message SET sender = CAST(X'6D65006D65' AS TEXT) WHERE seq = 3")
        }
        let bulk = try await store.messages(in: id, after: 0, limit: 100)
        let byRow = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(SQLiteStore.columns) FROM message WHERE conversation_id = ? ORDER BY seq", arguments: [id])
                .map { try store.message($0, decoder: JSONDecoder()) }
        }
        #expect(bulk.map(\.seq) == Array(1...6))
        #expect(bulk == byRow)
        #expect(bulk[0].message.text == "a\u{FFFD}b" && bulk[4].message.text == "\u{FFFD}")
        #expect(bulk[2].message.sender == "me")
        for k in 1..<4 { #expect(bulk[k].message == messages[k], "message \(k + 1)") }
        #expect(bulk[5].message.text == nil && bulk[5].message.sender == nil && bulk[5].message.id == "source-id-5-long-enough-for-the-heap")
        #expect(bulk[4].message.reactions == messages[4].reactions)
    }

    @Test("windows, date jumps, bounds and day counts", arguments: Backend.allCases)
    func viewerQueries(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        // 3 days, 100 messages a day, one minute apart.
        let messages = (0..<300).map { i -> Message in
            var m = message(i)
            m.date = t0.addingTimeInterval(Double(i / 100) * 86_400 + Double(i % 100) * 60)
            return m
        }
        let id = try await store.add(chat(messages), sourceFormat: "native", chatKey: "w", title: "Window", mediaFolder: dir).conversationID
        #expect(try await store.bounds(of: id)! == (1, 300))
        #expect(try await store.messages(in: id, after: 150, limit: 10).map(\.seq) == Array(151...160))
        #expect(try await store.messages(in: id, before: 150, limit: 10).map(\.seq) == Array(140...149))
        #expect(try await store.messages(in: id, after: 295, limit: 10).map(\.seq) == Array(296...300))
        #expect(try await store.seq(in: id, atOrAfter: t0.addingTimeInterval(86_400 + 30)) == 102)
        #expect(try await store.seq(in: id, atOrAfter: t0.addingTimeInterval(10 * 86_400)) == nil)
        let days = try await store.dayCounts(of: id, timeZone: TimeZone(identifier: "UTC")!)
        #expect(days.map(\.count) == [100, 100, 100])
        #expect(days[1].day == days[0].day + 1)
        let listed = try #require(try await store.conversations().first)
        #expect(listed.title == "Window" && listed.messageCount == 300 && listed.first == t0)
        // Each query uses an index, never a scan of the table.
        try await (store as? SQLiteStore)?.pool.read { db in
            for sql in [
                "SELECT seq FROM message WHERE conversation_id = 1 AND seq > 5 ORDER BY seq LIMIT 10",
                "SELECT seq FROM message WHERE conversation_id = 1 AND date >= 0 ORDER BY date, seq LIMIT 1"
            ] {
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { $0["detail"] as String }.joined()
                #expect(plan.contains("USING INDEX") || plan.contains("USING COVERING INDEX"), "\(plan)")
            }
        }
    }

    @Test("a file that is not ours, one cut short, one from a newer BubbleKit: clear errors, files untouched")
    func foreignFiles() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = dir + "/notes.sqlite"
        try "hello, not a database".write(toFile: text, atomically: true, encoding: .utf8)
        #expect { try SQLiteStore(path: text) } throws: { "\($0)".contains("notes.sqlite: is not a BubbleKit database") }
        #expect(try String(contentsOfFile: text, encoding: .utf8) == "hello, not a database")
        // Someone else's SQLite database.
        let other = dir + "/other.sqlite"
        try await DatabaseQueue(path: other).write { try $0.execute(sql: "CREATE TABLE t (x)") }
        #expect { try SQLiteStore(path: other) } throws: { "\($0)".contains("is not a BubbleKit database (it holds 1 other table)") }
        // Ours, cut short.
        let ours = dir + "/ours.sqlite"
        let store = try SQLiteStore(path: ours)
        _ = try await store.add(chat((0..<2_000).map { message($0) }), sourceFormat: "native", chatKey: "x", title: nil, mediaFolder: dir)
        _ = try await store.pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        let cut = dir + "/cut.sqlite"
        let data = try Data(contentsOf: URL(fileURLWithPath: ours))
        try data.prefix(50).write(to: URL(fileURLWithPath: cut))
        #expect { try SQLiteStore(path: cut) } throws: { "\($0)".contains("cut short") }
        let half = dir + "/half.sqlite"
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: half))
        await #expect {
            let store = try SQLiteStore(path: half)
            for c in try await store.conversations() { _ = try await store.load(c.id) }
        } throws: {
            "\($0)".contains("half.sqlite") && ("\($0)".contains("damaged") || "\($0)".contains("not a BubbleKit"))
        }
        // Written by a newer version.
        let newer = dir + "/newer.sqlite"
        _ = try SQLiteStore(path: newer)
        try await DatabaseQueue(path: newer).write { try $0.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99')") }
        #expect { try SQLiteStore(path: newer) } throws: { "\($0)".contains("newer BubbleKit") && "\($0)".contains("v99") }
    }
}

@Suite("BubbleStore: styled text")
struct StyledStoreTests {
    @Test("spans, forwards and edits are kept; a live edit's new text is plain; search finds the text without markers", arguments: Backend.allCases)
    func styledRoundTrip(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var messages = (0..<3).map { message($0, id: "s\($0)") }
        messages[0].text = "Look at this secret"
        messages[0].spans = [TextSpan(.bold, 8..<12), TextSpan(.spoiler, 13..<19)]
        messages[1].forwardedFrom = "Bob"
        messages[2].edited = t0.addingTimeInterval(999)
        var poll = MediaAttachment(kind: .poll, title: "Dinner?")
        poll.answers = [PollAnswer(text: "Pizza", votes: 2, chosen: true)]
        messages[2].attachment = poll
        let store = try backend.make(dir)
        let summary = try await store.add(chat(messages), sourceFormat: "native", chatKey: "ana", title: nil, mediaFolder: dir)
        let back = try await store.load(summary.conversationID).messages
        #expect(back[0].spans == messages[0].spans)
        #expect(back[1].forwardedFrom == "Bob")
        #expect(back[2].edited == messages[2].edited)
        #expect(back[2].attachment?.answers == poll.answers)
        #expect(back[1].spans.isEmpty && back[1].edited == nil)
        let changed = try await store.edit(1, in: summary.conversationID, text: "now plain", by: "me")
        _ = changed
        let edited = try await store.load(summary.conversationID).messages[0]
        #expect(edited.text == "now plain")
        #expect(edited.spans.isEmpty)
    }

    @Test(
        "A spoiler stays hidden where the store repeats a text: search does not find its words, a hit's snippet and a live reply's quote mask it",
        arguments: Backend.allCases)
    func spoilerHidden(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var messages = (0..<2).map { message($0, id: "h\($0)") }
        messages[0].text = "The killer is the butler, really"
        messages[0].spans = [TextSpan(.spoiler, 14..<24)]
        let store = try backend.make(dir)
        let c = try await store.add(chat(messages), sourceFormat: "native", chatKey: "sp", title: nil, mediaFolder: dir).conversationID
        #expect(try await store.search(StoreSearch("butler", conversation: c)).isEmpty)
        let hit = try #require(try await store.search(StoreSearch("killer", conversation: c)).first)
        #expect(!hit.snippet.contains("butler") && !hit.text.contains("butler"), "\(hit.snippet)")
        #expect(hit.snippet.contains("░"))
        let reply = try await store.add(NewMessage(clientID: UUID().uuidString, text: "No way", sender: messages[1].sender ?? "me", replyTo: 1), to: c)
        let quote = try #require(reply.change.message.message.reply?.text)
        #expect(quote == "The killer is ░░░░░░░░░░, really")
        // A live message with a spoiler typed in the composer: not found by its hidden word.
        _ = try await store.add(
            NewMessage(
                clientID: UUID().uuidString, text: "Ending: he dies", sender: messages[1].sender ?? "me",
                spans: [TextSpan(.spoiler, 8..<15)]), to: c)
        #expect(try await store.search(StoreSearch("dies", conversation: c)).isEmpty)
        #expect(try await store.search(StoreSearch("ending", conversation: c)).count == 1)
    }
}
