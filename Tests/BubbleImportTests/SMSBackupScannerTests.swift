import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

/// The hand-written SMS Backup scanner: tokens split at every chunk boundary, the same results as
/// libxml2 on valid input, errors with their line and column.
@Suite("SMS Backup XML scanner")
struct SMSBackupScannerTests {
    enum Path { case scanner(readLimit: Int), libxml2 }

    /// What an import gave, as comparable lines (photos by file name), or its error.
    func run(_ file: String, _ path: Path, chat: String? = nil) -> [String] {
        let scratch = ScratchFolder()
        let source = ImportSource(path: file, format: .smsBackup)
        let context = ImportContext(path: file, options: ImportOptions(chat: chat, attachmentsFolder: scratch.path))
        do throws(ImportError) {
            let r: ImportResult
            switch path {
            case .scanner(let limit):
                r = try SMSBackupImporter.load(source, context: context, readLimit: limit)
            case .libxml2:
                let handle = FileHandle(forReadingAtPath: file)!
                defer { try? handle.close() }
                r = try SMSBackupImporter.loadWithLibXML2(handle, source: source, context: context)
            }
            let c = r.conversation
            return ["title \(c.title ?? "-")", "participants \(c.participants.map { "\($0.id)=\($0.name)" })"]
                + c.messages.map { m in
                    "\(m.sender ?? "-") \(m.direction) \(m.date.timeIntervalSince1970) \(m.status.map { "\($0)" } ?? "-") "
                        + "\(m.text.debugDescription) \(m.images.map { ($0.path! as NSString).lastPathComponent })"
                }
                + context.finishedWarnings().map(\.description) + ["skipped \(context.skipped)"]
        } catch {
            return ["error \(error.location ?? "-"): \(error.reason)"]
        }
    }

    func xml(_ body: String) -> String {
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"1\">\n\(body)\n</smses>\n"
    }

