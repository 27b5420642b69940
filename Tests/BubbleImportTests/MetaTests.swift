import BubbleCore
import Foundation
import Testing
import ZIPFoundation
@testable import BubbleImport

/// Facebook Messenger and Instagram "Download your information" (JSON), and Messenger's download
/// of end-to-end encrypted chats. Fixtures: Fixtures/make-meta-discord.py writes them as Meta does
/// (every UTF-8 byte its own \u00XX escape, newest first, a thread over two files).
@Suite("Messenger and Instagram downloads")
struct MetaTests {
    static let t0 = 1_700_000_000.0
    static func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: t0 + seconds) }
    static let facebook = Fixtures.path("meta-facebook")
    static let annThread = Fixtures.path("meta-facebook/your_activity_across_facebook/messages/inbox/annlee_10158")

    @Test("mojibake undone exactly: Latin, Cyrillic, Arabic, emoji; strings already right stay")
    func mojibake() {
        // What Meta writes: each UTF-8 byte as the code point of the same value.
        func written(_ s: String) -> String { String(String.UnicodeScalarView(s.utf8.map { Unicode.Scalar($0) })) }
        for text in ["Café", "Zoë Martin", "Привет", "مرحبا", "👋🏽 and 🇩🇪", "日本語", "plain ascii"] {
            #expect(MetaText.undoMojibake(written(text)) == text)
            // Already right: left alone (scalars above U+00FF, or bytes that are not UTF-8).
            #expect(MetaText.undoMojibake(text) == text)
        }
        #expect(MetaText.undoMojibake("Caf\u{00C3}\u{00A9}") == "Café")
        // "é" alone (0xE9) is no UTF-8 sequence: kept.
        #expect(MetaText.undoMojibake("Café") == "Café")
        #expect(MetaText.undoMojibake("\u{00C3}") == "\u{00C3}")
    }

    @Test("newer Facebook layout: two files joined oldest first, owner from the profile, media, reactions, call, share, unsent")
    func facebookThread() throws {
        #expect(try Importer.detect(path: Self.facebook) == .messenger)
        let r = try Importer.load(path: Self.facebook, options: ImportOptions(chat: "Ann Lee", timeZone: zone("UTC")))
        #expect(r.format == .messenger)
        #expect(r.me == "Zoë Martin")
        #expect(r.notes.contains { $0.contains("who downloaded this Messenger data") })
        let c = r.conversation
        #expect(c.title == "Ann Lee")
        #expect(c.participants.map(\.name) == ["Ann Lee", "Zoë Martin"])
        let media = Self.annThread
        #expect(c.messages.map(\.date) == (0...9).map { Self.at(Double($0)) })
        let expected: [Message] = [
            Message(sender: "Ann Lee", direction: .incoming, date: Self.at(0), text: "Hi Zoë!"),
            Message(
                sender: "Zoë Martin", direction: .outgoing, date: Self.at(1),
                image: ImageAttachment(
                    path: Fixtures.path("meta-facebook/your_activity_across_facebook/messages/stickers_used/sticker.webp"),
                    width: 0, height: 0, name: "sticker.webp", sticker: true)),
            // "Zoë Martin sent an attachment." is said by the attachment itself.
            Message(
                sender: "Zoë Martin", direction: .outgoing, date: Self.at(2),
                attachment: MediaAttachment.described(kind: .document, fileName: "Trip plan.pdf", path: media + "/files/Trip plan.pdf")),
            Message(
                sender: "Ann Lee", direction: .incoming, date: Self.at(3),
                attachment: MediaAttachment.described(kind: .voice, fileName: "PTT-20211014-WA0004.opus", path: media + "/audio/PTT-20211014-WA0004.opus")),
            Message(sender: "Ann Lee", direction: .incoming, date: Self.at(4), text: "Café at 5?"),
            Message(
                sender: "Zoë Martin", direction: .outgoing, date: Self.at(5), text: "Привет 👋 مرحبا",
                reactions: [Reaction(emoji: "❤️", count: 1, senders: ["Ann Lee"]), Reaction(emoji: "😂", count: 1, senders: ["Zoë Martin"])]),
            Message(
                sender: "Ann Lee", direction: .incoming, date: Self.at(6),
                image: ImageAttachment(path: media + "/photos/orientation-6.jpg", width: 0, height: 0, name: "orientation-6.jpg")),
            .system("Call · 2:05", date: Self.at(7)),
            Message(sender: "Zoë Martin", direction: .outgoing, date: Self.at(8), text: "Look https://example.org/trip"),
            Message(sender: "Ann Lee", direction: .incoming, date: Self.at(9), attachment: MediaAttachment(kind: .deleted))
        ]
        #expect(c.messages == expected)
        #expect(c.messages[2].attachment?.pageCount == 2)
        #expect(r.warnings.isEmpty, "\(r.warnings)")
    }

    @Test("a thread's own file stands for its thread: every message_N.json beside it, media from the export's root")
    func oneFile() throws {
        let file = Self.annThread + "/message_2.json"
        #expect(try Importer.detect(path: file) == .messenger)
        let r = try Importer.load(path: file, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.conversation.messages.count == 10)
        #expect(r.conversation.messages[6].images.first?.path == Self.annThread + "/photos/orientation-6.jpg")
        #expect(r.missingMedia == 0)
        // A thread folder works too.
        #expect(try Importer.load(path: Self.annThread, options: ImportOptions(timeZone: zone("UTC"))).conversation.messages.count == 10)
    }

    @Test("archived group: members added and leaving, a missed call; German text and emoji intact")
    func group() throws {
        let r = try Importer.load(path: Self.facebook, options: ImportOptions(chat: "Hiking Club ⛰️", timeZone: zone("UTC")))
        #expect(r.conversation.title == "Hiking Club ⛰️")
        #expect(
            r.conversation.messages == [
                Message(sender: "Zoë Martin", direction: .outgoing, date: Self.at(20), text: "Wanderung am Sonntag? Größe egal 🙂"),
                .system("Zoë Martin added Kai Weber", date: Self.at(30)),
                .system("Missed call", date: Self.at(40)),
                .system("Kai Weber left the group.", date: Self.at(50))
            ])
        // The folder's name picks it as well.
        #expect(try Importer.load(path: Self.facebook, options: ImportOptions(chat: "hikingclub_2024", timeZone: zone("UTC"))).conversation.messages.count == 4)
    }

    @Test("several threads and no --chat: one error listing them; --all reads each")
    func everyThread() throws {
        let e = try #require(importError { () throws(ImportError) in try Importer.load(path: Self.facebook) })
        #expect(e.reason.contains("holds 2 threads"))
        #expect(e.reason.contains("Ann Lee (annlee_10158)") && e.reason.contains("Hiking Club ⛰️ (hikingclub_2024)"))
        var seen: [(String, Int, String?)] = []
        let batch = try Importer.loadEach(path: Self.facebook, options: ImportOptions(timeZone: zone("UTC"))) { r in
            seen.append((r.conversation.title ?? "", r.conversation.messages.count, r.me))
        }
        #expect(seen.map(\.0) == ["Hiking Club ⛰️", "Ann Lee"])
        #expect(seen.map(\.1) == [4, 10])
        #expect(seen.map(\.2) == ["Zoë Martin", "Zoë Martin"])
        #expect(
            batch.conversations.map(\.key) == [
                "Hiking Club ⛰️ (your_activity_across_facebook/messages/archived_threads/hikingclub_2024)",
                "Ann Lee (your_activity_across_facebook/messages/inbox/annlee_10158)"
            ])
    }

    @Test("the .zip as downloaded, and one zipped inside a folder of its own: the same thread, media taken out of the zip")
    func zipped() throws {
        let scratch = ScratchFolder()
        for prefix in ["", "facebook-zoe-2024/"] {
            let zipPath = scratch.file("fb-\(prefix.isEmpty ? "plain" : "nested").zip")
            try zip(folder: Self.facebook, to: zipPath, prefix: prefix)
            #expect(try Importer.detect(path: zipPath) == .messenger)
            var options = ImportOptions(chat: "Ann Lee", timeZone: zone("UTC"))
            options.attachmentsFolder = scratch.file("attachments-\(prefix.count)")
            let r = try Importer.load(path: zipPath, options: options)
            #expect(r.me == "Zoë Martin", "profile read from the zip")
            let unzipped = try Importer.load(path: Self.facebook, options: ImportOptions(chat: "Ann Lee"))
            #expect(r.conversation.messages.map(\.text) == unzipped.conversation.messages.map(\.text))
            let photo = try #require(r.conversation.messages[6].images.first?.path)
            #expect(photo.hasPrefix(options.attachmentsFolder!))
            #expect(FileManager.default.contents(atPath: photo) == FileManager.default.contents(atPath: Self.annThread + "/photos/orientation-6.jpg"))
            #expect(r.missingMedia == 0, "\(r.warnings)")
        }
    }

    @Test("older layout: messages/ at the root; without a profile, the person the one-to-one thread is not named after")
    func olderLayout() throws {
        let folder = Fixtures.path("meta-facebook-old")
        #expect(try Importer.detect(path: folder) == .messenger)
        let r = try Importer.load(path: folder, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.me == "Ann Lee")
        #expect(r.conversation.messages.map(\.text) == ["Schöne Grüße aus Köln", "Bis morgen!"])
        #expect(r.conversation.messages.map(\.direction) == [.incoming, .outgoing])
        // --me overrides.
        let other = try Importer.load(path: folder, options: ImportOptions(me: "kai weber", timeZone: zone("UTC")))
        #expect(other.me == "Kai Weber")
        #expect(other.conversation.messages.map(\.direction) == [.outgoing, .incoming])
    }

    @Test("without a profile, the one person in every thread is the owner")
    func ownerInEveryThread() throws {
        let scratch = ScratchFolder()
        try FileManager.default.copyItem(atPath: Self.facebook + "/your_activity_across_facebook", toPath: scratch.file("your_activity_across_facebook"))
        // Ann is in the two threads too; a third without her leaves Zoë the one in all.
        scratch.write(
            "your_activity_across_facebook/messages/inbox/kai_3/message_1.json",
            """
            {"participants": [{"name": "Kai Weber"}, {"name": "Zo\\u00c3\\u00ab Martin"}],
             "messages": [{"sender_name": "Kai Weber", "timestamp_ms": 1700000000000, "content": "Hi"}], "title": "Kai Weber"}
            """)
        let r = try Importer.load(path: scratch.path, options: ImportOptions(chat: "Hiking Club ⛰️", timeZone: zone("UTC")))
        #expect(r.me == "Zoë Martin")
        #expect(r.notes.contains { $0.contains("the one person in every thread") })
    }

    @Test("Instagram: detected by its folders; reactions written as messages go onto the message they answer")
    func instagram() throws {
        let folder = Fixtures.path("meta-instagram")
        #expect(try Importer.detect(path: folder) == .instagram)
        let r = try Importer.load(path: folder, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.format == .instagram)
        #expect(r.me == "Zoë")
        let photo = folder + "/your_instagram_activity/messages/inbox/kai_17841400/photos/photo.gif"
        #expect(
            r.conversation.messages == [
                Message(
                    sender: "kai.weber", direction: .incoming, date: Self.at(1),
                    image: ImageAttachment(path: photo, width: 0, height: 0, name: "photo.gif")),
                // Only the exact phrasings are reactions: this one is a message.
                Message(
                    sender: "kai.weber", direction: .incoming, date: Self.at(2), text: "I reacted to your message, it was funny",
                    reactions: [Reaction(emoji: "😂", count: 1, senders: ["Zoë"])]),
                Message(
                    sender: "Zoë", direction: .outgoing, date: Self.at(3), text: "Sunset at the lake 🌅",
                    reactions: [Reaction(emoji: "🔥", count: 1, senders: ["kai.weber"]), Reaction(emoji: "❤️", count: 1, senders: ["kai.weber"])])
            ])
        #expect(MetaText.reaction(in: "Reacted ❤️ to your message", sender: "x") == "❤️")
        #expect(MetaText.reaction(in: "Ann reacted 👍 to your message", sender: "Ann") == "👍")
        #expect(MetaText.reaction(in: "A réagi 😮 à votre message", sender: nil) == "😮")
        #expect(MetaText.reaction(in: "Hat mit 😢 auf deine Nachricht reagiert", sender: nil) == "😢")
        #expect(MetaText.reaction(in: "Liked a message", sender: nil) == "❤️")
        #expect(MetaText.reaction(in: "Reacted to your message", sender: nil) == nil)
        #expect(MetaText.reaction(in: "I liked a message 👍", sender: nil) == nil)
    }

    @Test("Messenger's encrypted chats download: flat files, camelCase fields, text already UTF-8")
    func encryptedChats() throws {
        let folder = Fixtures.path("meta-messenger-e2ee")
        #expect(try Importer.detect(path: folder) == .messenger)
        let r = try Importer.load(path: folder, options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.conversation.title == "Ann Lee")
        #expect(r.me == "Zoë Martin")
        #expect(
            r.conversation.messages == [
                Message(
                    sender: "Zoë Martin", direction: .outgoing, date: Self.at(1), text: "Grüße 🇩🇪",
                    reactions: [Reaction(emoji: "👍", count: 1, senders: ["Ann Lee"])]),
                Message(
                    sender: "Ann Lee", direction: .incoming, date: Self.at(2),
                    image: ImageAttachment(path: folder + "/media/orientation-3.jpg", width: 0, height: 0, name: "orientation-3.jpg"))
            ])
    }

    @Test("a media path that leaves the export, or is missing, is a placeholder with a warning; nothing outside is read")
    func unsafeMedia() throws {
        let scratch = ScratchFolder()
        let thread = "messages/inbox/ann_1"
        scratch.write("secret.jpg", try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("media/orientation-1.jpg"))))
        scratch.write(
            "export/\(thread)/message_1.json",
            """
            {"participants": [{"name": "Ann"}, {"name": "Me"}], "messages": [
              {"sender_name": "Ann", "timestamp_ms": 1700000002000, "photos": [{"uri": "../secret.jpg", "creation_timestamp": 1}]},
              {"sender_name": "Ann", "timestamp_ms": 1700000001000, "videos": [{"uri": "\(thread)/videos/gone.mp4", "creation_timestamp": 1}]},
              {"sender_name": "Ann", "timestamp_ms": 1700000000000, "files": [{"uri": "/etc/passwd"}]}
            ], "title": "Ann"}
            """)
        let r = try Importer.load(path: scratch.file("export"), options: ImportOptions(timeZone: zone("UTC")))
        #expect(r.conversation.messages.map { $0.attachment?.kind } == [.document, .video, .photo])
        #expect(r.conversation.messages.allSatisfy { $0.attachment?.path == nil && $0.images.isEmpty })
        #expect(r.missingMedia == 3)
        #expect(r.warnings.map(\.why).filter { $0.contains("leaves the export") }.count == 2)
        #expect(r.warnings.contains { $0.why.contains("no such file in the export") && $0.location == "messages[1]" })
    }

    @Test("damaged files: cut short at four places, a wrong type, no messages — one error naming the file and place")
    func damaged() throws {
        try CutFileTests.expectCutJSON(Self.annThread + "/message_1.json", format: .messenger)
        let scratch = ScratchFolder()
        let wrong = scratch.write("t/message_1.json", "{\"participants\": [], \"messages\": [{\"sender_name\": \"A\", \"timestamp_ms\": \"soon\"}]}")
        let e = try #require(importError { () throws(ImportError) in try Importer.load(path: wrong, format: .messenger) })
        #expect(e.description == "\(scratch.path)/t/message_1.json: messages[0].timestamp_ms: has the wrong type; expected a number")
        let none = scratch.write("u/message_1.json", "{\"participants\": []}")
        let n = try #require(importError { () throws(ImportError) in try Importer.load(path: none, format: .messenger) })
        #expect(n.description == "\(scratch.path)/u/message_1.json: (top level): has no \"messages\"; expected a Messenger or Instagram thread file")
        let empty = scratch.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let f = try #require(importError { () throws(ImportError) in try Importer.load(path: empty, format: .messenger) })
        #expect(f.reason.hasPrefix("has no Messenger or Instagram thread"))
    }

    /// Zips `folder`'s files under `prefix`, as the download's zip holds them.
    func zip(folder: String, to zipPath: String, prefix: String) throws {
        let archive = try Archive(url: URL(fileURLWithPath: zipPath), accessMode: .create)
        let files = FileManager.default.enumerator(atPath: folder)!.compactMap { $0 as? String }.filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + $0, isDirectory: &isFolder) && !isFolder.boolValue
        }
        for relative in files.sorted() {
            try archive.addEntry(with: prefix + relative, fileURL: URL(fileURLWithPath: folder + "/" + relative), compressionMethod: .deflate)
        }
    }
}
