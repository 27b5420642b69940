import BubbleTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Nothing lost (issue 66): an online backup while clients post, a restore that gives the same
/// store, `db check`, a full disk (a file-size limit: `prlimit --fsize`) during an import and a
/// render, and `kill -9` in the middle of importing a phone.
@Suite("Nothing lost: backup, restore, check, a full disk, a crash", .serialized)
struct NothingLostCLITests {
    static let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures").path

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-lost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func ok(_ arguments: [String], in folder: URL? = nil) throws -> String {
        let r = try Tool.run(arguments, in: folder)
        #expect(r.status == 0, "\(arguments.joined(separator: " ")): \(r.stderr)")
        return String(decoding: r.stdout, as: UTF8.self)
    }

    /// A phone's SMS backup: `conversations` chats of `messages` texts and three pictures each
    /// (distinct bytes, ~20 KB), written as SMS Backup & Restore writes it.
    static func phone(_ path: String, conversations: Int, messages: Int) throws {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<smses count=\"0\">\n"
        var t: Int64 = 1_700_000_000_000
        for c in 0..<conversations {
            let address = "+1555" + String(format: "%07d", c)
            for i in 0..<messages {
                t += 60_000
                out +=
                    "<sms protocol=\"0\" address=\"\(address)\" date=\"\(t)\" type=\"\(1 + i % 2)\" "
                    + "body=\"message \(i) of chat \(c) about lanterns and \(i % 7 == 0 ? "kayaks" : "tea")\" read=\"1\" status=\"-1\" />\n"
            }
            for k in 0..<3 {
                t += 60_000
                var bytes = [UInt8](Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")!)
                bytes += [UInt8](repeating: UInt8((c * 3 + k) % 251), count: 20_000) + [UInt8(c % 256), UInt8(k)]
                out +=
                    "<mms date=\"\(t)\" msg_box=\"1\" address=\"\(address)\"><parts><part seq=\"0\" ct=\"image/png\" name=\"p\(c)-\(k).png\" "
                    + "cl=\"p.png\" text=\"null\" data=\"\(Data(bytes).base64EncodedString())\" /></parts><addrs><addr address=\"\(address)\" "
                    + "type=\"137\" charset=\"106\" /></addrs></mms>\n"
            }
        }
        out += "</smses>\n"
        try Data(out.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// What a store holds, as a user sees it: the list, every conversation as JSON, search hits.
    static func contents(_ db: String, in dir: URL) throws -> String {
        var all = try ok(["list", "--db", db, "--json"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(all.utf8)) as? [[String: Any]])
        for c in list {
            let id = try #require(c["id"] as? Int)
            let out = dir.appendingPathComponent("c\(id)-\(UUID().uuidString).json").path
            _ = try ok(["convert", "--conversation", String(id), "--db", db, "-o", out, "--assets", "embed", "--tz", "UTC"])
            all += try String(contentsOfFile: out, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: out)
        }
        all += try ok(["search", "kayaks", "--db", db, "--json", "--limit", "1000"])
        return all
    }

    static func tempFiles(_ dir: URL) -> [String] {
        let walker = FileManager.default.enumerator(atPath: dir.path)
        var found: [String] = []
        while let p = walker?.nextObject() as? String {
            if (p as NSString).lastPathComponent.contains(".tmp") { found.append(p) }
        }
        return found
    }

    @Test("backup while 4 clients post: the copy holds every message acknowledged before it began, passes db check, restores to the same store")
    func backupWhileWriting() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try LiveServer(
            binary: Tool.binary, fontconfig: Tool.root.appendingPathComponent("Sources/BubbleText/Fonts/fonts.conf").path,
            arguments: ["--rate", "0"])
        defer { server.stop() }
        // Imported media too, so the backup has files to link.
        _ = try Self.ok(["import", Self.fixtures + "/appdb/whatsapp-new/msgstore.db", "--db", server.db])
        let made = try server.call("POST", "/api/v1/conversations", ["title": "Live", "participants": ["Me", "Ann"]])
        let c = try #require((made.json as? [String: Any])?["id"] as? Int)
        let acknowledged = Lines()
        let stop = Flag()
        let group = DispatchGroup()
        for k in 0..<4 {
            DispatchQueue.global().async(group: group) {
                var i = 0
                while !stop.isSet {
                    let text = "c\(k) m\(i)"
                    if let r = try? server.call(
                        "POST", "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": text, "sender": k % 2 == 0 ? "me" : "ann"]),
                        r.status == 201 || r.status == 200
                    {
                        acknowledged.add(text)
                    }
                    i += 1
                }
            }
        }
        // Waits for the clients, not for a time (the deadline only stops a broken server hanging the suite).
        let started = Date()
        while acknowledged.count < 40 && Date().timeIntervalSince(started) < 120 { usleep(20_000) }
        try #require(acknowledged.count >= 40, "the clients' posts were not acknowledged: \(server.log)")
        let before = Set(acknowledged.all)
        let backup = dir.appendingPathComponent("backup").path
        let said = try Self.ok(["db", "backup", "--db", server.db, "--to", backup])
        stop.set()
        group.wait()
        #expect(said.contains("every file's SHA-256 in manifest.json"), "\(said)")

        // The backup checks against its manifest, and restores into a store that opens and is sound.
        #expect(try Self.ok(["db", "check", "--backup", backup]).contains("matches the manifest"))
        let restored = dir.appendingPathComponent("restored/r.sqlite").path
        _ = try Self.ok(["db", "restore", backup, "--db", restored])
        let check = try Self.ok(["db", "check", "--db", restored])
        #expect(check.contains(": sound:") && check.contains("0 orphans"), "\(check)")
        let out = dir.appendingPathComponent("live.json").path
        _ = try Self.ok(["convert", "--conversation", String(c), "--db", restored, "-o", out])
        let doc = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        let texts = ((doc?["messages"] as? [[String: Any]]) ?? []).compactMap { $0["text"] as? String }
        let lost = before.subtracting(texts)
        #expect(lost.isEmpty, "\(lost.count) of \(before.count) acknowledged messages are not in the backup")
        // The live conversation as the source has it now begins with what the backup holds; the
        // imported ones are the same.
        let now = dir.appendingPathComponent("now.json").path
        _ = try Self.ok(["convert", "--conversation", String(c), "--db", server.db, "-o", now])
        let current =
            (((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: now))) as? [String: Any])?["messages"]
            as? [[String: Any]]) ?? []).compactMap { $0["text"] as? String }
        #expect(texts.count >= before.count && Array(current.prefix(texts.count)) == texts)
        for id in ["1", "2"] {
            let a = dir.appendingPathComponent("a\(id).json").path, b = dir.appendingPathComponent("b\(id).json").path
            _ = try Self.ok(["convert", "--conversation", id, "--db", server.db, "-o", a, "--assets", "embed", "--tz", "UTC"])
            _ = try Self.ok(["convert", "--conversation", id, "--db", restored, "-o", b, "--assets", "embed", "--tz", "UTC"])
            #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)), "conversation \(id)")
        }
        #expect(try Self.ok(["search", "beach", "--db", restored, "--json"]) == (try Self.ok(["search", "beach", "--db", server.db, "--json"])))
        // Never over an existing store; never from a changed backup.
        let again = try Tool.run(["db", "restore", backup, "--db", restored])
        #expect(again.status != 0 && again.stderr.contains("exists; a backup is restored into a new store"), "\(again.stderr)")
        let manifest = try String(contentsOfFile: backup + "/manifest.json", encoding: .utf8)
        let firstMedia = try #require(
            manifest.firstMatch(of: #/"path" : "(bubbles-media\\/[^"]+)"/#).map { String($0.1).replacingOccurrences(of: "\\/", with: "/") })
        let handle = try #require(FileHandle(forWritingAtPath: backup + "/" + firstMedia))
        handle.seekToEndOfFile(); handle.write(Data([0])); try handle.close()
        let damaged = try Tool.run(["db", "restore", backup, "--db", dir.appendingPathComponent("r2.sqlite").path])
        #expect(damaged.status != 0 && damaged.stderr.contains("is damaged: \(firstMedia): changed since the backup"), "\(damaged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("r2.sqlite").path))
        // A backup whose picture is a link to a file elsewhere, or whose manifest names a path
        // outside it, is refused: a restore reads nothing but the backup's own files.
        try FileManager.default.removeItem(atPath: backup + "/" + firstMedia)
        try FileManager.default.createSymbolicLink(atPath: backup + "/" + firstMedia, withDestinationPath: "/etc/hostname")
        let linked = try Tool.run(["db", "check", "--backup", backup])
        #expect(linked.status != 0 && linked.stderr.contains("\(firstMedia): is not a plain file"), "\(linked.stderr)")
        let escaping = manifest.replacingOccurrences(of: "\"path\" : \"bubbles.sqlite\"", with: "\"path\" : \"..\\/..\\/etc\\/hostname\"")
        #expect(escaping != manifest)
        try Data(escaping.utf8).write(to: URL(fileURLWithPath: backup + "/manifest.json"))
        let outside = try Tool.run(["db", "check", "--backup", backup])
        #expect(outside.status != 0 && outside.stderr.contains("../../etc/hostname: leaves the backup folder"), "\(outside.stderr)")
    }

    @Test(
        "PostgreSQL: db backup writes the portable copy, checked by its manifest; restore into SQLite and into an empty PostgreSQL gives the same conversations"
    )
    func postgresBackup() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pg = try TestPostgres.shared()
        let url = try pg.createDatabase("backup")
        let media = dir.appendingPathComponent("pg-media").path
        _ = try Self.ok(["import", Self.fixtures + "/appdb/whatsapp-new/msgstore.db", Self.fixtures + "/imessage/chat.db", "--db", url, "--store-media", media])
        let backup = dir.appendingPathComponent("pg-backup").path
        let said = try Self.ok(["db", "backup", "--db", url, "--store-media", media, "--to", backup])
        #expect(said.contains("4 conversations, 31 messages"), "\(said)")
        #expect(try Self.ok(["db", "check", "--backup", backup]).contains("matches the manifest"))
        // Laid out as a store, its database whole (no WAL beside it).
        #expect(try FileManager.default.contentsOfDirectory(atPath: backup).sorted() == ["bubbles-media", "bubbles.sqlite", "manifest.json"])
        let sqlite = dir.appendingPathComponent("from-pg.sqlite").path
        _ = try Self.ok(["db", "restore", backup, "--db", sqlite])
        let other = try pg.createDatabase("restored")
        let otherMedia = dir.appendingPathComponent("pg2-media").path
        _ = try Self.ok(["db", "restore", backup, "--db", other, "--store-media", otherMedia])
        let refused = try Tool.run(["db", "restore", backup, "--db", other, "--store-media", otherMedia])
        #expect(refused.status != 0 && refused.stderr.contains("is not empty"), "\(refused.stderr)")
        // Each store numbers its conversations itself: they are compared by their place in the list.
        var stores: [[Data]] = []
        for (db, m) in [(url, media), (sqlite, nil), (other, otherMedia)] as [(String, String?)] {
            let extra = m.map { ["--store-media", $0] } ?? []
            let list = try #require(try JSONSerialization.jsonObject(with: Data(Self.ok(["list", "--db", db, "--json"] + extra).utf8)) as? [[String: Any]])
            var conversations: [Data] = []
            for c in list {
                let out = dir.appendingPathComponent("c-\(UUID().uuidString).json").path
                _ = try Self.ok(["convert", "--conversation", String(c["id"] as? Int ?? 0), "--db", db, "-o", out, "--assets", "embed", "--tz", "UTC"] + extra)
                conversations.append(try Data(contentsOf: URL(fileURLWithPath: out)))
            }
            stores.append(conversations)
        }
        #expect(stores[0].count == 4)
        #expect(stores[1] == stores[0], "PostgreSQL's backup restored into SQLite")
        #expect(stores[2] == stores[0], "PostgreSQL's backup restored into PostgreSQL")
    }

    @Test("db check finds a changed picture, a missing one, an unindexed message and an orphan; --repair removes orphans")
    func check() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("s.sqlite").path
        _ = try Self.ok(["import", Self.fixtures + "/appdb/whatsapp-new/msgstore.db", Self.fixtures + "/imessage/chat.db", "--db", db])
        #expect(try Self.ok(["db", "check", "--db", db]).contains(": sound: 31 messages"))
        let media = dir.appendingPathComponent("s-media").path
        let files = try FileManager.default.subpathsOfDirectory(atPath: media).filter { $0.contains(".") && !$0.hasPrefix(".") }.sorted()
        #expect(files.count >= 2)
        try Data("changed".utf8).write(to: URL(fileURLWithPath: media + "/" + files[0]))
        try FileManager.default.removeItem(atPath: media + "/" + files[1])
        try FileManager.default.createDirectory(atPath: media + "/ab", withIntermediateDirectories: true)
        try Data("left by a crash".utf8).write(to: URL(fileURLWithPath: media + "/ab/.tmp-1-2"))
        let r = try Tool.run(["db", "check", "--db", db])
        #expect(r.status != 0)
        let out = String(decoding: r.stdout, as: UTF8.self)
        #expect(out.contains("\(files[0]): its content is not what its name says"), "\(out)")
        #expect(out.contains("\(files[1]): named by the store but missing"), "\(out)")
        #expect(out.contains("orphan: \(media)/ab/.tmp-1-2") && out.contains("not sound"), "\(out)")
        let repaired = try Tool.run(["db", "check", "--db", db, "--repair"])
        #expect(String(decoding: repaired.stdout, as: UTF8.self).contains("removed: \(media)/ab/.tmp-1-2"))
        #expect(!FileManager.default.fileExists(atPath: media + "/ab/.tmp-1-2"))
    }

    @Test("two backups into the same folder at once: one is made, the other fails naming it, and neither leaves a work folder")
    func concurrentBackups() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("s.sqlite").path
        _ = try Self.ok(["import", Self.fixtures + "/appdb/whatsapp-new/msgstore.db", "--db", db])
        let target = dir.appendingPathComponent("backup").path
        let results = Lines()
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let r = try? Tool.run(["db", "backup", "--db", db, "--to", target])
            results.add("\(r?.status ?? -1) \(r?.stderr ?? "")")
        }
        let outcomes = results.all.sorted()
        #expect(
            outcomes.count == 2 && outcomes[0].hasPrefix("0 ") && !outcomes[1].hasPrefix("0 ")
                && outcomes[1].contains(target), "\(outcomes)")
        #expect(try Self.ok(["db", "check", "--backup", target]).contains("matches the manifest"))
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".tmp") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test(
        "a full disk (file-size limit) during a whole import: a clear error, the store sound, no temporary or orphaned file; the next run completes as a clean import"
    )
    func fullDiskImport() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let phone = dir.appendingPathComponent("phone.xml").path
        try Self.phone(phone, conversations: 40, messages: 120)
        let db = dir.appendingPathComponent("s.sqlite").path
        let limited = try Command.run("/usr/bin/prlimit", ["--fsize=900000", Tool.binary, "import", phone, "--db", db], environment: Tool.environment())
        #expect(limited.status != 0)
        #expect(
            limited.stderrText.contains("s.sqlite: cannot be written") && limited.stderrText.contains("file-size limit")
                && limited.stderrText.contains("stopped:"), "\(limited.stderrText)")
        #expect(
            !limited.stderrText.contains("Fatal error") && limited.stderrText.components(separatedBy: "\n").filter { !$0.isEmpty }.count <= 3,
            "one error, not one per conversation: \(limited.stderrText)")
        #expect(Self.tempFiles(dir).isEmpty, "\(Self.tempFiles(dir))")
        let check = try Self.ok(["db", "check", "--db", db])
        #expect(check.contains(": sound:") && check.contains("0 orphans"), "\(check)")
        // With room: as if it had not happened.
        _ = try Self.ok(["import", phone, "--db", db])
        let clean = dir.appendingPathComponent("clean.sqlite").path
        _ = try Self.ok(["import", phone, "--db", clean])
        #expect(try Self.contents(db, in: dir) == (try Self.contents(clean, in: dir)))
    }

    @Test(
        "a live post and an upload when the disk is full: 507 naming the limit, nothing half-stored, the server keeps serving; with room again every acknowledged message is there"
    )
    func fullDiskLivePost() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("s.sqlite").path
        _ = try Self.ok(["import", Tool.root.appendingPathComponent("Sources/BubbleCore/Samples/demo.json").path, "--db", db])
        let size = (try FileManager.default.attributesOfItem(atPath: db)[.size] as? Int) ?? 0
        let port = HTTP.freePort()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        p.arguments = ["--fsize=\(size + 200_000)", Tool.binary, "serve", "--db", db, "--port", String(port), "--rate", "0"]
        p.environment = Tool.environment()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        var up = false
        for _ in 0..<200 where !up {
            up = ((try? HTTP.request(port: port, method: "GET", path: "/healthz", timeout: 2))?.status ?? 0) > 0; if !up { usleep(50_000) }
        }
        #expect(up)
        func post(_ path: String, _ body: [String: Any]) throws -> HTTP.Reply {
            try HTTP.request(port: port, method: "POST", path: path, body: try JSONSerialization.data(withJSONObject: body))
        }
        let made = try post("/api/v1/conversations", ["title": "Full", "participants": ["Me", "Ann"]])
        let c = try #require((try? made.json() as? [String: Any])?["id"] as? Int)
        var acknowledged: [String] = []
        var refused: HTTP.Reply?
        for i in 0..<2_000 {
            let text = "\(i) " + String(repeating: "x", count: 3_000)
            let r = try post("/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": text, "sender": "me"])
            if r.status == 201 { acknowledged.append(text) } else { refused = r; break }
        }
        let reply = try #require(refused, "the limit was never reached")
        #expect(reply.status == 507 && reply.text.contains("file-size limit"), "\(reply.status) \(reply.text)")
        #expect((try HTTP.request(port: port, method: "GET", path: "/api/v1/conversations")).status == 200, "still serving")
        // An upload bigger than the file-size limit: 507 too, its spool removed.
        let boundary = "bk\(UUID().uuidString)"
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"phone.xml\"\r\nContent-Type: application/xml\r\n\r\n".utf8)
        body += Data(repeating: UInt8(ascii: " "), count: size + 400_000) + Data("\r\n--\(boundary)--\r\n".utf8)
        let upload = try HTTP.request(port: port, method: "POST", path: "/api/v1/imports", body: body, contentType: "multipart/form-data; boundary=\(boundary)")
        #expect(
            upload.status == 507 && upload.text.contains("the upload cannot be saved: no space left on the device, or the file-size limit"),
            "\(upload.status) \(upload.text)")
        #expect((try HTTP.request(port: port, method: "GET", path: "/api/v1/conversations")).status == 200, "still serving")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        // With room: every acknowledged message, none of the refused one, and the store sound.
        #expect(try Self.ok(["db", "check", "--db", db]).contains(": sound:"))
        let out = dir.appendingPathComponent("full.json").path
        _ = try Self.ok(["convert", "--conversation", String(c), "--db", db, "-o", out])
        let texts =
            (((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])?["messages"]
            as? [[String: Any]]) ?? []).compactMap { $0["text"] as? String }
        #expect(texts == acknowledged, "\(texts.count) stored, \(acknowledged.count) acknowledged")
    }

    @Test("a render under the file-size limit: an error naming the output and the limit, no output, no temporary file")
    func fullDiskRender() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("features.pdf").path
        let features = Tool.root.appendingPathComponent("Sources/BubbleCore/Samples/features.json").path
        let r = try Command.run("/usr/bin/prlimit", ["--fsize=20000", Tool.binary, "render", features, "-o", out], environment: Tool.environment())
        #expect(r.status != 0)
        #expect(
            r.stderrText.contains("features.pdf") && (r.stderrText.contains("file-size limit") || r.stderrText.contains("no space left")),
            "\(r.stderrText)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(left.isEmpty, "\(left)")
    }

    @Test("kill -9 in the middle of importing a phone, then a re-run: the same store as a clean import")
    func crashDuringImport() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let phone = dir.appendingPathComponent("phone.xml").path
        // Many small conversations, each its own commit: on a quiet machine 120 of 150 messages
        // were all in before the first `list` saw any (the import ended before it was killed).
        try Self.phone(phone, conversations: 400, messages: 40)
        let db = dir.appendingPathComponent("s.sqlite").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.binary)
        p.arguments = ["import", phone, "--db", db]
        p.environment = Tool.environment()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Killed once some conversations are in (and more are coming). The import is held still
        // (SIGSTOP) while `list` counts them: it cannot run on to its end between the count and
        // the kill, however long `list` takes on a loaded machine (it once did, in CI).
        let deadline = Date().addingTimeInterval(120)
        var stored = 0
        while p.isRunning && Date() < deadline {
            kill(p.processIdentifier, SIGSTOP)
            if let r = try? Tool.run(["list", "--db", db, "--json"]), r.status == 0,
                let list = try? JSONSerialization.jsonObject(with: r.stdout) as? [Any]
            {
                stored = list.count
            }
            if stored >= 10 { break }
            kill(p.processIdentifier, SIGCONT)
            usleep(50_000)
        }
        #expect(p.isRunning, "the import ended before it could be killed (\(stored) stored)")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(stored < 400)
        // What the killed run leaves: whole conversations, maybe files of the one in flight.
        let first = try Tool.run(["db", "check", "--db", db, "--repair"])
        #expect(String(decoding: first.stdout, as: UTF8.self).contains(": sound:"), "\(String(decoding: first.stdout, as: UTF8.self))")
        _ = try Self.ok(["import", phone, "--db", db])
        #expect(try Self.ok(["db", "check", "--db", db]).contains("0 orphans"))
        let clean = dir.appendingPathComponent("clean.sqlite").path
        _ = try Self.ok(["import", phone, "--db", clean])
        #expect(try Self.contents(db, in: dir) == (try Self.contents(clean, in: dir)))
    }
}

/// Lines added from several threads.
final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ s: String) { lock.lock(); lines.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    var count: Int { lock.lock(); defer { lock.unlock() }; return lines.count }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
