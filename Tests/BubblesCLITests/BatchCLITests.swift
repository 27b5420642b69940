import Foundation
import Testing

/// `bubbles render|convert EXPORT --all -o DIR`: a whole backup, one output per conversation.
@Suite("--all: every conversation of an export", .serialized)
struct BatchCLITests {
    static let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A phone's backup: Ann, a number without a contact, two contacts both called Sam, messages
    /// of the conversations interleaved by date as the app writes them; `extra` more for Ann.
    static func backup(extra: Int = 0, brokenPhotoFor: String? = nil) -> String {
        var rows: [(address: String, name: String, text: String)] = []
        for i in 0..<3 {
            rows.append(("+15550102000", "Ann Lee", "ann message \(i)"))
            rows.append(("+15550109999", "(Unknown)", "unknown number message \(i)"))
            rows.append(("+15550103000", "Sam", "first sam message \(i)"))
            rows.append(("+15550104000", "Sam", "second sam message \(i)"))
        }
        for i in 0..<extra { rows.append(("+15550102000", "Ann Lee", "ann later \(i)")) }
        var xml = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"\(rows.count)\">\n"
        for (k, r) in rows.enumerated() {
            let ms = 1_700_000_000_000 + k * 60_000
            xml +=
                "  <sms protocol=\"0\" address=\"\(r.address)\" date=\"\(ms)\" type=\"\(k % 2 + 1)\" body=\"\(r.text)\" read=\"1\" status=\"-1\" contact_name=\"\(r.name)\" />\n"
        }
        if let brokenPhotoFor {
            // An MMS whose picture is not a picture: drawn as a placeholder, an error with --strict.
            xml +=
                "  <mms date=\"1700009000000\" msg_box=\"1\" address=\"\(brokenPhotoFor)\" contact_name=\"Sam\" m_type=\"132\">\n"
                + "    <parts><part seq=\"0\" ct=\"image/jpeg\" name=\"broken.jpg\" data=\"bm90IGEgcGljdHVyZQ==\" /></parts>\n"
                + "    <addrs><addr address=\"\(brokenPhotoFor)\" type=\"137\" /></addrs>\n  </mms>\n"
        }
        return xml + "</smses>\n"
    }

    static let expected = [
        "Ann Lee (+15550102000)": "ann message", "+15550109999": "unknown number message",
        "Sam (+15550103000)": "first sam message", "Sam (+15550104000)": "second sam message"
    ]

