import BubbleCore
import Foundation
import Testing
import ZIPFoundation
@testable import BubbleImport

/// Who "me" is when `--me` is not given: what WhatsApp's file names and "You deleted this
/// message" lines, and Telegram's chat ids and names, tell.
@Suite("Owner inference")
struct OwnerInferenceTests {
    static let chat = """
        14/10/2021, 09:00 - Ann: Hi!
        14/10/2021, 09:01 - Ben: Hello
        14/10/2021, 09:02 - Ann: How are you?

        """

    func load(_ path: String, me: String? = nil) throws -> ImportResult {
        try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: me, timeZone: zone("UTC")))
    }

    @Test(
        "a one-to-one export is named after the other person, in English and translated: me is the other author",
        arguments: [
            "WhatsApp Chat with Ann.txt", "WhatsApp-Chat mit Ann.txt", "Chat de WhatsApp con Ann.txt",
            "Conversa do WhatsApp com Ann.txt", "Discussion WhatsApp avec Ann.txt", "Chat WhatsApp con Ann.txt",
            "WhatsApp-chat met Ann.txt", "Чат WhatsApp с Ann.txt", "Czat WhatsApp z Ann.txt", "WhatsApp Chat with Ann (1).txt"
        ])
    func fileNames(_ name: String) throws {
        let scratch = ScratchFolder()
        let r = try load(scratch.write(name, Self.chat))
        #expect(r.me == "Ben", "\(name)")
        #expect(r.conversation.messages.map(\.direction) == [.incoming, .outgoing, .incoming])
        #expect(r.notes == ["me: \"Ben\", the author who is not \"Ann\", whom the export is named after (`me` chooses another)"])
        #expect(r.warnings.isEmpty, "\(r.warnings)")
    }

    @Test("the zip's name and the folder's name say it too (iOS _chat.txt inside)")
    func zipAndFolder() throws {
        let scratch = ScratchFolder()
        let ios = "[14/10/2021, 09:00:00] Ann: Hi!\n[14/10/2021, 09:01:00] Ben: Hello\n"
        scratch.write("WhatsApp Chat - Ann/_chat.txt", ios)
        let folder = try load(scratch.file("WhatsApp Chat - Ann"))
        #expect(folder.me == "Ben" && folder.notes.count == 1)

        let zipPath = scratch.file("WhatsApp Chat with Ann.zip")
        let archive = try Archive(url: URL(fileURLWithPath: zipPath), accessMode: .create)
        let data = Data(ios.utf8)
        try archive.addEntry(with: "_chat.txt", type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { pos, size in
            data.subdata(in: Int(pos)..<Int(pos) + size)
        }
        let zipped = try load(zipPath)
        #expect(zipped.me == "Ben" && zipped.conversation.messages.map(\.direction) == [.incoming, .outgoing])
    }

    @Test("`me` overrides; a name that is neither author, or a group, infers nothing: the warning lists the authors")
    func nothingToInfer() throws {
        let scratch = ScratchFolder()
        let given = try load(scratch.write("WhatsApp Chat with Ann.txt", Self.chat), me: "Ann")
        #expect(given.me == "Ann" && given.notes.isEmpty)

        let other = scratch.write("WhatsApp Chat with Zoe.txt", Self.chat)
        let r = try load(other)
        #expect(r.me == nil && r.notes.isEmpty)
        #expect(r.warnings.map(\.description) == ["\(other): directions: no `me` given, so every message is incoming; authors: Ann; Ben"])

        let group = scratch.write("WhatsApp Chat with Trip.txt", Self.chat + "14/10/2021, 09:03 - Cy: Hi all\n")
        let g = try load(group)
        #expect(g.me == nil)
        #expect(g.warnings.first?.why == "no `me` given, so every message is incoming; authors: Ann; Ben; Cy")
    }

    @Test("in a group, the one author of \"You deleted this message\" (any language) is me")
    func deletedByOwner() throws {
        let scratch = ScratchFolder()
        let group = scratch.write(
            "WhatsApp Chat with Trip.txt",
            Self.chat + "14/10/2021, 09:03 - Cy: Hi all\n"
                + "14/10/2021, 09:04 - Ben: Du hast diese Nachricht gelöscht.\n"
                + "14/10/2021, 09:05 - Cy: This message was deleted\n")
        let r = try load(group)
        #expect(r.me == "Ben")
        #expect(r.notes == ["me: \"Ben\", the author of \"You deleted this message\" (`me` chooses another)"])
        #expect(r.conversation.messages.filter { $0.direction == .outgoing }.map(\.sender) == ["Ben", "Ben"])
    }

    @Test("Telegram: a personal chat's `name` is the other person, so me is the other author; a full export's owner is its user_id")
    func telegram() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "result.json",
            """
            {"name": "Mira Chen", "type": "personal_chat", "messages": [
              {"id": 1, "type": "message", "date": "2021-03-05T14:22:11", "date_unixtime": "1614950531", "from": "Mira Chen", "from_id": "user5", "text": "Hi"},
              {"id": 2, "type": "message", "date": "2021-03-05T14:23:20", "date_unixtime": "1614950600", "from": "Leo Park", "from_id": "user4", "text": "Hey"}
            ]}
            """)
        let r = try Importer.load(path: path, format: .telegram, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.me == "user4")
        #expect(r.notes == ["me: \"Leo Park\" (user4), the author who is not \"Mira Chen\", whom the chat is named after (`me` chooses another)"])
        #expect(r.conversation.messages.map(\.direction) == [.incoming, .outgoing])
    }

    /// A personal chat "Ana Ruiz" whose messages carry no `from_id` and whose `id` is no author's:
    /// the id says nothing, the name does — Ben is me (was: Ana, the first author who was not
    /// "user<id>", silently).
    @Test("Telegram: a personal chat's id that is no author's is passed over; the chat's name decides, with a note")
    func telegramIDNotAnAuthor() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "result.json",
            """
            {"name": "Ana Ruiz", "type": "personal_chat", "id": 4242, "messages": [
              {"id": 1, "type": "message", "date": "2021-03-05T14:22:11", "from": "Ana Ruiz", "text": "Hola"},
              {"id": 2, "type": "message", "date": "2021-03-05T14:23:20", "from": "Ben", "text": "Hi"},
              {"id": 3, "type": "message", "date": "2021-03-05T14:24:00", "from": "Ana Ruiz", "text": "Qué tal"}
            ]}
            """)
        let r = try Importer.load(path: path, format: .telegram, options: ImportOptions(timeZone: zone("UTC")))
        let ben = try #require(r.conversation.participants.first { $0.name == "Ben" })
        #expect(r.me == ben.id)
        #expect(r.notes.count == 1 && r.notes.first?.contains("the author who is not \"Ana Ruiz\"") == true, "\(r.notes)")
        #expect(r.conversation.messages.map(\.direction) == [.incoming, .outgoing, .incoming])
    }

    @Test("Telegram: a personal chat where neither the id nor the name tells who is me: all incoming, and a warning, never a guess")
    func telegramUndecided() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "result.json",
            """
            {"name": "Somebody Else", "type": "personal_chat", "id": 4242, "messages": [
              {"id": 1, "type": "message", "date": "2021-03-05T14:22:11", "from": "Ana Ruiz", "text": "Hola"},
              {"id": 2, "type": "message", "date": "2021-03-05T14:23:20", "from": "Ben", "text": "Hi"}
            ]}
            """)
        let r = try Importer.load(path: path, format: .telegram, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.me == nil)
        #expect(r.notes.isEmpty)
        #expect(r.warnings.contains { $0.what == "directions" && $0.why.contains("does not say who its owner is") }, "\(r.warnings)")
        #expect(r.conversation.messages.map(\.direction) == [.incoming, .incoming])
    }
}

