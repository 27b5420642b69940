import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

@Suite("SMS Backup & Restore XML")
struct SMSBackupTests {
    let backup = Fixtures.path("sms/sms-backup.xml")

    func load(chat: String?, me: String? = nil, attachments: String) throws(ImportError) -> ImportResult {
        try Importer.load(path: backup, options: ImportOptions(me: me, chat: chat, attachmentsFolder: attachments))
    }

    @Test("one conversation: sms and mms sorted by date, emoji pairs joined, statuses, the MMS photo written")
    func annConversation() throws {
        let scratch = ScratchFolder()
        #expect(try Importer.detect(path: backup) == .smsBackup)
        let r = try load(chat: "Ann Lee", me: "Leo", attachments: scratch.path)
        let c = r.conversation
        #expect(r.format == .smsBackup)
        #expect(c.title == "Ann Lee (+15550102000)")
        #expect(c.participants == [Participant(id: "+15550102000", name: "Ann Lee"), Participant(id: "me", name: "Leo")])
        #expect(c.messages.count == 7)
        #expect(c.messages.map(\.sender) == ["+15550102000", "me", "+15550102000", "+15550102000", "+15550102000", "me", "me"])
        #expect(c.messages.map(\.direction) == [.incoming, .outgoing, .incoming, .incoming, .incoming, .outgoing, .outgoing])
        #expect(c.messages.map(\.date) == [0, 60, 90, 120, 180, 240, 300].map { Date(timeIntervalSince1970: 1_700_000_000 + Double($0)) })
        #expect(
            c.messages.map(\.text) == [
                "Are you still coming tonight?", "Yes! Running late 👌", "Parking is \u{FFFD} full",
                "No rush.\nWe saved you a seat & a drink", "The view from here", "Can't wait", "See you s"
            ])
        // The MMS picture: decoded from base64 under our own name, absolute path, size left to the renderer.
        let photo = try #require(c.messages[4].image)
        #expect(photo == ImageAttachment(path: scratch.file("mms-1700000180000-1.png"), width: 0, height: 0, name: "IMG_0412.png"))
        let png = try Data(contentsOf: URL(fileURLWithPath: photo.path!))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(c.messages.filter { $0.image != nil }.count == 1)
        // Status from the type: 2 sent, 5 failed, 3 draft (never sent: none).
        #expect(c.messages.map(\.status) == [nil, .sent, nil, nil, nil, .failed, nil])
        #expect(r.attachmentsFolder == scratch.path)
        // The lone surrogate is kept as U+FFFD and reported where it stands in the file.
        #expect(
            r.warnings == [
                ImportWarning(
                    path: backup, location: "line 10, column 106", what: "character reference &#55357;",
                    why: "high surrogate without its low half; replaced by U+FFFD")
            ])
        #expect(r.skipped == 0)
    }

    @Test("group MMS: the sender comes from addr type 137, names from contact_name in address order")
    func groupConversation() throws {
        let scratch = ScratchFolder()
        let r = try load(chat: "Ann Lee, Ben Ode", attachments: scratch.path)
        let c = r.conversation
        #expect(c.messages.count == 2)
        #expect(
            c.messages[0]
                == Message(
                    sender: "+15550103000", direction: .incoming,
                    date: Date(timeIntervalSince1970: 1_700_001_000), text: "Group hello 👋"))
        #expect(
            c.messages[1]
                == Message(
                    sender: "me", direction: .outgoing, date: Date(timeIntervalSince1970: 1_700_001_060),
                    text: "Hi both", status: .sent))
        #expect(c.participants == [Participant(id: "+15550103000", name: "Ben Ode"), Participant(id: "me", name: "Me")])
        #expect(r.attachmentsFolder == nil)  // nothing to write, no folder made
    }

    @Test("\"(Unknown)\" and \"null\" contact names fall back to the number; a \"null\" body is skipped and counted")
    func unknownContact() throws {
        let scratch = ScratchFolder()
        let r = try load(chat: "+1 (555) 010-9876", attachments: scratch.path)
        #expect(r.conversation.messages.map(\.text) == ["Your code is 123456"])
        #expect(r.conversation.participants == [Participant(id: "+15550109876", name: "+15550109876")])
        #expect(r.skipped == 1)
        #expect(r.warnings.map(\.description) == ["\(backup): line 12: sms: has no body; skipped"])
    }

    @Test("several conversations without `chat` is an error that lists them; an unknown one too")
    func chatSelection() {
        let scratch = ScratchFolder()
        let all = importError { () throws(ImportError) in try load(chat: nil, attachments: scratch.path) }
        #expect(
            all?.description == "\(backup): holds 3 conversations; pick one with `chat` (contact name or phone number): "
                + "Ann Lee (+15550102000): 7 messages; +15550109876: 2 messages; Ann Lee, Ben Ode (+15550102000, +15550103000): 2 messages")
        let none = importError { () throws(ImportError) in try load(chat: "Zed", attachments: scratch.path) }
        #expect(none?.reason.hasPrefix("has no conversation with \"Zed\"; conversations: Ann Lee (+15550102000): 7 messages") == true)
    }

    @Test("since/until keep [since, until) and count the rest as excluded")
    func dateRange() throws {
        let scratch = ScratchFolder()
        var options = ImportOptions(chat: "Ann Lee", attachmentsFolder: scratch.path)
        options.since = Date(timeIntervalSince1970: 1_700_000_060)
        options.until = Date(timeIntervalSince1970: 1_700_000_180)
        let r = try Importer.load(path: backup, options: options)
        #expect(r.conversation.messages.map(\.text) == ["Yes! Running late 👌", "Parking is \u{FFFD} full", "No rush.\nWe saved you a seat & a drink"])
        #expect(r.excluded == 4)
        #expect(r.skipped == 0)
    }

    // MARK: Bad input

    func xml(_ body: String) -> String {
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"1\">\n\(body)\n</smses>\n"
    }

    @Test("a truncated backup is an error at the end of the file, saying so")
    func truncated() throws {
        let scratch = ScratchFolder()
        let full = try String(contentsOfFile: backup, encoding: .utf8)
        let prefix = String(full.utf8.prefix(1500))!
        let cut = scratch.write("cut.xml", prefix)
        let lastLine = prefix.split(separator: "\n", omittingEmptySubsequences: false).count
        let error = try #require(
            importError { () throws(ImportError) in
                try Importer.load(path: cut, options: ImportOptions(chat: "Ann Lee", attachmentsFolder: scratch.path))
            })
        #expect(error.path == cut)
        #expect(error.location?.hasPrefix("line \(lastLine), column ") == true)
        #expect(error.reason.hasPrefix("unexpected end of file (cut short?): "))
    }

    @Test("malformed XML names the line and the column in the original file, even after a shortened emoji reference")
    func malformed() throws {
        let scratch = ScratchFolder()
        // The filter shortens "&#55357;&#56396;" (16 columns) to "&#128076;" (9): the column libxml2
        // reports must be mapped back, landing where it lands for 16 plain characters.
        func column(_ value: String) throws -> String? {
            let file = scratch.write("bad.xml", xml(#"<sms address="1" date="1" type="1" body=""# + value + #"" body="twice" />"#))
            let error = try #require(importError { () throws(ImportError) in try Importer.load(path: file, options: ImportOptions()) })
            #expect(error.reason == "is not well-formed XML: the same attribute twice in one element")
            return error.location
        }
        let plain = try column("0123456789abcdef")
        #expect(plain == "line 3, column 73")
        #expect(try column("&#55357;&#56396;") == plain)
    }

    @Test("entity declarations (billion laughs) and external DTDs are refused before parsing")
    func entitiesRefused() throws {
        let scratch = ScratchFolder()
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE smses [
              <!ENTITY lol "lol">
              <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
              <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
            ]>
            <smses><sms address="1" date="1" type="1" body="&lol3;" /></smses>
            """
        let file = scratch.write("laughs.xml", laughs)
        let error = try #require(importError { () throws(ImportError) in try Importer.load(path: file, options: ImportOptions()) })
        #expect(error.location == "line 2, column 1")
        #expect(error.reason.hasPrefix("has a DOCTYPE"))
        // Behind a comment holding a fake root element, and external.
        let external = scratch.write("ext.xml", "<!-- <smses> -->\n<!DOCTYPE smses SYSTEM \"file:///etc/passwd\">\n<smses/>")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: external, options: ImportOptions()) }?
                .location == "line 2, column 1")
    }

    @Test("references to characters XML forbids become U+FFFD with a warning; the message stays")
    func forbiddenCharacters() throws {
        let scratch = ScratchFolder()
        let file = scratch.write("ctl.xml", xml(#"<sms address="1" date="1000" type="1" body="bell&#7; low&#xDE0C; ok&#x1F600;" />"#))
        let r = try Importer.load(path: file, format: .smsBackup, options: ImportOptions())
        #expect(r.conversation.messages.map(\.text) == ["bell\u{FFFD} low\u{FFFD} ok😀"])
        #expect(r.warnings.map(\.location) == ["line 3, column 49", "line 3, column 57"])
        #expect(
            r.warnings.map(\.why) == [
                "character U+7 is not allowed in XML; replaced by U+FFFD",
                "low surrogate without its high half; replaced by U+FFFD"
            ])
    }

    @Test("wrong root, call logs, empty files, unknown types")
    func otherBadInput() throws {
        let scratch = ScratchFolder()
        let calls = scratch.write("calls.xml", "<?xml version='1.0'?>\n<calls count=\"0\"></calls>")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: calls, options: ImportOptions()) }?.reason
                == "is a call log backup (<calls>), not messages; expected <smses>")
        let empty = scratch.write("empty.xml", "")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: empty, format: .smsBackup, options: ImportOptions()) }?
                .reason.contains("empty") == true)
        let odd = scratch.write(
            "odd.xml", xml(#"<sms address="1" date="1000" type="9" body="?" />"# + "\n" + #"<sms address="1" date="x" type="1" body="?" />"#))
        let r = try Importer.load(path: odd, options: ImportOptions())
        #expect(r.conversation.messages.isEmpty)
        #expect(r.skipped == 2)
        #expect(r.warnings.map(\.location) == ["line 3", "line 4"])
    }

    @Test("an MMS part over libxml2's 10 MB attribute limit becomes a placeholder; the rest of the backup is read")
    func oversizedPart() throws {
        let scratch = ScratchFolder()
        let data = Data(count: 7_000_000).base64EncodedString()  // 9.3 MB of base64
        let body =
            #"<mms date="1700000000000" msg_box="1" address="+15550102000"><parts>"#
            + #"<part seq="0" ct="image/jpeg" name="huge.jpg" data=""# + data + #"" />"#
            + #"<part seq="0" ct="text/plain" text="Look" /></parts></mms>"#
            + "\n" + #"<sms address="+15550102000" date="1700000001000" type="1" body="after" />"#
        let file = scratch.write("huge.xml", xml(body))
        let r = try Importer.load(path: file, options: ImportOptions(attachmentsFolder: scratch.file("out")))
        #expect(r.conversation.messages.map(\.text) == ["[Photo: huge.jpg]\nLook", "after"])
        #expect(r.skipped == 1)
        #expect(
            r.warnings.map(\.description) == [
                "\(file): line 3: mms image huge.jpg: its data is 9 MB of base64, more than a "
                    + "photo may be here (limit 9 MB); shown as a placeholder"
            ])
    }

    @Test("a huge MMS is read in pieces: an image split across many 128 KiB chunks decodes whole")
    func largeMMS() throws {
        let scratch = ScratchFolder()
        var jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0])
        jpeg.append(Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        let body =
            #"<mms date="1700000000000" msg_box="1" address="+15550102000" contact_name="Ann"><parts>"#
            + #"<part seq="0" ct="image/jpeg" name="big.jpg" data=""# + jpeg.base64EncodedString() + #"" /></parts></mms>"#
        let file = scratch.write("big.xml", xml(body))
        let r = try Importer.load(path: file, options: ImportOptions(attachmentsFolder: scratch.file("out")))
        let path = try #require(r.conversation.messages.first?.image?.path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == jpeg)
    }
}

@Suite("XML byte filter")
struct XMLByteFilterTests {
    func run(_ input: String, splitAt cuts: [Int], maxDataBytes: Int = 9_000_000) throws(XMLByteFilter.Failure) -> (String, [XMLByteFilter.Replacement]) {
        var filter = XMLByteFilter(maxDataBytes: maxDataBytes)
        var output: [UInt8] = []
        let bytes = Array(input.utf8)
        var start = 0
        for cut in cuts + [bytes.count] {
            var failure: XMLByteFilter.Failure?
            bytes[start..<cut].withUnsafeBytes { raw in
                do throws(XMLByteFilter.Failure) { try filter.process(raw, isLast: false, into: &output) } catch { failure = error }
            }
            if let failure { throw failure }
            start = cut
        }
        var failure: XMLByteFilter.Failure?
        [UInt8]().withUnsafeBytes { raw in
            do throws(XMLByteFilter.Failure) { try filter.process(raw, isLast: true, into: &output) } catch { failure = error }
        }
        if let failure { throw failure }
        return (String(decoding: output, as: UTF8.self), filter.takeReplacements())
    }

    @Test("references split at every possible chunk boundary come out the same")
    func everySplit() throws {
        let input = "<smses><sms body=\"a&#55357;&#56396;b&#xD83D;&#xDE00;c&#55357;d&#65;\n&#56396;\" /></smses>"
        let expected = "<smses><sms body=\"a&#128076;b&#128512;c&#xFFFD;d&#65;\n&#xFFFD;\" /></smses>"
        let (whole, wholeReplaced) = try run(input, splitAt: [])
        #expect(whole == expected)
        #expect(wholeReplaced.map { "\($0.line):\($0.column)" } == ["1:54", "2:1"])
        for cut in 1..<input.utf8.count {
            let (out, replaced) = try run(input, splitAt: [cut])
            #expect(out == expected, "split at \(cut)")
            #expect(replaced == wholeReplaced, "split at \(cut)")
        }
        for a in stride(from: 1, to: input.utf8.count, by: 3) {
            #expect(try run(input, splitAt: [a, min(a + 2, input.utf8.count)]).0 == expected)
        }
    }

    @Test("columns after a shortened reference map back to the original file")
    func columnMapping() throws {
        var filter = XMLByteFilter()
        var output: [UInt8] = []
        let line = Array("<smses a=\"&#55357;&#56396;x\">".utf8)
        line.withUnsafeBytes { raw in try? filter.process(raw, isLast: true, into: &output) }
        // "&#55357;&#56396;" (16 columns) became "&#128076;" (9): 'x' moved from column 27 to 20.
        #expect(String(decoding: output, as: UTF8.self) == "<smses a=\"&#128076;x\">")
        #expect(filter.originalColumn(line: 1, column: 20) == 27)
        #expect(filter.originalColumn(line: 1, column: 5) == 5)
        #expect(filter.originalColumn(line: 2, column: 20) == 20)
    }

    @Test("data values over the limit are cut, wherever the chunks split; other attributes are not")
    func dataCut() throws {
        let input = "<smses><part text=\"0123456789ABCDEF\" data=\"0123456789ABCDEF\" /><part data=\"short\" /></smses>"
        let expected = "<smses><part text=\"0123456789ABCDEF\" data=\"0123456789\" /><part data=\"short\" /></smses>"
        for cut in 0..<input.utf8.count {
            #expect(try run(input, splitAt: cut == 0 ? [] : [cut], maxDataBytes: 10).0 == expected, "split at \(cut)")
        }
        var filter = XMLByteFilter(maxDataBytes: 10)
        var output: [UInt8] = []
        Array(input.utf8).withUnsafeBytes { raw in try? filter.process(raw, isLast: true, into: &output) }
        #expect(filter.takeOversized(upToLine: 1) == [XMLByteFilter.Oversized(line: 1, column: 44, bytes: 16)])
        // The closing quote moved 6 columns left, from 60 to 54; errors from there on map back.
        #expect(filter.originalColumn(line: 1, column: 54) == 60)
        #expect(filter.originalColumn(line: 1, column: 53) == 53)
    }

    @Test("ordinary references, text and non-ASCII pass through untouched")
    func passThrough() throws {
        let input = "<?xml version='1.0'?>\n<!-- é -->\n<smses><sms body=\"&amp;&lt;&#10;&#x1F600; café &bogus\" /></smses>"
        #expect(try run(input, splitAt: [30, 31, 60]).0 == input)
    }
}