    /// Valid backups that use what XML allows and SMS Backup & Restore rarely writes.
    var tricky: [String] {
        [
            xml(#"<sms address='1' date = "1000" type='2' body='single &apos;quoted&apos; "text"' />"#),
            // Literal tab, line breaks and CR LF in a value become spaces; &#10; &#9; stay.
            xml("<sms address=\"1\" date=\"1000\" type=\"1\" body=\"a\tb\nc\r\nd&#10;e&#9;f\r\ng\" />"),
            // Comments, processing instructions, CDATA and text around and inside elements.
            "\u{FEFF}<?xml version=\"1.0\"?>\n<!-- made by hand -->\n<?app note?>\n<smses>\n<!-- a -->\n<?pi x?>\n"
                + "<sms address=\"+1 555 0102 000\" contact_name=\"Zoë\" date=\"1700000000000\" type=\"1\" body=\"Hi ☕ &#x1F600; &#55357;&#56396;\">"
                + "text &amp; <![CDATA[<not a tag>]]> more</sms>\n"
                + "<sms\naddress=\"+15550102000\"\ndate=\"1700000060000\"\ntype=\"2\"\nbody=\"multi-line tag\"\n/>\n</smses>\n<!-- end -->\n",
            // Lone surrogates and forbidden characters in a kept and in a skipped message.
            xml(
                #"<sms address="1" date="1000" type="1" body="x&#55357;y&#1;z" />"# + "\n"
                    + #"<sms address="1" date="2000" type="9" body="&#56396;" />"#),
            // Other elements, an mms with parts and a group sender.
            xml(
                #"<call x="1"/>"# + "\n" + #"<mms date="1700000000000" msg_box="1" address="+15550102000~+15550103000" contact_name="Ann, Ben">"#
                    + #"<parts><part ct="text/plain" text="line&#10;two"/><part ct="video/mp4" name="v.mp4"/></parts>"#
                    + #"<addrs><addr address="+15550103000" type="137"/></addrs></mms>"#)
        ]
    }

    @Test("the fixture reads the same through libxml2 and through the scanner at every read size")
    func fixtureEverySize() {
        let file = Fixtures.path("sms/sms-backup.xml")
        let expected = run(file, .libxml2, chat: "Ann Lee")
        #expect(expected.count > 8)
        #expect(!expected[0].hasPrefix("error"))
        for limit in [1, 2, 3, 5, 7, 13, 64, 1000, 1 << 20] {
            #expect(run(file, .scanner(readLimit: limit), chat: "Ann Lee") == expected, "read size \(limit)")
        }
        #expect(run(file, .scanner(readLimit: 1)) == run(file, .libxml2))  // the error listing the conversations
    }

    @Test("tricky but valid XML reads the same through libxml2 and the scanner, split anywhere")
    func trickyInput() throws {
        let scratch = ScratchFolder()
        for (k, text) in tricky.enumerated() {
            let file = scratch.write("t\(k).xml", text)
            let expected = run(file, .libxml2)
            #expect(!expected[0].hasPrefix("error"), "\(k): \(expected)")
            for limit in [1, 2, 3, 4, 1 << 20] {
                #expect(run(file, .scanner(readLimit: limit)) == expected, "case \(k), read size \(limit)")
            }
        }
        // What those values became, spelled out.
        let values = run(scratch.file("t1.xml"), .scanner(readLimit: 1))
        #expect(values.contains { $0.contains(#""a b c d\ne\tf g""#) }, "\(values)")
        let comments = run(scratch.file("t2.xml"), .scanner(readLimit: 3))
        #expect(comments.contains { $0.contains(#""Hi ☕ 😀 👌""#) }, "\(comments)")
        #expect(comments.contains { $0.contains(#""multi-line tag""#) })
    }

    @Test("mutated files (bytes changed, removed, inserted): the scanner accepts what libxml2 accepts, with the same result")
    func mutations() throws {
        let scratch = ScratchFolder()
        let fixture = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("sms/sms-backup.xml"))))
        let bases = [fixture] + tricky.map { Array($0.utf8) }
        let specials: [UInt8] = Array("<>&\"'=/ \n#;x-![]?".utf8) + [0xE9, 0xF0, 0x9F, 0x00, 0x01]
        var state: UInt64 = 2026
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        // The libxml2 path matches replaced references to elements by line, so it also reports
        // those of a skipped element on the same line: those warnings are left out.
        func comparable(_ lines: [String]) -> [String] { lines.filter { !$0.contains(": character reference &#") } }
        var accepted = 0, refused = 0
        for (b, base) in bases.enumerated() {
            for k in 0..<200 {
                var bytes = base
                for _ in 0...next(3) {
                    let at = next(bytes.count)
                    switch next(3) {
                    case 0: bytes[at] = specials[next(specials.count)]
                    case 1: bytes.remove(at: at)
                    default: bytes.insert(specials[next(specials.count)], at: at)
                    }
                }
                let file = scratch.write("m\(b)-\(k).xml", Data(bytes))
                let chat = b == 0 ? "Ann Lee" : nil
                let ours = run(file, .scanner(readLimit: 1 << 20), chat: chat)
                let theirs = run(file, .libxml2, chat: chat)
                let ourError = ours[0].hasPrefix("error"), theirError = theirs[0].hasPrefix("error")
                #expect(ourError == theirError, "base \(b), mutation \(k): \(ours.prefix(2)) vs libxml2 \(theirs.prefix(2))")
                if !ourError && !theirError {
                    #expect(comparable(ours) == comparable(theirs), "base \(b), mutation \(k)")
                }
                #expect(run(file, .scanner(readLimit: 3), chat: chat) == ours, "base \(b), mutation \(k), read size 3")
                if ourError { refused += 1 } else { accepted += 1 }
            }
        }
        // Both kinds were tried.
        #expect(accepted > 100 && refused > 100, "\(accepted) accepted, \(refused) refused")
    }

