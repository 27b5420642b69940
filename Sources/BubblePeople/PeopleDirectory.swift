import BubbleCore
import Foundation

/// One way of reaching a person: a phone number, an email address, or an app's own name or id
/// for them (a WhatsApp export's "Ann", a Telegram `user123`, a Discord id).
public enum PersonIdentity: Hashable, Sendable, CustomStringConvertible {
    /// A phone number (E.164 when the country is known).
    case phone(PhoneNumber)
    /// Lower-cased.
    case email(String)
    /// The app (an `ImportFormat` name: "whatsapp", "telegram", "discord"…) and its id.
    case app(String, String)

    /// The form stored and shown: "+15550102000" (or the digits when the country is unknown),
    /// "kai@example.org", "whatsapp:Ann".
    public var key: String {
        switch self {
        case .phone(let p): return p.e164 ?? p.digits
        case .email(let e): return e
        case .app(let app, let id): return app + ":" + id
        }
    }
    public var description: String { key }

    /// What a user typed or a store kept: an email, a phone number in any spelling, or
    /// "app:id"; nil for text that is none of them.
    public init?(key text: String, region: String?) {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let email = Self.email(t) { self = .email(email); return }
        if let phone = PhoneNumber(t, region: region) { self = .phone(phone); return }
        if let colon = t.firstIndex(of: ":"), colon != t.startIndex, t[..<colon].allSatisfy({ $0.isLetter || $0 == "-" }),
            t.index(after: colon) < t.endIndex
        {
            self = .app(t[..<colon].lowercased(), String(t[t.index(after: colon)...]))
            return
        }
        return nil
    }

    /// An email address, lower-cased ("mailto:" dropped); nil when `text` is not one.
    static func email(_ text: String) -> String? {
        var t = Substring(text)
        if t.lowercased().hasPrefix("mailto:") { t = t.dropFirst(7) }
        // No spaces, and no ":" (an app id such as "imessage:kai@example.org" is not a mailbox).
        guard let at = t.firstIndex(of: "@"), at != t.startIndex, !t.contains(where: { $0 == " " || $0 == "\t" || $0 == ":" }),
            t[t.index(after: at)...].contains("."), t.filter({ $0 == "@" }).count == 1
        else { return nil }
        // A WhatsApp jid ("4915…@s.whatsapp.net") names a number, not a mailbox.
        let domain = t[t.index(after: at)...].lowercased()
        if domain.hasSuffix("whatsapp.net") || domain == "c.us" || domain == "g.us" || domain == "lid" { return nil }
        return t.lowercased()
    }

    /// The identities a conversation's participant has: its id and its name read as a number
    /// or an email (a WhatsApp jid as its number), and the app's own id. "me" has none.
    public static func of(participantID id: String, name: String, app: String, region: String?) -> [PersonIdentity] {
        guard id != "me" else { return [] }
        var out: [PersonIdentity] = [.app(app, id)]
        for text in [id, name] {
            if let at = text.firstIndex(of: "@"), text[text.index(after: at)...].hasSuffix("whatsapp.net") || text.hasSuffix("@c.us") {
                if let p = PhoneNumber("+" + text[..<at], region: region) { out.append(.phone(p)) }
            } else if let e = email(text) {
                out.append(.email(e))
            } else if let p = PhoneNumber(text, region: region) {
                out.append(.phone(p))
            }
        }
        var seen = Set<PersonIdentity>()
        return out.filter { seen.insert($0).inserted }
    }
}

/// Someone with a name: from a contact card, or made by hand in the store.
public struct Person: Hashable, Sendable, Codable {
    /// The name shown for every identity of the person.
    public var name: String
    /// A picture: a file path (an import's folder) or a store path (`media/…`).
    public var avatar: String?
    /// Their numbers, emails and app ids, as `PersonIdentity.key` writes them.
    public var identities: [String]
    /// A person of `name`; `identities` are spelled as `PersonIdentity` parses them (numbers,
    /// emails, "whatsapp:Annie").
    public init(name: String, avatar: String? = nil, identities: [String]) {
        self.name = name; self.avatar = avatar; self.identities = identities
    }
}

/// Persons and their identities, and the matching the phones do: an email case-insensitively, a
/// number by its E.164 form, else by its trailing digits (at least 7) when that picks one
/// person; an app id as stored (a link made by hand). Names a conversation's participants and
/// titles it (`name(_:app:me:)`).
public struct PeopleDirectory: Sendable {
    /// The persons, in the order given.
    public let persons: [Person]
    /// The region numbers without a country are read in ("US"); nil: they match by their digits.
    public let region: String?
    private var byKey: [String: [Int]] = [:]
    private var byMatchKey: [String: [(person: Int, number: PhoneNumber)]] = [:]

