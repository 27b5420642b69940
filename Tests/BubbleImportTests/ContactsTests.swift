import BubbleCore
@testable import BubbleImport
import BubblePeople
import Foundation
import GRDB
import Testing

/// Contacts as the phones and Google write them (Fixtures/contacts), and what they do to imports.
@Suite("Contacts: vCard, Google CSV, Mac address book; names on imports")
struct ContactsTests {
    static func read(_ name: String) throws -> ContactsReader.Result { try ContactsReader.read(Fixtures.path("contacts/" + name)) }

    @Test("iPhone vCard 3.0: item1.TEL, type params, folded base64 PHOTO decoded to the very JPEG, escaped text")
    func iphone() throws {
        let r = try Self.read("iphone.vcf")
        #expect(r.warnings.isEmpty)
        #expect(r.contacts.map(\.name) == ["Ann Lee", "Kai Weber"])
        #expect(r.contacts[0].phones == ["+1 (555) 010-2000"])
        #expect(r.contacts[0].emails == ["ann.lee@example.org"])
        #expect(r.contacts[0].photo == FileManager.default.contents(atPath: Fixtures.path("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg")))
        #expect(r.contacts[0].origin.hasSuffix("iphone.vcf: card 1 (line 1)"))
        #expect(r.contacts[1].identities(region: "US") == ["kai@example.org", "+15550103000"])
    }

