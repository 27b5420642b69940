import BubbleCore
import BubblePeople
import Foundation
import Logging
import PostgresNIO

extension PostgresStore {
    public func peopleSnapshot() async throws -> PeopleSnapshot {
        try await read { c in try await peopleSnapshot(c) }
    }

    /// The directory reads name participants with (avatars absolute), cached while the people
    /// revision (shared by every server of the store) stays.
    func peopleDirectory(_ c: PostgresConnection) async throws -> PeopleDirectory {
        let rev = try await c.run("SELECT value::bigint FROM store_setting WHERE name = 'people_rev'", logger).first?.decode(Int64.self) ?? 0
        if let cached = people.cached(rev: rev) { return cached }
        let directory = try await peopleSnapshot(c).directory(avatar: mediaPath)
        people.keep(directory, rev: rev)
        return directory
    }

    /// Raises the people revision (in the writing transaction): cached directories are stale.
    func peopleChanged(_ c: PostgresConnection) async throws {
        try await c.run(
            """
            INSERT INTO store_setting (name, value) VALUES ('people_rev', '1')
            ON CONFLICT (name) DO UPDATE SET value = (store_setting.value::bigint + 1)::text
            """, logger)
    }

    func peopleSnapshot(_ c: PostgresConnection) async throws -> PeopleSnapshot {
        var identities: [Int64: [StoredIdentity]] = [:]
        for row in try await c.run("SELECT key, person_id, origin FROM person_identity WHERE person_id IS NOT NULL ORDER BY added", logger) {
            let (key, person, origin) = try row.decode((String, Int64, String).self)
            identities[person, default: []].append(StoredIdentity(key: key, origin: origin))
        }
        let persons = try await c.run("SELECT id, name, avatar, card FROM person WHERE merged_into IS NULL ORDER BY id", logger).map {
            let (id, name, avatar, card) = try $0.decode((Int64, String, String?, String?).self)
            return StoredPerson(id: id, name: name, avatar: avatar, card: card, identities: identities[id] ?? [])
        }
        let region = try await c.run("SELECT value FROM store_setting WHERE name = 'region'", logger).first?.decode(String.self)
        return PeopleSnapshot(persons: persons, region: region)
    }

    public func saveCards(_ cards: [PersonCard], region: String?) async throws -> ContactsImportSummary {
        try await transaction(retry: true) { [logger] c in
            var summary = ContactsImportSummary()
            try await peopleChanged(c)
            if let region {
                try await c.run(
                    "INSERT INTO store_setting (name, value) VALUES ('region', \(region)) ON CONFLICT (name) DO UPDATE SET value = excluded.value", logger)
            }
            for card in cards {
                let id: Int64
                if let row = try await c.run("SELECT id, name, avatar FROM person WHERE card = \(card.card)", logger).first {
                    let (found, name, avatar) = try row.decode((Int64, String, String?).self)
                    id = found
                    let changed = name != card.name || (card.avatar != nil && avatar != card.avatar)
                    if changed {
                        try await c.run("UPDATE person SET name = \(card.name), avatar = coalesce(\(card.avatar), avatar) WHERE id = \(id)", logger)
                    }
                    let before = try await c.run("SELECT key FROM person_identity WHERE person_id = \(id) AND origin = 'card' ORDER BY key", logger)
                        .map { try $0.decode(String.self) }
                    if changed || before != card.identities.sorted() { summary.updated += 1 } else { summary.unchanged += 1 }
                    try await c.run("DELETE FROM person_identity WHERE person_id = \(id) AND origin = 'card'", logger)
                } else {
                    id = try await c.run("INSERT INTO person (name, avatar, card) VALUES (\(card.name), \(card.avatar), \(card.card)) RETURNING id", logger)
                        .first!.decode(Int64.self)
                    summary.added += 1
                }
                for key in card.identities {
                    try await c.run(
                        """
                        INSERT INTO person_identity (key, person_id, origin) VALUES (\(key), \(id), 'card')
                        ON CONFLICT (key) DO UPDATE SET person_id = excluded.person_id WHERE person_identity.origin = 'card'
                        """, logger)
                }
            }
            return summary
        }
    }

    public func createPerson(name: String) async throws -> Int64 {
        try await transaction(retry: true) { [logger] c in
            try await peopleChanged(c)
            return try await c.run("INSERT INTO person (name) VALUES (\(name)) RETURNING id", logger).first!.decode(Int64.self)
        }
    }

    public func setIdentities(_ keys: [String], person: Int64?) async throws {
        try await transaction(retry: true) { [logger] c in
            try await peopleChanged(c)
            for key in keys {
                try await c.run(
                    """
                    INSERT INTO person_identity (key, person_id, origin) VALUES (\(key), \(person), 'hand')
                    ON CONFLICT (key) DO UPDATE SET person_id = excluded.person_id, origin = 'hand'
                    """, logger)
            }
        }
    }

    public func mergePerson(_ source: Int64, into target: Int64) async throws {
        try await transaction(retry: true) { [logger] c in
            try await peopleChanged(c)
            try await c.run("UPDATE person_identity SET person_id = \(target), origin = 'hand' WHERE person_id = \(source)", logger)
            try await c.run("UPDATE person SET merged_into = \(target) WHERE id = \(source) OR merged_into = \(source)", logger)
            try await c.run("UPDATE person SET avatar = (SELECT avatar FROM person WHERE id = \(source)) WHERE id = \(target) AND avatar IS NULL", logger)
        }
    }

    public func rawParticipants() async throws -> [RawParticipants] {
        try await read { c in
            var byConversation: [Int64: [Participant]] = [:]
            for row in try await c.run("SELECT conversation_id, id, name, avatar FROM participant ORDER BY conversation_id, position", logger) {
                let (conversation, id, name, avatar) = try row.decode((Int64, String, String, String?).self)
                byConversation[conversation, default: []].append(Participant(id: id, name: name, avatar: avatar))
            }
            return try await c.run("SELECT id, source_format, \(unescaped: Self.ownerColumn) FROM conversation c ORDER BY id", logger).map {
                let (id, format, owner) = try $0.decode((Int64, String, String?).self)
                return RawParticipants(id: id, format: format, owner: owner, participants: byConversation[id] ?? [])
            }
        }
    }

    /// The participant whose messages are outgoing: a live conversation's owner, else the sender
    /// of an outgoing message (an export's owner).
    static let ownerColumn = """
        coalesce(c.owner, (SELECT m.sender FROM message m WHERE m.conversation_id = c.id AND m.outgoing AND m.sender IS NOT NULL LIMIT 1))
        """
}
