import BubbleCore
import Foundation
import GRDB
import BubbleTestSupport
import Testing
@testable import BubbleImport

/// Builds a small chat.db with the columns of the real schema that the importer reads (and a few
/// it does not), the way Messages on macOS 13+ fills them.
struct ChatDatabase {
    let scratch = ScratchFolder()
    var path: String { scratch.file("Library/Messages/chat.db") }
    var home: String { scratch.path }

    /// 2023-11-14T22:13:20Z + `seconds`, in Apple-epoch nanoseconds.
    static func nanoseconds(_ seconds: Int64) -> Int64 { (1_700_000_000 - 978_307_200 + seconds) * 1_000_000_000 }

    /// An NSAttributedString in typedstream form, as Messages stores it in `attributedBody`.
    static func attributedBody(_ text: String) -> Data {
        var d = Data([0x04, 0x0B]) + Data("streamtyped".utf8) + Data([0x81, 0xE8, 0x03, 0x84, 0x01, 0x40, 0x84, 0x84, 0x84, 0x12])
        d += Data("NSAttributedString".utf8) + Data([0x00, 0x84, 0x84, 0x08]) + Data("NSObject".utf8)
        d += Data([0x00, 0x85, 0x92, 0x84, 0x84, 0x84, 0x08]) + Data("NSString".utf8) + Data([0x01, 0x94, 0x84, 0x01, 0x2B])
        let utf8 = Data(text.utf8)
        if utf8.count < 0x80 {
            d.append(UInt8(utf8.count))
        } else {
            d += Data([0x81, UInt8(utf8.count & 0xFF), UInt8(utf8.count >> 8)])
        }
        d += utf8 + Data([0x86, 0x84, 0x02, 0x69, 0x49, 0x01, 0x0B, 0x92, 0x84, 0x84, 0x84, 0x0C]) + Data("NSDictionary".utf8)
        return d
    }

