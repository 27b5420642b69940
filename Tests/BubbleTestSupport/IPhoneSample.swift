import Foundation
import GRDB

/// The phone the backup tests generate: Messages (a 1:1 iMessage chat with Ann with a photo, a
/// tapback, a thread reply and an edit; a group; an SMS from a number nobody saved), WhatsApp (a
/// 1:1 with Mira with a captioned photo; the group "Family" whose members are known by their
/// push names) and an address book naming Ann and Mira by national numbers (read in the phone's
/// region, GB).
public enum IPhoneSample {
    /// Messages' tables (`chat.db` on a Mac, `sms.db` on a phone) with the columns the importer reads.
    public static let messagesSchema = """
        CREATE TABLE handle (ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE, id TEXT NOT NULL, country TEXT,
            service TEXT NOT NULL, uncanonicalized_id TEXT, person_centric_id TEXT);
        CREATE TABLE chat (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, style INTEGER,
            state INTEGER, account_id TEXT, properties BLOB, chat_identifier TEXT, service_name TEXT, room_name TEXT,
            account_login TEXT, is_archived INTEGER DEFAULT 0, last_addressed_handle TEXT, display_name TEXT,
            group_id TEXT, is_filtered INTEGER DEFAULT 0, successful_query INTEGER);
        CREATE TABLE message (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL, text TEXT,
            replace INTEGER DEFAULT 0, service_center TEXT, handle_id INTEGER DEFAULT 0, subject TEXT, country TEXT,
            attributedBody BLOB, version INTEGER DEFAULT 0, type INTEGER DEFAULT 0, service TEXT, account TEXT,
            account_guid TEXT, error INTEGER DEFAULT 0, date INTEGER, date_read INTEGER, date_delivered INTEGER,
            is_delivered INTEGER DEFAULT 0, is_finished INTEGER DEFAULT 0, is_emote INTEGER DEFAULT 0,
            is_from_me INTEGER DEFAULT 0, is_empty INTEGER DEFAULT 0, is_read INTEGER DEFAULT 0,
            cache_has_attachments INTEGER DEFAULT 0, item_type INTEGER DEFAULT 0, other_handle INTEGER DEFAULT 0,
            group_title TEXT, group_action_type INTEGER DEFAULT 0, associated_message_guid TEXT,
            associated_message_type INTEGER DEFAULT 0, thread_originator_guid TEXT, date_edited INTEGER DEFAULT 0);
        CREATE TABLE chat_message_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE,
            message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE, message_date INTEGER DEFAULT 0,
            PRIMARY KEY (chat_id, message_id));
        CREATE TABLE chat_handle_join (chat_id INTEGER, handle_id INTEGER, UNIQUE(chat_id, handle_id));
        CREATE TABLE attachment (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL,
            created_date INTEGER DEFAULT 0, start_date INTEGER DEFAULT 0, filename TEXT, uti TEXT, mime_type TEXT,
            transfer_state INTEGER DEFAULT 0, is_outgoing INTEGER DEFAULT 0, user_info BLOB, transfer_name TEXT,
            total_bytes INTEGER DEFAULT 0);
        CREATE TABLE message_attachment_join (message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE,
            attachment_id INTEGER REFERENCES attachment (ROWID) ON DELETE CASCADE, UNIQUE(message_id, attachment_id));
        """

    /// 2024-03-20T18:00:00Z + `seconds`, in Apple-epoch nanoseconds.
    public static func appleNanoseconds(_ seconds: Int64) -> Int64 { (1_710_957_600 - 978_307_200 + seconds) * 1_000_000_000 }

    public static let whatsAppDomain = "AppDomainGroup-group.net.whatsapp.WhatsApp.shared"

