import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

/// Every reader, given a file cut short, says where the input ended and what it expected there.
@Suite("Files cut short")
struct CutFileTests {
    /// "line L, column C" of the end of `text` (columns count characters).
    static func end(of text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return "line \(lines.count), column \(lines.last!.count + 1)"
    }

    /// `full` cut at a few places (whole characters), never inside the last few bytes of white space.
    static func cuts(_ full: String) -> [String] {
        let chars = Array(full)
        return [0.2, 0.45, 0.7, 0.93].map { String(chars[..<Int(Double(chars.count) * $0)]) }
            .filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
    }

    @Test("native JSON: the example of the issue, and the fixture cut at four places")
    func native() throws {
        let scratch = ScratchFolder()
        let broken = scratch.write("chat.json", "{\"broken\": [1, 2,")
        let e = try #require(importError { () throws(ImportError) in try Importer.load(path: broken, format: .native) })
        #expect(e.description == "\(broken): line 1, column 18: unexpected end of file (cut short?), expected a value")
        try Self.expectCutJSON(Fixtures.path("native.json"), format: .native)
    }

    /// The JSON fixture at `path` cut at four places: each an error at the end of what is left.
    static func expectCutJSON(_ path: String, format: ImportFormat) throws {
        let scratch = ScratchFolder()
        let full = try String(contentsOfFile: path, encoding: .utf8)
        for (k, cut) in cuts(full).enumerated() {
            let file = scratch.write("cut\(k).json", cut)
            let error = try #require(importError { () throws(ImportError) in try Importer.load(path: file, format: format) }, "cut \(k)")
            #expect(error.location == end(of: cut), "cut \(k): \(error)")
            #expect(error.reason.hasPrefix("unexpected end of file (cut short?), expected "), "cut \(k): \(error)")
        }
    }

    @Test("JSON syntax: what each place expects")
    func expectations() {
        let cases: [(String, String?)] = [
            ("", "unexpected end of file (cut short?), expected a value"), ("{", "unexpected end of file (cut short?), expected a key or '}'"),
            ("{\"a\"", "unexpected end of file (cut short?), expected ':'"), ("{\"a\": 1", "unexpected end of file (cut short?), expected ',' or '}'"),
            ("[1, tr", "unexpected end of file (cut short?), expected the rest of true"),
            ("\"ab", "unexpected end of file (cut short?), expected the rest of a string and its closing quote"),
            ("[1 2]", "is not valid JSON, expected ',' or ']'"), ("{\"a\": 1,}", "is not valid JSON, expected a key in quotes"),
            ("[1] 2", "is not valid JSON, expected the end of the file after the document"),
            ("{\"a\": [1, {\"b\": null}], \"c\": \"d\\u00e9\"}", nil)
        ]
        for (text, reason) in cases {
            #expect(JSONSyntax.firstProblem(Array(text.utf8))?.reason == reason, "\(text)")
        }
        #expect(JSONSyntax.firstProblem(Array("{\n  \"a\": [\n".utf8))?.location == "line 3, column 1")
    }

    @Test("native JSON is strict: a trailing comma (which Foundation's decoder lets through) is refused with its line and column")
    func trailingCommas() throws {
        let valid = #"{"format": "bubblekit-conversation", "version": 1, "messages": [{"date": "2021-03-05T13:22:11Z", "text": "hi"}]}"#
        #expect(throws: Never.self) { try ConversationFile.decode(Data(valid.utf8), path: "ok.json") }
        let cases = [
            (
                #"{"format": "bubblekit-conversation", "version": 1, "messages": [{"date": "2021-03-05T13:22:11Z", "text": "hi"},"# + "\n]}",
                "line 2, column 1", "expected a value"
            ),
            (
                #"{"format": "bubblekit-conversation", "version": 1,"# + "\n" + #"  "messages": [{"date": "2021-03-05T13:22:11Z", "text": "hi",}]}"#,
                "line 2, column 62", "expected a key in quotes"
            )
        ]
        for (text, location, expected) in cases {
            do {
                _ = try ConversationFile.decode(Data(text.utf8), path: "chat.json")
                Issue.record("\(text): accepted")
            } catch {
                #expect(error.path == "chat.json" && error.location == location && error.reason.hasSuffix(expected), "\(error)")
            }
        }
    }

    @Test("Telegram result.json cut at four places: the position and what was expected")
    func telegram() throws {
        try Self.expectCutJSON(Fixtures.path("telegram-single/result.json"), format: .telegram)
    }

    @Test("SMS Backup & Restore XML cut at four places: the position and what was expected")
    func sms() throws {
        let scratch = ScratchFolder()
        let full = try String(contentsOfFile: Fixtures.path("sms/sms-backup.xml"), encoding: .utf8)
        for (k, cut) in Self.cuts(full).enumerated() {
            let path = scratch.write("cut\(k).xml", cut)
            let error = try #require(
                importError { () throws(ImportError) in
                    try Importer.load(path: path, format: .smsBackup, options: ImportOptions(chat: "Ann Lee"))
                }, "cut \(k)")
            #expect(error.reason.hasPrefix("unexpected end of file (cut short?): "), "cut \(k): \(error)")
            #expect(error.reason.hasSuffix("expected the rest of the backup and </smses>"), "cut \(k): \(error)")
            let lines = cut.split(separator: "\n", omittingEmptySubsequences: false).count
            #expect(
                error.location?.hasPrefix("line \(lines),") == true || error.location?.hasPrefix("line \(lines + 1),") == true,
                "cut \(k): \(error)")
        }
    }

    @Test(
        "WhatsApp cut inside a message's date and time: a warning naming the line (in the middle), an error (at the first line); cut inside a text: nothing can tell"
    )
    func whatsapp() throws {
        let scratch = ScratchFolder()
        let inHeader = scratch.write("a.txt", "13/06/2020, 09:05 - Ann: Hi\n13/06/2020, 09:0")
        let r = try Importer.load(path: inHeader, format: .whatsapp, options: ImportOptions(me: "Ann", timeZone: zone("UTC")))
        #expect(r.conversation.messages.first?.text == "Hi", "the message before is unchanged")
        #expect(
            r.warnings.map(\.description).first?.hasPrefix(
                "\(inHeader): line 2: \"13/06/2020, 09:0\": unexpected end of file (cut short?) inside a message's date and time") == true,
            "\(r.warnings)")
        let first = scratch.write("b.txt", "13/06/20")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: first, format: .whatsapp) }?.description
                == "\(first): line 1: unexpected end of file (cut short?) inside the first message's date and time")
    }
}
