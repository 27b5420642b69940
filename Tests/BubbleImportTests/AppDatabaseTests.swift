import BubbleCore
import CZlibInflate
import Foundation
import Testing
@testable import BubbleImport

/// The apps' own databases: WhatsApp's msgstore.db (both schemas, crypt14/crypt15 backups) and
/// Signal Desktop's SQLCipher 4 database, from the fixtures scripts/make-app-db-fixtures.py made
/// (the real tools: sqlcipher3 wrote the Signal database, wa-crypt-tools the backups).
@Suite("App databases: WhatsApp msgstore.db, Signal Desktop, signal-export")
struct AppDatabaseTests {
    static let whatsappKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
    static let new = Fixtures.path("appdb/whatsapp-new")
    static let signal = Fixtures.path("appdb/signal")

    static func options(chat: String? = nil, key: DecryptionKey? = nil) -> ImportOptions {
        ImportOptions(chat: chat, timeZone: TimeZone(identifier: "UTC")!, key: key)
    }

    static func load(_ path: String, chat: String? = nil, key: DecryptionKey? = nil) throws -> ImportResult {
        try Importer.load(path: path, options: options(chat: chat, key: key))
    }

    static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: 1_709_287_200 + seconds) }

    // MARK: WhatsApp, normalised schema

    @Test("msgstore.db (normalised schema): names from wa.db, formatting, reply, reaction, calls, media, edits, deletions")
    func whatsappNew() throws {
        let r = try Self.load(Self.new + "/msgstore.db", chat: "Ann Lee")
        #expect(r.format == .whatsappDatabase)
        let c = r.conversation
        #expect(c.title == "Ann Lee")
        #expect(c.participants.map(\.name) == ["Zoë", "Ann Lee"])  // the owner's push name from props
        let ann = "491701234567@s.whatsapp.net"
        let m = c.messages
        #expect(m.count == 15)  // 13 messages + 2 calls
        #expect(m[0].sender == ann && m[0].direction == .incoming && m[0].date == Self.date(0))
        #expect(m[0].text == "Hi there, see this")
        #expect(m[0].spans == [TextSpan(.bold, 3..<8), TextSpan(.italic, 14..<18)])
        #expect(m[1].direction == .outgoing && m[1].status == .read)
        #expect(m[1].reactions == [Reaction(emoji: "❤️", count: 1, senders: [ann])])
        // Message 1's reaction was taken back (an empty reaction): none left.
        #expect(m[0].reactions.isEmpty)
        #expect(m[2].kind == .system && m[2].text == "Voice call · 2:05" && m[2].date == Self.date(90))
        #expect(m[3].images.count == 1 && m[3].text == "The beach 🏖")
        #expect(m[3].images[0].path?.hasSuffix("Media/WhatsApp Images/IMG-20240301-WA0001.jpg") == true)
        #expect(FileManager.default.fileExists(atPath: m[3].images[0].path!))
        #expect(m[4].reply?.id == "1" && m[4].reply?.sender == ann && m[4].reply?.text == "Hi there, see this")
        #expect(m[4].edited == Self.date(200))
        #expect(m[5].attachment?.kind == .voice && m[5].attachment?.duration == 3.2)
        #expect(m[6].attachment?.kind == .deleted)
        #expect(m[7].attachment?.kind == .location && m[7].attachment?.title == "Brandenburger Tor, Pariser Platz, Berlin")
        #expect(m[7].attachment?.latitude == 52.516275)
        #expect(m[8].attachment?.kind == .viewOnce)
        // The document is not in the Media folder: a placeholder with its name and pages, and a warning.
        #expect(m[9].attachment?.kind == .document && m[9].attachment?.fileName == "Trip plan.pdf" && m[9].attachment?.pageCount == 2)
        #expect(m[9].text == nil)  // its caption was only its name
        #expect(r.missingMedia == 1)
        #expect(r.warnings.contains { $0.location == "message _id 9" && $0.why.contains("not in the Media folder") })
        #expect(m[10].images.first?.sticker == true)
        #expect(m[11].attachment?.kind == .poll && m[11].attachment?.title == "Dinner where?")
        #expect(m[11].attachment?.answers == [PollAnswer(text: "Pizza", votes: 2), PollAnswer(text: "Sushi", votes: 1)])
        #expect(m[12].kind == .system && m[12].text == "Missed video call")
        #expect(m[13].attachment?.kind == .contact && m[13].attachment?.title == "Kai Weber")
        #expect(m[14].text == "code and gone" && m[14].status == .delivered)
        #expect(m[14].spans.map(\.style) == [.pre, .strike])
    }

    @Test("A group: sender names (address book, WhatsApp name, number), events as lines, a reply to the owner")
    func whatsappGroup() throws {
        let r = try Self.load(Self.new + "/msgstore.db", chat: "Family 👪")
        let m = r.conversation.messages
        #expect(r.conversation.title == "Family 👪")
        #expect(Set(r.conversation.participants.map(\.name)) == ["Zoë", "Ben", "+15550102000"])
        #expect(
            m.map { $0.kind == .system ? "· " + ($0.text ?? "") : "\($0.sender ?? ""): \($0.text ?? "")" } == [
                "· Ben created group “Family 👪”",
                "· Ben added +15550102000",
                "491709876543@s.whatsapp.net: Welcome!",
                "15550102000@s.whatsapp.net: Thanks all",
                "me: 👋",
                "· Ben changed the group name from “Family”",
                "15550102000@s.whatsapp.net: Back to you"
            ])
        #expect(m[6].reply?.sender == "me" && m[6].reply?.text == "👋")
        // The last message's sender is a LID (205599342211987@lid) that jid_map ties to Kai's number.
    }

    @Test("Several chats: an error listing them; a number picks a chat; status updates are no chat; --all reads each")
    func whatsappChats() throws {
        #expect {
            try Self.load(Self.new + "/msgstore.db")
        } throws: { e in
            let d = "\(e)"
            return d.contains("holds 2 chats") && d.contains("Ann Lee [491701234567@s.whatsapp.net] (13 messages)")
                && d.contains("Family 👪 [120363025246125486@g.us] (7 messages)") && !d.contains("status@broadcast")
        }
        #expect(try Self.load(Self.new + "/msgstore.db", chat: "+49 170 1234567").conversation.title == "Ann Lee")
        var seen: [String] = []
        try Importer.loadEach(path: Self.new + "/msgstore.db", options: Self.options()) {
            seen.append("\($0.conversation.title ?? "") \($0.conversation.messages.count)")
        }
        #expect(seen == ["Ann Lee 15", "Family 👪 7"])
    }

    @Test("Streamed as read (how the store imports): the same messages, replies with their quotes, for WhatsApp and Signal")
    func streamed() throws {
        for (path, chat) in [
            (Self.new + "/msgstore.db", "Ann Lee"), (Self.new + "/msgstore.db", "Family 👪"),
            (Fixtures.path("appdb/whatsapp-legacy/msgstore.db"), "491701234567@s.whatsapp.net"), (Self.signal, "Ann Lee")
        ] {
            var got: [Message] = []
            let r = try Importer.load(path: path, options: Self.options(chat: chat), messages: { got.append($0) })
            #expect(r.conversation.messages.isEmpty)
            let whole = try Self.load(path, chat: chat).conversation.messages
            #expect(got.count == whole.count && got.contains { $0.reply != nil }, "\(path) \(chat)")
            #expect(zip(got, whole).allSatisfy { $0.text == $1.text && $0.reply == $1.reply && $0.sender == $1.sender }, "\(path) \(chat)")
        }
    }

    @Test("Legacy schema (messages, messages_quotes, chat_list): text, photo by name, quote, location, deletion, group event")
    func whatsappLegacy() throws {
        let path = Fixtures.path("appdb/whatsapp-legacy/msgstore.db")
        let m = try Self.load(path, chat: "491701234567@s.whatsapp.net").conversation.messages
        #expect(m.count == 6)
        #expect(m[0].text == "Old times" && m[0].spans == [TextSpan(.bold, 4..<9)])
        #expect(m[1].direction == .outgoing && m[1].status == .read)
        #expect(m[2].images.first?.path?.hasSuffix("WhatsApp Images/IMG-20140301-WA0001.jpg") == true && m[2].text == "Then")
        #expect(m[3].reply?.id == "2" && m[3].reply?.text == "Old times")
        #expect(m[4].attachment?.kind == .location && m[4].attachment?.title == "Tour Eiffel")
        #expect(m[5].attachment?.kind == .deleted)
        let group = try Self.load(path, chat: "Old group").conversation.messages
        #expect(group.map(\.text) == ["Me created group “Old group”", "Hello group", "Hi Ben"])
    }

    // MARK: WhatsApp backups

    @Test("crypt15 with the 64-digit key or encrypted_backup.key, crypt14 with the key file: the same messages as the database")
    func whatsappBackups() throws {
        let plain = try Self.load(Self.new + "/msgstore.db", chat: "Ann Lee").conversation.messages
        for (file, key) in [
            ("msgstore.db.crypt15", DecryptionKey.text(Self.whatsappKey)),
            ("msgstore.db.crypt15", .file(Self.new + "/encrypted_backup.key")),
            ("msgstore.db.crypt14", .file(Self.new + "/key"))
        ] {
            #expect(try Importer.detect(path: Self.new + "/" + file) == .whatsappDatabase)
            let r = try Self.load(Self.new + "/" + file, chat: "Ann Lee", key: key)
            #expect(r.conversation.messages.map(\.text) == plain.map(\.text), "\(file)")
            #expect(r.conversation.messages.map(\.date) == plain.map(\.date), "\(file)")
        }
        let header = try #require(WhatsAppBackup.header(Array(try Data(contentsOf: URL(fileURLWithPath: Self.new + "/msgstore.db.crypt15")).prefix(512))))
        #expect(header.crypt15 && header.iv == Array(0..<16) && header.appVersion == "2.24.9.78" && header.jidSuffix == "67")
    }

    @Test("A wrong key, no key, a crypt14 key for… : one clear error each, nothing left in the temporary folder")
    func whatsappWrongKey() throws {
        let path = Self.new + "/msgstore.db.crypt15"
        let wrong = String(Self.whatsappKey.dropLast()) + "0"
        #expect {
            try Self.load(path, chat: "Ann Lee", key: .text(wrong))
        } throws: { e in
            let d = "\(e)"
            return d.contains("msgstore.db.crypt15") && d.contains("wrong key") && !d.contains("\n")
        }
        #expect { try Self.load(path) } throws: { "\($0)".contains("give its key: --key") }
        #expect { try Self.load(path, key: .text("1234")) } throws: { "\($0)".contains("expected the 64 hex digits") }
        #expect { try Self.load(path, key: .file(Self.new + "/wa.db")) } throws: { "\($0)".contains("is not a WhatsApp key file") }
    }

    @Test("A truncated backup or database: an error naming the file, no crash")
    func whatsappTruncated() throws {
        let scratch = ScratchFolder()
        let full = try Data(contentsOf: URL(fileURLWithPath: Self.new + "/msgstore.db.crypt15"))
        let cut = scratch.write("msgstore.db.crypt15", full.prefix(full.count / 2))
        #expect {
            try Self.load(cut, chat: "Ann Lee", key: .text(Self.whatsappKey))
        } throws: { e in "\(e)".contains("msgstore.db.crypt15: cannot be decrypted") && "\(e)".contains("truncated") }
        let db = try Data(contentsOf: URL(fileURLWithPath: Self.new + "/msgstore.db"))
        let half = scratch.write("msgstore.db", db.prefix(db.count / 3))
        #expect {
            try Self.load(half, chat: "Ann Lee")
        } throws: { e in "\(e)".hasPrefix(half) }
    }

    @Test("The zlib stream cut short is an error, not a loop")
    func inflateCut() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.new + "/msgstore.db"))
        // A stored zlib stream of the database would need zlib to write; the decrypted payload of
        // the backup is one: cut it and inflate.
        let deflated = try #require(Self.deflated(data))
        var bytes = 0
        try Inflater.inflate(deflated, displayPath: "x") { bytes += $0.count }
        #expect(bytes == data.count)
        #expect { try Inflater.inflate(deflated.prefix(deflated.count - 40), displayPath: "cut.db") { _ in } } throws: {
            "\($0)".contains("cut.db: is truncated")
        }
    }

    /// `data` deflated by the test itself (zlib through the same module the importer uses).
    static func deflated(_ data: Data) -> Data? {
        var out = [UInt8](repeating: 0, count: data.count + 1024)
        var size = UInt(out.count)
        let status = data.withUnsafeBytes { compress2(&out, &size, $0.bindMemory(to: UInt8.self).baseAddress, UInt(data.count), 1) }
        return status == 0 ? Data(out.prefix(Int(size))) : nil
    }

    // MARK: Signal Desktop

    @Test("Signal Desktop: SQLCipher 4 decrypted, WAL applied, body ranges in UTF-16 units, a spoiler hidden in its quote, the encrypted photo")
    func signalDesktop() throws {
        #expect(try Importer.detect(path: Self.signal) == .signal)
        #expect(try Importer.detect(path: Self.signal + "/sql/db.sqlite") == .signal)
        let r = try Self.load(Self.signal, chat: "Ann Lee")
        let m = r.conversation.messages
        #expect(r.conversation.participants.map(\.name) == ["Zoë", "Ann Lee"])
        #expect(m.count == 9)
        #expect(m[0].text == "😀 bold and hidden" && m[0].sender == "c-ann")
        // UTF-16 3..<7 ("bold" after a surrogate pair and a space) is UTF-8 5..<9.
        #expect(m[0].spans == [TextSpan(.bold, 5..<9), TextSpan(.spoiler, 14..<20)])
        #expect(m[1].status == .read && m[1].reactions == [Reaction(emoji: "❤️", count: 1, senders: ["c-ann"])])
        #expect(m[2].reply?.id != nil && m[2].reply?.sender == "c-ann")
        #expect(m[2].reply?.text?.contains("hidden") == false, "\(m[2].reply?.text ?? "")")
        let photo = try #require(m[3].images.first?.path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: photo)) == Data(contentsOf: URL(fileURLWithPath: Fixtures.path("media/orientation-1.jpg"))))
        #expect(m[4].text == "Final text" && m[4].edited == Self.date(250))
        #expect(m[5].kind == .system && m[5].text == "Missed video call")
        #expect(m[6].text == "Ann Lee set disappearing messages to 1 hour")
        #expect(m[7].attachment?.kind == .voice && m[7].attachment?.duration == 3.2)
        // The sticker, decrypted from stickers.noindex.
        let sticker = try #require(m[8].images.first)
        #expect(sticker.sticker && r.missingMedia == 0)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: sticker.path!)) == Data(contentsOf: URL(fileURLWithPath: Fixtures.path("media/STK-20211014-WA0005.webp")))
        )
        if let folder = r.attachmentsFolder { try? FileManager.default.removeItem(atPath: folder) }
        // The group's messages are only in the write-ahead log.
        let g = try Self.load(Self.signal, chat: "Climbing 🧗").conversation
        #expect(g.messages.map(\.text) == ["Anyone at 6? @Ann Lee", "Count me in", "Great"])
        #expect(g.messages[0].spans == [TextSpan(.mention, 13..<21, url: "aci-ann")])
        #expect(g.messages.map(\.sender) == ["c-kai", "me", "c-ann"])
    }

    @Test("Signal: a wrong key is one error; an encryptedKey needs the keyring password; a truncated database names its page")
    func signalErrors() throws {
        let scratch = ScratchFolder()
        let profile = scratch.file("Signal")
        try FileManager.default.copyItem(atPath: Self.signal, toPath: profile)
        #expect {
            try Self.load(profile, chat: "Ann Lee", key: .text(String(repeating: "ab", count: 32)))
        } throws: { e in "\(e)".contains("db.sqlite: cannot be decrypted with this key (wrong key") && !"\(e)".contains("\n") }
        // A sealed key: Chromium's safe storage ("v11", PBKDF2-SHA1 1 round, AES-128-CBC) as Linux Signal writes it.
        let sealed = try String(contentsOfFile: Fixtures.path("appdb/signal-sealed-key.txt"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try Data(#"{"encryptedKey": "\#(sealed)", "safeStorageBackend": "gnome_libsecret"}"#.utf8)
            .write(to: URL(fileURLWithPath: profile + "/config.json"))
        #expect { try Self.load(profile, chat: "Ann Lee") } throws: { "\($0)".contains("secret-tool lookup application Signal") }
        #expect { try Self.load(profile, chat: "Ann Lee", key: .text("wrong password")) } throws: { "\($0)".contains("cannot be opened with the password") }
        #expect(try Self.load(profile, chat: "Ann Lee", key: .text("peanuts")).conversation.messages.count == 9)
        // Cut in the middle of page 7: not a whole number of pages.
        let db = try Data(contentsOf: URL(fileURLWithPath: profile + "/sql/db.sqlite"))
        try db.prefix(4096 * 6 + 100).write(to: URL(fileURLWithPath: profile + "/sql/db.sqlite"))
        #expect { try Self.load(profile, key: .text("peanuts")) } throws: { e in "\(e)".contains("db.sqlite: page 7: is truncated") }
        // A damaged page: its HMAC does not match.
        var damaged = [UInt8](db)
        damaged[4096 * 3 + 10] ^= 0xFF
        try Data(damaged).write(to: URL(fileURLWithPath: profile + "/sql/db.sqlite"))
        #expect { try Self.load(profile, key: .text("peanuts")) } throws: { e in "\(e)".contains("page 4 of 10: is damaged") }
    }

    @Test("Signal: a torn last frame of the write-ahead log is left out with a warning, as SQLite does; the rest reads")
    func signalTornWAL() throws {
        let scratch = ScratchFolder()
        let profile = scratch.file("Signal")
        try FileManager.default.copyItem(atPath: Self.signal, toPath: profile)
        let wal = profile + "/sql/db.sqlite-wal"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wal)))
        let frames = (bytes.count - 32) / (24 + 4096)
        #expect(frames >= 1 && bytes.count == 32 + frames * (24 + 4096))
        bytes[32 + (frames - 1) * (24 + 4096) + 24 + 100] ^= 0xFF  // inside the last frame, the commit frame
        try Data(bytes).write(to: URL(fileURLWithPath: wal))
        let r = try Self.load(profile, chat: "Ann Lee")
        #expect(r.conversation.messages.count == 9)
        #expect(
            r.warnings.contains {
                $0.path.hasSuffix("db.sqlite-wal") && $0.location == "frame \(frames)" && $0.why.contains("0 frames before it were applied")
            },
            "\(r.warnings)")
        // The group's messages were only in that commit: none are there.
        #expect { try Self.load(profile, chat: "Climbing 🧗") } throws: { "\($0)".contains("has no conversation") }
    }

    @Test("The page cipher's HMAC key: PBKDF2-HMAC-SHA512, salt XOR 0x3A, 2 rounds, as RFC 8018 defines it (checked against Python's hashlib)")
    func pbkdf2() {
        // hashlib.pbkdf2_hmac("sha512", b"password", bytes(c ^ 0x3a for c in b"salt"), 2, 32).hex()
        #expect(
            SQLCipher.PageCipher.macKey(rawKey: Array("password".utf8), salt: Array("salt".utf8))
                .map { String(format: "%02x", $0) }.joined() == "e86c8780ea72bf2692c09e7f576ece3219799bfacd383d02b38b6c8e4ec85d23")
    }

    @Test("Signal attachments (version 2): a changed byte fails the MAC; the plaintext is cut to its size")
    func signalAttachment() throws {
        let file = [UInt8](
            try Data(contentsOf: URL(fileURLWithPath: Self.signal + "/attachments.noindex/ab/ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"))
        )
        let key = (0..<64).map { UInt8(($0 * 7 + 3) % 256) }
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("media/orientation-1.jpg"))))
        #expect(SignalAttachmentCipher.decrypt(file, localKey: key, size: photo.count) == photo)
        var bad = file
        bad[40] ^= 1
        #expect(SignalAttachmentCipher.decrypt(bad, localKey: key, size: photo.count) == nil)
    }

    // MARK: signal-export

    static let markdown = """
        [2024-03-01 10:00:00] Ann Lee: Hello there
        second line
        (- Me: ❤️ -)
        [2024-03-01 10:01:00] Me: 

        > Hello there

        Replying
        [2024-03-01 10:02:00] Ann Lee: ![IMG_1.jpg](./media/IMG_1.jpg)  
        [2024-03-01 10:03:00] Ann Lee: (This message was deleted)
        [2024-03-01 10:04:00] Ann Lee: 
        (( 😀 ))

        """

    @Test("signal-export chat.md: messages, continuation lines, quote, reaction, photo, deletion, sticker")
    func signalExportMarkdown() throws {
        let scratch = ScratchFolder()
        let md = scratch.write("Ann Lee/chat.md", Self.markdown)
        scratch.write("Ann Lee/media/IMG_1.jpg", try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("media/orientation-1.jpg"))))
        #expect(try Importer.detect(path: md) == .signalExport)
        #expect(try Importer.detect(path: scratch.file("Ann Lee")) == .signalExport)
        let r = try Importer.load(path: scratch.file("Ann Lee"), options: ImportOptions(timeZone: TimeZone(identifier: "Europe/Berlin")!))
        let m = r.conversation.messages
        #expect(r.format == .signalExport && r.conversation.title == "Ann Lee")
        #expect(m.count == 5)
        #expect(m[0].text == "Hello there\nsecond line" && m[0].sender == "Ann Lee" && m[0].date == Date(timeIntervalSince1970: 1_709_283_600))
        #expect(m[0].reactions == [Reaction(emoji: "❤️", count: 1, senders: ["me"])])
        #expect(m[1].direction == .outgoing && m[1].text == "Replying" && m[1].reply?.text == "Hello there")
        #expect(m[2].images.first?.path?.hasSuffix("media/IMG_1.jpg") == true)
        #expect(m[3].attachment?.kind == .deleted)
        #expect(m[4].attachment?.kind == .sticker && m[4].attachment?.title == "😀")
    }

    @Test("A chat.md whose file link is a run of slashes (found by make fuzz: Foundation's pathExtension trapped on it) reads")
    func signalExportFuzzed() throws {
        let scratch = ScratchFolder()
        let md = scratch.write("chat/chat.md", try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("fuzz-signal-export-slashes.md"))))
        let r = try Importer.load(path: md, format: .signalExport, options: Self.options())
        #expect(r.conversation.messages.count == 1)
        #expect(r.missingMedia >= 1)
    }

    @Test("signal-export data.json (one object a line) is read before chat.md; a bad line names itself")
    func signalExportJSON() throws {
        let scratch = ScratchFolder()
        scratch.write("Kai/chat.md", "[2024-03-01 10:00:00] Kai: from markdown\n")
        let json = scratch.write(
            "Kai/data.json",
            """
            {"date": "2024-03-01T10:00:00", "sender": "Kai", "body": "from json", "quote": "", "sticker": null, "reactions": [["Me", "👍"]], "attachments": [], "deleted": false, "call": false, "missed": false}
            {"date": "2024-03-01T10:05:00", "sender": "Me", "body": "", "quote": "", "sticker": null, "reactions": [], "attachments": [], "deleted": false, "call": true, "missed": true}

            """)
        let m = try Importer.load(path: scratch.file("Kai"), options: Self.options()).conversation.messages
        #expect(m.map(\.text) == ["from json", "Missed call"])
        #expect(m[0].reactions.first?.senders == ["me"])
        try Data("{\"date\": \"x\", \"sender\": \"Kai\", \"body\": \"\"}\n".utf8).write(to: URL(fileURLWithPath: json))
        #expect { try Importer.load(path: scratch.file("Kai"), options: Self.options()) } throws: {
            "\($0)".contains("data.json: line 1: is not a signal-export message")
        }
    }
}

