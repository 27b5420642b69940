import BubbleCore
import Foundation
import Testing
import ZIPFoundation
@testable import BubbleImport

@Suite("WhatsApp line prefixes")
struct WhatsAppLineTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var line: String
        var style: WhatsAppLine.Style
        var fields: [Int]
        var time: [Int]  // 24-hour h, m, s
        var rest: String
        var testDescription: String { line }
    }

    static let cases: [Case] = [
        Case(line: "12/24/19, 11:23 - Ann: hi", style: .android, fields: [12, 24, 19], time: [11, 23, 0], rest: "Ann: hi"),
        Case(line: "12/24/19, 11:23 PM - Ann: hi", style: .android, fields: [12, 24, 19], time: [23, 23, 0], rest: "Ann: hi"),
        Case(line: "03.08.21, 12:30 - Anna: Hallo", style: .android, fields: [3, 8, 21], time: [12, 30, 0], rest: "Anna: Hallo"),
        Case(line: "2023-12-20, 5:46 p.m. - Priya: ok", style: .android, fields: [2023, 12, 20], time: [17, 46, 0], rest: "Priya: ok"),
        Case(line: "28/3/2025, 9:29 p. m. - Lucía: ¿sí?", style: .android, fields: [28, 3, 2025], time: [21, 29, 0], rest: "Lucía: ¿sí?"),
        Case(line: "28/3/2025, 12:05 a. m. - Lucía: tarde", style: .android, fields: [28, 3, 2025], time: [0, 5, 0], rest: "Lucía: tarde"),
        Case(line: "\u{200E}[14/10/2021, 3:34:09\u{202F}PM] Sam: ok", style: .ios, fields: [14, 10, 2021], time: [15, 34, 9], rest: "Sam: ok"),
        Case(line: "[14.10.21, 15:34:09] Sam: ok", style: .ios, fields: [14, 10, 21], time: [15, 34, 9], rest: "Sam: ok"),
        Case(line: "[2021-10-14, 12:00:00\u{00A0}AM] Sam: midnight", style: .ios, fields: [2021, 10, 14], time: [0, 0, 0], rest: "Sam: midnight"),
        Case(line: "14/10/2021 15:34 - Sam: no comma", style: .android, fields: [14, 10, 2021], time: [15, 34, 0], rest: "Sam: no comma"),
        Case(line: "14/10/2021, 15:34 – Sam: en dash", style: .android, fields: [14, 10, 2021], time: [15, 34, 0], rest: "Sam: en dash"),
        Case(line: "14/10/2021, 15:34 - ", style: .android, fields: [14, 10, 2021], time: [15, 34, 0], rest: ""),
        Case(line: "1/2/22, 8:05 am - Ann: lower-case am", style: .android, fields: [1, 2, 22], time: [8, 5, 0], rest: "Ann: lower-case am")
    ]

    @Test(arguments: cases)
    func parses(_ c: Case) throws {
        let bytes = Array(c.line.utf8)
        let parsed = try #require(WhatsAppLine.parse(bytes))
        #expect(parsed.style == c.style)
        #expect([parsed.fields.0, parsed.fields.1, parsed.fields.2] == c.fields)
        #expect([parsed.hour24, parsed.minute, parsed.second] == c.time)
        #expect(String(decoding: bytes[parsed.restStart...], as: UTF8.self) == c.rest)
    }

    @Test(arguments: [
        "and then I said", "12/24/19 - Ann: no time", "12/24/19, 25:00 - Ann: hour 25",
        "12/24/19, 11:23 PM Ann: no dash", "[14/10/2021, 3:34:09 PM Sam: no bracket",
        "123/4/19, 11:23 - x", "12/24/19, 13:23 PM - Ann: 13 PM", "2023-12-20, 5:46 p.m.- x", ""
    ])
    func rejects(_ line: String) {
        #expect(WhatsAppLine.parse(Array(line.utf8)) == nil)
    }
}