/// The one rule (`OwnerInference`) on its own: each clue, the order they are tried in, and the
/// ways a `me` or an export can be wrong.
@Suite("Owner inference: the rule")
struct OwnerRuleTests {
    static let ann = OwnerInference.Author(id: "user1", also: ["1"], names: ["Ann Lee"], listed: "Ann Lee (user1)")
    static let ben = OwnerInference.Author(id: "user2", also: ["2"], names: ["Ben", "+44 7700 900123"], listed: "Ben (user2)")
    static let cy = OwnerInference.Author(id: "user3", names: ["Cy"])

    func resolve(_ authors: [OwnerInference.Author], me: String? = nil, _ clues: [OwnerInference.Clue]) -> (String?, ImportResult) {
        let context = ImportContext(path: "chat", options: ImportOptions())
        let owner = OwnerInference(authors: authors).resolve(me: me, clues: clues, context: context)
        var result = ImportResult(conversation: Conversation(), format: .telegram)
        context.finish(&result)
        return (owner, result)
    }

    @Test(
        "`me` by id, other id, name in any case or decoration, the same phone number written otherwise",
        arguments: ["user2", "2", "Ben", "ben", "BEN", "+447700900123", "7700 900123"])
    func meMatches(_ me: String) {
        let (owner, r) = resolve([Self.ann, Self.ben], me: me, [.namedAfter("Ben", how: "x")])
        #expect(owner == "user2", "\(me)")
        #expect(r.notes.isEmpty && r.warnings.isEmpty && r.unknownOwner == nil)
    }

