import BubbleTestSupport
import Foundation
import Testing

/// `bubbles import`, `list` and `search` against a store in a temporary folder, as a user runs them.
@Suite("bubbles import / list / search", .serialized)
struct StoreCLITests {
    static let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")

    @Test("import twice adds nothing the second time; list and search print what the store holds, as text and JSON")
    func importListSearch() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-store-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("chats.sqlite").path
        let telegram = Self.fixtures.appendingPathComponent("telegram-single/result.json").path
        let whatsapp = Self.fixtures.appendingPathComponent("whatsapp-ios-group.txt").path

        let first = try Tool.run(["import", telegram, whatsapp, "--db", db, "--all-incoming"])
        #expect(first.status == 0, "\(first.stderr)")
        let out = String(decoding: first.stdout, as: UTF8.self)
        #expect(out.contains("\"Mira Chen\" (conversation 1, new): added 7 messages, 1 attachment; skipped 0 already present"))
        #expect(out.contains("(conversation 2, new): added 4 messages"))
        let again = try Tool.run(["import", telegram, "--db", db])
        #expect(String(decoding: again.stdout, as: UTF8.self).contains("added 0 messages, 0 attachments; skipped 7 already present"))

        let list = try Tool.run(["list", "--db", db, "--json"])
        let conversations = try #require(try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]])
        #expect(conversations.count == 2)
        #expect(conversations[0]["title"] as? String == "Mira Chen")
        #expect(conversations[0]["messageCount"] as? Int == 7)
        #expect(conversations[0]["first"] as? String == "2021-03-05T13:22:11Z")

