import BubbleTestSupport
import Foundation
import Testing

/// `bubbles` on the apps' own databases: a WhatsApp backup rendered whole, a wrong key, the
/// private temporary files (gone afterwards, also after `kill -9`), a Signal profile imported.
@Suite("bubbles on WhatsApp msgstore.db backups and Signal Desktop", .serialized)
struct AppDatabaseCLITests {
    static let appdb = ImportCLITests.fixtures.appendingPathComponent("appdb")
    static let key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

    /// A temporary folder of the test's own, given to `bubbles` as TMPDIR.
    static func tmp(_ dir: URL) throws -> String {
        let t = dir.appendingPathComponent("tmp").path
        try FileManager.default.createDirectory(atPath: t, withIntermediateDirectories: true)
        return t
    }

    static func leftovers(_ tmp: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []).filter { $0.hasPrefix("bubblekit-") }
    }

    @Test("render --all of a crypt15 backup: one PDF per chat; the decrypted database never left in TMPDIR")
    func renderBackup() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = try Self.tmp(dir)
        let out = dir.appendingPathComponent("out").path
        let r = try Tool.run(
            [
                "render", Self.appdb.appendingPathComponent("whatsapp-new/msgstore.db.crypt15").path, "--key", Self.key,
                "--all", "-o", out, "--tz", "UTC"
            ], environment: ["TMPDIR": tmp])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".pdf") }.sorted()
        #expect(files.count == 2, "\(files)")
        let text = try files.map { try pdftotext(out + "/" + $0) }.joined()
        #expect(text.contains("Hi there, see this") && text.contains("Welcome!"), "\(text.prefix(400))")
        #expect(Self.leftovers(tmp).isEmpty, "\(Self.leftovers(tmp))")
    }

    @Test("a wrong key: exit 1, one line naming the file, nothing written")
    func wrongKey() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = try Self.tmp(dir)
        let output = dir.appendingPathComponent("x.pdf").path
        let r = try Tool.run(
            [
                "render", Self.appdb.appendingPathComponent("whatsapp-new/msgstore.db.crypt15").path, "--chat", "Ann Lee",
                "--key", String(repeating: "0", count: 64), "-o", output
            ], environment: ["TMPDIR": tmp])
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("msgstore.db.crypt15: cannot be decrypted with this key (wrong key"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(Self.leftovers(tmp).isEmpty, "\(Self.leftovers(tmp))")
    }

    @Test("kill -9 while a backup is being read leaves its private folder; the next run removes it")
    func killedRunSwept() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = try Self.tmp(dir)
        // The key file is a FIFO nobody writes: the run stops there, after making its folder.
        let fifo = dir.appendingPathComponent("key").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.binary)
        p.arguments = [
            "convert", Self.appdb.appendingPathComponent("whatsapp-new/msgstore.db.crypt15").path, "--key-file", fifo,
            "--chat", "Ann Lee", "-o", dir.appendingPathComponent("x.json").path
        ]
        p.environment = Tool.environment(["TMPDIR": tmp])
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(60)
        while Self.leftovers(tmp).first(where: { $0.hasPrefix("bubblekit-decrypted-") }) == nil, Date() < deadline { usleep(20_000) }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let left = Self.leftovers(tmp).filter { $0.hasPrefix("bubblekit-decrypted-") }
        #expect(left.count == 1, "\(Self.leftovers(tmp))")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.json").path))
        let r = try Tool.run(
            [
                "convert", Self.appdb.appendingPathComponent("whatsapp-new/msgstore.db.crypt15").path, "--key", Self.key,
                "--chat", "Ann Lee", "-o", dir.appendingPathComponent("y.json").path
            ], environment: ["TMPDIR": tmp])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.leftovers(tmp).isEmpty, "\(Self.leftovers(tmp))")
    }

    @Test("import of a Signal Desktop profile: every conversation stored, the decrypted photo copied into the store's media")
    func importSignal() throws {
        let dir = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = try Self.tmp(dir)
        let db = dir.appendingPathComponent("s.sqlite").path
        let r = try Tool.run(["import", Self.appdb.appendingPathComponent("signal").path, "--db", db, "--tz", "UTC"], environment: ["TMPDIR": tmp])
        #expect(r.status == 0, "\(r.stderr)")
        let list = try Tool.run(["list", "--db", db, "--json"])
        let all = try #require(try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]])
        let counts = Dictionary(all.map { ($0["title"] as! String, $0["messageCount"] as! Int) }, uniquingKeysWith: +)
        #expect(counts == ["Ann Lee": 9, "Climbing 🧗": 3], "\(counts)")
        let media = dir.appendingPathComponent("s-media").path
        let stored = (FileManager.default.enumerator(atPath: media)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".jpg") }
        #expect(!stored.isEmpty, "\(media): \(stored)")
        #expect(Self.leftovers(tmp).isEmpty, "\(Self.leftovers(tmp))")
    }
}
