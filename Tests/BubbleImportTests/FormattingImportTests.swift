import BubbleCore
import BubbleMarkup
import Foundation
import GRDB
import Testing
@testable import BubbleImport

/// "text with *bold*" → the text and its spans as (style, substring) pairs, for readable cases.
private func read(_ markup: String) -> (String, [String]) {
    let (text, spans) = ChatMarkup.parse(markup)
    let bytes = Array(text.utf8)
    return (text, spans.map { "\($0.style.rawValue):" + String(decoding: bytes[$0.range], as: UTF8.self) })
}

@Suite("Formatting read from exports: WhatsApp markup, Telegram entities, iMessage attributes")
struct FormattingImportTests {
    @Test(
        "WhatsApp markup becomes spans, its markers removed",
        arguments: [
            ("Look at *this*", "Look at this", ["bold:this"]),
            ("_so_ ~wrong~ *really*", "so wrong really", ["italic:so", "strike:wrong", "bold:really"]),
            ("run `make test` now", "run make test now", ["code:make test"]),
            ("```let x = *1*\nprint(x)```", "let x = *1*\nprint(x)", ["pre:let x = *1*\nprint(x)"]),
            ("> the original\nmy answer", "the original\nmy answer", ["quote:the original"]),
            ("*_both_*", "both", ["bold:both", "italic:both"]),
            ("*bold*, then _it_.", "bold, then it.", ["bold:bold", "italic:it"]),
            ("(*a*)", "(a)", ["bold:a"]),
            ("Ünïcödé *wörds* ok", "Ünïcödé wörds ok", ["bold:wörds"])
        ])
    func whatsAppMarkup(_ markup: String, _ text: String, _ spans: [String]) {
        let (t, s) = read(markup)
        #expect(t == text)
        #expect(s.sorted() == spans.sorted())
    }

    @Test(
        "WhatsApp's false positives stay literal",
        arguments: [
            "2*3*4 = 24", "snake_case_name and other_name", "cd ~/path and ~/other", "see https://example.com/_private_/x?a_b=1",
            "a * b * c", "* first item\n* second item", "- dash item", "1. numbered", "*not closed", "* spaced *",
            "mail me at first_last@example.com",
            "a_b_", "price*", "**", "_ _", "x~y~z"
        ])
    func falsePositives(_ markup: String) {
        let (t, s) = read(markup)
        #expect(t == markup)
        #expect(s.isEmpty)
    }

    @Test(
        "format puts the markers back: parse(format(text, spans)) is the same text and spans",
        arguments: [
            "Look at *this*", "_so_ ~wrong~ *really*", "run `make test` now", "```let x = *1*\nprint(x)```", "> the original\nmy answer",
            "*_both_*", "*bold*, then _it_.", "plain text"
        ])
    func formatRoundTrip(_ markup: String) {
        let (text, spans) = ChatMarkup.parse(markup)
        #expect(ChatMarkup.format(text, spans: spans) == markup)
        let again = ChatMarkup.parse(ChatMarkup.format(text, spans: spans))
        #expect(again.text == text && again.spans == spans)
    }

    @Test("a long line of unclosed markers reads as it is (each closer is looked up, not searched for)")
    func unclosedMarkers() {
        // 180,000 characters, 60,000 openers and not one closer: a search per opener to the
        // line's end would take minutes.
        let line = "```` " + String(repeating: "*a _b ~c ", count: 20_000)
        let (text, spans) = ChatMarkup.parse(line)
        #expect(text.utf8.count == line.utf8.count && text == line)
        #expect(spans.count == 0)
    }

    @Test("nothing inside code is formatted")
    func codeIsLiteral() {
        #expect(read("`*not bold*` but *this*") == ("*not bold* but this", ["code:*not bold*", "bold:this"]))
    }

    @Test("the edited marker at a message's end (English and translations) is removed; elsewhere it is text")
    func editedMarker() {
        #expect(WhatsAppMarkup.editedMarker("See you at 8 <This message was edited>") == ("See you at 8", true))
        #expect(WhatsAppMarkup.editedMarker("Bis gleich\u{200E} <Diese Nachricht wurde bearbeitet.>") == ("Bis gleich", true))
        #expect(WhatsAppMarkup.editedMarker("a <b> tag") == ("a <b> tag", false))
        #expect(WhatsAppMarkup.editedMarker("<Media omitted>") == ("<Media omitted>", false))
    }

