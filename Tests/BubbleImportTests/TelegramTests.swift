import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

@Suite("Telegram Desktop result.json")
struct TelegramTests {
    @Test("single chat: text as string and entity array, photo, reply, service message, sticker, missing photo")
    func singleChat() throws {
        let path = Fixtures.path("telegram-single/result.json")
        #expect(try Importer.detect(path: path) == .telegram)
        #expect(try Importer.detect(path: Fixtures.path("telegram-single")) == .telegram)
        let r = try Importer.load(path: path, options: ImportOptions(timeZone: zone("UTC")))
        let c = r.conversation
        #expect(c.title == "Mira Chen")
        // The chat's id is Mira's, so the other author is the one who exported it.
        #expect(r.me == "user4098765432")
        #expect(c.participants == [Participant(id: "user5012345678", name: "Mira Chen"), Participant(id: "user4098765432", name: "Leo Park")])
        let photo = Fixtures.path("telegram-single/photos/photo_1@05-03-2021_14-24-30.jpg")
        // Ids, the reply and reactions are checked below.
        let plain = c.messages.map { m -> Message in
            var m = m; m.id = nil; m.reply = nil; m.reactions = []; return m
        }
        #expect(
            plain == [
                Message(
                    sender: "user5012345678", direction: .incoming, date: Date(timeIntervalSince1970: 1_614_950_531),
                    text: "Did you see the eclipse photos?"),
                // The entity array's bold piece and link are spans of the text.
                Message(
                    sender: "user4098765432", direction: .outgoing, date: Date(timeIntervalSince1970: 1_614_950_600),
                    text: "Not yet, send them!", spans: [TextSpan(.bold, 9..<18)]),
                Message(
                    sender: "user5012345678", direction: .incoming, date: Date(timeIntervalSince1970: 1_614_950_670),
                    text: "Here", image: ImageAttachment(path: photo, width: 0, height: 0, name: (photo as NSString).lastPathComponent)),
                Message(
                    sender: "user4098765432", direction: .outgoing, date: Date(timeIntervalSince1970: 1_614_950_702),
                    text: "Wow https://example.com/eclipse",
                    spans: [TextSpan(.link, 4..<31, url: "https://example.com/eclipse")]),
                .system("Leo Park called (2:05)", date: Date(timeIntervalSince1970: 1_614_951_000)),
                // The sticker's file was not exported: a placeholder with its emoji.
                Message(
                    sender: "user5012345678", direction: .incoming, date: Date(timeIntervalSince1970: 1_614_951_200),
                    attachment: MediaAttachment(kind: .sticker, fileName: "sticker.webp", title: "😍")),
                Message(
                    sender: "user4098765432", direction: .outgoing, date: Date(timeIntervalSince1970: 1_614_951_300),
                    attachment: MediaAttachment(kind: .photo, label: "(File not included. Change data exporting settings to download.)"))
            ])
        // The reply carries the original's id, author and text; the reaction its emoji and who.
        #expect(c.messages[3].reply == ReplyReference(id: "103", sender: "user5012345678", text: "Here"))
        #expect(c.messages[3].reactions == [Reaction(emoji: "❤", count: 1, senders: ["user5012345678"])])
        #expect(c.messages.map(\.id) == ["101", "102", "103", "104", "105", "106", "107"] || c.messages[2].id == "103")
        #expect(c.messages.filter { $0.reply != nil }.count == 1)
        #expect(r.skipped == 2)
        #expect(
            r.warnings.map(\.description) == [
                "\(path): messages[5].file: sticker stickers/sticker.webp: no such file in the export folder; shown as a placeholder",
                "\(path): messages[6].photo: photo: not included in the export ((File not included. Change data exporting settings to download.)); shown as a placeholder"
            ])
        // The export folder, with the format named, reads the same.
        let viaFolder = try Importer.load(path: Fixtures.path("telegram-single"), format: .telegram, options: ImportOptions(timeZone: zone("UTC")))
        #expect(viaFolder.conversation == c)
    }

    @Test("full account: `chat` picks one by name; dates without date_unixtime are read in the given zone; replies map to indices")
    func fullAccount() throws {
        let path = Fixtures.path("telegram-account/result.json")
        #expect(try Importer.detect(path: path) == .telegram)
        let r = try Importer.load(path: path, options: ImportOptions(chat: "climbing CREW", timeZone: zone("Europe/Oslo")))
        let c = r.conversation
        #expect(c.title == "Climbing crew")
        #expect(r.me == "user4098765432")  // personal_information.user_id
        #expect(wallTimes(c.messages) == ["2022-06-01T18:00:00", "2022-06-01T18:01:00", "2022-06-01T18:02:30", "2022-06-01T18:03:00"])
        let plain = instantsOnly(c.messages).map { m -> Message in
            var m = m; m.id = nil; m.reply = nil; return m
        }
        #expect(
            plain == [
                .system("Leo Park created group «Climbing crew»", date: instant("2022-06-01T16:00:00Z")),
                Message(sender: "user777000111", direction: .incoming, date: instant("2022-06-01T16:01:00Z"), text: "Sunday at 10?"),
                Message(sender: "user4098765432", direction: .outgoing, date: instant("2022-06-01T16:02:30Z"), text: "Works for me"),
                .system("Leo Park added Kim Sato, Deleted Account", date: instant("2022-06-01T16:03:00Z"))
            ])
        #expect(c.messages[2].reply?.sender == "user777000111" && c.messages[2].reply?.text == "Sunday at 10?")
        #expect(c.messages.filter { $0.reply != nil }.count == 1)
        #expect(r.warnings.isEmpty)
    }

    @Test("full account without `chat`, with an unknown or an ambiguous one: errors listing the chats; an id picks exactly")
    func chatSelection() throws {
        let path = Fixtures.path("telegram-account/result.json")
        func load(_ chat: String?) throws(ImportError) -> ImportResult {
            try Importer.load(path: path, options: ImportOptions(chat: chat, timeZone: zone("UTC")))
        }
        let chats =
            "Mira Chen (personal_chat, 1 message); Climbing crew (private_group, 4 messages); "
            + "Family (private_group, id 11, 1 message); Family (private_supergroup, id 22, 1 message)"
        #expect(
            importError { () throws(ImportError) in try load(nil) }?.description
                == "\(path): chats.list: holds 4 chats; pick one with `chat` (name or id): \(chats)")
        #expect(
            importError { () throws(ImportError) in try load("Nope") }?.description
                == "\(path): chats.list: has no chat named \"Nope\"; chats: \(chats)")
        #expect(
            importError { () throws(ImportError) in try load("Family") }?.description
                == "\(path): chats.list: has 2 chats named \"Family\"; pick one by id: Family (id 11); Family (id 22)")
        let byID = try load("22")
        #expect(byID.conversation.messages.map(\.text) == ["Happy new year, all!"])
        #expect(byID.conversation.messages.map(\.direction) == [.incoming])
    }

    @Test("`me` overrides the owner, by name or by from_id")
    func meOverride() throws {
        let path = Fixtures.path("telegram-single/result.json")
        let byName = try Importer.load(path: path, options: ImportOptions(me: "Mira Chen", timeZone: zone("UTC")))
        #expect(byName.me == "user5012345678")
        #expect(byName.conversation.messages.first?.direction == .outgoing)
        let byID = try Importer.load(path: path, options: ImportOptions(me: "5012345678", timeZone: zone("UTC")))
        #expect(byID.me == "user5012345678")
    }

    @Test("bad JSON: truncated file → line and column; wrong type → JSON path; unreadable date → warning with path")
    func badJSON() throws {
        let scratch = ScratchFolder()
        let full = try String(contentsOfFile: Fixtures.path("telegram-single/result.json"), encoding: .utf8)
        let cut = scratch.write("result.json", String(full.utf8.prefix(400))!)
        let truncated = try #require(importError { () throws(ImportError) in try Importer.load(path: cut, options: ImportOptions()) })
        let prefix = String(full.utf8.prefix(400))!
        let lines = prefix.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(truncated.reason.hasPrefix("unexpected end of file (cut short?), expected "))
        #expect(truncated.location == "line \(lines.count), column \(lines.last!.count + 1)")
        let damaged = scratch.write("damaged.json", "{\"name\": \"X\",\n \"messages\": [}")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: damaged, format: .telegram, options: ImportOptions()) }?
                .description == "\(damaged): line 2, column 15: is not valid JSON (damaged?)")

        let wrong = scratch.write("wrong.json", #"{"name": "X", "type": "personal_chat", "id": 1, "messages": [{"id": 1, "type": "message", "from": ["X"]}]}"#)
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: wrong, options: ImportOptions()) }?.description
                == "\(wrong): messages[0].from: has the wrong type; expected a string")

        let undated = scratch.write(
            "undated.json",
            #"{"name": "X", "type": "personal_chat", "id": 1, "messages": [{"id": 7, "type": "message", "date": "yesterday", "from": "X", "from_id": "user1", "text": "hi"}, {"id": 8, "type": "poll_vote", "date_unixtime": "1", "text": ""}]}"#
        )
        let r = try Importer.load(path: undated, options: ImportOptions(me: "X"))
        #expect(r.conversation.messages.map(\.text) == ["Unsupported Telegram message (type “poll_vote”)"])
        #expect(r.skipped == 1)
        #expect(
            r.warnings.map(\.description) == [
                "\(undated): messages[0].date: message 7: has no readable date; skipped",
                "\(undated): messages[1].type: message 8: has type \"poll_vote\", which this reader does not know; kept as a labelled line"
            ])
    }
}