@Suite("WhatsApp exports")
struct WhatsAppTests {
    @Test("Android US folder: month first (24 > 12), 12-hour, system line, multi-line, photo beside the .txt, <Media omitted>")
    func androidUSFolder() throws {
        let folder = Fixtures.path("whatsapp-android-us")
        #expect(try Importer.detect(path: folder) == .whatsapp)
        let r = try Importer.load(path: folder, options: ImportOptions(me: "Ben Ode", timeZone: zone("America/New_York")))
        let c = r.conversation
        #expect(c.title == "Ann Lee")
        #expect(c.participants == [Participant(id: "Ann Lee", name: "Ann Lee"), Participant(id: "Ben Ode", name: "Ben Ode")])
        #expect(r.me == "Ben Ode")
        // The lines' own wall-clock times are kept beside the instants read in New York.
        #expect(
            wallTimes(c.messages) == [
                "2019-12-24T23:23:00", "2019-12-24T23:23:00", "2019-12-24T23:25:00", "2019-12-24T23:26:00",
                "2019-12-24T23:27:00", "2019-12-25T09:02:00", "2019-12-25T12:15:00"
            ])
        #expect(
            instantsOnly(c.messages) == [
                .system(
                    "Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more.",
                    date: instant("2019-12-25T04:23:00Z")),
                Message(sender: "Ann Lee", direction: .incoming, date: instant("2019-12-25T04:23:00Z"), text: "Merry Christmas Eve! 🎄"),
                Message(sender: "Ben Ode", direction: .outgoing, date: instant("2019-12-25T04:25:00Z"), text: "Thanks! Same to you\nand your family"),
                Message(
                    sender: "Ann Lee", direction: .incoming, date: instant("2019-12-25T04:26:00Z"), text: "The tree this year",
                    image: ImageAttachment(
                        path: (folder as NSString).appendingPathComponent("IMG-20191224-WA0001.jpg"), width: 0, height: 0,
                        name: "IMG-20191224-WA0001.jpg")),
                Message(
                    sender: "Ben Ode", direction: .outgoing, date: instant("2019-12-25T04:27:00Z"),
                    attachment: MediaAttachment(kind: .media, label: "<Media omitted>")),
                Message(sender: "Ann Lee", direction: .incoming, date: instant("2019-12-25T14:02:00Z"), text: "Did Santa come?"),
                Message(sender: "Ben Ode", direction: .outgoing, date: instant("2019-12-25T17:15:00Z"), text: "He did 😄")
            ])
        #expect(r.warnings.isEmpty)
        #expect(r.skipped == 0)
    }

    @Test("Android German: dotted dates, day first (15 > 12), 24-hour, Berlin summer time")
    func androidGerman() throws {
        let path = Fixtures.path("whatsapp-android-de.txt")
        let r = try Importer.load(path: path, options: ImportOptions(me: "Jonas", timeZone: zone("Europe/Berlin")))
        let m = r.conversation.messages
        #expect(m.count == 5)
        #expect(m[0].kind == .system && m[0].text!.hasPrefix("Nachrichten und Anrufe sind Ende-zu-Ende-verschlüsselt."))
        #expect(m.map(\.sender) == [nil, "Anna", "Jonas", "Anna", "Jonas"])
        #expect(m.map(\.direction) == [.incoming, .incoming, .outgoing, .incoming, .outgoing])
        #expect(
            m.map(\.date)
                == [
                    "2021-08-03T10:30:00Z", "2021-08-03T10:30:00Z", "2021-08-03T10:31:00Z",
                    "2021-08-15T16:05:00Z", "2021-08-15T16:07:00Z"
                ].map(instant))
        #expect(m.map(\.text) == [m[0].text, "Hallo! Wie geht's?", "Gut, danke 😊", "Treffen wir uns am Samstag?", nil])
        #expect(m.last?.attachment == MediaAttachment(kind: .media, label: "<Medien ausgeschlossen>"))
        #expect(r.warnings.isEmpty)
    }

    @Test("Android Canadian English: ISO dates and \"p.m.\", 12:05 a.m. is just after midnight")
    func androidCanadian() throws {
        let r = try Importer.load(
            path: Fixtures.path("whatsapp-android-en-ca.txt"),
            options: ImportOptions(me: "Marc", timeZone: zone("America/Toronto")))
        let m = r.conversation.messages
        #expect(m.map(\.date) == ["2023-12-20T22:46:00Z", "2023-12-20T22:46:00Z", "2023-12-20T22:48:00Z", "2023-12-21T05:05:00Z"].map(instant))
        #expect(m.map(\.text).dropFirst() == ["Are we still on for dinner?", "Yes, 7 p.m. at the usual place", "Made it home, thanks!"])
        #expect(m.map(\.direction) == [.incoming, .incoming, .outgoing, .incoming])
        #expect(r.warnings.isEmpty)  // ISO dates need no day/month guess
    }

    @Test("Android Spanish: \"p. m.\", single-digit months, and the night clocks go forward in Madrid")
    func androidSpanish() throws {
        let r = try Importer.load(
            path: Fixtures.path("whatsapp-android-es.txt"),
            options: ImportOptions(me: "Diego", timeZone: zone("Europe/Madrid")))
        let m = r.conversation.messages
        #expect(
            m.map(\.date)
                == [
                    "2025-03-28T20:29:00Z", "2025-03-28T20:29:00Z", "2025-03-28T20:31:00Z",
                    "2025-03-29T09:02:00Z", "2025-03-30T01:30:00Z"
                ].map(instant))
        #expect(m.map(\.sender) == [nil, "Lucía", "Diego", "Diego", "Lucía"])
        #expect(m[4].text == "¿Ya cambió la hora?")
    }

    @Test("iOS folder: U+200E and U+202F, CRLF, system line with an author, <attached: …>, image omitted")
    func iosFolder() throws {
        let folder = Fixtures.path("whatsapp-ios")
        let r = try Importer.load(path: folder, options: ImportOptions(me: "kai", timeZone: zone("Europe/London")))
        #expect(r.me == "Kai")  // `me` matched without regard to case
        #expect(
            instantsOnly(r.conversation.messages) == iosMessages(photo: (folder as NSString).appendingPathComponent("00000012-PHOTO-2021-10-14-15-34-09.jpg")))
        #expect(r.conversation.title == nil)  // "_chat.txt" in a folder named like the fixture says nothing
        #expect(r.warnings.isEmpty)
    }

    func iosMessages(photo: String) -> [Message] {
        [
            .system(
                "Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them.",
                date: instant("2021-10-14T14:34:09Z")),
            Message(sender: "Sam Rivera", direction: .incoming, date: instant("2021-10-14T14:34:09Z"), text: "Landed! ✈️"),
            Message(sender: "Kai", direction: .outgoing, date: instant("2021-10-14T14:35:10Z"), text: "Welcome back\nHow was the flight?"),
            Message(
                sender: "Sam Rivera", direction: .incoming, date: instant("2021-10-14T14:36:02Z"),
                image: ImageAttachment(path: photo, width: 0, height: 0, name: "00000012-PHOTO-2021-10-14-15-34-09.jpg")),
            Message(
                sender: "Kai", direction: .outgoing, date: instant("2021-10-14T14:36:40Z"),
                attachment: MediaAttachment(kind: .photo, label: "image omitted")),
            Message(sender: "Kai", direction: .outgoing, date: instant("2021-10-15T08:00:00Z"), text: "Coffee later?")
        ]
    }

    /// Zips a fixture folder the way WhatsApp shares an export.
    func zipExport(_ folder: String, as name: String, in scratch: ScratchFolder) throws -> String {
        let zipPath = scratch.file(name)
        let archive = try Archive(url: URL(fileURLWithPath: zipPath), accessMode: .create)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() {
            try archive.addEntry(with: file, relativeTo: URL(fileURLWithPath: folder), compressionMethod: .deflate)
        }
        return zipPath
    }

    @Test("iOS .zip: the chat is read from inside, the photo extracted to the attachments folder")
    func iosZip() throws {
        let scratch = ScratchFolder()
        let zip = try zipExport(Fixtures.path("whatsapp-ios"), as: "WhatsApp Chat - Sam Rivera.zip", in: scratch)
        #expect(try Importer.detect(path: zip) == .whatsapp)
        let out = scratch.file("attachments")
        let r = try Importer.load(path: zip, options: ImportOptions(me: "Kai", timeZone: zone("Europe/London"), attachmentsFolder: out))
        let photo = (out as NSString).appendingPathComponent("00000012-PHOTO-2021-10-14-15-34-09.jpg")
        #expect(instantsOnly(r.conversation.messages) == iosMessages(photo: photo))
        #expect(r.conversation.title == "Sam Rivera")
        #expect(r.attachmentsFolder == out)
        #expect(FileManager.default.contentsEqual(atPath: photo, andPath: Fixtures.path("whatsapp-ios/00000012-PHOTO-2021-10-14-15-34-09.jpg")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["00000012-PHOTO-2021-10-14-15-34-09.jpg"])
        #expect(r.warnings.isEmpty)
    }

    @Test("iOS group: system lines authored by the group, a phone number wrapped in bidi marks, `me` by digits")
    func iosGroup() throws {
        let r = try Importer.load(
            path: Fixtures.path("whatsapp-ios-group.txt"),
            options: ImportOptions(me: "+447700900123", timeZone: zone("Asia/Kolkata")))
        let m = instantsOnly(r.conversation.messages)
        #expect(wallTimes(r.conversation.messages) == ["2022-01-03T18:20:11", "2022-01-03T18:20:11", "2022-01-03T18:21:00", "2022-01-13T07:05:59"])
        #expect(
            m == [
                .system("Sam Rivera created group “Trip 🏔”", date: instant("2022-01-03T12:50:11Z")),
                .system("Sam Rivera added \u{202A}+44 7700 900123\u{202C}", date: instant("2022-01-03T12:50:11Z")),
                Message(sender: "+44 7700 900123", direction: .outgoing, date: instant("2022-01-03T12:51:00Z"), text: "Hi all"),
                Message(sender: "Sam Rivera", direction: .incoming, date: instant("2022-01-13T01:35:59Z"), text: "Bus leaves at 8")
            ])
        #expect(r.me == "+44 7700 900123")
    }

    // MARK: Warnings and bad input

    @Test("no day over 12: read day first, with a warning; no `me`: all incoming, with a warning naming the authors")
    func ambiguousDates() throws {
        let scratch = ScratchFolder()
        let file = scratch.write("chat.txt", "03/04/21, 10:00 - Ann: hi\n04/03/21, 11:00 - Ben: hey\n")
        let r = try Importer.load(path: file, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.conversation.messages.map(\.date) == [instant("2021-04-03T10:00:00Z"), instant("2021-03-04T11:00:00Z")])
        #expect(r.conversation.messages.map(\.direction) == [.incoming, .incoming])
        #expect(
            r.warnings.map(\.description) == [
                "\(file): dates: no day is over 12, so day/month order cannot be told; read as day/month (e.g. 03/04 = 3 April)",
                "\(file): directions: no `me` given, so every message is incoming; authors: Ann; Ben"
            ])
    }

    @Test("a first line that is no WhatsApp line is an error naming line 1 and both formats")
    func notAChat() throws {
        let path = Fixtures.path("not-a-chat.txt")
        let detected = try #require(importError { () throws(ImportError) in try Importer.load(path: path, options: ImportOptions()) })
        #expect(detected.location == "line 1")
        #expect(detected.reason.hasPrefix("\"Dear diary,\" is not the start of a known export"))
        let forced = try #require(
            importError { () throws(ImportError) in
                try Importer.load(path: path, format: .whatsapp, options: ImportOptions())
            })
        #expect(
            forced.description == "\(path): line 1: not a WhatsApp export: \"Dear diary,\" does not start with a date and time; "
                + "expected \"12/24/19, 11:23 - Name: text\" (Android) or \"[14/10/2021, 3:34:09 PM] Name: text\" (iOS)")
    }

    @Test("attachments: a path leaving the folder, a missing photo, a link out of the folder — shown as placeholders, warned, counted")
    func unsafeAttachments() throws {
        let scratch = ScratchFolder()
        let outside = ScratchFolder()
        outside.write("secret.jpg", "not for you")
        try FileManager.default.createSymbolicLink(atPath: scratch.file("IMG-link.jpg"), withDestinationPath: outside.file("secret.jpg"))
        scratch.write(
            "_chat.txt",
            """
            [01/02/2022, 10:00:00] Ann: \u{200E}<attached: ../../etc/passwd>
            [01/02/2022, 10:01:00] Ann: IMG-20220201-WA0007.jpg (file attached)
            [01/02/2022, 10:02:00] Ann: \u{200E}<attached: IMG-link.jpg>
            [13/02/2022, 10:03:00] Ann: /etc/shadow (file attached)
            """)
        let r = try Importer.load(path: scratch.path, options: ImportOptions(me: "Ann", timeZone: zone("UTC")))
        #expect(r.conversation.messages.map(\.text) == [nil, nil, nil, nil])
        #expect(
            r.conversation.messages.map(\.attachment) == [
                MediaAttachment(kind: .document, fileName: "../../etc/passwd"),
                MediaAttachment(kind: .photo, fileName: "IMG-20220201-WA0007.jpg"),
                MediaAttachment(kind: .photo, fileName: "IMG-link.jpg"),
                MediaAttachment(kind: .document, fileName: "/etc/shadow")
            ])
        #expect(r.conversation.messages.allSatisfy { $0.image == nil })
        #expect(r.skipped == 4)
        let chat = (scratch.path as NSString).appendingPathComponent("_chat.txt")
        #expect(
            r.warnings.map(\.description) == [
                "\(chat): line 1: attachment ../../etc/passwd: path leaves the export folder; shown as a placeholder",
                "\(chat): line 2: attachment IMG-20220201-WA0007.jpg: not in the export folder (exported without media?); shown as a placeholder",
                "\(chat): line 3: attachment IMG-link.jpg: is a link leading out of the export folder; shown as a placeholder",
                "\(chat): line 4: attachment /etc/shadow: path leaves the export folder; shown as a placeholder"
            ])
    }

    @Test("zip bombs: an over-compressed photo is refused with a warning; an over-compressed chat is an error")
    func zipBomb() throws {
        let scratch = ScratchFolder()
        let bombBytes = Data(count: 8 << 20)  // 8 MiB of zeros deflate about 1000:1
        let zipPath = scratch.file("WhatsApp Chat with Bomb.zip")
        let archive = try Archive(url: URL(fileURLWithPath: zipPath), accessMode: .create)
        let chat = Data("[01/02/2022, 10:00:00] Ann: \u{200E}<attached: IMG-bomb.jpg>\n[13/02/2022, 10:00:00] Ann: ok\n".utf8)
        try archive.addEntry(with: "_chat.txt", type: .file, uncompressedSize: Int64(chat.count), compressionMethod: .deflate) { pos, size in
            chat.subdata(in: Int(pos)..<Int(pos) + size)
        }
        try archive.addEntry(with: "IMG-bomb.jpg", type: .file, uncompressedSize: Int64(bombBytes.count), compressionMethod: .deflate) { pos, size in
            bombBytes.subdata(in: Int(pos)..<Int(pos) + size)
        }
        let out = scratch.file("out")
        let r = try Importer.load(path: zipPath, options: ImportOptions(me: "Ann", timeZone: zone("UTC"), attachmentsFolder: out))
        #expect(r.conversation.messages.map(\.text) == [nil, "ok"])
        #expect(r.conversation.messages.first?.attachment?.fileName == "IMG-bomb.jpg")
        #expect(r.skipped == 1)
        #expect(r.warnings.count == 1)
        #expect(r.warnings.first?.why.hasPrefix("refused: compression ratio ") == true)
        #expect(r.warnings.first?.why.hasSuffix(":1 is over the 200:1 limit (zip bomb?); shown as a placeholder") == true)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? [] == [])

        // A total cap smaller than the chat text: the chat itself is refused.
        var tight = ImportOptions(timeZone: zone("UTC"))
        tight.limits.maxZipTotalBytes = 20
        let error = try #require(importError { () throws(ImportError) in try Importer.load(path: zipPath, options: tight) })
        #expect(error.path == zipPath + "/_chat.txt")
        #expect(error.reason.hasPrefix("refused: \(chat.count) bytes uncompressed would pass the 20-byte limit"))
    }

    @Test("a line longer than the cap is an error naming it, without reading it whole")
    func longLine() throws {
        let scratch = ScratchFolder()
        var options = ImportOptions(timeZone: zone("UTC"))
        options.limits.maxLineBytes = 1 << 20
        let file = scratch.write("chat.txt", "01/02/22, 10:00 - Ann: start\n01/02/22, 10:01 - Ann: " + String(repeating: "x", count: 3 << 20) + "\n")
        let error = try #require(importError { () throws(ImportError) in try Importer.load(path: file, options: options) })
        #expect(error.description == "\(file): line 2: is longer than 1 MB; expected a chat line (is this a binary file, or a text without line breaks?)")
        // The default cap (16 MB) on a real 17 MB line.
        let big = scratch.write("big.txt", "01/02/22, 10:00 - Ann: " + String(repeating: "y", count: 17 << 20))
        #expect(importError { () throws(ImportError) in try Importer.load(path: big, options: ImportOptions()) }?.location == "line 1")
    }

    @Test("encodings: UTF-16 with a BOM is read; bytes that are not UTF-8 are read as Windows-1252 with a warning")
    func encodings() throws {
        let scratch = ScratchFolder()
        let text = "[14/10/2021, 15:34:09] Zoë: Grüße 👋\r\n[14/10/2021, 15:35:00] Jo: ¡Hola!\r\n"
        var utf16 = Data([0xFF, 0xFE])
        for unit in text.utf16 { utf16.append(contentsOf: [UInt8(unit & 0xFF), UInt8(unit >> 8)]) }
        let file16 = scratch.write("utf16.txt", utf16)
        #expect(try Importer.detect(path: file16) == .whatsapp)
        let r16 = try Importer.load(path: file16, options: ImportOptions(me: "Jo", timeZone: zone("UTC")))
        #expect(r16.conversation.messages.map(\.text) == ["Grüße 👋", "¡Hola!"])
        #expect(r16.conversation.messages.map(\.sender) == ["Zoë", "Jo"])
        #expect(r16.warnings.isEmpty)

        var latin1 = Data("14/10/2021, 15:34 - Zo".utf8)
        latin1.append(contentsOf: [0xEB])  // ë in Latin-1
        latin1.append(Data(": caf".utf8))
        latin1.append(contentsOf: [0xE9, 0x20, 0x93, 0x6F, 0x6B, 0x94, 0x0A])  // é “ok”
        latin1.append(Data("14/10/2021, 15:35 - Jo: fine\n".utf8))
        let file1 = scratch.write("latin1.txt", latin1)
        let r1 = try Importer.load(path: file1, options: ImportOptions(me: "Jo", timeZone: zone("UTC")))
        #expect(r1.conversation.messages.map(\.text) == ["café “ok”", "fine"])
        #expect(r1.conversation.messages.first?.sender == "Zoë")
        #expect(r1.warnings.map(\.description) == ["\(file1): line 1: 1 lines that are not UTF-8: read as Windows-1252 (Latin-1); check accented letters"])
    }

    @Test("a truncated export keeps what is there: a text file cannot tell, the last message simply ends early")
    func truncatedText() throws {
        let scratch = ScratchFolder()
        let full = try String(contentsOfFile: Fixtures.path("whatsapp-android-de.txt"), encoding: .utf8)
        let file = scratch.write("cut.txt", String(full.utf8.prefix(full.utf8.count - 10))!)
        let r = try Importer.load(path: file, options: ImportOptions(me: "Jonas", timeZone: zone("Europe/Berlin")))
        #expect(r.conversation.messages.count == 5)
        #expect(r.conversation.messages.last?.text == "<Medien ausges")
    }
}

