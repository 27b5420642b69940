import Foundation
import Testing

/// `bubbles import` of whole exports (a phone's SMS backup, a Telegram account, an iMessage
/// chat.db): every conversation, each in its own transaction; a newer backup adds only what is
/// new; one that fails fails alone. And PNG never hits Cairo's size wall.
@Suite("bubbles import: a whole phone in one command", .serialized)
struct WholeImportCLITests {
    static let fixtures = ImportCLITests.fixtures

    /// An SMS backup: `rows` (address, contact, text), a minute apart, alternating sides; an MMS
    /// with a photo part without data (backed up without media) for `photoless`.
    static func backup(_ rows: [(String, String, String)], photoless: String? = nil) -> Data {
        var xml = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"\(rows.count)\">\n"
        for (k, r) in rows.enumerated() {
            xml +=
                "  <sms protocol=\"0\" address=\"\(r.0)\" date=\"\(1_700_000_000_000 + k * 60_000)\" type=\"\(k % 2 + 1)\" body=\"\(r.2)\" read=\"1\" status=\"-1\" contact_name=\"\(r.1)\" />\n"
        }
        if let photoless {
            xml +=
                "  <mms date=\"1700009000000\" msg_box=\"1\" address=\"\(photoless)\" contact_name=\"Dee\" m_type=\"132\">\n"
                + "    <parts><part seq=\"0\" ct=\"image/jpeg\" name=\"IMG_1.jpg\" data=\"\" /><part seq=\"1\" ct=\"text/plain\" text=\"look\" /></parts>\n"
                + "    <addrs><addr address=\"\(photoless)\" type=\"137\" /></addrs>\n  </mms>\n"
        }
        return Data((xml + "</smses>\n").utf8)
    }

    static let first: [(String, String, String)] = (0..<4).flatMap { i in
        [("+15550102000", "Ann Lee", "ann \(i)"), ("+15550103000", "Ben Ode", "ben \(i)"), ("+15550109999", "(Unknown)", "unknown \(i)")]
    }

