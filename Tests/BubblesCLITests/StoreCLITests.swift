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

        let first = try Tool.run(["import", telegram, whatsapp, "--db", db])
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
        let q = try Tool.run(["search", "--db", db, "--", "-only"])
        #expect(q.status != 0 && q.stderr.contains("expected at least one word to find"))
    }
}