    init() throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let photoFolder = scratch.file("Library/Messages/Attachments/ab/11/5E3A/")
        try FileManager.default.createDirectory(atPath: photoFolder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.path("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg"),
            toPath: photoFolder + "IMG_0420.jpeg")
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql: IPhoneSample.messagesSchema + """
                    INSERT INTO handle (ROWID, id, country, service) VALUES
                        (1, '+15550102000', 'us', 'iMessage'), (2, 'ben@example.com', 'us', 'iMessage'), (3, '+15550102000', 'us', 'SMS');
                    INSERT INTO chat (ROWID, guid, style, chat_identifier, service_name, display_name) VALUES
                        (1, 'iMessage;-;+15550102000', 45, '+15550102000', 'iMessage', ''),
                        (2, 'SMS;-;+15550102000', 45, '+15550102000', 'SMS', ''),
                        (3, 'iMessage;+;chat612873', 43, 'chat612873', 'iMessage', 'Weekend plans');
                    """)
            func message(
                _ id: Int64, chat: Int64, text: String?, body: Data? = nil, handle: Int64, fromMe: Bool, date: Int64,
                itemType: Int = 0, action: Int = 0, other: Int64 = 0, title: String? = nil, associated: Int = 0,
                associatedGUID: String? = nil, thread: String? = nil, delivered: Bool = false, dateRead: Int64 = 0
            ) throws {
                try db.execute(
                    sql: """
                        INSERT INTO message (ROWID, guid, text, attributedBody, handle_id, service, date, is_from_me, item_type,
                            group_action_type, other_handle, group_title, associated_message_type, associated_message_guid,
                            thread_originator_guid, is_delivered, date_read, is_read)
                        VALUES (?, ?, ?, ?, ?, 'iMessage', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        id, "GUID-\(id)", text, body, handle, date, fromMe, itemType, action, other, title, associated,
                        associatedGUID, thread, delivered, dateRead, dateRead > 0
                    ])
                try db.execute(sql: "INSERT INTO chat_message_join VALUES (?, ?, ?)", arguments: [chat, id, date])
            }
            let ns = Self.nanoseconds
            try message(1, chat: 1, text: "Hey, are you free Saturday?", handle: 1, fromMe: false, date: ns(0))
            try message(
                2, chat: 1, text: nil, body: Self.attributedBody("Yes — what's up?"), handle: 1, fromMe: true, date: ns(60),
                delivered: true, dateRead: ns(90))
            try message(3, chat: 1, text: "\u{FFFC}Look at this", handle: 1, fromMe: false, date: ns(120))
            try message(
                4, chat: 1, text: "Loved “Look at this”", handle: 1, fromMe: false, date: ns(130), associated: 2000,
                associatedGUID: "p:0/GUID-3")
            try message(5, chat: 1, text: "\u{FFFC}", handle: 1, fromMe: false, date: ns(140), thread: "GUID-1")
            try message(6, chat: 1, text: "\u{FFFC}", handle: 1, fromMe: true, date: ns(150), delivered: true)
            // An SMS fallback chat with the same person, dated in seconds (as before High Sierra).
            try message(7, chat: 2, text: "Sent as SMS", handle: 3, fromMe: false, date: 1_700_000_000 - 978_307_200 + 100)
            try message(8, chat: 3, text: nil, handle: 0, fromMe: true, date: ns(1000), itemType: 2, title: "Weekend plans")
            try message(9, chat: 3, text: nil, handle: 0, fromMe: true, date: ns(1001), itemType: 1, action: 0, other: 2)
            try message(10, chat: 3, text: "Count me in", handle: 2, fromMe: false, date: ns(1002))
            try db.execute(
                sql: """
                    INSERT INTO attachment (ROWID, guid, filename, uti, mime_type, transfer_name, total_bytes) VALUES
                        (1, 'AT-1', '~/Library/Messages/Attachments/ab/11/5E3A/IMG_0420.jpeg', 'public.jpeg', 'image/jpeg', 'IMG_0420.jpeg', 714),
                        (2, 'AT-2', '~/Library/Messages/Attachments/cd/12/77B1/IMG_0421.HEIC', 'public.heic', 'image/heic', 'IMG_0421.HEIC', 2100000),
                        (3, 'AT-3', '~/Library/Messages/Attachments/ef/13/9C0D/IMG_0422.jpeg', 'public.jpeg', 'image/jpeg', 'IMG_0422.jpeg', 900000);
                    INSERT INTO message_attachment_join VALUES (3, 1), (5, 2), (6, 3);
                    """)
        }
    }
}

@Suite("iMessage chat.db")
struct IMessageTests {
    @Test("one person over iMessage and SMS: both chats merged by identifier, text from attributedBody, photos, placeholders, tapbacks skipped")
    func personChat() throws {
        let db = try ChatDatabase()
        #expect(try Importer.detect(path: db.path) == .imessage)
        let r = try Importer.load(path: db.path, options: ImportOptions(me: "Leo", chat: "+1 (555) 010-2000", homeFolder: db.home))
        let c = r.conversation
        #expect(c.title == "+15550102000")
        #expect(r.me == "me")
        #expect(c.participants == [Participant(id: "me", name: "Leo"), Participant(id: "+15550102000", name: "+15550102000")])
        let photo = db.scratch.file("Library/Messages/Attachments/ab/11/5E3A/IMG_0420.jpeg")
        // Ids, status, reactions and replies are checked below.
        let plain = c.messages.map { m -> Message in
            var m = m; m.id = nil; m.status = nil; m.statusDate = nil; m.reactions = []; m.reply = nil; return m
        }
        #expect(c.messages.map(\.id) == ["1", "2", "7", "3", "5", "6"])
        // Outgoing: read at date_read, delivered.
        #expect(c.messages[1].status == .read && c.messages[1].statusDate == Date(timeIntervalSince1970: 1_700_000_090))
        #expect(c.messages[5].status == .delivered)
        #expect(c.messages.filter { $0.direction == .incoming }.allSatisfy { $0.status == nil })
        // The ♥ tapback (associated_message_type 2000 on p:0/GUID-3) is a reaction on its target.
        #expect(c.messages[3].reactions == [Reaction(emoji: "❤️", count: 1, senders: ["+15550102000"])])
        #expect(c.messages.filter { !$0.reactions.isEmpty }.count == 1)
        // thread_originator_guid: a reply to the first message.
        #expect(c.messages[4].reply == ReplyReference(id: "1", sender: "+15550102000", text: "Hey, are you free Saturday?"))
        #expect(
            plain == [
                Message(sender: "+15550102000", direction: .incoming, date: Date(timeIntervalSince1970: 1_700_000_000), text: "Hey, are you free Saturday?"),
                Message(sender: "me", direction: .outgoing, date: Date(timeIntervalSince1970: 1_700_000_060), text: "Yes — what's up?"),
                Message(sender: "+15550102000", direction: .incoming, date: Date(timeIntervalSince1970: 1_700_000_100), text: "Sent as SMS"),
                Message(
                    sender: "+15550102000", direction: .incoming, date: Date(timeIntervalSince1970: 1_700_000_120), text: "Look at this",
                    image: ImageAttachment(path: photo, width: 0, height: 0, name: "IMG_0420.jpeg")),
                // Files the copied database names but that are not there: placeholders with what the database says.
                Message(
                    sender: "+15550102000", direction: .incoming, date: Date(timeIntervalSince1970: 1_700_000_140),
                    attachment: MediaAttachment(kind: .photo, fileName: "IMG_0421.HEIC", mimeType: "image/heic", byteSize: 2_100_000)),
                Message(
                    sender: "me", direction: .outgoing, date: Date(timeIntervalSince1970: 1_700_000_150),
                    attachment: MediaAttachment(kind: .photo, fileName: "IMG_0422.jpeg", mimeType: "image/jpeg", byteSize: 900_000))
            ])
        #expect(c.messages[4].shownText == "📷 Photo: IMG_0421.HEIC (not in the export)")
        #expect(r.skipped == 2)  // the two missing files
        #expect(
            r.warnings.map(\.description) == [
                "\(db.path): message ROWID 5: photo ~/Library/Messages/Attachments/cd/12/77B1/IMG_0421.HEIC: no such file "
                    + "(\(db.home)/Library/Messages/Attachments/cd/12/77B1/IMG_0421.HEIC); shown as a placeholder",
                "\(db.path): message ROWID 6: photo ~/Library/Messages/Attachments/ef/13/9C0D/IMG_0422.jpeg: no such file "
                    + "(\(db.home)/Library/Messages/Attachments/ef/13/9C0D/IMG_0422.jpeg); shown as a placeholder"
            ])
    }

    @Test("a copied Messages folder: `~` is the folder above Library/Messages, or photos sit beside chat.db")
    func inferredHome() throws {
        let db = try ChatDatabase()
        let photo = db.scratch.file("Library/Messages/Attachments/ab/11/5E3A/IMG_0420.jpeg")
        // homeFolder nil: chat.db is at HOME/Library/Messages/chat.db, so HOME is the scratch folder.
        let r = try Importer.load(path: db.path, options: ImportOptions(chat: "+15550102000"))
        #expect(r.conversation.messages.compactMap(\.image?.path) == [photo])
        // The Messages folder alone, renamed: photos are found beside chat.db.
        let alone = ScratchFolder()
        try FileManager.default.copyItem(atPath: db.scratch.file("Library/Messages"), toPath: alone.file("backup"))
        let moved = try Importer.load(path: alone.file("backup/chat.db"), options: ImportOptions(chat: "+15550102000"))
        #expect(moved.conversation.messages.compactMap(\.image?.path) == [alone.file("backup/Attachments/ab/11/5E3A/IMG_0420.jpeg")])
    }

    @Test("the committed Fixtures/imessage/chat.db holds what ChatDatabase builds (BUBBLEKIT_REGENERATE_FIXTURES=1 rewrites it)")
    func committedFixture() throws {
        let built = try ChatDatabase()
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/imessage").path
        if ProcessInfo.processInfo.environment["BUBBLEKIT_REGENERATE_FIXTURES"] == "1" {
            try? FileManager.default.removeItem(atPath: source)
            try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
            try DatabaseQueue(path: built.path).vacuum(into: source + "/chat.db")
            try FileManager.default.copyItem(atPath: built.scratch.file("Library/Messages/Attachments"), toPath: source + "/Attachments")
        }
        /// Every row of every table, in rowid order, as text.
        func dump(_ path: String) throws -> [String] {
            var configuration = Configuration()
            configuration.readonly = true
            return try DatabaseQueue(path: path, configuration: configuration).read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
                    .flatMap { table in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY rowid").map { "\(table) \($0)" } }
            }
        }
        #expect(
            try dump(Fixtures.path("imessage/chat.db")) == dump(built.path),
            "run the tests with BUBBLEKIT_REGENERATE_FIXTURES=1 after changing ChatDatabase")
    }

    @Test("a group by display name: group events become system lines")
    func groupChat() throws {
        let db = try ChatDatabase()
        let r = try Importer.load(path: db.path, options: ImportOptions(me: "Leo", chat: "weekend plans", homeFolder: db.home))
        #expect(r.conversation.title == "Weekend plans")
        #expect(r.conversation.messages.map(\.id) == [nil, nil, "10"])  // system lines keep no id
        #expect(
            r.conversation.messages.map { m -> Message in
                var m = m; m.id = nil; return m
            } == [
                .system("Leo named the conversation “Weekend plans”", date: Date(timeIntervalSince1970: 1_700_001_000)),
                .system("Leo added ben@example.com to the conversation", date: Date(timeIntervalSince1970: 1_700_001_001)),
                Message(sender: "ben@example.com", direction: .incoming, date: Date(timeIntervalSince1970: 1_700_001_002), text: "Count me in")
            ])
    }

    @Test("several chats without `chat`, or an unknown one: errors listing them")
    func chatSelection() throws {
        let db = try ChatDatabase()
        // One entry per conversation: the iMessage and the SMS chat with one number are one.
        let listing = "+15550102000 (7 messages in 2 chats: iMessage and SMS); Weekend plans [chat612873] (3 messages)"
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: db.path, options: ImportOptions()) }?.description
                == "\(db.path): table chat: holds 2 conversations (3 chats); pick one with `chat` (display name or chat identifier): \(listing)")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: db.path, options: ImportOptions(chat: "Bob")) }?.description
                == "\(db.path): table chat: has no chat \"Bob\"; chats: \(listing)")
    }

    @Test("opened read-only: the database file is not changed and no journal is left")
    func readOnly() throws {
        let db = try ChatDatabase()
        let before = try Data(contentsOf: URL(fileURLWithPath: db.path))
        _ = try Importer.load(path: db.path, options: ImportOptions(chat: "Weekend plans", homeFolder: db.home))
        #expect(try Data(contentsOf: URL(fileURLWithPath: db.path)) == before)
        let folder = (db.path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["Attachments", "chat.db"])
    }

    @Test("Apple-epoch dates in seconds and nanoseconds; attributedBody with a long text")
    func datesAndBodies() {
        #expect(IMessageImporter.date(appleTime: 721_692_800) == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(IMessageImporter.date(appleTime: 721_692_800_000_000_000) == Date(timeIntervalSince1970: 1_700_000_000))
        let long = String(repeating: "long text ", count: 40)
        #expect(IMessageImporter.attributedBodyText(ChatDatabase.attributedBody(long)) == long)
        #expect(IMessageImporter.attributedBodyText(Data("bplist00 no string here".utf8)) == nil)
    }

    @Test("not a chat.db: a clear error naming the missing table")
    func notAChatDatabase() throws {
        let scratch = ScratchFolder()
        let path = scratch.file("other.db")
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "CREATE TABLE notes (id INTEGER)") }
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: path, options: ImportOptions()) }?.description
                == "\(path): table message: is missing; expected an iMessage chat.db (message, handle, chat, chat_message_join)")
        let truncated = scratch.write("cut.db", try Data(contentsOf: URL(fileURLWithPath: path)).prefix(100))
        let error = importError { () throws(ImportError) in try Importer.load(path: truncated, options: ImportOptions()) }
        #expect(error?.path == truncated)
        #expect(error?.reason.hasPrefix("cannot be read as an iMessage chat.db") == true || error?.reason.hasPrefix("cannot be opened") == true)
    }
}
