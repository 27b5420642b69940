import BubbleCore
import BubbleTestSupport
import Foundation
import Testing
@testable import BubbleImport

/// iPhone backups the tests make (`IPhoneSample`, `IPhoneBackupMaker`), encrypted with the real
/// round counts and not, holding the same phone.
@Suite("iPhone backups: Messages, WhatsApp and contacts, encrypted or not", .serialized)
struct IPhoneBackupTests {
    static let photo = Fixtures.path("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg")
    static let password = "correct horse battery staple"

    /// A backup of the sample phone in a new folder.
    static func backup(encrypted: Bool, rounds: Int = 10_000_000) throws -> ScratchFolder {
        let folder = ScratchFolder()
        try IPhoneSample.write(
            to: folder.file("00008110-001A2B3C4D5E6F70"), photo: try Data(contentsOf: URL(fileURLWithPath: photo)),
            password: encrypted ? password : nil, rounds: rounds)
        return folder
    }

    /// Every conversation of the backup, by title.
    static func read(_ path: String, password: String?) throws -> [String: ImportResult] {
        var options = ImportOptions(timeZone: TimeZone(identifier: "UTC")!)
        options.password = password
        let out = Box()
        try Importer.loadEach(path: path, options: options) { result in out.all[result.conversation.title ?? "?"] = result }
        return out.all
    }

    final class Box: @unchecked Sendable { var all: [String: ImportResult] = [:] }

