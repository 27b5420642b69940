import BubbleCore
import BubblePeople
import Foundation

/// A person the store keeps: from a contact card (`card` is its key) or made by hand.
public struct StoredPerson: Hashable, Sendable, Codable {
    /// The person's number in the store.
    public var id: Int64
    /// The name shown for every identity of the person.
    public var name: String
    /// A store path (`media/…`), absolute when read.
    public var avatar: String?
    /// The card it came from ("Kai Weber|+15550102000"), nil when made by hand.
    public var card: String?
    /// PersonIdentity keys linked to it, each with its origin: "card" or "hand".
    public var identities: [StoredIdentity]
}

/// One identity of a stored person, and whether a card or a hand put it there.
public struct StoredIdentity: Hashable, Sendable, Codable {
    /// The identity's key, as `PersonIdentity` spells it ("+15550102000", "ann@example.com").
    public var key: String
    /// "card": from a contact card (a newer card moves it); "hand": `bubbles people merge` /
    /// `split` (cards never move it).
    public var origin: String
}

/// Everything the store knows of people, read at once.
public struct PeopleSnapshot: Sendable {
    /// Every person of the store.
    public var persons: [StoredPerson]
    /// The region numbers without a country are read in (from the last contacts import).
    public var region: String?
    /// A snapshot of `persons`, numbers read in `region`.
    public init(persons: [StoredPerson], region: String?) { self.persons = persons; self.region = region }

    /// The directory reads resolve names with (avatars as stored: `resolve` makes them absolute).
    public func directory(avatar resolve: (String) -> String = { $0 }) -> PeopleDirectory {
        PeopleDirectory(
            persons: persons.map { Person(name: $0.name, avatar: $0.avatar.map(resolve), identities: $0.identities.map(\.key)) },
            region: region)
    }
}

/// What the people operations read once: the persons, every conversation's participants as
/// imported, and `bubbles people`'s entries made of both.
struct PeopleReading {
    var snapshot: PeopleSnapshot
    var raw: [RawParticipants]
    var entries: [PersonEntry]
}

/// Who a name given to `people merge`/`split` is: a person of the store, or an identity no
/// person has yet (and the name to show for it).
enum PersonReference { case person(Int64), identity(String, shown: String) }

/// A contact card as the store keeps it: its key (name and first identity, so a card read
/// again is the same person), its picture already in the store's media.
public struct PersonCard: Hashable, Sendable {
    /// The card's key: its name and first identity.
    public var card: String
    /// The name on the card.
    public var name: String
    /// Its picture's store path, when it has one.
    public var avatar: String?
    /// Its identities' keys.
    public var identities: [String]
    /// A card; every parameter is the property of the same name.
    public init(card: String, name: String, avatar: String?, identities: [String]) {
        self.card = card; self.name = name; self.avatar = avatar; self.identities = identities
    }
}

/// What a contacts import did.
public struct ContactsImportSummary: Hashable, Sendable {
    /// Cards new to the store.
    public var added = 0
    /// Cards the store had, with something changed.
    public var updated = 0
    /// Cards the store had as they are.
    public var unchanged = 0
    /// Nothing counted yet.
    public init() {}
}

/// A person in `bubbles people`: the store's persons, and each participant no person claims
/// (named as its conversation names it), with their identities and conversations.
public struct PersonEntry: Hashable, Sendable, Codable {
    /// The name shown.
    public var name: String
    /// Its identities' keys.
    public var identities: [String]
    /// The conversations it is in.
    public var conversations: [Int64]
    /// The store's person id; nil for a participant no card or merge claims.
    public var person: Int64?
    /// Its picture (an absolute path), when it has one.
    public var avatar: String?
}