    func list(_ db: String) throws -> [String: Int] {
        let r = try Tool.run(["list", "--db", db, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let all = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]])
        // Two chats of one name (Telegram's two "Family" groups) count together.
        return Dictionary(all.map { ($0["title"] as! String, $0["messageCount"] as! Int) }, uniquingKeysWith: +)
    }

    @Test("an SMS backup, a Telegram account and an iMessage chat.db: one import each stores every conversation with its messages; again, nothing is added")
    func wholeExports() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("s.sqlite").path
        let files = ["sms/sms-backup.xml", "telegram-account/result.json", "imessage/chat.db"].map { Self.fixtures.appendingPathComponent($0).path }
        let r = try Tool.run(["import"] + files + ["--db", db, "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.contains("sms-backup.xml: 3 conversations: 3 new, 0 grown, 0 unchanged; 10 messages added, 0 already there; 1 attachment"), "\(out)")
        #expect(out.contains("result.json: 4 conversations: 4 new, 0 grown, 0 unchanged; 7 messages added"), "\(out)")
        #expect(out.contains("chat.db: 2 conversations: 2 new, 0 grown, 0 unchanged; 9 messages added"), "\(out)")
        let stored = try list(db)
        #expect(
            stored["Ann Lee (+15550102000)"] == 7 && stored["Ann Lee, Ben Ode (+15550102000, +15550103000)"] == 2 && stored["+15550109876"] == 1,
            "\(stored)")
        #expect(stored["Climbing crew"] == 4 && stored["Mira Chen"] == 1)
        #expect(stored["Weekend plans"] == 3 && stored["+15550102000"] == 6)
        let total = try Tool.run(["list", "--db", db, "--json"])
        #expect((try JSONSerialization.jsonObject(with: total.stdout) as? [Any])?.count == 9)

        let again = try Tool.run(["import"] + files + ["--db", db, "--tz", "UTC"])
        #expect(again.status == 0, "\(again.stderr)")
        let second = String(decoding: again.stdout, as: UTF8.self)
        #expect(second.contains("3 conversations: 0 new, 0 grown, 3 unchanged; 0 messages added, 10 already there"), "\(second)")
        #expect(second.contains("4 conversations: 0 new, 0 grown, 4 unchanged; 0 messages added"), "\(second)")
        #expect(second.contains("2 conversations: 0 new, 0 grown, 2 unchanged; 0 messages added"), "\(second)")
        #expect(try list(db) == stored)
        // --chat picks some.
        let some = dir.appendingPathComponent("some.sqlite").path
        let picked = try Tool.run(["import", files[1], "--chat", "Mira Chen", "--chat", "Climbing crew", "--db", some])
        #expect(picked.status == 0, "\(picked.stderr)")
        #expect(try list(some) == ["Mira Chen": 1, "Climbing crew": 4])
    }

    @Test(
        "a newer backup of the same phone adds exactly its new messages and its new conversation; a conversation with missing media and --strict fails alone, named, exit 3"
    )
    func newerBackup() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("s.sqlite").path
        try Self.backup(Self.first).write(to: dir.appendingPathComponent("old.xml"))
        let r = try Tool.run(["import", "old.xml", "--db", db], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let before = try list(db)
        #expect(before.values.sorted() == [4, 4, 4], "\(before)")

        // A month later: one more for Ann and for Ben, a new person, and Dee's MMS whose photo
        // was backed up without its data.
        let newer =
            Self.first + [
                ("+15550102000", "Ann Lee", "ann later"), ("+15550103000", "Ben Ode", "ben later"),
                ("+15550104000", "Cy", "hello from cy")
            ]
        try Self.backup(newer, photoless: "+15550105000").write(to: dir.appendingPathComponent("new.xml"))
        let strict = try Tool.run(["import", "new.xml", "--db", db, "--strict"], in: dir)
        #expect(strict.status == 3, "\(strict.stderr)")
        #expect(
            strict.stderr.contains("error: new.xml: Dee (+15550105000): ") && strict.stderr.contains("IMG_1.jpg")
                && strict.stderr.contains("--strict refuses missing media"), "\(strict.stderr)")
        let out = String(decoding: strict.stdout, as: UTF8.self)
        #expect(out.contains("new.xml: 5 conversations: 1 new, 2 grown, 1 unchanged, 1 failed; 3 messages added, 12 already there"), "\(out)")
        var after = try list(db)
        #expect(after.count == 4, "\(after)")
        #expect(after.first { $0.key.hasPrefix("Ann Lee") }?.value == 5 && after.first { $0.key.hasPrefix("Ben Ode") }?.value == 5, "\(after)")
        #expect(after.first { $0.key.hasPrefix("Cy") }?.value == 1, "\(after)")
        #expect(after.first { $0.key.hasPrefix("(Unknown)") || $0.key.hasPrefix("+15550109999") }?.value == 4, "\(after)")
        // Without --strict, Dee's photo is a placeholder and her conversation is stored too.
        let lenient = try Tool.run(["import", "new.xml", "--db", db], in: dir)
        #expect(lenient.status == 0, "\(lenient.stderr)")
        #expect(String(decoding: lenient.stdout, as: UTF8.self).contains("5 conversations: 1 new, 0 grown, 4 unchanged; 1 message added, 15 already there"))
        after = try list(db)
        #expect(after.count == 5 && after.first { $0.key.hasPrefix("Dee") }?.value == 1, "\(after)")
    }

    @Test("two phones of one person: the same numbers under other contact names go into the same conversations, nothing twice")
    func twoPhones() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("s.sqlite").path
        try Self.backup(Self.first).write(to: dir.appendingPathComponent("phone1.xml"))
        // The second phone calls Ann "Annie".
        let second = Self.first.map { ($0.0, $0.1 == "Ann Lee" ? "Annie" : $0.1, $0.2) } + [("+15550102000", "Annie", "from the other phone")]
        try Self.backup(second).write(to: dir.appendingPathComponent("phone2.xml"))
        #expect(try Tool.run(["import", "phone1.xml", "--db", db], in: dir).status == 0)
        let r = try Tool.run(["import", "phone2.xml", "--db", db], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            String(decoding: r.stdout, as: UTF8.self).contains("3 conversations: 0 new, 1 grown, 2 unchanged; 1 message added, 12 already there"),
            "\(String(decoding: r.stdout, as: UTF8.self))")
        let stored = try list(db)
        #expect(stored.count == 3 && stored["Ann Lee (+15550102000)"] == 5, "\(stored)")
    }

    @Test("render --all --format png of a backup with 4,000-message conversations writes every one (page images for the long ones, with a note), exit 0")
    func pngWithoutTheWall() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        var rows: [(String, String, String)] = (0..<4_000).map { ("+15550102000", "Ann Lee", "long conversation line \($0)") }
        rows += [("+15550103000", "Ben Ode", "short one")]
        try Self.backup(rows).write(to: dir.appendingPathComponent("phone.xml"))
        let r = try Tool.run(["render", "phone.xml", "--all", "-o", "out", "--format", "png", "--scale", "1"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("out: 2 conversations written"), "\(r.stderr)")
        #expect(r.stderr.contains("page images: one would be taller than a PNG can be"), "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("out").path)
        let annPages = files.filter { $0.hasPrefix("Ann Lee") && $0.hasSuffix(".png") }
        #expect(annPages.count > 20, "\(files.sorted())")
        #expect(files.contains { $0.hasPrefix("Ben Ode") && $0.hasSuffix(".png") }, "\(files.sorted())")
        let first = try #require(annPages.sorted().first)
        let page = try PNGPixels(dir.appendingPathComponent("out/" + first))
        #expect(page.height > 700 && page.height < 1000, "a page of --pages' height, \(page.height) px")
    }
}