        let search = try Tool.run(["search", "eclipse", "--db", db, "--json"])
        #expect(search.status == 0, "\(search.stderr)")
        let hits = try #require(try JSONSerialization.jsonObject(with: search.stdout) as? [[String: Any]])
        // The message and the link that holds the word.
        #expect(hits.count == 2)
        let message = try #require(hits.first { $0["seq"] as? Int == 1 })
        #expect(message["conversation"] as? Int == 1 && message["sender"] as? String != nil)
        #expect(message["snippet"] as? String == "Did you see the [eclipse] photos?")
        let filtered = try Tool.run(["search", "eclipse", "--db", db, "--conversation", "2"])
        #expect(filtered.status == 0 && filtered.stdout.isEmpty && filtered.stderr.contains("no messages match"))
    }

    @Test(
        "PostgreSQL: import, list, search and convert as on SQLite; db copy SQLite → PostgreSQL → SQLite keeps every row and photo, goes on after an interruption, verifies counts and checksums"
    )
    func postgresAndCopy() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-store-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let pg = try TestPostgres.shared()
        let url = try pg.createDatabase("cli")
        let media = dir.appendingPathComponent("pg-media").path
        let sqlite = dir.appendingPathComponent("chats.sqlite").path
        let telegram = Self.fixtures.appendingPathComponent("telegram-single/result.json").path
        let whatsapp = Self.fixtures.appendingPathComponent("whatsapp-ios-group.txt").path
        let features = Tool.root.appendingPathComponent("Sources/BubbleCore/Samples/features.json").path
        // The same imports on both backends say the same, and search finds the same.
        for db in [sqlite, url] {
            let first = try Tool.run(["import", telegram, whatsapp, features, "--db", db, "--store-media", media, "--tz", "UTC", "--all-incoming"])
            #expect(first.status == 0, "\(first.stderr)")
            let out = String(decoding: first.stdout, as: UTF8.self)
            #expect(out.contains("\"Mira Chen\" (conversation 1, new): added 7 messages, 1 attachment; skipped 0 already present"), "\(out)")
            let again = try Tool.run(["import", telegram, "--db", db, "--store-media", media, "--tz", "UTC"])
            #expect(String(decoding: again.stdout, as: UTF8.self).contains("added 0 messages, 0 attachments; skipped 7 already present"))
            let search = try Tool.run(["search", "eclipse", "--db", db, "--store-media", media, "--json"])
            let hits = try #require(try JSONSerialization.jsonObject(with: search.stdout) as? [[String: Any]])
            #expect(hits.count == 2 && hits.contains { $0["snippet"] as? String == "Did you see the [eclipse] photos?" }, "\(db): \(hits)")
        }
        func converted(_ db: String, _ name: String) throws -> Data {
            // Photos inside the JSON: the same bytes wherever each store keeps them.
            let r = try Tool.run(
                ["convert", "--conversation", "1", "--db", db, "--store-media", media, "-o", name, "--tz", "UTC", "--assets", "embed"], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            return try Data(contentsOf: dir.appendingPathComponent(name))
        }
        #expect(try converted(url, "pg.json").count > 1000)

        // SQLite → a new PostgreSQL database → a new SQLite file: the same rows, byte for byte.
        let target = try pg.createDatabase("copy")
        let copied = dir.appendingPathComponent("back.sqlite").path
        let copyMedia = dir.appendingPathComponent("copy-media").path
        let there = try Tool.run(["db", "copy", "--from", sqlite, "--to", target, "--to-media", copyMedia])
        #expect(there.status == 0, "\(there.stderr)")
        let thereOut = String(decoding: there.stdout, as: UTF8.self)
        #expect(thereOut.contains("copied 3 conversations") && thereOut.contains("verified"), "\(thereOut)")
        // Interrupted: the last messages of a conversation never arrived. Run again: only they are copied.
        let name = String(target.split(separator: "/").last!)
        try pg.psql(name, "DELETE FROM message WHERE conversation_id = 3 AND seq > 5")
        let resumed = try Tool.run(["db", "copy", "--from", sqlite, "--to", target, "--to-media", copyMedia])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let resumedOut = String(decoding: resumed.stdout, as: UTF8.self)
        #expect(resumedOut.contains("copied 3 conversations") && !resumedOut.contains(" 0 messages added"), "\(resumedOut)")
        let back = try Tool.run(["db", "copy", "--from", target, "--from-media", copyMedia, "--to", copied])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try converted(copied, "back.json") == converted(sqlite, "orig.json"))
        // Photos came along: the copy's media folder has the same files.
        let files = { (folder: String) in Set(FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String }.filter { $0.contains(".") } ?? []) }
        #expect(!files(dir.appendingPathComponent("chats-media").path).isEmpty)
        #expect(files(dir.appendingPathComponent("back-media").path) == files(dir.appendingPathComponent("chats-media").path))
        // …and each is known as a conversation's (attachments are served to those who reach one).
        let recorded = try pg.psql(name, "SELECT count(DISTINCT file) FROM conversation_media").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(recorded) == files(copyMedia).count, "\(recorded) of \(files(copyMedia).count) copied files recorded")
        // A copied message whose source key the target holds under another number (no index
        // keeps source keys unique): refused by name, not stored twice.
        let key = try pg.psql(name, "SELECT source_key FROM message WHERE conversation_id = 3 AND seq = 6").trimmingCharacters(in: .whitespacesAndNewlines)
        try pg.psql(name, "DELETE FROM message WHERE conversation_id = 3 AND seq > 5")
        try pg.psql(name, "UPDATE message SET source_key = \(key) WHERE conversation_id = 3 AND seq = 1")
        let clash = try Tool.run(["db", "copy", "--from", sqlite, "--to", target, "--to-media", copyMedia])
        #expect(clash.status != 0 && clash.stderr.contains("holds message 1 already as message 6"), "\(clash.stderr)")
        let stored = try pg.psql(name, "SELECT count(*) FROM message WHERE conversation_id = 3 AND source_key = \(key)")
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        // A target that holds other messages under the same chat is not silently merged.
        try pg.psql(name, "UPDATE message SET text = 'changed' WHERE conversation_id = 1 AND seq = 1")
        let differs = try Tool.run(["db", "copy", "--from", sqlite, "--to", target, "--to-media", copyMedia])
        #expect(differs.status != 0 && differs.stderr.contains("differs after the copy"), "\(differs.stderr)")
        #expect(try pg.psql(name, "SELECT indexdef FROM pg_indexes WHERE indexname = 'message_source'").contains("USING hash (source_key)"))
        // A mistyped source is an error, and no empty database appears in its place.
        let none = dir.appendingPathComponent("none.sqlite").path
        let missing = try Tool.run(["db", "copy", "--from", none, "--to", dir.appendingPathComponent("x.sqlite").path])
        #expect(missing.status != 0 && missing.stderr.contains("no such store"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: none))
        // Bad locations: named, no crash.
        let bad = try Tool.run(["list", "--db", "postgres://nobody@127.0.0.1:1/none"])
        #expect(bad.status != 0 && bad.stderr.contains("postgres://nobody@127.0.0.1:1/none"), "\(bad.stderr)")
    }

    @Test("render and convert read a stored conversation as they read a file")
    func renderFromStore() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-store-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("chats.sqlite").path
        let telegram = Self.fixtures.appendingPathComponent("telegram-single/result.json").path
        #expect(try Tool.run(["import", telegram, "--db", db, "--tz", "UTC"]).status == 0)
        let fromFile = try Tool.run(["convert", telegram, "-o", "file.json", "--tz", "UTC"], in: dir)
        let fromStore = try Tool.run(["convert", "--conversation", "1", "--db", db, "-o", "store.json", "--tz", "UTC"], in: dir)
        #expect(fromFile.status == 0 && fromStore.status == 0, "\(fromStore.stderr)")
        func messages(_ name: String) throws -> [[String: String]] {
            let data = try Data(contentsOf: dir.appendingPathComponent(name))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return (json["messages"] as? [[String: Any]] ?? []).map { m in
                m.compactMapValues { $0 as? String }.filter { ["from", "direction", "date", "text", "id", "kind"].contains($0.key) }
            }
        }
        let a = try messages("file.json"), b = try messages("store.json")
        #expect(a.count == 7 && a == b)
        // A picture the store copied in is drawn from the store's copy.
        let png = try Tool.run(["render", "--conversation", "1", "--db", db, "-o", "c.png", "--tz", "UTC"], in: dir)
        #expect(png.status == 0 && !png.stderr.contains("photo_1@"), "\(png.stderr)")
        let both = try Tool.run(["render", telegram, "--conversation", "1", "-o", "c.png"], in: dir)
        #expect(both.status != 0 && both.stderr.contains("not both"))
    }

    @Test("bad input: a file that is not a store, a query with nothing to find — one clear line, non-zero exit, file untouched")
    func badInput() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-store-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let notes = dir.appendingPathComponent("notes.txt").path
        try "my notes".write(toFile: notes, atomically: true, encoding: .utf8)
        let r = try Tool.run(["list", "--db", notes])
        #expect(r.status != 0 && r.stderr.contains("notes.txt: is not a BubbleKit database"))
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes")
        let db = dir.appendingPathComponent("s.sqlite").path
        // A store that is not there: an error naming it, and no new database.
        let missing = try Tool.run(["search", "--db", db, "hello"])
        #expect(missing.status != 0 && missing.stderr.contains("no such store") && !FileManager.default.fileExists(atPath: db))
        #expect(try Tool.run(["import", Self.fixtures.appendingPathComponent("telegram-single/result.json").path, "--db", db]).status == 0)
        let q = try Tool.run(["search", "--db", db, "--", "-only"])
        #expect(q.status != 0 && q.stderr.contains("expected at least one word to find"))
    }
}