    @Test("a WhatsApp chat: spans, the edited marker as `edited` (the message's own time), system lines untouched")
    func whatsAppChat() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "chat.txt",
            """
            12/24/19, 11:23 - Ann: Did you see *this*?
            12/24/19, 11:24 - Ben: _yes_ and `code`
            > quoted
            12/24/19, 11:25 - Ben: See you at 8 <This message was edited>
            12/24/19, 11:26 - Ann changed the subject to "*party*"
            12/24/19, 11:27 - Ann: 2*3*4 snake_case

            """)
        let r = try Importer.load(path: path, options: ImportOptions(me: "Ben", timeZone: zone("UTC")))
        let m = r.conversation.messages
        #expect(
            m.map(\.text) == [
                "Did you see this?", "yes and code\nquoted", "See you at 8", "Ann changed the subject to \"*party*\"",
                "2*3*4 snake_case"
            ])
        #expect(m[0].spans == [TextSpan(.bold, 12..<16)])
        #expect(m[1].spans == [TextSpan(.italic, 0..<3), TextSpan(.code, 8..<12), TextSpan(.quote, 13..<19)])
        #expect(m[2].edited == m[2].date)
        #expect(m[0].edited == nil)
        #expect(m[3].kind == .system && m[3].spans.isEmpty)
        #expect(m[4].spans.isEmpty)
    }

    @Test("Telegram entities: every formatting type, links with targets, mentions; edited, forwarded, poll answers")
    func telegram() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "result.json",
            #"""
            {"name": "Mira", "type": "personal_chat", "id": 1, "messages": [
             {"id": 1, "type": "message", "date": "2021-03-05T14:22:11", "date_unixtime": "1614950531", "from": "Mira", "from_id": "user1",
              "edited": "2021-03-05T14:30:00", "edited_unixtime": "1614951000", "forwarded_from": "Leo",
              "text": ["Plain ", {"type": "bold", "text": "bold"}, " ", {"type": "italic", "text": "it"}, " ",
                       {"type": "underline", "text": "u"}, " ", {"type": "strikethrough", "text": "s"}, " ",
                       {"type": "code", "text": "c()"}, " ", {"type": "pre", "text": "p", "language": "swift"}, " ",
                       {"type": "spoiler", "text": "secret"}, " ", {"type": "blockquote", "text": "q"}, " ",
                       {"type": "text_link", "text": "here", "href": "https://example.com/x"}, " ",
                       {"type": "link", "text": "example.org"}, " ", {"type": "mention", "text": "@leo"}, " ",
                       {"type": "mention_name", "text": "Leo", "user_id": 42}, " ", {"type": "hashtag", "text": "#tag"}, " ",
                       {"type": "custom_emoji", "text": "🙂", "document_id": "x"}]},
             {"id": 2, "type": "message", "date": "2021-03-05T14:23:00", "date_unixtime": "1614950580", "from": "Leo", "from_id": "user2",
              "forwarded_from": null, "text": "",
              "poll": {"question": "Dinner?", "closed": false, "total_voters": 4,
                       "answers": [{"text": "Pizza", "voters": 3, "chosen": true}, {"text": "Sushi", "voters": 1, "chosen": false}]}}
            ]}
            """#)
        let r = try Importer.load(path: path, options: ImportOptions(timeZone: zone("UTC")))
        let m = r.conversation.messages
        let text = try #require(m[0].text)
        #expect(text == "Plain bold it u s c() p secret q here example.org @leo Leo #tag 🙂")
        let bytes = Array(text.utf8)
        let shown = m[0].spans.map { "\($0.style.rawValue):" + String(decoding: bytes[$0.range], as: UTF8.self) + ($0.url.map { "→" + $0 } ?? "") }
        #expect(
            shown == [
                "bold:bold", "italic:it", "underline:u", "strike:s", "code:c()", "pre:p", "spoiler:secret", "quote:q",
                "link:here→https://example.com/x", "link:example.org→https://example.org", "mention:@leo", "mention:Leo→42"
            ])
        #expect(m[0].edited == Date(timeIntervalSince1970: 1_614_951_000))
        #expect(m[0].forwardedFrom == "Leo")
        #expect(m[1].forwardedFrom == "")  // forwarded, the author hidden
        #expect(m[1].attachment?.kind == .poll)
        #expect(m[1].attachment?.answers == [PollAnswer(text: "Pizza", votes: 3, chosen: true), PollAnswer(text: "Sushi", votes: 1)])
        #expect(m[1].attachment?.voters == 4)
        #expect(m[1].shownText == "Forwarded\n📊 Poll: Dinner?\n✓ Pizza · 3\n○ Sushi · 1\n4 votes")
    }

    @Test("iMessage attributedBody: runs of bold, italic, underline, strikethrough, a link and a mention, offsets in UTF-16")
    func iMessageRuns() throws {
        // "😀 Bold and italic link @Ann": the emoji counts 2 UTF-16 units and 4 UTF-8 bytes.
        let text = "😀 Bold and italic link @Ann"
        var w = TypedStreamWriter()
        let blob = w.attributedString(
            text,
            runs: [
                (1, 3, []), (2, 4, [("__kIMTextBoldAttributeName", .number)]), (1, 5, []),
                (3, 6, [("__kIMTextItalicAttributeName", .number), ("__kIMTextUnderlineAttributeName", .number)]), (1, 1, []),
                (4, 4, [("__kIMLinkAttributeName", .url("https://example.com/l"))]), (1, 1, []),
                (5, 4, [("__kIMMentionConfirmedMention", .string("ann@example.com")), ("__kIMTextStrikethroughAttributeName", .number)])
            ])
        let spans = IMessageImporter.attributedBodySpans(blob, text: text)
        let bytes = Array(text.utf8)
        let shown = spans.map { "\($0.style.rawValue):" + String(decoding: bytes[$0.range], as: UTF8.self) + ($0.url.map { "→" + $0 } ?? "") }
        #expect(
            shown == [
                "bold:Bold", "italic:italic", "underline:italic", "link:link→https://example.com/l",
                "mention:@Ann→ann@example.com", "strike:@Ann"
            ])
        // The plain reader finds the same text in it.
        #expect(IMessageImporter.attributedBodyText(Data(blob)) == text)
        // Damaged archives give no spans, never a crash; nor does one nesting objects 50,000 deep.
        for cut in stride(from: 0, to: blob.count, by: 7) {
            _ = IMessageImporter.attributedBodySpans(Array(blob[0..<cut]), text: text)
        }
        let header: [UInt8] = [0x04, 0x0B] + Array("streamtyped".utf8) + [0x81, 0xE8, 0x03, 0x84, 0x01, 0x40]
        let deep = header + Array(repeating: [0x84, 0x84, 0x84, 0x01, 0x58, 0x00, 0x85, 0x92], count: 50_000).flatMap { $0 }
        #expect(IMessageImporter.attributedBodySpans(deep, text: text).isEmpty)
    }

    @Test("iMessage chat.db: formatting from attributedBody and date_edited")
    func iMessageDatabase() throws {
        let db = try ChatDatabase()
        var w = TypedStreamWriter()
        let blob = w.attributedString("Count me in", runs: [(1, 6, []), (2, 2, [("__kIMTextBoldAttributeName", .number)]), (1, 3, [])])
        let queue = try DatabaseQueue(path: db.path)
        try queue.write { d in
            try d.execute(
                sql: "UPDATE message SET text = NULL, attributedBody = ?, date_edited = ? WHERE ROWID = 10",
                arguments: [Data(blob), ChatDatabase.nanoseconds(1100)])
        }
        let r = try Importer.load(path: db.path, options: ImportOptions(me: "Leo", chat: "weekend plans", homeFolder: db.home))
        let m = try #require(r.conversation.messages.last)
        #expect(m.text == "Count me in")
        #expect(m.spans == [TextSpan(.bold, 6..<8)])
        #expect(m.edited == Date(timeIntervalSince1970: 1_700_001_100))
    }
}

/// Writes Apple typedstream archives the way NSArchiver lays them out (shared strings and
/// objects numbered in order of appearance, references as 0x92 + index), for the tests.
struct TypedStreamWriter {
    enum Value { case number, string(String), url(String) }
    private(set) var bytes: [UInt8] = [0x04, 0x0B] + Array("streamtyped".utf8) + [0x81, 0xE8, 0x03]
    private var strings: [String] = []
    private var objects = 0
    private var classes: [String: Int] = [:]

    private mutating func int(_ v: Int) {
        if (0..<0x80).contains(v) { bytes.append(UInt8(v)) } else { bytes.append(0x81); bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8((v >> 8) & 0xFF)) }
    }
    private mutating func shared(_ s: String) {
        if let k = strings.firstIndex(of: s) { bytes.append(UInt8(0x92 + k)); return }
        bytes.append(0x84); int(s.utf8.count); bytes += Array(s.utf8)
        strings.append(s)
    }
    private mutating func type(_ t: String) { shared(t) }
    private mutating func begin(_ chain: [String]) {
        bytes.append(0x84)
        objects += 1
        for name in chain {
            if let k = classes[name] { bytes.append(UInt8(0x92 + k)); return }
            bytes.append(0x84); shared(name); int(name == "NSString" ? 1 : 0)
            classes[name] = objects
            objects += 1
        }
        bytes.append(0x85)
    }
    private mutating func end() { bytes.append(0x86) }
    private mutating func nsString(_ s: String) {
        begin(["NSString", "NSObject"]); type("+"); int(s.utf8.count); bytes += Array(s.utf8); end()
    }

    mutating func attributedString(_ text: String, runs: [(id: Int, length: Int, attributes: [(String, Value)])]) -> [UInt8] {
        type("@")
        begin(["NSAttributedString", "NSObject"])
        type("@"); nsString(text)
        var seen = Set<Int>()
        for run in runs {
            type("iI"); int(run.id); int(run.length)
            guard seen.insert(run.id).inserted else { continue }
            type("@")
            begin(["NSDictionary", "NSObject"])
            type("i"); int(run.attributes.count)
            for (key, value) in run.attributes {
                type("@"); nsString(key)
                type("@")
                switch value {
                case .number: begin(["NSNumber", "NSValue", "NSObject"]); type("*"); bytes.append(0x84); shared("c"); objects += 1; type("c"); int(1); end()
                case .string(let s): nsString(s)
                case .url(let u): begin(["NSURL", "NSObject"]); type("c"); int(0); type("@"); nsString(u); end()
                }
            }
            end()
        }
        end()
        return bytes
    }
}
