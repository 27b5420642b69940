import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

/// Escapes in attribute values and entities refused, through the importer (the scanner on UTF-8 files).
@Suite("SMS Backup XML elements and attributes as the importer reads them (scanner, and libxml2 for other encodings)")
struct SAXPushParserTests {
    func xml(_ body: String) -> String {
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"1\">\n\(body)\n</smses>\n"
    }

    @Test("predefined entities and character references decode; an escaped \"&#38;\" stays as text")
    func escapes() throws {
        let scratch = ScratchFolder()
        let body = #"R&amp;R &#38; &lt;b&gt; &quot;q&quot; &apos;a&apos; &amp;#38; caf&#233; &#x1F600; &#55357;&#56396;"#
        let file = scratch.write("esc.xml", xml(#"<sms address="1" date="1000" type="1" body=""# + body + #"" />"#))
        let r = try Importer.load(path: file, format: .smsBackup, options: ImportOptions())
        #expect(r.conversation.messages.map(\.text) == [#"R&R & <b> "q" 'a' &#38; café 😀 👌"#])
        #expect(r.warnings.isEmpty)
    }

    @Test("an undeclared entity is an error with its line, not an expansion")
    func undeclaredEntity() throws {
        let scratch = ScratchFolder()
        let file = scratch.write("ent.xml", xml(#"<sms address="1" date="1000" type="1" body="&lol;" />"#))
        let error = try #require(importError { () throws(ImportError) in try Importer.load(path: file, format: .smsBackup) })
        #expect(error.location?.hasPrefix("line 3, column ") == true)
        #expect(error.reason == "is not well-formed XML: an undeclared entity; only &lt; &gt; &amp; &quot; &apos; and &#…; are allowed")
    }

    @Test("bytes that are not UTF-8 are an error at their line")
    func notUTF8() throws {
        let scratch = ScratchFolder()
        var data = Data("<?xml version='1.0' encoding='UTF-8'?>\n<smses count=\"1\">\n".utf8)
        data.append(contentsOf: Array(#"<sms address="1" date="1000" type="1" body="caf"#.utf8) + [0xE9] + Array(#"" />"#.utf8))
        data.append(contentsOf: Array("\n</smses>\n".utf8))
        let file = scratch.write("latin.xml", data)
        let error = try #require(importError { () throws(ImportError) in try Importer.load(path: file, format: .smsBackup) })
        #expect(error.location?.hasPrefix("line 3, column ") == true)
        #expect(error.reason.hasPrefix("is not well-formed XML: "), "\(error)")
    }
}
