import BubbleCore
import BubblePeople
import Foundation
import GRDB

extension SQLiteStore {
    public func peopleSnapshot() async throws -> PeopleSnapshot {
        try await read { db in try Self.peopleSnapshot(db) }
    }

    static func peopleSnapshot(_ db: Database) throws -> PeopleSnapshot {
        var identities: [Int64: [StoredIdentity]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key, person_id, origin FROM person_identity WHERE person_id IS NOT NULL ORDER BY rowid") {
            identities[row[1], default: []].append(StoredIdentity(key: row[0], origin: row[2]))
        }
        let persons = try Row.fetchAll(db, sql: "SELECT id, name, avatar, card FROM person WHERE merged_into IS NULL ORDER BY id").map {
            StoredPerson(id: $0[0], name: $0[1], avatar: $0[2], card: $0[3], identities: identities[$0[0]] ?? [])
        }
        let region = try String.fetchOne(db, sql: "SELECT value FROM store_setting WHERE name = 'region'")
        return PeopleSnapshot(persons: persons, region: region)
    }

    /// The directory reads name participants with (avatars absolute), cached while the people
    /// revision stays.
    func peopleDirectory(_ db: Database) throws -> PeopleDirectory {
        let rev = try Int64.fetchOne(db, sql: "SELECT CAST(value AS INTEGER) FROM store_setting WHERE name = 'people_rev'") ?? 0
        if let cached = people.cached(rev: rev) { return cached }
        let directory = try Self.peopleSnapshot(db).directory(avatar: mediaPath)
        people.keep(directory, rev: rev)
        return directory
    }

    /// Raises the people revision (in the writing transaction): cached directories are stale.
    static func peopleChanged(_ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO store_setting (name, value) VALUES ('people_rev', '1')
                ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
                """)
    }

    public func saveCards(_ cards: [PersonCard], region: String?) async throws -> ContactsImportSummary {
        try await write { db in
            var summary = ContactsImportSummary()
            try Self.peopleChanged(db)
            if let region {
                try db.execute(
                    sql: "INSERT INTO store_setting (name, value) VALUES ('region', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    arguments: [region])
            }
            for card in cards {
                let id: Int64
                if let row = try Row.fetchOne(db, sql: "SELECT id, name, avatar FROM person WHERE card = ?", arguments: [card.card]) {
                    id = row[0]
                    let changed = (row[1] as String) != card.name || (card.avatar != nil && (row[2] as String?) != card.avatar)
                    if changed {
                        try db.execute(sql: "UPDATE person SET name = ?, avatar = coalesce(?, avatar) WHERE id = ?", arguments: [card.name, card.avatar, id])
                    }
                    let before = try String.fetchAll(
                        db, sql: "SELECT key FROM person_identity WHERE person_id = ? AND origin = 'card' ORDER BY key", arguments: [id])
                    if changed || before != card.identities.sorted() { summary.updated += 1 } else { summary.unchanged += 1 }
                    try db.execute(sql: "DELETE FROM person_identity WHERE person_id = ? AND origin = 'card'", arguments: [id])
                } else {
                    try db.execute(sql: "INSERT INTO person (name, avatar, card) VALUES (?, ?, ?)", arguments: [card.name, card.avatar, card.card])
                    id = db.lastInsertedRowID
                    summary.added += 1
                }
                for key in card.identities {
                    // A link made by hand (a merge, a split) stays; another card's is taken over.
                    try db.execute(
                        sql: """
                            INSERT INTO person_identity (key, person_id, origin) VALUES (?, ?, 'card')
                            ON CONFLICT (key) DO UPDATE SET person_id = excluded.person_id WHERE origin = 'card'
                            """, arguments: [key, id])
                }
            }
            return summary
        }
    }

    public func createPerson(name: String) async throws -> Int64 {
        try await write { db in
            try Self.peopleChanged(db)
            try db.execute(sql: "INSERT INTO person (name) VALUES (?)", arguments: [name])
            return db.lastInsertedRowID
        }
    }

    public func setIdentities(_ keys: [String], person: Int64?) async throws {
        try await write { db in
            try Self.peopleChanged(db)
            for key in keys {
                try db.execute(
                    sql: """
                        INSERT INTO person_identity (key, person_id, origin) VALUES (?, ?, 'hand')
                        ON CONFLICT (key) DO UPDATE SET person_id = excluded.person_id, origin = 'hand'
                        """, arguments: [key, person])
            }
        }
    }

    public func mergePerson(_ source: Int64, into target: Int64) async throws {
        try await write { db in
            try Self.peopleChanged(db)
            try db.execute(sql: "UPDATE person_identity SET person_id = ?, origin = 'hand' WHERE person_id = ?", arguments: [target, source])
            try db.execute(sql: "UPDATE person SET merged_into = ? WHERE id = ? OR merged_into = ?", arguments: [target, source, source])
            try db.execute(
                sql: "UPDATE person SET avatar = (SELECT avatar FROM person WHERE id = ?) WHERE id = ? AND avatar IS NULL", arguments: [source, target])
        }
    }

    public func rawParticipants() async throws -> [RawParticipants] {
        try await read { db in
            var byConversation: [Int64: [Participant]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT conversation_id, id, name, avatar FROM participant ORDER BY conversation_id, position") {
                byConversation[row[0], default: []].append(Participant(id: row[1], name: row[2], avatar: row[3]))
            }
            return try Row.fetchAll(db, sql: "SELECT id, source_format, \(Self.ownerColumn) FROM conversation c ORDER BY id").map {
                RawParticipants(id: $0[0], format: $0[1], owner: $0[2], participants: byConversation[$0[0]] ?? [])
            }
        }
    }

    /// The participant whose messages are outgoing: a live conversation's owner, else the sender
    /// of an outgoing message (an export's owner).
    static let ownerColumn = """
        coalesce(c.owner, (SELECT m.sender FROM message m WHERE m.conversation_id = c.id AND m.outgoing = 1 AND m.sender IS NOT NULL LIMIT 1))
        """
}
