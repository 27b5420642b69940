import BubbleTestSupport
import Foundation
import Testing

/// Names for numbers as a user meets them: `--contacts` on render/convert, `bubbles contacts`,
/// `bubbles people`, `--person`, the viewer's People page.
@Suite("bubbles contacts / people / --person", .serialized)
struct PeopleCLITests {
    static let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")
    static func contacts(_ name: String) -> String { fixtures.appendingPathComponent("contacts/" + name).path }

    /// An SMS backup with Ann's number spelled three ways (contact_name "(Unknown)"), a number
    /// two cards share the last digits of, and Kai; a WhatsApp export whose author is Ann's number.
    static func exports(in dir: URL) throws -> (sms: String, whatsapp: String) {
        func sms(_ address: String, _ seconds: Int, _ type: Int, _ body: String) -> String {
            "<sms protocol=\"0\" address=\"\(address)\" date=\"\((1_700_000_000 + seconds) * 1000)\" type=\"\(type)\" body=\"\(body)\" read=\"1\" status=\"-1\" contact_name=\"(Unknown)\" />"
        }
        let xml =
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"5\">\n"
            + [
                sms("(555) 010-2000", 30, 1, "SMS one"), sms("5550102000", 90, 2, "SMS two"), sms("+1 555 010 2000", 200, 1, "SMS three"),
                sms("555-0199", 300, 1, "Who am I?"), sms("(555) 010-3000", 400, 1, "Kai here")
            ].joined(separator: "\n") + "\n</smses>\n"
        let smsPath = dir.appendingPathComponent("sms.xml").path
        try Data(xml.utf8).write(to: URL(fileURLWithPath: smsPath))
        // 2023-11-14 22:13:20Z is the chat.db's first message; WhatsApp's wall times are read in UTC.
        let wa = "14/11/2023, 22:14 - +1 555 010 2000: WhatsApp one\n14/11/2023, 22:17 - Ben: WhatsApp two\n"
        // A phone without her card names the chat by her number.
        let waPath = dir.appendingPathComponent("WhatsApp Chat with +1 555 010 2000.txt").path
        try Data(wa.utf8).write(to: URL(fileURLWithPath: waPath))
        return (smsPath, waPath)
    }