    /// The phone's files, `photo` (JPEG bytes) as every picture.
    public static func files(photo: Data) throws -> [IPhoneBackupMaker.File] {
        let dir = NSTemporaryDirectory() + "/bk-iphone-sample-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func database(_ name: String, _ sql: String) throws -> Data {
            let queue = try DatabaseQueue(path: dir + "/" + name)
            try queue.write { try $0.execute(sql: sql) }
            try queue.close()
            return try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
        }
        let ns = appleNanoseconds
        let sms = try database(
            "sms.db",
            messagesSchema + """
                INSERT INTO handle (ROWID, id, country, service) VALUES
                    (1, '+447700900123', 'gb', 'iMessage'), (2, 'ben@example.com', 'gb', 'iMessage'), (3, '+447700900999', 'gb', 'SMS');
                INSERT INTO chat (ROWID, guid, style, chat_identifier, service_name, display_name) VALUES
                    (1, 'iMessage;-;+447700900123', 45, '+447700900123', 'iMessage', ''),
                    (2, 'iMessage;+;chat7001', 43, 'chat7001', 'iMessage', 'Climbing crew'),
                    (3, 'SMS;-;+447700900999', 45, '+447700900999', 'SMS', '');
                INSERT INTO message (ROWID, guid, text, handle_id, service, date, is_from_me, associated_message_type, associated_message_guid,
                                     thread_originator_guid, date_edited) VALUES
                    (1, 'M-1', 'Are we still on for Saturday?', 1, 'iMessage', \(ns(0)), 0, 0, NULL, NULL, 0),
                    (2, 'M-2', 'Yes! I booked the wall for 10', 1, 'iMessage', \(ns(60)), 1, 0, NULL, NULL, \(ns(90))),
                    (3, 'M-3', '\u{FFFC}The view from the top', 1, 'iMessage', \(ns(120)), 0, 0, NULL, NULL, 0),
                    (4, 'M-4', 'Loved “The view from the top”', 0, 'iMessage', \(ns(130)), 1, 2000, 'p:0/M-3', NULL, 0),
                    (5, 'M-5', 'Bring the blue rope', 1, 'iMessage', \(ns(140)), 0, 0, NULL, 'M-1', 0),
                    (6, 'M-6', 'Who is driving?', 2, 'iMessage', \(ns(1000)), 0, 0, NULL, NULL, 0),
                    (7, 'M-7', 'Me, pick-up at 9', 0, 'iMessage', \(ns(1060)), 1, 0, NULL, NULL, 0),
                    (8, 'M-8', 'Your parcel is at the depot', 3, 'SMS', \(ns(2000)), 0, 0, NULL, NULL, 0),
                    (9, 'M-9', 'I will bring snacks', 1, 'iMessage', \(ns(1100)), 0, 0, NULL, NULL, 0);
                INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES
                    (1, 1, \(ns(0))), (1, 2, \(ns(60))), (1, 3, \(ns(120))), (1, 4, \(ns(130))), (1, 5, \(ns(140))),
                    (2, 6, \(ns(1000))), (2, 7, \(ns(1060))), (3, 8, \(ns(2000))), (2, 9, \(ns(1100)));
                INSERT INTO chat_handle_join VALUES (1, 1), (2, 1), (2, 2), (3, 3);
                INSERT INTO attachment (ROWID, guid, filename, uti, mime_type, transfer_name, total_bytes) VALUES
                    (1, 'AT-1', '~/Library/SMS/Attachments/4f/15/7A2C/IMG_2041.jpeg', 'public.jpeg', 'image/jpeg', 'IMG_2041.jpeg', \(photo.count));
                INSERT INTO message_attachment_join VALUES (3, 1);
                """)
        let book = try database(
            "AddressBook.sqlitedb",
            """
            CREATE TABLE ABPerson (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, First TEXT, Last TEXT, Middle TEXT, Organization TEXT, Nickname TEXT);
            CREATE TABLE ABMultiValue (UID INTEGER PRIMARY KEY, record_id INTEGER, property INTEGER, identifier INTEGER, label INTEGER, value TEXT);
            INSERT INTO ABPerson (ROWID, First, Last) VALUES (1, 'Ann', 'Lee'), (2, 'Mira', 'Chen'), (3, 'Ben', 'Okafor');
            INSERT INTO ABMultiValue (UID, record_id, property, value) VALUES
                (1, 1, 3, '07700 900123'), (2, 2, 3, '07700 900456'), (3, 3, 4, 'ben@example.com'), (4, 1, 4, 'ann@example.com');
            """)
        // Seconds since 2001-01-01 (Core Data's reference date).
        let t = { (s: Double) in 1_710_957_600 - 978_307_200 + 5_000 + s }
        let whatsApp = try database(
            "ChatStorage.sqlite",
            """
            CREATE TABLE ZWACHATSESSION (Z_PK INTEGER PRIMARY KEY, ZCONTACTJID VARCHAR, ZPARTNERNAME VARCHAR, ZSESSIONTYPE INTEGER, ZLASTMESSAGEDATE TIMESTAMP);
            CREATE TABLE ZWAMESSAGE (Z_PK INTEGER PRIMARY KEY, ZCHATSESSION INTEGER, ZISFROMME INTEGER, ZMESSAGEDATE TIMESTAMP, ZTEXT VARCHAR,
                ZMESSAGETYPE INTEGER, ZGROUPMEMBER INTEGER, ZFROMJID VARCHAR, ZTOJID VARCHAR, ZSTANZAID VARCHAR, ZMEDIAITEM INTEGER);
            CREATE TABLE ZWAGROUPMEMBER (Z_PK INTEGER PRIMARY KEY, ZCHATSESSION INTEGER, ZMEMBERJID VARCHAR, ZCONTACTNAME VARCHAR);
            CREATE TABLE ZWAMEDIAITEM (Z_PK INTEGER PRIMARY KEY, ZMESSAGE INTEGER, ZMEDIALOCALPATH VARCHAR, ZTITLE VARCHAR, ZMOVIEDURATION INTEGER,
                ZFILESIZE INTEGER, ZLATITUDE FLOAT, ZLONGITUDE FLOAT, ZVCARDNAME VARCHAR);
            CREATE TABLE ZWAPROFILEPUSHNAME (Z_PK INTEGER PRIMARY KEY, ZJID VARCHAR, ZPUSHNAME VARCHAR);
            INSERT INTO ZWACHATSESSION VALUES (1, '447700900456@s.whatsapp.net', 'Mira', 0, \(t(100))),
                (2, '447700900001-1600000000@g.us', 'Family', 1, \(t(300))), (3, 'status@broadcast', NULL, 0, \(t(1)));
            INSERT INTO ZWAGROUPMEMBER VALUES (1, 2, '447700900777@s.whatsapp.net', NULL), (2, 2, '447700900888@s.whatsapp.net', 'Grandma');
            INSERT INTO ZWAPROFILEPUSHNAME VALUES (1, '447700900777@s.whatsapp.net', 'Dad 🧔'), (2, '447700900456@s.whatsapp.net', 'Mira C');
            INSERT INTO ZWAMEDIAITEM VALUES (1, 2, 'Media/447700900456@s.whatsapp.net/a/b/5d1f.jpg', 'Sunset at the pier', NULL, \(photo.count), NULL, NULL, NULL);
            INSERT INTO ZWAMESSAGE VALUES
                (1, 1, 0, \(t(0)), 'Did you get home ok?', 0, NULL, '447700900456@s.whatsapp.net', NULL, 'S1', NULL),
                (2, 1, 1, \(t(60)), NULL, 1, NULL, NULL, '447700900456@s.whatsapp.net', 'S2', 1),
                (3, 1, 0, \(t(100)), 'Gorgeous *sky*', 0, NULL, '447700900456@s.whatsapp.net', NULL, 'S3', NULL),
                (4, 2, 0, \(t(200)), 'Sunday lunch at ours?', 0, 1, NULL, NULL, 'S4', NULL),
                (5, 2, 0, \(t(250)), 'I will bring the pie', 0, 2, NULL, NULL, 'S5', NULL),
                (6, 2, 1, \(t(300)), 'Count me in', 0, NULL, NULL, NULL, 'S6', NULL),
                (7, 3, 0, \(t(1)), 'a status update', 0, NULL, NULL, NULL, 'S7', NULL);
            """)
        return [
            .init("HomeDomain", "Library/SMS/sms.db", sms),
            .init("MediaDomain", "Library/SMS/Attachments/4f/15/7A2C/IMG_2041.jpeg", photo),
            .init("HomeDomain", "Library/AddressBook/AddressBook.sqlitedb", book),
            .init(whatsAppDomain, "ChatStorage.sqlite", whatsApp),
            .init(whatsAppDomain, "Message/Media/447700900456@s.whatsapp.net/a/b/5d1f.jpg", photo),
            .init("HomeDomain", "Library/Preferences/com.apple.springboard.plist", Data("not read".utf8))
        ]
    }

    /// The sample phone's backup in `folder`, encrypted with `password` (nil: not encrypted).
    public static func write(to folder: String, photo: Data, password: String?, rounds: Int = 10_000_000) throws {
        var maker = IPhoneBackupMaker()
        maker.files = try files(photo: photo)
        maker.password = password
        maker.rounds = rounds
        try maker.write(to: folder)
    }
}
