import BubbleTestSupport
import Foundation
import Testing

/// What docs/IMPORT.md and the README promise, tried as a new user would (issue 61): every
/// command reads what the docs show it reading, says what it warns about, and leaves nothing
/// behind when it fails.
@Suite("The tool does what the docs say", .serialized)
struct DocsPromiseCLITests {
    static let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures").path
    static let whatsapp = fixtures + "/appdb/whatsapp-new"

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func json(_ r: Tool.Result) throws -> [[String: Any]] {
        try #require(JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]], "\(String(decoding: r.stdout, as: UTF8.self))")
    }

    @Test("import takes render's input options: a crypt15 with --key-file and --media stores its pictures; --help lists every format")
    func importReadsWhatRenderReads() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("x.sqlite").path
        let r = try Tool.run([
            "import", Self.whatsapp + "/msgstore.db.crypt15", "--key-file", Self.whatsapp + "/encrypted_backup.key",
            "--media", Self.whatsapp + "/Media", "--db", db, "--tz", "UTC"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.contains("\"Ann Lee\" (conversation 1, new): added 15 messages, 3 attachments"), "\(out)")
        // The one photo the Media folder lacks is said, with the folder as typed.
        #expect(r.stderr.contains("Trip plan.pdf: not in the Media folder \(Self.whatsapp)/Media;"), "\(r.stderr)")
        let withKey = try Tool.run(["import", Self.whatsapp + "/msgstore.db.crypt15", "--key", AppKeys.whatsapp, "--db", db])
        #expect(withKey.status == 0, "\(withKey.stderr)")
        #expect(String(decoding: withKey.stdout, as: UTF8.self).contains("0 messages added, 22 already there"))

        let help = try Tool.run(["import", "--help"])
        let text = String(decoding: help.stdout, as: UTF8.self)
        for format in ["native", "sms", "whatsapp", "telegram", "imessage", "messenger", "instagram", "discord", "whatsapp-db", "signal", "signal-export"] {
            #expect(text.contains(format), "import --help lacks \(format)")
        }
        for option in ["--key", "--key-file", "--media", "--contacts", "--region", "--tz", "--strict", "--chat", "--me", "--store-media"] {
            #expect(text.contains(option + " "), "import --help lacks \(option)")
        }
        // A format that is none: the error lists them.
        let bad = try Tool.run(["import", Self.whatsapp + "/msgstore.db", "--input-format", "whatsap", "--db", db])
        #expect(bad.status != 0 && bad.stderr.contains("whatsapp-db") && bad.stderr.contains("signal-export"), "\(bad.stderr)")
    }