@Suite("Inputs the fuzzer found")
struct WhatsAppZipFuzzTests {
    static let crashes = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/crashes")

    /// Every input kept in Tests/Fuzz/crashes (make fuzz), with the reader that failed on it and
    /// the clear error it gives now.
    static let inputs: [(String, ImportFormat, String)] = [
        // ZIPFoundation inflated this entry forever (a compression method it does not know).
        (
            "WhatsAppZip-timeout-604d2f3948ea71fe2cf9511ef40602233a284f38", .whatsapp,
            "refused: uses compression method 1557; expected stored (0) or deflate (8)"
        ),
        // The same with ZIP64 size markers in the directory.
        (
            "WhatsAppZip-timeout-623aab33ba671f58e0c6be871f9b696ed6f68111", .whatsapp,
            "refused: uses compression method 5128; expected stored (0) or deflate (8)"
        ),
        // The same with a name that is not UTF-8 (the directory was looked up by another spelling).
        (
            "WhatsAppZip-timeout-5e04123ef81aa9acca114b64625436380314f466", .whatsapp,
            "refused: uses compression method 1557; expected stored (0) or deflate (8)"
        ),
        // A chat row whose ROWID reads as text: GRDB's subscript trapped.
        ("IMessage-crash-8df220b4d3b0bf076986c25b3960366c1ca76d20", .imessage, "has no chats"),
        // A wall-clock date in the year 20,333,333,333,319: the seconds overflowed (trapped).
        ("Telegram-crash-e5fb7c85dce368fa7571e42ab804ab3237ebe15d", .telegram, "is not valid JSON (damaged?)")
    ]