/// `people merge` / `split` could not do what was asked.
public struct PeopleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What could not be done, naming the person or identity.
    public var reason: String
    /// An error saying `reason`.
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension PeopleStore where Self: ConversationReading {
    /// Keeps `contacts` as persons (each card's picture copied into the store); a card read
    /// before (same name and first number or email) is updated, not doubled. Names change
    /// everywhere at once: reads resolve them.
    public func importContacts(_ contacts: [Contact], region: String?) async throws -> ContactsImportSummary {
        var cards: [PersonCard] = []
        var tmp: String?
        defer { if let tmp { try? FileManager.default.removeItem(atPath: tmp) } }
        for c in contacts {
            let identities = c.identities(region: region)
            var avatar: String?
            if let photo = c.photo, let ext = Contact.pictureExtension(photo) {
                if tmp == nil {
                    tmp = NSTemporaryDirectory() + "bubblekit-contacts-" + UUID().uuidString
                    try FileManager.default.createDirectory(atPath: tmp!, withIntermediateDirectories: true)
                }
                let file = tmp! + "/photo." + ext
                try photo.write(to: URL(fileURLWithPath: file))
                avatar = try await storeMedia(file: file, name: "photo." + ext)
            }
            cards.append(PersonCard(card: c.name + "|" + (identities.first ?? ""), name: c.name, avatar: avatar, identities: identities))
        }
        return try await saveCards(cards, region: region)
    }

    /// The store's persons and, for each participant none claims, an entry of its own; with
    /// each one's conversations.
    public func peopleEntries() async throws -> [PersonEntry] { try await readPeople().entries }

    /// The persons, every conversation's participants as imported, and the entries made of them:
    /// what the people operations read, once each.
    func readPeople() async throws -> PeopleReading {
        let snapshot = try await peopleSnapshot()
        let raw = try await rawParticipants()
        return PeopleReading(snapshot: snapshot, raw: raw, entries: Self.entries(snapshot, raw, mediaPath: mediaPath))
    }

    static func entries(_ snapshot: PeopleSnapshot, _ raw: [RawParticipants], mediaPath: (String) -> String) -> [PersonEntry] {
        let directory = snapshot.directory()
        var entries = snapshot.persons.map {
            PersonEntry(name: $0.name, identities: $0.identities.map(\.key), conversations: [], person: $0.id, avatar: $0.avatar.map(mediaPath))
        }
        var loose: [String: Int] = [:]
        // Live conversations are between the server's accounts: not people of the address book.
        for c in raw where c.format != "live" {
            for p in c.participants where p.id != "me" && p.id != c.owner {
                let identities = PersonIdentity.of(participantID: p.id, name: p.name, app: c.format, region: snapshot.region)
                if case .person(let i)? = directory.match(identities) {
                    if entries[i].conversations.last != c.id { entries[i].conversations.append(c.id) }
                    continue
                }
                let keys = Self.shownIdentities(identities)
                let key = keys.first ?? c.format + ":" + p.id
                if let i = loose[key] {
                    if entries[i].conversations.last != c.id { entries[i].conversations.append(c.id) }
                    for k in keys where !entries[i].identities.contains(k) { entries[i].identities.append(k) }
                } else {
                    loose[key] = entries.count
                    entries.append(
                        PersonEntry(
                            name: PeopleDirectory.isPlaceholder(p.name) ? p.id : p.name, identities: keys,
                            conversations: [c.id], person: nil, avatar: p.avatar.map(mediaPath)))
                }
            }
        }
        return entries.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
    }

    /// Numbers and emails first, then the app's id.
    static func shownIdentities(_ identities: [PersonIdentity]) -> [String] {
        identities.filter {
            if case .app = $0 { return false }; return true
        }.map(\.key)
            + identities.filter {
                if case .app = $0 { return true }; return false
            }.map(\.key)
    }

    /// One person of `name`s: the first is kept (its name), the others' identities join it. Each
    /// is a person's name, or an identity ("+15550102000", "kai@example.org", "whatsapp:Ann"),
    /// linked or not. Returns the person's id.
    @discardableResult
    public func mergePeople(_ names: [String]) async throws -> Int64 {
        guard names.count >= 2 else { throw PeopleError("merge needs two or more people (names or identities)") }
        let reading = try await readPeople()
        var target: Int64?
        for name in names {
            switch try reference(name, in: reading) {
            case .person(let id):
                if let t = target { if t != id { try await mergePerson(id, into: t) } } else { target = id }
            case .identity(let key, let shown):
                if let t = target {
                    try await setIdentities([key], person: t)
                } else {
                    let id = try await createPerson(name: shown)
                    try await setIdentities([key], person: id)
                    target = id
                }
            }
        }
        return target!
    }

    /// Takes `identities` away from the person `name`: each then stands alone (and no card takes
    /// it back).
    public func splitPeople(_ name: String, identities: [String]) async throws {
        let reading = try await readPeople()
        let snapshot = reading.snapshot
        guard case .person(let id) = try reference(name, in: reading),
            let person = snapshot.persons.first(where: { $0.id == id })
        else {
            throw PeopleError("\(name): is no person of the store; `bubbles people` lists them")
        }
        guard !identities.isEmpty else {
            throw PeopleError("split needs the identities to take from \(person.name): one or more of \(person.identities.map(\.key).joined(separator: ", "))")
        }
        var keys: [String] = []
        for text in identities {
            guard let identity = PersonIdentity(key: text, region: snapshot.region), person.identities.contains(where: { $0.key == identity.key }) else {
                throw PeopleError("\(text): is not one of \(person.name)'s identities (\(person.identities.map(\.key).joined(separator: ", ")))")
            }
            keys.append(identity.key)
        }
        try await setIdentities(keys, person: nil)
    }

    /// A person by name (exactly one, case-insensitively) or by an identity linked to it; else an
    /// identity that some conversation has.
    func reference(_ text: String, in reading: PeopleReading) throws -> PersonReference {
        let snapshot = reading.snapshot
        let named = snapshot.persons.filter { $0.name.caseInsensitiveCompare(text) == .orderedSame }
        if named.count == 1 { return .person(named[0].id) }
        if named.count > 1 {
            throw PeopleError(
                "\(text): \(named.count) persons have this name; name one by an identity (\(named.flatMap { $0.identities.prefix(1).map(\.key) }.joined(separator: ", ")))"
            )
        }
        if let identity = PersonIdentity(key: text, region: snapshot.region) {
            if let p = snapshot.persons.first(where: { $0.identities.contains { $0.key == identity.key } }) { return .person(p.id) }
            return .identity(identity.key, shown: identity.key)
        }
        // A participant's name as a conversation shows it ("Ann" of a WhatsApp export).
        let entries = reading.entries.filter { $0.person == nil && $0.name.caseInsensitiveCompare(text) == .orderedSame }
        if entries.count == 1, let key = entries[0].identities.last { return .identity(key, shown: entries[0].name) }
        if entries.count > 1 {
            throw PeopleError(
                "\(text): \(entries.count) participants have this name; name one by an identity (\(entries.compactMap(\.identities.last).joined(separator: ", ")))"
            )
        }
        throw PeopleError("\(text): is no person, number, email or app id the store knows; `bubbles people` lists them")
    }

    /// The one-to-one conversations with the person `name` (a person's name or identity).
    public func conversations(with name: String) async throws -> [StoredConversation] {
        var found: [StoredConversation] = []
        for c in try await oneToOne(with: name) {
            if let stored = try await conversation(id: c.id) { found.append(stored) }
        }
        return found
    }

    /// The one-to-one conversations with `name`, as imported (app and owner).
    func oneToOne(with name: String) async throws -> [RawParticipants] {
        let reading = try await readPeople()
        let wanted: PersonEntry?
        switch try reference(name, in: reading) {
        case .person(let id): wanted = reading.entries.first { $0.person == id }
        case .identity(let key, _): wanted = reading.entries.first { $0.person == nil && $0.identities.contains(key) }
        }
        guard let wanted else { return [] }
        // One-to-one: one participant besides the owner.
        return reading.raw.filter { c in
            wanted.conversations.contains(c.id) && c.participants.filter { $0.id != "me" && $0.id != c.owner }.count == 1
        }
    }
}