    /// A directory of `persons`; `region` (ISO 3166, "US", "DE") reads numbers written without
    /// their country.
    public init(persons: [Person], region: String?) {
        self.persons = persons
        self.region = region
        for (i, person) in persons.enumerated() {
            for key in person.identities {
                guard let identity = PersonIdentity(key: key, region: region) else { continue }
                byKey[identity.key, default: []].append(i)
                if case .phone(let p) = identity { byMatchKey[p.matchKey, default: []].append((i, p)) }
            }
        }
    }

    /// True when the directory has no persons.
    public var isEmpty: Bool { persons.isEmpty }

    /// Who an identity list belongs to.
    public enum Match: Hashable, Sendable {
        /// The person at this index of `persons`.
        case person(Int)
        /// A number whose trailing digits match several persons (or one spelling several cards
        /// hold): left as it is.
        case ambiguous([Int])
    }

    /// App ids first (links made by hand), then emails, then numbers exactly, then numbers by
    /// their trailing digits.
    public func match(_ identities: [PersonIdentity]) -> Match? {
        var ambiguous: [Int]?
        func decide(_ found: [Int]) -> Match? {
            let distinct = Array(Set(found)).sorted()
            if distinct.count == 1 { return .person(distinct[0]) }
            if distinct.count > 1, ambiguous == nil { ambiguous = distinct }
            return nil
        }
        let ordered =
            identities.filter {
                if case .app = $0 { return true }; return false
            }
            + identities.filter {
                if case .email = $0 { return true }; return false
            }
            + identities.filter {
                if case .phone = $0 { return true }; return false
            }
        for identity in ordered {
            if let m = decide(byKey[identity.key] ?? []) { return m }
        }
        for case .phone(let p) in identities {
            let found = (byMatchKey[p.matchKey] ?? []).filter { $0.number.matches(p) }.map(\.person)
            if let m = decide(found) { return m }
        }
        return ambiguous.map { .ambiguous($0) }
    }

    /// The person a participant is, when exactly one.
    public func person(participantID id: String, name: String, app: String) -> Int? {
        if case .person(let i) = match(PersonIdentity.of(participantID: id, name: name, app: app, region: region)) { return i }
        return nil
    }

    /// Names `conversation`'s participants (and gives them the card's picture when they have
    /// none), and titles it when its title is only a number, an id or a name that changed
    /// ("chat77", "+15550102000" → "Ann Lee"; a group: "Ann Lee, Kai Weber & Zoë Martin").
    /// "(Unknown)" and empty names become the participant's id. Returns notes (numbers left as
    /// they are because they match several persons).
    @discardableResult
    public func name(_ conversation: inout Conversation, app: String, me: String?) -> [String] {
        var notes: [String] = []
        // A title made of the participants' names as they were ("+1 555 010 2000, Ben", what
        // the store makes for an export without one) is made again from the new names.
        var replaced: Set<String> = [conversation.participants.map(\.name).filter { !$0.isEmpty }.joined(separator: ", ")]
        for i in conversation.participants.indices {
            let p = conversation.participants[i]
            guard p.id != "me", p.id != me else { continue }
            replaced.insert(p.id)
            switch match(PersonIdentity.of(participantID: p.id, name: p.name, app: app, region: region)) {
            case .person(let k)?:
                replaced.insert(p.name)
                conversation.participants[i].name = persons[k].name
                if p.avatar == nil { conversation.participants[i].avatar = persons[k].avatar }
            case .ambiguous(let ks)?:
                let names = ks.map { persons[$0].name }
                notes.append("\(p.name): matches \(Self.list(names, and: "and")) by its last \(PhoneNumber.minimumMatch) digits; kept as a number")
                fallthrough
            case nil:
                if Self.isPlaceholder(p.name) { conversation.participants[i].name = p.id }
            }
        }
        if Self.needsTitle(conversation.title, replaced: replaced, region: region) {
            let others = conversation.participants.filter { $0.id != "me" && $0.id != me }.map(\.name)
            if !others.isEmpty {
                conversation.title = others.count == 1 ? others[0] : Self.list(others.sorted { $0.localizedStandardCompare($1) == .orderedAscending }, and: "&")
            }
        }
        return notes
    }

    /// "(Unknown)", empty, "null": never a name.
    public static func isPlaceholder(_ name: String) -> Bool {
        let t = name.trimmingCharacters(in: .whitespaces)
        return t.isEmpty || t == "(Unknown)" || t == "null" || t == "Unknown"
    }

    /// A title that only names an id: none, a placeholder, a number or an email, an iMessage
    /// group's "chat123456", or a participant's id or former name.
    static func needsTitle(_ title: String?, replaced: Set<String>, region: String?) -> Bool {
        guard let title else { return true }
        if isPlaceholder(title) || replaced.contains(title) { return true }
        if title.wholeMatch(of: #/chat\d+/#) != nil { return true }
        // A number of five digits or more ("2024" may be a group's name).
        return PersonIdentity.email(title) != nil || (PhoneNumber(title, region: region)?.digits.count ?? 0) >= 5
    }

    /// "A", "A & B", "A, B & C".
    static func list(_ names: [String], and word: String) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " \(word) " + names.last!
    }
}