    @Test("Android vCard 2.1: quoted-printable UTF-8 with a soft line break, bare TYPE params; a card named (Unknown) skipped with a warning")
    func android() throws {
        let r = try Self.read("android.vcf")
        #expect(r.contacts.map(\.name) == ["Zoë Martin", "Mum"])
        #expect(r.contacts[0].phones == ["555-010-4000", "+44 20 7946 0199"])
        #expect(r.contacts[0].identities(region: "US") == ["+15550104000", "+442079460199"])
        #expect(r.contacts[1].identities(region: "US") == ["+4915123456789"])
        #expect(
            r.warnings.map(\.description) == [
                Fixtures.path("contacts/android.vcf") + ": card 3 (line 15): \"(Unknown)\": has no name (FN, N, NICKNAME or ORG); skipped"
            ])
    }

    @Test("vCard 4.0: tel: URIs, a data: URI PNG photo")
    func v4() throws {
        let r = try Self.read("v4.vcf")
        #expect(r.warnings.isEmpty)
        #expect(r.contacts.map(\.name) == ["Priya Natarajan", "Oliver Brooks"])
        #expect(r.contacts[0].identities(region: nil) == ["priya@example.net", "+12125550199"])
        #expect(r.contacts[0].photo.map { Contact.pictureExtension($0) } == "png")
        #expect(r.contacts[1].identities(region: nil) == ["+442075550199"])
    }

    @Test("Google Contacts CSV: names from First/Last, an organisation alone, several numbers in one cell, quoted commas and line breaks")
    func google() throws {
        let r = try Self.read("google.csv")
        #expect(r.warnings.isEmpty)
        #expect(r.contacts.map(\.name) == ["Ann Lee", "Sam Okafor", "Dentist Office"])
        #expect(r.contacts[1].phones == ["(555) 010-6000", "+1 555 010 6001"])
        #expect(r.contacts[0].emails == ["ann.lee@example.org"])
        #expect(r.contacts[2].origin.hasSuffix("google.csv: line 5"))
    }

    @Test("a Mac's AddressBook-v22.abcddb: names, numbers, emails, an inline picture and one in _EXTERNAL_DATA; groups and empty records left out")
    func addressBook() throws {
        let scratch = ScratchFolder()
        let db = scratch.file("AddressBook/Sources/4F1C/AddressBook-v22.abcddb")
        let jpeg = FileManager.default.contents(atPath: Fixtures.path("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg"))!
        scratch.write("AddressBook/Sources/4F1C/.AddressBook-v22_SUPPORT/_EXTERNAL_DATA/9A2B-PIC", jpeg)
        try FileManager.default.createDirectory(atPath: (db as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: db)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE ZABCDRECORD (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZFIRSTNAME VARCHAR, ZMIDDLENAME VARCHAR, ZLASTNAME VARCHAR,
                        ZNICKNAME VARCHAR, ZORGANIZATION VARCHAR, ZNAME VARCHAR, ZUNIQUEID VARCHAR, ZTHUMBNAILIMAGEDATA BLOB, ZIMAGEDATA BLOB);
                    CREATE TABLE ZABCDPHONENUMBER (Z_PK INTEGER PRIMARY KEY, ZOWNER INTEGER, ZFULLNUMBER VARCHAR, ZLABEL VARCHAR);
                    CREATE TABLE ZABCDEMAILADDRESS (Z_PK INTEGER PRIMARY KEY, ZOWNER INTEGER, ZADDRESS VARCHAR, ZADDRESSNORMALIZED VARCHAR, ZLABEL VARCHAR);
                    INSERT INTO ZABCDRECORD (Z_PK, Z_ENT, ZFIRSTNAME, ZLASTNAME, ZORGANIZATION, ZNAME) VALUES
                        (1, 22, 'Ann', 'Lee', NULL, NULL), (2, 22, 'Kai', 'Weber', NULL, NULL), (3, 19, NULL, NULL, NULL, 'Climbing group'),
                        (4, 22, NULL, NULL, 'Dentist Office', NULL), (5, 22, 'Nobody', NULL, NULL, NULL);
                    INSERT INTO ZABCDPHONENUMBER (ZOWNER, ZFULLNUMBER, ZLABEL) VALUES (1, '(555) 010-2000', '_$!<Mobile>!$_'), (4, '555-010-7000', NULL);
                    INSERT INTO ZABCDEMAILADDRESS (ZOWNER, ZADDRESS) VALUES (2, 'Kai@Example.org');
                    """)
            try db.execute(sql: "UPDATE ZABCDRECORD SET ZTHUMBNAILIMAGEDATA = ? WHERE Z_PK = 1", arguments: [Data([0x01]) + jpeg])
            try db.execute(sql: "UPDATE ZABCDRECORD SET ZIMAGEDATA = ? WHERE Z_PK = 2", arguments: [Data([0x02]) + Data("9A2B-PIC".utf8) + Data([0])])
        }
        // The folder, as on a Mac: every account's database under Sources/.
        let r = try ContactsReader.read(scratch.file("AddressBook"))
        #expect(r.contacts.map(\.name) == ["Ann Lee", "Kai Weber", "Dentist Office"])
        #expect(r.contacts[0].phones == ["(555) 010-2000"])
        #expect(r.contacts[0].photo == jpeg)
        #expect(r.contacts[1].emails == ["Kai@Example.org"])
        #expect(r.contacts[1].photo == jpeg)
        #expect(r.contacts[0].origin.hasSuffix("AddressBook-v22.abcddb: ZABCDRECORD Z_PK 1"))
    }

    @Test("a broken vCard: unterminated card, bad base64 photo, 5 MB photo — a warning naming each card, every card read")
    func broken() throws {
        let scratch = ScratchFolder()
        let big = String(repeating: "QUFB", count: 1_700_000)  // 6.8 MB of base64 = 5.1 MB of bytes
        let path = scratch.write(
            "broken.vcf",
            """
            BEGIN:VCARD
            VERSION:3.0
            FN:Ann Lee
            TEL:+1 555 010 2000
            PHOTO;ENCODING=b;TYPE=JPEG:%%%not*base64%%%
            END:VCARD
            BEGIN:VCARD
            VERSION:3.0
            FN:Kai Weber
            TEL:+1 555 010 3000
            PHOTO;ENCODING=b;TYPE=JPEG:\(big)
            END:VCARD
            BEGIN:VCARD
            VERSION:3.0
            FN:Zoë Martin
            TEL:+1 555 010 4000
            BEGIN:VCARD
            VERSION:3.0
            FN:Sam Okafor
            TEL:+1 555 010 6000
            """)
        let r = try ContactsReader.read(path)
        #expect(r.contacts.map(\.name) == ["Ann Lee", "Kai Weber", "Zoë Martin", "Sam Okafor"])
        #expect(r.contacts.allSatisfy { $0.photo == nil && $0.phones.count == 1 })
        #expect(
            r.warnings.map(\.description) == [
                path + ": card 1 (line 1): \"Ann Lee\": PHOTO (line 5) is not valid base64; card read without its photo",
                path + ": card 2 (line 7): \"Kai Weber\": PHOTO (line 11) is 5.1 MB, more than 2 MB; card read without its photo",
                path + ": card 3 (line 13): \"Zoë Martin\": has no END:VCARD before the next card (line 17); read as far as it went",
                path + ": card 4 (line 17): \"Sam Okafor\": has no END:VCARD (the file ends inside it); read as far as it went"
            ])
        // Not a contacts file at all.
        let other = scratch.write("notes.txt", "shopping list\n")
        #expect(
            throws: ImportError(
                path: other, reason: "is not a contacts file; expected vCards (BEGIN:VCARD), a Mac's AddressBook-v22.abcddb or a Google Contacts CSV")
        ) {
            try ContactsReader.read(other)
        }
    }

    static func directory(_ region: String?, pictures: String? = nil) throws -> PeopleDirectory {
        let cards = try ContactsReader.read(["iphone.vcf", "android.vcf", "v4.vcf"].map { Fixtures.path("contacts/" + $0) })
        return ContactsReader.directory(cards.contacts, region: region, pictures: pictures)
    }

    @Test("an SMS backup with three spellings of one number and contact_name (Unknown): one conversation, named, titled, the card's picture")
    func smsBackup() throws {
        let scratch = ScratchFolder()
        func sms(_ address: String, _ date: Int, _ type: Int, _ body: String) -> String {
            "<sms protocol=\"0\" address=\"\(address)\" date=\"\(date)\" type=\"\(type)\" body=\"\(body)\" read=\"1\" status=\"-1\" contact_name=\"(Unknown)\" />"
        }
        let path = scratch.write(
            "sms.xml",
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"4\">\n"
                + [
                    sms("(555) 010-2000", 1_700_000_000_000, 1, "Hi, it's Ann"), sms("5550102000", 1_700_000_100_000, 2, "Hey!"),
                    sms("+1 555 010 2000", 1_700_000_200_000, 1, "Dinner Friday?"), sms("555-0199", 1_700_000_300_000, 1, "Who am I?")
                ].joined(separator: "\n")
                + "\n</smses>\n")
        var options = ImportOptions(timeZone: zone("UTC"))
        options.contacts = try Self.directory("US", pictures: scratch.file("pictures"))
        var results: [ImportResult] = []
        try Importer.loadEach(path: path, options: options) { results.append($0) }
        #expect(results.map(\.conversation.title) == ["Ann Lee", "555-0199"])
        let ann = results[0].conversation
        #expect(ann.messages.count == 3)
        #expect(ann.participants.first { $0.id != "me" }?.name == "Ann Lee")
        let avatar = try #require(ann.participants.first { $0.id != "me" }?.avatar)
        #expect(
            FileManager.default.contents(atPath: avatar)
                == FileManager.default.contents(atPath: Fixtures.path("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg")))
        // "(Unknown)" is never a name: the unmatched number shows itself; its note says why.
        #expect(results[1].conversation.participants.map(\.name).contains("555-0199"))
        #expect(results[1].notes.contains("555-0199: matches Priya Natarajan and Oliver Brooks by its last 7 digits; kept as a number"))
        #expect(!results.flatMap(\.conversation.participants).contains { $0.name == "(Unknown)" })
    }

    @Test("iMessage chat.db: a group without a name titled by its people, senders named by number and email")
    func imessage() throws {
        let chat = try ChatDatabase()
        try DatabaseQueue(path: chat.path).write { db in
            try db.execute(
                sql: """
                    INSERT INTO handle (ROWID, id, country, service) VALUES (4, '+15550103000', 'us', 'iMessage'), (5, '+15550104000', 'us', 'iMessage');
                    INSERT INTO chat (ROWID, guid, style, chat_identifier, service_name, display_name) VALUES (4, 'iMessage;+;chat77', 43, 'chat77', 'iMessage', '');
                    INSERT INTO message (ROWID, guid, text, handle_id, service, date, is_from_me) VALUES
                        (20, 'G-20', 'Ann here', 1, 'iMessage', \(ChatDatabase.nanoseconds(2000)), 0),
                        (21, 'G-21', 'Kai here', 4, 'iMessage', \(ChatDatabase.nanoseconds(2001)), 0),
                        (22, 'G-22', 'Zoë here', 5, 'iMessage', \(ChatDatabase.nanoseconds(2002)), 0);
                    INSERT INTO chat_message_join VALUES (4, 20, 0), (4, 21, 0), (4, 22, 0);
                    """)
        }
        var options = ImportOptions(timeZone: zone("UTC"), homeFolder: chat.home)
        options.contacts = try Self.directory(nil)
        options.chat = "chat77"
        let group = try Importer.load(path: chat.path, options: options)
        #expect(group.conversation.title == "Ann Lee, Kai Weber & Zoë Martin")
        #expect(
            Dictionary(
                uniqueKeysWithValues: group.conversation.messages.compactMap { m in
                    m.sender.map { ($0, group.conversation.participant($0)?.name ?? "") }
                }.map { ($0.0, $0.1) }
            ).values.sorted()
                == ["Ann Lee", "Kai Weber", "Zoë Martin"])
        options.chat = "+15550102000"
        let one = try Importer.load(path: chat.path, options: options)
        #expect(one.conversation.title == "Ann Lee")
    }

    @Test("a WhatsApp export whose authors are numbers: names from the cards (no region: the trailing digits)")
    func whatsapp() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "WhatsApp Chat with +1 555 010 2000.txt",
            """
            14/11/2023, 23:20 - +1 555 010 2000: On WhatsApp now
            14/11/2023, 23:21 - Ben: Welcome!
            14/11/2023, 23:22 - 555-010-3000: Kai too

            """)
        var options = ImportOptions(me: "Ben", timeZone: zone("UTC"))
        options.contacts = try Self.directory(nil)
        let r = try Importer.load(path: path, options: options)
        #expect(Set(r.conversation.participants.map(\.name)) == ["Ben", "Ann Lee", "Kai Weber"])
        #expect(r.conversation.title == "Ann Lee & Kai Weber")
    }
}