    @Test("`me` naming nobody: all incoming and said, the names never used instead — unless the export names its owner")
    func meNamesNobody() {
        let (owner, r) = resolve([Self.ann, Self.ben], me: "Zoe", [.namedAfter("Ann Lee", how: "whom the chat is named after")])
        #expect(owner == nil)
        #expect(r.unknownOwner?.contains("is not an author here") == true)
        #expect(r.warnings.first?.why.contains("Ann Lee (user1); Ben (user2)") == true)
        let (profiled, p) = resolve([Self.ann, Self.ben], me: "Zoe", [.profile(id: "user2", name: nil, how: "its owner")])
        #expect(profiled == "user2")
        #expect(p.unknownOwner == nil && p.warnings.count == 1 && p.notes.isEmpty)
    }

    @Test("clues in order, the first that names one author decides, with a note saying how")
    func order() {
        let (owner, r) = resolve(
            [Self.ann, Self.ben],
            [
                .soleAuthor(of: ["user1", "user2"], how: "a"),
                .namedAfter("ann lee", how: "whom the chat is named after"),
                .profile(id: "user1", name: nil, how: "b")
            ])
        #expect(owner == "user2")
        #expect(r.notes == ["me: \"Ben\" (user2), the author who is not \"Ann Lee\", whom the chat is named after (`me` chooses another)"])
        // A profile id is believed though its owner wrote nothing here.
        let (silent, _) = resolve([Self.ann, Self.ben], [.profile(id: "user9", name: nil, how: "owner")])
        #expect(silent == "user9")
        // A profile name must be an author's.
        let (unknown, u) = resolve([Self.ann, Self.ben], [.profile(id: nil, name: "Zoe", how: "owner")])
        #expect(unknown == nil && u.warnings.first?.what == "directions")
    }

    @Test(
        "a group, a name that is nobody's, an id that is nobody's, an empty title: no guess, a warning",
        arguments: [
            OwnerInference.Clue.namedAfter("Ann Lee", how: "x"), .namedAfter("Zoe", how: "x"), .namedAfter("", how: "x"),
            .chatID("user9", how: "x"), .everywhere(["Ann Lee", "Ben"], how: "x"), .soleAuthor(of: [], how: "x")
        ])
    func noGuess(_ clue: OwnerInference.Clue) {
        let (owner, r) = resolve([Self.ann, Self.ben, Self.cy], [clue])
        #expect(owner == nil)
        #expect(r.notes.isEmpty)
        #expect(r.unknownOwner == "directions: no `me` given, so every message is incoming; authors: Ann Lee (user1); Ben (user2); Cy")
    }

    @Test("no authors at all: nothing to say")
    func empty() {
        let (owner, r) = resolve([], [.namedAfter("Ann", how: "x")])
        #expect(owner == nil && r.warnings.isEmpty && r.unknownOwner == nil)
    }
}