/// `Importer.loadEach` (every chat of a backup: `import`, `render --all`) keeps its conversations
/// on disk between reading and handing over; what comes back must be what `load` of that one chat
/// gives, every field (an edit's mark, formatting, a forward were once dropped on the way).
@Suite("Every chat of a backup equals the chat read alone")
struct LoadEachEqualsLoadTests {
    @Test("WhatsApp msgstore.db (new and legacy), Signal Desktop, iMessage, SMS, Telegram, Discord: every field, every message")
    func everyField() throws {
        let utc = TimeZone(identifier: "UTC")!
        let inputs: [(String, DecryptionKey?)] = [
            (Fixtures.path("appdb/whatsapp-new/msgstore.db"), nil), (Fixtures.path("appdb/whatsapp-legacy/msgstore.db"), nil),
            (Fixtures.path("appdb/signal"), nil), (Fixtures.path("imessage/chat.db"), nil), (Fixtures.path("sms/sms-backup.xml"), nil),
            (Fixtures.path("telegram-account/result.json"), nil), (Fixtures.path("discord"), nil)
        ]
        var edited = 0, compared = 0
        for (path, key) in inputs {
            var each: [ImportResult] = []
            _ = try Importer.loadEach(path: path, options: ImportOptions(timeZone: utc, key: key)) { each.append($0) }
            #expect(!each.isEmpty, "\(path)")
            let titles = each.map { $0.conversation.title ?? "" }
            // Two chats of one name (Telegram's two "Family") cannot be chosen by it alone.
            for one in each where titles.filter({ $0 == one.conversation.title }).count == 1 {
                let alone = try Importer.load(path: path, options: ImportOptions(chat: one.conversation.title, timeZone: utc, key: key))
                #expect(one.conversation.messages.count == alone.conversation.messages.count, "\(path) \(one.chatKey ?? "")")
                compared += 1
                // Photos taken out of the export go into each read's own temporary folder.
                func named(_ m: Message) -> Message {
                    var m = m
                    m.images = m.images.map {
                        var i = $0; i.path = i.path.map { ($0 as NSString).lastPathComponent }; return i
                    }
                    return m
                }
                for (a, b) in zip(one.conversation.messages.map(named), alone.conversation.messages.map(named)) where a != b {
                    Issue.record("\(path) \(one.chatKey ?? ""): \(a) ≠ \(b)")
                }
                edited += one.conversation.messages.filter { $0.edited != nil }.count
            }
        }
        #expect(edited >= 2, "the fixtures hold edited messages (WhatsApp, Signal)")
        #expect(compared >= 12)
    }
}