/// A conversation's participants as imported (names not resolved), with its app and owner.
public struct RawParticipants: Hashable, Sendable {
    /// The conversation's id.
    public var id: Int64
    /// The app it was imported from (`sourceFormat`).
    public var format: String
    /// The participant whose messages are outgoing ("me" for phone exports; a WhatsApp export's
    /// owner by name), when the conversation has one.
    public var owner: String?
    /// Its participants as the export named them.
    public var participants: [Participant]
}

extension ConversationReading {
    /// Search hits with their senders named as their conversations name them (contacts
    /// resolved); one read per conversation among the hits.
    func namingSenders(_ hits: [StoreHit]) async throws -> [StoreHit] {
        guard !hits.isEmpty else { return hits }
        var names: [Int64: [String: String]] = [:]
        var out = hits
        for i in out.indices {
            let c = out[i].conversation
            if names[c] == nil {
                names[c] = try await conversation(id: c).map { Dictionary($0.participants.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a }) } ?? [:]
            }
            if let s = out[i].sender, let name = names[c]?[s] { out[i].senderName = name }
        }
        return out
    }
}

/// What the apps are called where a conversation or a message is marked with its source.
public enum SourceApp {
    /// "sms" → "SMS", "whatsapp-db" → "WhatsApp", "live" → "Live".
    public static func name(_ format: String) -> String {
        switch format {
        case "sms": return "SMS"
        case "imessage": return "iMessage"
        case "whatsapp", "whatsapp-db": return "WhatsApp"
        case "telegram": return "Telegram"
        case "signal", "signal-export": return "Signal"
        case "messenger": return "Messenger"
        case "instagram": return "Instagram"
        case "discord": return "Discord"
        case "native": return "BubbleKit"
        case "live": return "Live"
        default: return format.prefix(1).uppercased() + format.dropFirst()
        }
    }
}

