import BubbleCore
import BubblePeople
@testable import BubbleStore
import Foundation
import Testing

/// Names resolved when read: contacts imported after the messages apply at once, a changed card
/// renames everywhere, people merge and split, one timeline across apps.
@Suite("BubbleStore: people")
struct PeopleStoreTests {
    static func at(_ minutes: Double) -> Date { t0.addingTimeInterval(minutes * 60) }

    /// The same person as three apps' imports name her: SMS (a national spelling), iMessage
    /// (E.164), a WhatsApp export (an international spelling; the owner is "Ben").
    static func importThreeApps(into store: any ConversationStore, dir: String) async throws -> (sms: Int64, imessage: Int64, whatsapp: Int64, group: Int64) {
        let sms = Conversation(
            title: "(555) 010-2000", participants: [Participant(id: "(555) 010-2000", name: "(Unknown)"), Participant(id: "me", name: "Me")],
            messages: [
                Message(sender: "(555) 010-2000", direction: .incoming, date: at(0), text: "sms 1"),
                Message(sender: "me", direction: .outgoing, date: at(10), text: "sms 2"),
                Message(sender: "(555) 010-2000", direction: .incoming, date: at(40), text: "sms 3 dinner")
            ])
        let imessage = Conversation(
            title: "+15550102000", participants: [Participant(id: "me", name: "Me"), Participant(id: "+15550102000", name: "+15550102000")],
            messages: [
                Message(sender: "+15550102000", direction: .incoming, date: at(5), text: "imessage 1"),
                Message(sender: "me", direction: .outgoing, date: at(30), text: "imessage 2")
            ])
        let whatsapp = Conversation(
            title: nil, participants: [Participant(id: "+1 555 010 2000", name: "+1 555 010 2000"), Participant(id: "Ben", name: "Ben")],
            messages: [
                Message(sender: "+1 555 010 2000", direction: .incoming, date: at(20), text: "whatsapp 1"),
                Message(sender: "Ben", direction: .outgoing, date: at(50), text: "whatsapp 2")
            ])
        let group = Conversation(
            title: "chat77",
            participants: [
                Participant(id: "me", name: "Me"), Participant(id: "+15550102000", name: "+15550102000"),
                Participant(id: "kai@example.org", name: "kai@example.org")
            ],
            messages: [
                Message(sender: "+15550102000", direction: .incoming, date: at(60), text: "group from ann"),
                Message(sender: "kai@example.org", direction: .incoming, date: at(61), text: "group from kai dinner")
            ])
        let a = try await store.add(sms, sourceFormat: "sms", chatKey: "5550102000", title: nil, mediaFolder: dir).conversationID
        let b = try await store.add(imessage, sourceFormat: "imessage", chatKey: "+15550102000", title: nil, mediaFolder: dir).conversationID
        let c = try await store.add(whatsapp, sourceFormat: "whatsapp", chatKey: "wa", title: nil, mediaFolder: dir).conversationID
        let d = try await store.add(group, sourceFormat: "imessage", chatKey: "chat77", title: nil, mediaFolder: dir).conversationID
        return (a, b, c, d)
    }