    @Test("an SMS backup: one PDF per conversation with only its messages, same-named contacts apart, an index of all")
    func smsBackupToPDF() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.backup().write(to: dir.appendingPathComponent("sms.xml"), atomically: true, encoding: .utf8)
        let r = try Tool.run(["render", "sms.xml", "--all", "-o", "out", "--tz", "UTC", "--jobs", "2"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("out: 4 conversations written; index.html lists 4"))
        let out = dir.appendingPathComponent("out")
        for (name, marker) in Self.expected {
            let text = try pdftotext(out.appendingPathComponent(name + ".pdf").path)
            #expect(text.components(separatedBy: marker).count - 1 == 3, "\(name)")
            for (other, otherMarker) in Self.expected where other != name && !otherMarker.contains(marker) && !marker.contains(otherMarker) {
                #expect(!text.contains(otherMarker), "\(name) holds \(other)'s messages")
            }
        }
        let index = try String(contentsOf: out.appendingPathComponent("index.html"), encoding: .utf8)
        for name in Self.expected.keys {
            let href = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))!
            #expect(index.contains("<a href=\"\(href).pdf\" rel=\"noopener noreferrer\">\(name)</a>"), "\(name)")
        }
        #expect(index.contains("Content-Security-Policy") && !index.contains("<script"))
        #expect(index.contains("<td class=\"n\">3</td><td>2023-11-14</td>"))
        // JSON of the same backup: exactly each conversation's messages.
        let json = try Tool.run(["convert", "sms.xml", "--all", "-o", "json", "--tz", "UTC"], in: dir)
        #expect(json.status == 0, "\(json.stderr)")
        for (name, marker) in Self.expected {
            let data = try Data(contentsOf: dir.appendingPathComponent("json/\(name).json"))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let texts = (object["messages"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
            #expect(texts == (0..<3).map { "\(marker) \($0)" }, "\(name)")
        }
    }

    @Test("a Telegram full export: every chat, chats of the same name kept apart, --chat several times picks some")
    func telegramAccount() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let export = Self.fixtures.appendingPathComponent("telegram-account/result.json").path
        let r = try Tool.run(["convert", export, "--all", "-o", dir.appendingPathComponent("all").path, "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("all").path).filter {
            $0.hasSuffix(".json") && !$0.hasPrefix(".")
        }
        #expect(Set(files) == ["Climbing crew.json", "Family.json", "Family 2.json", "Mira Chen.json"])
        for file in files {
            let data = try Data(contentsOf: dir.appendingPathComponent("all/" + file))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect((object["messages"] as? [Any])?.isEmpty == false, "\(file)")
            #expect(file.hasPrefix(object["title"] as? String ?? "?"), "\(file)")
        }
        let some = try Tool.run([
            "convert", export, "--all", "--chat", "Mira Chen", "--chat", "Climbing crew", "--chat", "Nobody",
            "-o", dir.appendingPathComponent("some").path
        ])
        #expect(some.status == 0 && some.stderr.contains("--chat Nobody: matches no conversation"))
        let picked = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("some").path).filter {
            $0.hasSuffix(".json") && !$0.hasPrefix(".")
        }
        #expect(Set(picked) == ["Climbing crew.json", "Mira Chen.json"])
        // Without --all, several --chat are refused.
        let refused = try Tool.run(["convert", export, "--chat", "a", "--chat", "b", "-o", dir.appendingPathComponent("x.json").path])
        #expect(refused.status != 0 && refused.stderr.contains("only with --all"))
    }

    @Test("an iMessage chat.db: every chat, each the same as picking it with --chat")
    func iMessage() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = Self.fixtures.appendingPathComponent("imessage/chat.db").path
        let r = try Tool.run(["convert", db, "--all", "-o", dir.appendingPathComponent("all").path, "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("all").path)
            .filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
        #expect(Set(files) == ["+15550102000.json", "Weekend plans.json"])
        func messages(_ path: String) throws -> [String] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            return (object["messages"] as? [[String: Any]] ?? []).map { "\($0["from"] ?? "-") \($0["date"] ?? "-") \($0["text"] ?? "-")" }
        }
        for (file, chat) in [("+15550102000.json", "+15550102000"), ("Weekend plans.json", "Weekend plans")] {
            let one = dir.appendingPathComponent("one-\(chat).json").path
            #expect(try Tool.run(["convert", db, "--chat", chat, "-o", one, "--tz", "UTC"]).status == 0)
            let all = try messages(dir.appendingPathComponent("all/" + file).path)
            let picked = try messages(one)
            #expect(!all.isEmpty && all == picked, "\(file)")
        }
    }

    @Test("a conversation that fails does not stop the others: they are written, the index marks it, the exit status is 3")
    func failureIsolated() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.backup(brokenPhotoFor: "+15550104000").write(to: dir.appendingPathComponent("sms.xml"), atomically: true, encoding: .utf8)
        let r = try Tool.run(["render", "sms.xml", "--all", "-o", "out", "--strict", "--tz", "UTC"], in: dir)
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("error: Sam (+15550104000):") && r.stderr.contains("broken.jpg"))
        #expect(r.stderr.contains("3 conversations written, 1 failed"))
        let out = dir.appendingPathComponent("out")
        for name in ["Ann Lee (+15550102000)", "+15550109999", "Sam (+15550103000)"] {
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(name + ".pdf").path), "\(name)")
        }
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("Sam (+15550104000).pdf").path))
        let index = try String(contentsOf: out.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains("Sam (+15550104000) <span class=\"failed\">failed: "))
        // Nothing half-written is left behind.
        let hidden = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") && $0 != ".bubbles-manifest.json" }
        #expect(hidden.isEmpty, "\(hidden)")
    }

    @Test("--update writes again only the conversation that got new messages")
    func update() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let backup = dir.appendingPathComponent("sms.xml")
        try Self.backup().write(to: backup, atomically: true, encoding: .utf8)
        #expect(try Tool.run(["render", "sms.xml", "--all", "-o", "out", "--format", "html", "--tz", "UTC"], in: dir).status == 0)
        let out = dir.appendingPathComponent("out")
        func stamps() throws -> [String: Date] {
            var s: [String: Date] = [:]
            for name in Self.expected.keys {
                s[name] = try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent(name + ".html").path)[.modificationDate] as? Date
            }
            return s
        }
        let before = try stamps()
        // Pages share one assets folder (fonts written once).
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("assets/fonts").path))
        let page = try String(contentsOf: out.appendingPathComponent("Ann Lee (+15550102000).html"), encoding: .utf8)
        #expect(page.contains("url(assets/fonts/") && !page.contains("url(data:font"))
        Thread.sleep(forTimeInterval: 1.1)
        try Self.backup(extra: 2).write(to: backup, atomically: true, encoding: .utf8)
        let r = try Tool.run(["render", "sms.xml", "--all", "-o", "out", "--format", "html", "--tz", "UTC", "--update"], in: dir)
        #expect(r.status == 0 && r.stderr.contains("1 conversation written, 3 unchanged"), "\(r.stderr)")
        let after = try stamps()
        for name in Self.expected.keys {
            if name.hasPrefix("Ann") {
                #expect(after[name]! > before[name]!, "\(name) not rewritten")
            } else {
                #expect(after[name] == before[name], "\(name) rewritten")
            }
        }
        #expect(try String(contentsOf: out.appendingPathComponent("Ann Lee (+15550102000).html"), encoding: .utf8).contains("ann later 1"))
        // Other options: everything again.
        let dark = try Tool.run(["render", "sms.xml", "--all", "-o", "out", "--format", "html", "--tz", "UTC", "--update", "--dark"], in: dir)
        #expect(dark.stderr.contains("4 conversations written"), "\(dark.stderr)")
    }
}
