import BubbleTestSupport
import Foundation
import Testing
import ZIPFoundation

/// `bubbles import BACKUP` and the other commands on an iPhone backup the test makes
/// (`IPhoneSample`): encrypted with the real round counts, the password on standard input.
@Suite("bubbles on an iPhone backup", .serialized)
struct IPhoneBackupCLITests {
    static let photo = AppBrowserTests.fixtures.appendingPathComponent("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg")
    static let password = Data("correct horse battery staple\n".utf8)

    /// A folder with an encrypted backup (`backup`) and a TMPDIR of its own (`tmp`).
    static func made(rounds: Int = 10_000_000) throws -> (dir: URL, backup: String, tmp: String) {
        let dir = try ImportCLITests.folder()
        let backup = dir.appendingPathComponent("00008110-001A2B3C4D5E6F70").path
        try IPhoneSample.write(to: backup, photo: try Data(contentsOf: photo), password: "correct horse battery staple", rounds: rounds)
        return (dir, backup, try AppDatabaseCLITests.tmp(dir))
    }

    static func titles(_ db: String) throws -> [String: Int] {
        let list = try Tool.run(["list", "--db", db, "--json"])
        let all = try #require(try JSONSerialization.jsonObject(with: list.stdout) as? [[String: Any]])
        return Dictionary(all.map { ($0["title"] as! String, $0["messageCount"] as! Int) }, uniquingKeysWith: +)
    }