    static let photo = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: UInt8(7), count: 60))

    static let cards = [
        Contact(name: "Ann Lee", phones: ["+1 (555) 010-2000"], emails: ["ann.lee@example.org"], photo: photo, origin: "test: card 1"),
        Contact(name: "Kai Weber", phones: ["(555) 010-3000"], emails: ["Kai@Example.org"], origin: "test: card 2")
    ]

    @Test("contacts imported after the messages rename at once; a changed card renames everywhere; search hits named", arguments: Backend.allCases)
    func namesAtRead(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let ids = try await Self.importThreeApps(into: store, dir: dir)
        func titles() async throws -> [Int64: String] { Dictionary(uniqueKeysWithValues: try await store.conversations().map { ($0.id, $0.title) }) }
        #expect(try await titles() == [ids.sms: "(555) 010-2000", ids.imessage: "+15550102000", ids.whatsapp: "+1 555 010 2000, Ben", ids.group: "chat77"])

        // A second server of the same store has read (and cached) the people before the import.
        let other = try Backend.open(store.path, media: dir)
        #expect(try await other.conversation(id: ids.sms)?.title == "(555) 010-2000")

        let summary = try await store.importContacts(Self.cards, region: "US")
        #expect(summary.added == 2 && summary.updated == 0)
        #expect(try await titles() == [ids.sms: "Ann Lee", ids.imessage: "Ann Lee", ids.whatsapp: "Ann Lee", ids.group: "Ann Lee & Kai Weber"])
        #expect(try await other.conversation(id: ids.sms)?.title == "Ann Lee")
        let sms = try await store.load(ids.sms)
        let ann = try #require(sms.participants.first { $0.id != "me" })
        #expect(ann.name == "Ann Lee")
        // The card's picture, kept in the store's media.
        let avatar = try #require(ann.avatar)
        #expect(avatar.hasPrefix(store.mediaFolder + "/"))
        #expect(FileManager.default.contents(atPath: avatar) == Self.photo)
        // Search hits carry the names.
        let hits = try await store.search(StoreSearch("dinner"))
        #expect(Set(hits.compactMap(\.senderName)) == ["Ann Lee", "Kai Weber"])

        // The same card read again: unchanged; renamed on the phone: renamed everywhere.
        #expect(try await store.importContacts(Self.cards, region: "US").unchanged == 2)
        var renamed = Self.cards
        renamed[0].name = "Ann Lee-Park"
        renamed[0].phones = ["+1 (555) 010-2000"]
        _ = try await store.importContacts(renamed, region: "US")
        let after = try await titles()
        #expect(after[ids.sms] == "Ann Lee-Park" && after[ids.whatsapp] == "Ann Lee-Park")
        #expect(try await other.conversation(id: ids.whatsapp)?.title == "Ann Lee-Park")
    }

    @Test(
        "people: each person with identities and conversations from every app; merge by hand, split, and --person's timeline in time order",
        arguments: Backend.allCases)
    func people(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let ids = try await Self.importThreeApps(into: store, dir: dir)
        _ = try await store.importContacts(Self.cards, region: "US")
        let entries = try await store.peopleEntries()
        #expect(entries.map(\.name) == ["Ann Lee", "Kai Weber"])
        #expect(entries[0].identities == ["ann.lee@example.org", "+15550102000"])
        #expect(entries[0].conversations == [ids.sms, ids.imessage, ids.whatsapp, ids.group])
        #expect(entries[1].conversations == [ids.group])

        // One timeline of the one-to-one conversations: SMS, iMessage and WhatsApp, in order.
        let timeline = try await store.timeline(with: "ann lee")
        #expect(timeline.title == "Ann Lee")
        let messages = timeline.messages.filter { $0.kind == .message }
        #expect(messages.count == 7)
        #expect(messages.map { $0.text ?? "" } == ["sms 1", "imessage 1", "sms 2", "whatsapp 1", "imessage 2", "sms 3 dinner", "whatsapp 2"])
        #expect(messages.map { $0.app ?? "" } == ["SMS", "iMessage", "SMS", "WhatsApp", "iMessage", "SMS", "WhatsApp"])
        #expect(messages.map(\.direction) == [.incoming, .incoming, .outgoing, .incoming, .outgoing, .incoming, .outgoing])
        #expect(messages.map { $0.sender ?? "" } == ["person", "person", "me", "person", "me", "person", "me"])
        // A line names the app where it changes.
        #expect(timeline.messages.filter { $0.kind == .system }.map { $0.text ?? "" } == ["SMS", "iMessage", "SMS", "WhatsApp", "iMessage", "SMS", "WhatsApp"])
        #expect(try await store.timeline(with: "+1 555 010 2000").messages.count == timeline.messages.count)

        // An unknown name, a loose identity.
        await #expect(throws: PeopleError.self) { try await store.timeline(with: "Nobody") }

        // By hand: a WhatsApp name (another export, no number) merged into Ann; then split off again.
        let nickname = Conversation(
            title: nil, participants: [Participant(id: "Annie 🌻", name: "Annie 🌻"), Participant(id: "Ben", name: "Ben")],
            messages: [
                Message(sender: "Annie 🌻", direction: .incoming, date: Self.at(70), text: "from the other phone"),
                Message(sender: "Ben", direction: .outgoing, date: Self.at(71), text: "ok")
            ])
        let other = try await store.add(nickname, sourceFormat: "whatsapp", chatKey: "wa2", title: nil, mediaFolder: dir).conversationID
        #expect(try await store.peopleEntries().map(\.name) == ["Ann Lee", "Annie 🌻", "Kai Weber"])
        try await store.mergePeople(["Ann Lee", "Annie 🌻"])
        let merged = try await store.peopleEntries()
        #expect(merged.map(\.name) == ["Ann Lee", "Kai Weber"])
        #expect(merged[0].identities.contains("whatsapp:Annie 🌻"))
        #expect(merged[0].conversations.contains(other))
        #expect(try await store.conversation(id: other)?.title == "Ann Lee")
        #expect(try await store.timeline(with: "Ann Lee").messages.filter { $0.kind == .message }.count == 9)
        // Cards read again do not undo the merge.
        _ = try await store.importContacts(Self.cards, region: "US")
        #expect(try await store.peopleEntries().map(\.name) == ["Ann Lee", "Kai Weber"])
        try await store.splitPeople("Ann Lee", identities: ["whatsapp:Annie 🌻"])
        #expect(try await store.peopleEntries().map(\.name) == ["Ann Lee", "Annie 🌻", "Kai Weber"])
        #expect(try await store.conversation(id: other)?.title == "Annie 🌻")
        // Two persons merged: one remains, with both persons' identities.
        try await store.mergePeople(["Kai Weber", "Ann Lee"])
        let one = try await store.peopleEntries()
        #expect(one.map(\.name) == ["Annie 🌻", "Kai Weber"])
        #expect(Set(one[1].identities) == ["ann.lee@example.org", "+15550102000", "kai@example.org", "+15550103000"])
        await #expect(throws: PeopleError.self) { try await store.splitPeople("Kai Weber", identities: ["+4915123456789"]) }
    }
}