    @Test("--contacts on convert --all: names on bubbles and in file names; a number two cards end with stays a number, with a note")
    func convertAll() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (sms, _) = try Self.exports(in: dir)
        let out = dir.appendingPathComponent("out").path
        let r = try Tool.run([
            "convert", sms, "--all", "-o", out, "--contacts", Self.contacts("iphone.vcf"), "--contacts", Self.contacts("v4.vcf"),
            "--region", "US", "--tz", "UTC"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted()
        #expect(files == ["555-0199.json", "Ann Lee.json", "Kai Weber.json"])
        let ann = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/Ann Lee.json"))) as? [String: Any])
        #expect(ann["title"] as? String == "Ann Lee")
        let people = try #require(ann["participants"] as? [[String: Any]])
        let her = try #require(people.first { $0["id"] as? String != "me" })
        #expect(her["name"] as? String == "Ann Lee")
        // The card's picture went with the file.
        let avatar = try #require(her["avatar"] as? String)
        #expect(
            FileManager.default.contents(atPath: out + "/" + avatar)
                == FileManager.default.contents(atPath: Self.fixtures.appendingPathComponent("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg").path))
        #expect((ann["messages"] as? [Any])?.count == 3)
        let index = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
        #expect(index.contains("Ann Lee") && index.contains("Kai Weber") && !index.contains("(Unknown)"))
        #expect(r.stderr.contains("555-0199: matches Priya Natarajan and Oliver Brooks by its last 7 digits; kept as a number"))
        // --chat takes the contact's name.
        let one = try Tool.run([
            "convert", sms, "--chat", "Ann Lee", "-o", dir.appendingPathComponent("ann.json").path,
            "--contacts", Self.contacts("iphone.vcf"), "--region", "US"
        ])
        #expect(one.status == 0, "\(one.stderr)")
        // A broken contacts file: warnings name the cards; an unreadable one is an error naming it.
        let broken = dir.appendingPathComponent("broken.vcf").path
        try Data("BEGIN:VCARD\nFN:Ann Lee\nTEL:+15550102000\nPHOTO;ENCODING=b:@@@\nEND:VCARD\nBEGIN:VCARD\nFN:Kai Weber\nTEL:+15550103000\n".utf8)
            .write(to: URL(fileURLWithPath: broken))
        let warned = try Tool.run([
            "convert", sms, "--chat", "Ann Lee", "-o", dir.appendingPathComponent("ann2.json").path, "--contacts", broken, "--region", "US"
        ])
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.contains("broken.vcf: card 1 (line 1): \"Ann Lee\": PHOTO (line 4) is not valid base64; card read without its photo"))
        #expect(warned.stderr.contains("broken.vcf: card 2 (line 6): \"Kai Weber\": has no END:VCARD (the file ends inside it); read as far as it went"))
        let notContacts = try Tool.run(["render", sms, "--chat", "Ann Lee", "-o", dir.appendingPathComponent("x.png").path, "--contacts", sms])
        #expect(notContacts.status != 0)
        #expect(notContacts.stderr.contains("sms.xml: is not a contacts file"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.png").path))
    }

    @Test(
        "the store: contacts imported after the messages rename in list --json; people --json; --person merges SMS, iMessage and WhatsApp in order; the People page"
    )
    func store() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (sms, whatsapp) = try Self.exports(in: dir)
        let chatDB = Self.fixtures.appendingPathComponent("imessage/chat.db").path
        let db = dir.appendingPathComponent("s.sqlite").path
        let imported = try Tool.run(["import", sms, chatDB, whatsapp, "--db", db, "--me", "Ben", "--tz", "UTC"])
        #expect(imported.status == 0, "\(imported.stderr)")
        func list() throws -> [[String: Any]] {
            try #require(try JSONSerialization.jsonObject(with: Tool.run(["list", "--db", db, "--json"]).stdout) as? [[String: Any]])
        }
        let before = try list()
        #expect(before.contains { $0["title"] as? String == "(555) 010-2000" })
        #expect(!before.contains { $0["title"] as? String == "Ann Lee" })

        let added = try Tool.run(["contacts", "import", Self.contacts("iphone.vcf"), Self.contacts("android.vcf"), "--db", db, "--region", "US"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.isEmpty == false)
        let after = try list()
        let annChats = after.filter { $0["title"] as? String == "Ann Lee" }
        // SMS, iMessage (with its SMS fallback) and WhatsApp: three conversations with her.
        #expect(Set(annChats.compactMap { $0["format"] as? String }) == ["sms", "imessage", "whatsapp"])
        #expect(after.contains { $0["title"] as? String == "Kai Weber" })
        #expect(!after.contains { ($0["participants"] as? [String])?.contains("(Unknown)") == true })

        let people = try #require(try JSONSerialization.jsonObject(with: Tool.run(["people", "--db", db, "--json"]).stdout) as? [[String: Any]])
        let ann = try #require(people.first { $0["name"] as? String == "Ann Lee" })
        #expect(ann["identities"] as? [String] == ["ann.lee@example.org", "+15550102000"])
        #expect(Set(ann["conversations"] as? [Int] ?? []) == Set(annChats.compactMap { $0["id"] as? Int }))
        #expect(people.allSatisfy { Set($0.keys) == ["name", "identities", "conversations"] })

        // One timeline: every message of the three, in time order, each marked with its app.
        let out = dir.appendingPathComponent("ann.json").path
        let timeline = try Tool.run(["convert", "--person", "Ann Lee", "--db", db, "-o", out, "--tz", "UTC"])
        #expect(timeline.status == 0, "\(timeline.stderr)")
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
        let messages = (file["messages"] as? [[String: Any]] ?? []).filter { $0["type"] as? String != "system" }
        #expect(messages.count == annChats.reduce(0) { $0 + ($1["messageCount"] as? Int ?? 0) })
        let texts = messages.compactMap { $0["text"] as? String }
        #expect(texts.firstIndex(of: "SMS one")! < texts.firstIndex(of: "WhatsApp one")!)
        #expect(texts.firstIndex(of: "WhatsApp one")! < texts.firstIndex(of: "SMS two")!)
        #expect(texts.firstIndex(of: "SMS two")! < texts.firstIndex(of: "SMS three")!)
        #expect(texts.firstIndex(of: "SMS three")! < texts.firstIndex(of: "WhatsApp two")!)
        #expect(Set(messages.compactMap { $0["app"] as? String }) == ["SMS", "iMessage", "WhatsApp"])
        #expect(messages.allSatisfy { $0["app"] != nil })
        let dates = messages.compactMap { $0["date"] as? String }
        #expect(dates == dates.sorted())
        // WhatsApp's "Ben" and SMS's "me" are both the outgoing side.
        #expect(messages.first { $0["text"] as? String == "WhatsApp two" }?["direction"] as? String == "outgoing")
        #expect(messages.first { $0["text"] as? String == "SMS two" }?["direction"] as? String == "outgoing")

        // Merge by hand and split: the CLI's words.
        let merged = try Tool.run(["people", "merge", "Ann Lee", "Kai Weber", "--db", db])
        #expect(merged.status == 0, "\(merged.stderr)")
        let split = try Tool.run(["people", "split", "Ann Lee", "kai@example.org", "+1 555 010 3000", "--db", db])
        #expect(split.status == 0, "\(split.stderr)")
        let wrong = try Tool.run(["people", "split", "Ann Lee", "+49 151 0000000", "--db", db])
        #expect(wrong.status == 1 && wrong.stderr.contains("is not one of Ann Lee's identities"))
        let nobody = try Tool.run(["convert", "--person", "Nobody Known", "--db", db, "-o", dir.appendingPathComponent("n.json").path])
        #expect(nobody.status != 0 && nobody.stderr.contains("--person: Nobody Known: is no person"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("n.json").path))

        // The viewer's People page and its API.
        let server = try LiveServer(binary: Tool.binary, fontconfig: Tool.root.appendingPathComponent("Sources/BubbleText/Fonts/fonts.conf").path, db: db)
        defer { server.stop() }
        let api = try HTTP.request(port: server.port, method: "GET", path: "/api/v1/people")
        #expect(api.status == 200)
        let listed = try #require(try api.json() as? [[String: Any]])
        let annAPI = try #require(listed.first { $0["name"] as? String == "Ann Lee" })
        #expect(Set(annAPI["conversations"] as? [Int] ?? []) == Set(annChats.compactMap { $0["id"] as? Int }))
        #expect((annAPI["avatar"] as? String)?.hasPrefix("/api/v1/attachments/") == true)
        let photo = try HTTP.request(port: server.port, method: "GET", path: annAPI["avatar"] as! String)
        #expect(photo.status == 200 && photo.body.starts(with: [0xFF, 0xD8]))
        let page = try HTTP.request(port: server.port, method: "GET", path: "/people")
        #expect(page.status == 200)
        #expect(page.text.contains("<strong class=\"pn\">Ann Lee</strong>") && page.text.contains("+15550102000"))
        for id in annChats.compactMap({ $0["id"] as? Int }) { #expect(page.text.contains("href=\"/c/\(id)\"")) }
        #expect(page.text.contains("href=\"/people\""))
    }

    static func temp() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-people-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}