    @Test(
        "errors name the same line and column whatever the read size",
        arguments: [
            (#"<sms address="1" date="1" type="1" body="x" body="y" />"#, "line 3, column 54", "the same attribute twice in one element"),
            (#"<sms address="1" date="1" type="1" body="a<b" />"#, "line 3, column 43", "'<' inside an attribute value; expected &lt;"),
            (#"<sms address="1" body="&bogus;" />"#, "line 3, column 24", "an undeclared entity; only &lt; &gt; &amp; &quot; &apos; and &#…; are allowed"),
            (#"<sms address="1" body="a & b" />"#, "line 3, column 26", "'&' not followed by a reference; expected &amp;"),
            (#"<sms address="1" body="&#xZZ;" />"#, "line 3, column 24", "invalid character reference"),
            (#"<sms address=1 />"#, "line 3, column 14", "attribute value not started; expected a quote"),
            (#"<sms address />"#, "line 3, column 14", "attribute without a value"),
            (#"<sms a="1"b="2" />"#, "line 3, column 11", "a space was required"),
            ("<sms>\n</mms>", "line 4, column 3", "closing tag does not match the opening tag"),
            ("<!-- a -- b -->", "line 3, column 8", "'--' inside a comment"),
            ("<?xml version='1.0'?>", "line 3, column 1", "an XML declaration that is not at the start of the file"),
            ("<sms body=\"ok\u{7}\" />", "line 3, column 14", "a character that XML does not allow (a control character, or bytes that are not UTF-8)"),
            ("<sms/>]]>", "line 3, column 7", "']]>' outside a CDATA section")
        ])
    func errors(_ body: String, _ location: String, _ what: String) throws {
        let scratch = ScratchFolder()
        let file = scratch.write("bad.xml", xml(body))
        let expected = ["error \(location): is not well-formed XML: \(what)"]
        for limit in [1, 2, 5, 1 << 20] {
            #expect(run(file, .scanner(readLimit: limit)) == expected, "read size \(limit)")
        }
    }

    @Test("repeated attributes: long names, and tags with hundreds of attributes")
    func manyAttributes() throws {
        let scratch = ScratchFolder()
        let many = (0..<300).map { "a\($0)=\"\($0)\"" }.joined(separator: " ")
        let fine = scratch.write("many.xml", xml(#"<sms address="1" date="1000" type="1" body="ok" "# + many + " />"))
        #expect(run(fine, .scanner(readLimit: 7)).contains { $0.contains(#""ok""#) })
        let twice = scratch.write("twice.xml", xml(#"<sms address="1" "# + many + #" a17="again" />"#))
        let column = 18 + many.count + 13
        #expect(run(twice, .scanner(readLimit: 7)) == ["error line 3, column \(column): is not well-formed XML: the same attribute twice in one element"])
        let long = scratch.write("long.xml", xml(#"<sms contact_name="a" address="1" contact_name="b"/>"#))
        #expect(run(long, .scanner(readLimit: 1)) == ["error line 3, column 51: is not well-formed XML: the same attribute twice in one element"])
        let similar = scratch.write("similar.xml", xml(#"<sms contact_name="a" contact_namf="b" address="1" date="1000" type="1" body="fine"/>"#))
        #expect(run(similar, .scanner(readLimit: 1)).contains { $0.contains(#""fine""#) })
    }

    @Test("after the root element, and truncated files: errors at the end")
    func endErrors() throws {
        let scratch = ScratchFolder()
        let after = scratch.write("after.xml", xml("") + "<smses/>\n")
        #expect(run(after, .scanner(readLimit: 1)) == ["error line 5, column 1: is not well-formed XML: extra content at the end of the document"])
        let cut = scratch.write("cut.xml", "<smses>\n<sms body=\"abc")
        #expect(
            run(cut, .scanner(readLimit: 2)) == [
                "error line 2, column 15: unexpected end of file (cut short?): attribute value not "
                    + "finished; expected a closing quote; expected the rest of the backup and </smses>"
            ])
        let open = scratch.write("open.xml", "<smses>\n<sms body=\"abc\"/>\n")
        #expect(run(open, .scanner(readLimit: 1)).first?.hasPrefix("error line 3, column 1: unexpected end of file (cut short?): ") == true)
        let halfEmoji = scratch.write("half.xml", Data("<smses><sms body=\"\u{1F600}\"/></smses>".utf8.dropLast(14)))
        #expect(run(halfEmoji, .scanner(readLimit: 1)).first?.hasPrefix("error line 1, column 19: ") == true)
    }

    @Test("a backup declaring another encoding goes through libxml2, which converts it")
    func otherEncoding() throws {
        let scratch = ScratchFolder()
        var data = Data("<?xml version='1.0' encoding='ISO-8859-1'?>\n<smses>\n<sms address=\"1\" date=\"1000\" type=\"1\" body=\"caf".utf8)
        data.append(0xE9)
        data.append(contentsOf: Array("\" />\n</smses>\n".utf8))
        let file = scratch.write("latin1.xml", data)
        let r = try Importer.load(path: file, format: .smsBackup, options: ImportOptions())
        #expect(r.conversation.messages.map(\.text) == ["café"])
    }
}