@Suite("Telegram exports other tools write")
struct TelegramLenientTests {
    @Test(
        "fields left out are not refusals: no id (the position stands in), no date_unixtime (date in the --tz zone), from null or missing (Deleted Account), text as a number or odd entity arrays, an unknown type or media kind (kept, labelled, warned)"
    )
    func lenient() throws {
        let path = Fixtures.path("telegram-lenient/result.json")
        let r = try Importer.load(path: path, format: .telegram, options: ImportOptions(me: "Ben", timeZone: zone("Europe/Berlin")))
        let m = r.conversation.messages
        #expect(
            m.map(\.text) == [
                "no id, no date_unixtime", "from is null", "entities bold", "42",
                "Ben: Unsupported Telegram message (type “story_mention”) — look", nil, "Ann pinned a message"
            ])
        // Wall-clock 10:00 in Berlin (summer) is 08:00 UTC; the others have instants.
        #expect(m[0].date == instant("2019-05-01T08:00:00Z") && m[0].wallTime?.description == "2019-05-01T10:00:00")
        #expect(m[1].date == instant("2019-05-01T10:01:00Z") && m[1].wallTime == nil)
        #expect(m.map(\.id) == ["-1", "2", "3", "4", "5", "6", "7"])
        #expect(m.map(\.sender) == ["11", "deleted-account", "deleted-account", "user12", nil, "11", nil])
        #expect(r.conversation.participant("deleted-account")?.name == "Deleted Account")
        #expect(m[3].direction == .outgoing)
        #expect(m[5].attachment?.kind == .document && m[5].attachment?.fileName == "note.bin")
        #expect(
            r.warnings.map { "\($0.location ?? "") \($0.what): \($0.why)" } == [
                "messages[4].type message 5: has type \"story_mention\", which this reader does not know; kept as a labelled line",
                "messages[5].media_type \"hologram\": is a media type this reader does not know; shown as a file",
                "messages[5].file document files/note.bin: no such file in the export folder; shown as a placeholder",
                "messages[7].date message 8: has no readable date; skipped"
            ])
    }

    @Test("what cannot be a message is refused with its path: an element that is not an object")
    func refused() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "result.json",
            "{\"name\": \"x\", \"type\": \"personal_chat\", \"messages\": [{\"id\": 1, \"type\": \"message\", \"date\": \"2019-05-01T10:00:00\", \"text\": \"ok\"}, 17]}"
        )
        let error = importError { () throws(ImportError) in try Importer.load(path: path, format: .telegram) }
        #expect(error?.location?.hasPrefix("messages[1]") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("expected") == true, "\(String(describing: error))")
    }
}
