import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

/// DiscordChatExporter JSON. Fixtures: Fixtures/make-meta-discord.py writes them as DCE does.
@Suite("DiscordChatExporter JSON")
struct DiscordTests {
    static let folder = Fixtures.path("discord")
    static let dm = folder + "/Direct Messages - ann [1001].json"
    static let files = folder + "/Direct Messages - ann [1001].json_Files"

    static func parse(_ text: String, _ mentions: [String: String] = [:]) -> String {
        let (out, spans) = DiscordMarkdown.parse(text, mentions: mentions)
        let bytes = Array(out.utf8)
        return out
            + spans.map { s in
                " [\(s.style.rawValue):" + String(decoding: bytes[s.range], as: UTF8.self) + (s.url.map { "→" + $0 } ?? "") + "]"
            }.joined()
    }

    @Test("markdown: the app's markers into spans; unclosed markers, snake_case and escapes stay text; references resolved")
    func markdown() {
        #expect(Self.parse("plain text") == "plain text")
        #expect(
            Self.parse("**b** *i* _i_ __u__ ~~s~~ ||x|| `c`") == "b i i u s x c [bold:b] [italic:i] [italic:i] [underline:u] [strike:s] [spoiler:x] [code:c]")
        #expect(Self.parse("***both***") == "both [bold:both] [italic:both]")
        #expect(Self.parse("**bold *and italic***") == "bold and italic [bold:bold and italic] [italic:and italic]")
        // As the app: `*` needs no word boundary (2*3*4 shows 3 in italics), `_` does.
        #expect(Self.parse("snake_case_name and 2*3*4 and a * b") == "snake_case_name and 234 and a * b [italic:3]")
        #expect(Self.parse("**unclosed and `open") == "**unclosed and `open")
        #expect(Self.parse("\\*not italic\\*") == "*not italic*")
        #expect(Self.parse("`**not bold**`") == "**not bold** [code:**not bold**]")
        #expect(Self.parse("```js\nlet a = 1;\n```") == "let a = 1; [pre:let a = 1;]")
        #expect(Self.parse("> first\nsecond") == "first\nsecond [quote:first]")
        #expect(Self.parse(">>> all\nof it") == "all\nof it [quote:all\nof it]")
        #expect(Self.parse("see [the docs](https://example.org/d) now") == "see the docs now [link:the docs→https://example.org/d]")
        #expect(
            Self.parse("hi <@42> in <#7> <:party:99> <https://x.org>", ["42": "Ann"])
                == "hi @Ann in #channel :party: https://x.org [mention:@Ann→42] [mention:#channel] [link:https://x.org→https://x.org]")
        #expect(Self.parse("at <t:1600000000:f>") == "at 2020-09-13 12:26 UTC")
        #expect(DiscordMarkdown.parse("at <t:1600000000:f>", timeZone: zone("Europe/Berlin")).text == "at 2020-09-13 14:26")
        #expect(Self.parse("<not a reference>") == "<not a reference>")
    }

    @Test("times: ISO 8601 with fractions and offsets; anything else nil")
    func times() {
        #expect(DiscordTime.parse("2020-09-13T21:20:31.49+02:00") == Date(timeIntervalSince1970: 1_600_024_831.49))
        #expect(DiscordTime.parse("2020-09-13T19:20:31Z") == Date(timeIntervalSince1970: 1_600_024_831))
        #expect(DiscordTime.parse("2020-09-13T19:20:31-05:30") == Date(timeIntervalSince1970: 1_600_024_831 + 19_800))
        #expect(DiscordTime.parse("2024-02-29T00:00:00+00:00") == Date(timeIntervalSince1970: 1_709_164_800))
        for bad in ["", "2020-13-01T00:00:00Z", "2020-09-13", "2020-09-13T19:20:31+0200", "2020-09-13T19:20:31Zjunk"] {
            #expect(DiscordTime.parse(bad) == nil, "\(bad)")
        }
    }

    @Test("direct messages: formatting, mention, reply, edit, reactions, embed, local and remote attachments, call, pin, avatar; owner inferred")
    func directMessages() throws {
        #expect(try Importer.detect(path: Self.dm) == .discord)
        let r = try Importer.load(path: Self.dm, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.format == .discord)
        #expect(r.me == "502")
        let c = r.conversation
        #expect(c.title == "ann")
        #expect(c.participants == [Participant(id: "501", name: "Ann", avatar: Self.files + "/avatar-ann.png"), Participant(id: "502", name: "Zoë")])
        let m = c.messages
        #expect(m.count == 7)
        #expect(m[0].text == "Hi Zoë, see the end now later really")
        #expect(m[0].spans.map(\.style) == [.bold, .italic, .spoiler, .code, .strike, .underline])
        #expect(m[0].date == Date(timeIntervalSince1970: 1_709_238_031.49))
        #expect(m[1].direction == .outgoing)
        #expect(m[1].text == "quoted line\nyes @Ann :)")
        #expect(m[1].spans == [TextSpan(.quote, 0..<11), TextSpan(.mention, 16..<20, url: "501")])
        #expect(m[1].reply?.id == "110000000000000001" && m[1].reply?.sender == "501")
        // The spoiler stays hidden in the quote.
        #expect(m[1].reply?.text?.contains("the end") == false)
        #expect(m[1].edited == Date(timeIntervalSince1970: 1_709_238_300.123))
        #expect(m[1].reactions == [Reaction(emoji: "❤️", count: 2)])
        #expect(m[2].images == [ImageAttachment(path: Self.files + "/orientation-1-9A1B.jpg", width: 0, height: 0, name: "orientation-1.jpg")])
        #expect(
            m[2].attachment?.kind == .document && m[2].attachment?.fileName == "notes.pdf" && m[2].attachment?.path == nil
                && m[2].attachment?.byteSize == 5555)
        #expect(r.missingMedia == 1)
        #expect(r.warnings.contains { $0.location == "messages[2].attachments" && $0.why.contains("never fetched") })
        #expect(m[3].text == "https://example.org/post\nA post title\nWhat the post says.")
        #expect(m[3].spans == [TextSpan(.link, 25..<37, url: "https://example.org/post"), TextSpan(.bold, 52..<56)])
        #expect(m[4] == Message.system("Call · 2:05 (started by Ann)", date: DiscordTime.parse("2024-02-29T21:30:00+01:00")!).with(id: "110000000000000005"))
        #expect(m[5].text == "Zoë pinned a message" && m[5].kind == .system)
        #expect(m[6].text == "let x = 1" && m[6].spans == [TextSpan(.pre, 0..<9)])
        // --me by name or nickname.
        #expect(try Importer.load(path: Self.dm, options: ImportOptions(me: "ann")).me == "501")
        #expect(try Importer.load(path: Self.dm, options: ImportOptions(me: "Ann")).me == "501")
    }

    @Test("a group DM: members added and leaving as lines; a remote sticker as a labelled placeholder")
    func groupDM() throws {
        let r = try Importer.load(path: Self.folder + "/Direct Messages - Group [1002].json", options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.conversation.title == "Weekend")
        #expect(r.conversation.messages.map(\.text) == ["Ann added Kai to the group", "Hallo zusammen 👋", "Kai left the group"])
        #expect(r.conversation.messages[1].attachment == MediaAttachment(kind: .sticker, fileName: "Wave", title: "Wave"))
        #expect(r.me == nil)
        #expect(r.warnings.contains { $0.what == "directions" })
    }

    @Test("a server channel exported in two parts is one conversation; a reply across the parts is quoted")
    func splitChannel() throws {
        for path in [Self.folder + "/Hikers - general [2001].json", Self.folder + "/Hikers - general [2001] [part 2].json"] {
            let r = try Importer.load(path: path, options: ImportOptions(me: "Ann", timeZone: zone("UTC")))
            #expect(r.conversation.title == "#general · Hikers")
            #expect(r.conversation.messages.map(\.text) == ["Kai joined the server", "Trail report: muddy", "Thanks!", "Ann started a thread: Gear talk"])
            #expect(r.conversation.messages[2].reply == ReplyReference(id: "130000000000000002", sender: "503", text: "Trail report: muddy"))
            #expect(r.conversation.messages[2].direction == .outgoing)
            #expect(r.notes.contains { $0.hasPrefix("2 parts of the channel's export joined") })
        }
        #expect(DiscordImporter.part(of: "Hikers - general [2001] [part 12].json") == ("Hikers - general [2001]", 12))
        #expect(DiscordImporter.part(of: "Hikers - general [2001].json") == ("Hikers - general [2001]", 1))
    }

    @Test("detection: DiscordChatExporter writes guild first; a Telegram chat that says \"guild\" and \"channel\" stays Telegram")
    func detection() throws {
        let scratch = ScratchFolder()
        let telegram = scratch.write(
            "result.json",
            """
            {"name": "Ann", "type": "personal_chat", "id": 1, "messages": [
              {"id": 1, "type": "message", "date": "2024-01-01T10:00:00", "date_unixtime": "1704103200", "from": "Ann", "from_id": "user1", "text": "guild"},
              {"id": 2, "type": "message", "date": "2024-01-01T10:01:00", "date_unixtime": "1704103260", "from": "Ann", "from_id": "user1", "text": "channel"}]}
            """)
        #expect(try Importer.detect(path: telegram) == .telegram)
        #expect(FormatDetector.isDiscord("\u{FEFF}\n{\n  \"guild\": {}, \"channel\": {}}"))
        #expect(!FormatDetector.isDiscord("{\"name\": \"guild\", \"channel\": 1}"))
    }

    @Test("a folder of channel files: --chat picks one by name or id, --all reads each, no choice lists them")
    func folderOfChannels() throws {
        #expect(try Importer.detect(path: Self.folder) == .discord)
        let e = try #require(importError { () throws(ImportError) in try Importer.load(path: Self.folder) })
        #expect(e.reason.contains("holds 3 channels") && e.reason.contains("#general · Hikers (2001)"))
        #expect(try Importer.load(path: Self.folder, options: ImportOptions(chat: "#general")).conversation.messages.count == 4)
        #expect(try Importer.load(path: Self.folder, options: ImportOptions(chat: "1002")).conversation.title == "Weekend")
        var titles: [String] = []
        try Importer.loadEach(path: Self.folder) { titles.append($0.conversation.title ?? "") }
        #expect(titles == ["Weekend", "ann", "#general · Hikers"])  // by file name
    }

    @Test("damaged files: cut short at four places, a wrong type — one error naming the file and place")
    func damaged() throws {
        try CutFileTests.expectCutJSON(Self.dm, format: .discord)
        let scratch = ScratchFolder()
        let wrong = scratch.write(
            "c.json",
            "{\"guild\": {}, \"channel\": {\"id\": \"1\"}, \"messages\": [{\"id\": \"1\", \"timestamp\": \"2020-01-01T00:00:00Z\", \"reactions\": 5}]}")
        let e = try #require(importError { () throws(ImportError) in try Importer.load(path: wrong) })
        #expect(e.description == "\(wrong): messages[0].reactions: has the wrong type; expected an array")
        let bad = scratch.write("d.json", "{\"guild\": {}, \"channel\": {}, \"messages\": [{\"id\": \"1\", \"timestamp\": \"yesterday\", \"content\": \"x\"}]}")
        let r = try Importer.load(path: bad)
        #expect(r.conversation.messages.isEmpty && r.skipped == 1)
        #expect(r.warnings.first?.location == "messages[0].timestamp")
    }
}

extension Message {
    func with(id: String) -> Message { var m = self; m.id = id; return m }
}