    @Test("every kept fuzzer input ends in a conversation or a clear error, quickly", arguments: inputs)
    func kept(_ name: String, _ format: ImportFormat, _ reason: String) throws {
        let path = Self.crashes.appendingPathComponent(name).path
        let started = Date()
        let error = importError { () throws(ImportError) in try Importer.load(path: path, format: format) }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(error?.reason == reason, "\(String(describing: error))")
    }

    /// A zip holding `_chat.txt` whose compressed bytes' second half is set to `fill`.
    static func zipWithDamagedChat(in scratch: ScratchFolder, fill: UInt8) throws -> String {
        let zipPath = scratch.file("chat.zip")
        let archive = try Archive(url: URL(fileURLWithPath: zipPath), accessMode: .create)
        let chat = Data(String(repeating: "[01/02/2022, 10:00:00] Ann: hello there, how are you today?\n", count: 40).utf8)
        try archive.addEntry(with: "_chat.txt", type: .file, uncompressedSize: Int64(chat.count), compressionMethod: .deflate) { pos, size in
            chat.subdata(in: Int(pos)..<Int(pos) + size)
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: zipPath)))
        let record = try #require(ZipDirectory(path: zipPath)?.records["_chat.txt"])
        let local = Int(record.localHeader), compressed = Int(record.compressedSize)
        let start = local + 30 + (Int(bytes[local + 26]) | Int(bytes[local + 27]) << 8) + (Int(bytes[local + 28]) | Int(bytes[local + 29]) << 8)
        for k in (start + compressed / 2)..<(start + compressed) { bytes[k] = fill }
        try Data(bytes).write(to: URL(fileURLWithPath: zipPath))
        return zipPath
    }

    @Test("a deflate stream damaged inside a zip (a reserved block type) is refused with the entry's name, never inflated forever")
    func damagedDeflate() throws {
        let scratch = ScratchFolder()
        let zipPath = try Self.zipWithDamagedChat(in: scratch, fill: 0xFF)
        let error = importError { () throws(ImportError) in try Importer.load(path: zipPath, format: .whatsapp) }
        #expect(
            error?.description == "\(zipPath)/_chat.txt: refused: its compressed data is damaged or cut short (the deflate stream does not end where it should)"
        )
    }

    @Test("a deflate stream that ends early inflates to fewer bytes than the archive says: refused, not read short")
    func shortDeflate() throws {
        let scratch = ScratchFolder()
        let zipPath = try Self.zipWithDamagedChat(in: scratch, fill: 0)
        let error = importError { () throws(ImportError) in try Importer.load(path: zipPath, format: .whatsapp) }
        #expect(error?.reason.hasPrefix("refused: its compressed data is damaged") == true, "\(String(describing: error))")
    }
}