    @Test("A Signal Desktop profile without config.json is read with --key (and says what is missing without it)")
    func signalWithoutConfig() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let profile = dir.appendingPathComponent("Signal").path
        try FileManager.default.copyItem(atPath: Self.fixtures + "/appdb/signal", toPath: profile)
        let config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: profile + "/config.json"))) as? [String: Any]
        let key = try #require(config?["key"] as? String)
        try FileManager.default.removeItem(atPath: profile + "/config.json")
        let db = dir.appendingPathComponent("s.sqlite").path
        let r = try Tool.run(["import", profile, "--key", key, "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            String(decoding: r.stdout, as: UTF8.self).contains("\"Ann Lee\" (conversation 1, new): added 9 messages, 3 attachments"),
            "\(String(decoding: r.stdout, as: UTF8.self))")
        let none = try Tool.run(["render", profile, "-o", dir.appendingPathComponent("a.png").path])
        #expect(none.status != 0 && none.stderr.contains("the profile has no config.json; give the database key with --key"), "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("a.png").path))
    }

    @Test("import says what render says, and refuses to keep unknown sides for good: --me later imports them right")
    func importWarnsAndLearnsMe() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        // msgstore.db away from its Media folder: the missing photos are warnings, as in render.
        try FileManager.default.copyItem(atPath: Self.whatsapp + "/msgstore.db", toPath: dir.appendingPathComponent("msgstore.db").path)
        let db = dir.appendingPathComponent("w.sqlite").path
        let w = try Tool.run(["import", "msgstore.db", "--db", db], in: dir)
        #expect(w.status == 0, "\(w.stderr)")
        #expect(w.stderr.contains("warning: msgstore.db: message _id 3: photo") && w.stderr.contains("give it with --media"), "\(w.stderr)")

        let channel = Self.fixtures + "/discord/Hikers - general [2001].json"
        let store = dir.appendingPathComponent("d.sqlite").path
        let first = try Tool.run(["import", channel, "--db", store])
        #expect(first.status != 0, "a channel whose owner is not known is not stored with every message incoming")
        #expect(
            first.stderr.contains("every message would be stored as incoming") && first.stderr.contains("give --me NAME")
                && first.stderr.contains("Kai (kai)") && first.stderr.contains("--all-incoming"), "\(first.stderr)")
        let second = try Tool.run(["import", channel, "--db", store, "--me", "ann"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(String(decoding: second.stdout, as: UTF8.self).contains("added 4 messages"), "\(String(decoding: second.stdout, as: UTF8.self))")
        let out = dir.appendingPathComponent("c.json").path
        let c = try Tool.run(["convert", "--conversation", "1", "--db", store, "-o", out])
        #expect(c.status == 0, "\(c.stderr)")
        let messages = try #require(
            (JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])?["messages"] as? [[String: Any]])
        let sides = messages.map { "\($0["from"] ?? "") \($0["direction"] ?? "")" }
        #expect(sides.contains("501 outgoing") && sides.contains("503 incoming") && !sides.contains("503 outgoing"), "\(sides)")
        // Kept as read, on request.
        let kept = try Tool.run(["import", channel, "--db", dir.appendingPathComponent("k.sqlite").path, "--all-incoming"])
        #expect(kept.status == 0 && kept.stderr.contains("every message is incoming"), "\(kept.stderr)")
    }

    @Test("convert keeps the edit mark of msgstore.db, alone, with --all and through the store")
    func convertKeepsEdits() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        func edited(_ file: String) throws -> [String] {
            let doc = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
            return ((doc?["messages"] as? [[String: Any]]) ?? []).compactMap { $0["edited"] as? String }
        }
        let one = dir.appendingPathComponent("ann.json").path
        #expect(try Tool.run(["convert", Self.whatsapp + "/msgstore.db", "--chat", "Ann Lee", "-o", one]).status == 0)
        #expect(try edited(one) == ["2024-03-01T10:03:20Z"])
        let all = dir.appendingPathComponent("all").path
        let r = try Tool.run(["convert", "--all", Self.whatsapp + "/msgstore.db", "-o", all])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try edited(all + "/Ann Lee.json") == ["2024-03-01T10:03:20Z"])
        let db = dir.appendingPathComponent("s.sqlite").path
        #expect(try Tool.run(["import", Self.whatsapp + "/msgstore.db", "--db", db]).status == 0)
        let stored = dir.appendingPathComponent("stored.json").path
        #expect(try Tool.run(["convert", "--conversation", "1", "--db", db, "-o", stored]).status == 0)
        #expect(try edited(stored) == ["2024-03-01T10:03:20Z"])
    }

    @Test("A minimal Messenger/Instagram message file (chat-miner's test export) is read as Meta's, not refused as BubbleKit JSON")
    func metaByShape() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("chat.json").path
        try Data(
            #"{"messages":[{"sender_name":"Ann","timestamp_ms":1700000000000,"content":"Hello"},{"sender_name":"Ben","timestamp_ms":1700000060000,"content":"Hi Ann"}]}"#
                .utf8
        )
        .write(to: URL(fileURLWithPath: file))
        let out = dir.appendingPathComponent("c.json").path
        let r = try Tool.run(["convert", file, "--me", "Ben", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        let messages = (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])?["messages"] as? [[String: Any]]
        #expect(messages?.map { "\($0["from"] ?? "") \($0["direction"] ?? "") \($0["text"] ?? "")" } == ["Ann incoming Hello", "Ben outgoing Hi Ann"])
        // A BubbleKit file whose text quotes Meta's keys stays BubbleKit's.
        let native = dir.appendingPathComponent("n.json").path
        try Data(#"{"messages":[{"from":"a","date":"2024-01-01T00:00:00Z","text":"\"sender_name\" and \"timestamp_ms\""}]}"#.utf8)
            .write(to: URL(fileURLWithPath: native))
        let n = try Tool.run(["convert", native, "-o", dir.appendingPathComponent("n2.json").path])
        #expect(n.status == 0 && !n.stderr.contains("Messenger"), "\(n.stderr)")
    }

    @Test("An SMS number written nationally that fits no plan of --region matches the contact's international number")
    func nationalNumberOtherRegion() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sms = dir.appendingPathComponent("sms.xml").path
        try Data(
            """
            <?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
            <smses count="2">
              <sms protocol="0" address="07700 900123" date="1700000000000" type="1" body="Landed in Boston" read="1" status="-1" />
              <sms protocol="0" address="07700 900123" date="1700000060000" type="2" body="Welcome!" read="1" status="-1" />
            </smses>
            """.utf8
        ).write(to: URL(fileURLWithPath: sms))
        let vcf = dir.appendingPathComponent("c.vcf").path
        try Data("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Olivia Hart\r\nTEL;TYPE=CELL:+44 7700 900123\r\nEND:VCARD\r\n".utf8).write(to: URL(fileURLWithPath: vcf))
        let out = dir.appendingPathComponent("o.json").path
        let r = try Tool.run(["convert", sms, "--contacts", vcf, "--region", "US", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        #expect(doc?["title"] as? String == "Olivia Hart", "\(doc?["title"] ?? "none") \(r.stderr)")
    }

    @Test("A failed run leaves nothing: no empty -o folder, no new store")
    func nothingLeftBehind() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wrong = String(repeating: "ab", count: 32)
        let r = try Tool.run(["render", "--all", Self.whatsapp + "/msgstore.db.crypt15", "--key", wrong, "-o", "wk/"], in: dir)
        #expect(r.status != 0, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("wk").path), "\(r.stderr)")
        let zip = dir.appendingPathComponent("other.zip").path
        let made = try Command.run(
            "/usr/bin/python3", ["-c", "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],'w'); z.writestr('notes/readme.md','hello'); z.close()", zip])
        #expect(made.status == 0)
        let i = try Tool.run(["import", "other.zip", "--db", "new.sqlite"], in: dir)
        #expect(i.status != 0)
        #expect(i.stderr.contains("is a zip that holds no chat export") && i.stderr.contains("Messenger or Instagram download"), "\(i.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["other.zip"], "\(left)")
        // Refused conversations only: the store this run made goes too.
        let refused = try Tool.run(["import", Self.fixtures + "/discord/Hikers - general [2001].json", "--db", "new.sqlite"], in: dir)
        #expect(refused.status != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["other.zip"])
        // A one-chat export refused after its photo was copied in: the photo and its folders go too.
        let photo = try Tool.run(["import", Self.fixtures + "/whatsapp-ios", "--db", "new.sqlite"], in: dir)
        #expect(photo.status != 0 && photo.stderr.contains("give --me NAME"), "\(photo.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["other.zip"])
    }

    @Test("Error texts: a cut crypt15 says so; counts are singular when one; contact pictures' paths exist")
    func errorTexts() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cut = dir.appendingPathComponent("msgstore.db.crypt15").path
        let whole = try Data(contentsOf: URL(fileURLWithPath: Self.whatsapp + "/msgstore.db.crypt15"))
        try whole.prefix(20).write(to: URL(fileURLWithPath: cut))
        let r = try Tool.run(["render", cut, "--key", AppKeys.whatsapp, "-o", dir.appendingPathComponent("x.png").path])
        #expect(
            r.status != 0 && r.stderr.contains("header: is not a whole WhatsApp crypt14/crypt15 backup header (20 bytes")
                && !r.stderr.contains("line 1"), "\(r.stderr)")

        let db = dir.appendingPathComponent("p.sqlite").path
        let added = try Tool.run(["contacts", "import", Self.fixtures + "/contacts/iphone.vcf", "--db", db, "--region", "US"])
        #expect(added.status == 0, "\(added.stderr)")
        let list = try Self.json(try Tool.run(["contacts", "list", "--json", "--db", db]))
        let avatars = list.compactMap { $0["avatar"] as? String }
        #expect(!avatars.isEmpty)
        for path in avatars { #expect(FileManager.default.fileExists(atPath: path), "\(path)") }

        // One message: "1 message", never "1 messages".
        let one = dir.appendingPathComponent("one.json").path
        try Data(#"{"format":"bubblekit-conversation","version":2,"messages":[{"from":"a","date":"2024-01-01T00:00:00Z","text":"hi"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: one))
        let s = try Tool.run(["import", one, "--db", dir.appendingPathComponent("o.sqlite").path])
        let said = String(decoding: s.stdout, as: UTF8.self)
        #expect(said.contains("added 1 message, 0 attachments") && !said.contains("1 messages"), "\(said) \(s.stderr)")
    }
}

/// The fixtures' keys (scripts/make-app-db-fixtures.py).
enum AppKeys {
    static let whatsapp = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
}