    /// This process's private folders left in the temporary directory.
    static func leftovers() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []).filter { $0.hasPrefix("bubblekit-iphone-\(getpid())-") }
    }

    @Test(
        "encrypted (10,000,000 rounds) and not, the same phone: five conversations, sides, names from the phone's own address book, the photo, a tapback as a reaction, a thread reply quoted, an edit marked; WhatsApp's 1:1 and group with a caption and push names; no status updates",
        arguments: [false, true])
    func wholePhone(encrypted: Bool) throws {
        let folder = try Self.backup(encrypted: encrypted)
        let path = folder.file("00008110-001A2B3C4D5E6F70")
        #expect(try Importer.detect(path: path) == .iphoneBackup)
        let all = try Self.read(path, password: encrypted ? Self.password : nil)
        #expect(Set(all.keys) == ["Ann Lee", "Climbing crew", "+447700900999", "Mira Chen", "Family"], "\(all.keys.sorted())")

        let ann = try #require(all["Ann Lee"]).conversation
        #expect(ann.messages.map(\.text) == ["Are we still on for Saturday?", "Yes! I booked the wall for 10", "The view from the top", "Bring the blue rope"])
        #expect(ann.messages.map(\.direction) == [.incoming, .outgoing, .incoming, .incoming])
        #expect(ann.participants.first { $0.id != "me" }?.name == "Ann Lee", "named from the phone's address book (07700 900123 read in GB)")
        let photo = try #require(ann.messages[2].images.first)
        #expect(
            FileManager.default.contents(atPath: photo.path ?? "") == (try Data(contentsOf: URL(fileURLWithPath: Self.photo))), "the photo, decrypted whole")
        #expect(ann.messages[2].reactions.map(\.emoji) == ["❤️"] && ann.messages[2].reactions.first?.senders == ["me"])
        #expect(ann.messages[3].reply?.text == "Are we still on for Saturday?", "the thread reply quotes its original")
        #expect(ann.messages[1].edited != nil && ann.messages[0].edited == nil)

        let crew = try #require(all["Climbing crew"]).conversation
        #expect(crew.messages.map(\.text) == ["Who is driving?", "Me, pick-up at 9", "I will bring snacks"])
        #expect(Set(crew.participants.map(\.name)) == ["Me", "Ann Lee", "Ben Okafor"], "\(crew.participants.map(\.name))")
        #expect(try #require(all["+447700900999"]).conversation.messages.map(\.text) == ["Your parcel is at the depot"])

        let mira = try #require(all["Mira Chen"]).conversation
        #expect(mira.messages.map(\.text) == ["Did you get home ok?", "Sunset at the pier", "Gorgeous sky"])
        #expect(mira.messages.map(\.direction) == [.incoming, .outgoing, .incoming])
        #expect(mira.messages[1].images.first.map { FileManager.default.fileExists(atPath: $0.path ?? "") } == true, "the WhatsApp photo, with its caption")
        #expect(mira.messages[2].spans.contains { $0.style == .bold }, "WhatsApp's *bold*")
        let family = try #require(all["Family"]).conversation
        #expect(family.messages.map(\.text) == ["Sunday lunch at ours?", "I will bring the pie", "Count me in"])
        let names = Dictionary(family.participants.map { ($0.id, $0.name) }) { a, _ in a }
        #expect(family.messages.map { names[$0.sender ?? ""] ?? "?" } == ["Dad 🧔", "Grandma", "Me"], "push names, else the group's own")
        #expect(!all.values.contains { $0.conversation.messages.contains { $0.text == "a status update" } })
        #expect(Self.leftovers().isEmpty, "decrypted files removed: \(Self.leftovers())")
    }

    @Test("a wrong password, none, or a damaged keybag: one clear error, nothing handed over, no temporary folder left; an unencrypted backup needs none")
    func wrongPassword() throws {
        let folder = try Self.backup(encrypted: true, rounds: 1_000)
        let path = folder.file("00008110-001A2B3C4D5E6F70")
        for (password, says) in [
            ("Correct horse battery staple", "the password is not this backup's"), ("", "the password is not this backup's"),
            ("correct horse battery staple\n", "the password is not this backup's")
        ] as [(String?, String)] + [(nil, "give its password")] {
            let out = Box()
            var options = ImportOptions()
            options.password = password
            #expect {
                try Importer.loadEach(path: path, options: options) { out.all[$0.conversation.title ?? "?"] = $0 }
            } throws: { ($0 as? ImportError)?.description.contains(says) == true }
            #expect(out.all.isEmpty)
        }
        #expect(Self.leftovers().isEmpty, "\(Self.leftovers())")
        // A keybag cut short names where.
        let plistPath = path + "/Manifest.plist"
        var plist = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: URL(fileURLWithPath: plistPath)), format: nil) as? [String: Any])
        plist["BackupKeyBag"] = (plist["BackupKeyBag"] as! Data).prefix(30)
        try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0).write(to: URL(fileURLWithPath: plistPath))
        #expect { try Self.read(path, password: Self.password) } throws: { ($0 as? ImportError)?.description.contains("BackupKeyBag") == true }
        #expect(Self.leftovers().isEmpty)
    }

    @Test(
        "a file the manifest names under another fileID, or one missing from the backup, is an error naming it; one chat with `chat`; none named is an error saying so"
    )
    func damagedAndOne() throws {
        let folder = try Self.backup(encrypted: false)
        let path = folder.file("00008110-001A2B3C4D5E6F70")
        var options = ImportOptions(timeZone: TimeZone(identifier: "UTC")!)
        options.chat = "Family"
        let one = try Importer.load(path: path, options: options)
        #expect(one.conversation.title == "Family" && one.conversation.messages.count == 3)
        options.chat = nil
        #expect { try Importer.load(path: path, options: options) } throws: { ($0 as? ImportError)?.description.contains("--all") == true }
        options.chat = "Nobody"
        #expect { try Importer.load(path: path, options: options) } throws: {
            ($0 as? ImportError)?.description.contains("no conversation named \"Nobody\"") == true
        }
        // The WhatsApp database's file gone from the backup.
        let id = IPhoneBackupMaker.fileID(IPhoneSample.whatsAppDomain, "ChatStorage.sqlite")
        try FileManager.default.removeItem(atPath: path + "/" + id.prefix(2) + "/" + id)
        #expect { try Self.read(path, password: nil) } throws: { error in
            let text = (error as? ImportError)?.description ?? ""
            return text.contains(id) && text.contains("is missing from the backup")
        }
    }

    @Test(
        "an independent reader agrees: iphone_backup_decrypt (PyPI, in a venv of the test's) opens the generated encrypted backup and gets the same sms.db and photo bytes",
        .enabled(if: ProcessInfo.processInfo.environment["BUBBLEKIT_OFFLINE"] == nil))
    func independentReader() throws {
        let folder = try Self.backup(encrypted: true)
        let path = folder.file("00008110-001A2B3C4D5E6F70")
        let venv = NSTemporaryDirectory() + "/bubblekit-test-ibd-venv"
        if !FileManager.default.fileExists(atPath: venv + "/bin/python") || Self.run([venv + "/bin/python", "-c", "import iphone_backup_decrypt"]).status != 0 {
            try? FileManager.default.removeItem(atPath: venv)
            let made = Self.run(["python3", "-m", "venv", venv])
            try #require(made.status == 0, "python3 -m venv: \(made.output)")
            let pip = Self.run([venv + "/bin/pip", "install", "-q", "iphone-backup-decrypt==0.11.2"])
            try #require(pip.status == 0, "pip install iphone-backup-decrypt (PyPI; set BUBBLEKIT_OFFLINE=1 to skip offline): \(pip.output)")
        }
        let out = folder.file("python-out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let script = """
            import sys
            from iphone_backup_decrypt import EncryptedBackup
            b = EncryptedBackup(backup_directory=sys.argv[1], passphrase=sys.argv[2])
            b.extract_file(relative_path="Library/SMS/sms.db", domain_like="HomeDomain", output_filename=sys.argv[3] + "/sms.db")
            b.extract_file(relative_path="Library/SMS/Attachments/4f/15/7A2C/IMG_2041.jpeg", domain_like="MediaDomain", output_filename=sys.argv[3] + "/photo.jpeg")
            """
        let python = Self.run([venv + "/bin/python", "-c", script, path, Self.password, out])
        try #require(python.status == 0, "iphone_backup_decrypt: \(python.output)")
        // Ours, from the same backup.
        let scratch = folder.file("ours")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let backup = try IPhoneBackup(folder: path, password: Self.password, scratch: scratch)
        let sms = try #require(try backup.entry("HomeDomain", "Library/SMS/sms.db"))
        try backup.extract(sms, to: scratch + "/sms.db")
        #expect(FileManager.default.contents(atPath: scratch + "/sms.db") == FileManager.default.contents(atPath: out + "/sms.db"))
        #expect(FileManager.default.contents(atPath: out + "/photo.jpeg") == (try Data(contentsOf: URL(fileURLWithPath: Self.photo))))
        #expect(backup.device.name == "Sam's iPhone" && backup.encrypted)
    }

    static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