    @Test(
        "import of an encrypted backup: every conversation of the phone stored, named from its address book, with its photos; a second import adds nothing; decrypted files never left in TMPDIR"
    )
    func importTwice() throws {
        let (dir, backup, tmp) = try Self.made()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("phone.sqlite").path
        let first = try Tool.run(["import", backup, "--db", db, "--password-stdin", "--tz", "UTC"], stdin: Self.password, environment: ["TMPDIR": tmp])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("10,000,000 rounds"), "the slow step is said: \(first.stderr)")
        #expect(first.stderr.contains("Sam's iPhone, 21 March 2024: an encrypted backup") && first.stderr.contains("numbers read as GB"), "\(first.stderr)")
        let expected = ["Ann Lee": 4, "Climbing crew": 3, "+447700900999": 1, "Mira Chen": 3, "Family": 3]
        #expect(try Self.titles(db) == expected)
        let media = dir.appendingPathComponent("phone-media").path
        #expect((FileManager.default.enumerator(atPath: media)?.allObjects as? [String] ?? []).contains { $0.hasSuffix(".jpeg") || $0.hasSuffix(".jpg") })
        #expect(AppDatabaseCLITests.leftovers(tmp).isEmpty, "\(AppDatabaseCLITests.leftovers(tmp))")
        let again = try Tool.run(["import", backup, "--db", db, "--password-stdin", "--tz", "UTC"], stdin: Self.password, environment: ["TMPDIR": tmp])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.titles(db) == expected, "nothing stored twice")
        let said = String(decoding: again.stdout, as: UTF8.self)
        #expect(!said.contains("added 1") && !said.contains("added 3"), "\(said)")
    }

    @Test("a wrong password, none on a pipe, or one on the command line: one clear error, exit 1, nothing stored, nothing left in TMPDIR")
    func refused() throws {
        let (dir, backup, tmp) = try Self.made(rounds: 10_000)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("phone.sqlite").path
        let wrong = try Tool.run(
            ["import", backup, "--db", db, "--password-stdin"], stdin: Data("Correct horse battery staple\n".utf8), environment: ["TMPDIR": tmp])
        #expect(wrong.status == 1 && wrong.stderr.contains("the password is not this backup's"), "\(wrong.status) \(wrong.stderr)")
        let none = try Tool.run(["import", backup, "--db", db], stdin: Data(), environment: ["TMPDIR": tmp])
        #expect(none.status != 0 && none.stderr.contains("--password-stdin"), "\(none.stderr)")
        let empty = try Tool.run(["import", backup, "--db", db, "--password-stdin"], stdin: Data(), environment: ["TMPDIR": tmp])
        #expect(empty.status != 0 && empty.stderr.contains("no password"), "\(empty.stderr)")
        let argument = try Tool.run(["import", backup, "--db", db, "--password", "x"], environment: ["TMPDIR": tmp])
        #expect(argument.status != 0, "no --password option: it would sit in the shell's history")
        #expect((try? Self.titles(db)) ?? [:] == [:])
        #expect(AppDatabaseCLITests.leftovers(tmp).isEmpty, "\(AppDatabaseCLITests.leftovers(tmp))")
    }

    @Test("render --chat and convert --all read a backup as any export; Ctrl-C while the password is worked out leaves no decrypted file")
    func renderAndInterrupt() throws {
        let (dir, backup, tmp) = try Self.made()
        defer { try? FileManager.default.removeItem(at: dir) }
        let png = dir.appendingPathComponent("mira.png").path
        let r = try Tool.run(
            ["render", backup, "--chat", "Mira Chen", "--password-stdin", "-o", png, "--tz", "UTC"], stdin: Self.password, environment: ["TMPDIR": tmp])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.contents(atPath: png)?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
        // The photo of Ann's chat is drawn (an image in the SVG); stats read the backup too.
        let svg = dir.appendingPathComponent("ann.svg").path
        let drawn = try Tool.run(
            ["render", backup, "--chat", "Ann Lee", "--password-stdin", "-o", svg, "--tz", "UTC"], stdin: Self.password, environment: ["TMPDIR": tmp])
        let picture = (try? String(contentsOfFile: svg, encoding: .utf8)) ?? ""
        #expect(drawn.status == 0 && picture.contains("<image"), "\(drawn.stderr)")
        let stats = try Tool.run(["stats", backup, "--chat", "Family", "--password-stdin", "--tz", "UTC"], stdin: Self.password, environment: ["TMPDIR": tmp])
        #expect(stats.status == 0 && String(decoding: stats.stdout, as: UTF8.self).contains("Dad 🧔"), "\(stats.stderr)")
        let out = dir.appendingPathComponent("all").path
        let c = try Tool.run(["convert", backup, "--all", "--password-stdin", "-o", out, "--tz", "UTC"], stdin: Self.password, environment: ["TMPDIR": tmp])
        #expect(c.status == 0, "\(c.stderr)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: out))?.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") } ?? []
        #expect(Set(files) == ["Ann Lee.json", "Climbing crew.json", "+447700900999.json", "Mira Chen.json", "Family.json"], "\(files) \(c.stderr)")
        #expect(AppDatabaseCLITests.leftovers(tmp).isEmpty)

        // Ctrl-C during the 10,000,000 rounds: the private folder (with the decrypted manifest to be) goes.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.binary)
        p.arguments = ["import", backup, "--db", dir.appendingPathComponent("x.sqlite").path, "--password-stdin"]
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = tmp
        p.environment = env
        let input = Pipe(), errors = Pipe()
        p.standardInput = input
        p.standardError = errors
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        try input.fileHandleForWriting.write(contentsOf: Self.password)
        try input.fileHandleForWriting.close()
        let started = Date()
        while Date().timeIntervalSince(started) < 30, AppDatabaseCLITests.leftovers(tmp).first(where: { $0.contains("iphone") }) == nil { usleep(20_000) }
        #expect(!AppDatabaseCLITests.leftovers(tmp).isEmpty, "the private folder exists while the import runs")
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        #expect(p.terminationStatus == 130, "\(p.terminationStatus)")
        #expect(AppDatabaseCLITests.leftovers(tmp).isEmpty, "\(AppDatabaseCLITests.leftovers(tmp))")
    }

    @Test(
        "the web app's upload takes a backup as a .zip of its folder with the password in the form: every conversation stored; a wrong one is a 422 saying so, nothing stored; the server keeps serving"
    )
    func uploadZippedBackup() throws {
        let (dir, backup, _) = try Self.made(rounds: 100_000)
        defer { try? FileManager.default.removeItem(at: dir) }
        let zip = dir.appendingPathComponent("backup.zip")
        try FileManager.default.zipItem(at: URL(fileURLWithPath: backup), to: zip, shouldKeepParent: true)
        let server = try ServedStore(exports: [])
        defer { server.stop() }
        func post(password: String?) throws -> HTTP.Reply {
            let boundary = "bk\(UUID().uuidString)"
            var body = Data()
            if let password {
                body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n\(password)\r\n".utf8)
            }
            body += Data(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"backup.zip\"\r\nContent-Type: application/zip\r\n\r\n".utf8)
            body += try Data(contentsOf: zip) + Data("\r\n--\(boundary)--\r\n".utf8)
            return try HTTP.request(
                port: server.port, method: "POST", path: "/api/v1/imports", body: body, contentType: "multipart/form-data; boundary=\(boundary)")
        }
        let wrong = try post(password: "not it")
        #expect(wrong.status == 422 && wrong.text.contains("the password is not this backup's"), "\(wrong.status) \(wrong.text)")
        let none = try post(password: nil)
        #expect(none.status == 422 && none.text.contains("the backup is encrypted: give its password with the upload"), "\(none.status) \(none.text)")
        #expect((try server.get("/api/v1/conversations").json() as? [Any])?.count == 0)
        let right = try post(password: "correct horse battery staple")
        #expect(right.status == 201, "\(right.status) \(right.text)")
        let titles = ((try server.get("/api/v1/conversations").json() as? [[String: Any]]) ?? []).compactMap { $0["title"] as? String }
        #expect(Set(titles) == ["Ann Lee", "Climbing crew", "+447700900999", "Mira Chen", "Family"], "\(titles)")
        // A "backup" zip with 8 MB of zeros beside its Manifest.plist: refused before it is unpacked.
        let bomb = dir.appendingPathComponent("bomb")
        try FileManager.default.createDirectory(at: bomb.appendingPathComponent("X"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: bomb.appendingPathComponent("X/Manifest.plist"))
        try Data(count: 8 << 20).write(to: bomb.appendingPathComponent("X/zeros"))
        try FileManager.default.removeItem(at: zip)
        try FileManager.default.zipItem(at: bomb.appendingPathComponent("X"), to: zip, shouldKeepParent: true, compressionMethod: .deflate)
        let refused = try post(password: "x")
        #expect(refused.status == 422 && refused.text.contains("zip bomb"), "\(refused.status) \(refused.text)")
        #expect((try server.get("/healthz")).status == 200)
    }
}