extension PeopleStore where Self: ConversationReading {
    /// One timeline of every one-to-one conversation with the person `name` (a name or an
    /// identity), from every app, in time order: what Messages does for SMS and iMessage. Each
    /// message is marked with its app (`Message.app`), and a line names the app where it changes.
    public func timeline(with name: String) async throws -> Conversation {
        let found = try await oneToOne(with: name)
        guard !found.isEmpty else { throw PeopleError("\(name): the store has no one-to-one conversation with them; `bubbles people` lists who is in which") }
        var person: Participant?
        var all: [Message] = []
        for stored in found {
            let c = try await load(stored.id)
            guard let other = c.participants.first(where: { $0.id != "me" && $0.id != stored.owner }) else { continue }
            if person == nil || person?.avatar == nil { person = Participant(id: "person", name: other.name, avatar: other.avatar) }
            let app = SourceApp.name(stored.format)
            func mapped(_ id: String?) -> String? { id.map { $0 == other.id ? "person" : "me" } }
            for var m in c.messages {
                m.app = app
                if m.kind == .message { m.sender = mapped(m.sender) ?? (m.direction == .outgoing ? "me" : "person") }
                if var reply = m.reply { reply.sender = mapped(reply.sender); m.reply = reply }
                for i in m.reactions.indices { m.reactions[i].senders = m.reactions[i].senders.compactMap(mapped) }
                all.append(m)
            }
        }
        guard let person else { throw PeopleError("\(name): their conversations have no messages") }
        // Stable: equal times keep each conversation's own order.
        let order = all.indices.sorted { all[$0].date != all[$1].date ? all[$0].date < all[$1].date : $0 < $1 }
        var messages: [Message] = []
        messages.reserveCapacity(all.count + 8)
        var lastApp: String?
        for i in order {
            let m = all[i]
            if m.app != lastApp, found.count > 1 {
                var line = Message.system(m.app ?? "", date: m.date)
                line.app = m.app
                messages.append(line)
                lastApp = m.app
            }
            messages.append(m)
        }
        return Conversation(title: person.name, participants: [Participant(id: "me", name: "Me"), person], messages: messages)
    }
}

/// The directory reads name participants with, kept while the store's people revision
/// (`store_setting` "people_rev", raised by every change to persons or identities, by any
/// server of the store) is the same: a read asks for one number instead of every person.
final class PeopleCache: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: (rev: Int64, directory: PeopleDirectory)?

    /// The directory of revision `rev`, when it is the one kept.
    func cached(rev: Int64) -> PeopleDirectory? {
        lock.lock(); defer { lock.unlock() }
        return kept.flatMap { $0.rev == rev ? $0.directory : nil }
    }

    func keep(_ directory: PeopleDirectory, rev: Int64) {
        lock.lock(); defer { lock.unlock() }
        kept = (rev, directory)
    }
}
