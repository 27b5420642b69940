// Names for numbers in the store: contacts and people. Built with the `Server` trait.
#if Server
import ArgumentParser
import BubbleCore
import BubbleImport
import BubblePeople
import BubbleStore
import Foundation

/// `bubbles contacts import|list`.
struct Contacts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Keep address books in the store: its conversations then show names for numbers and emails.",
        subcommands: [ContactsImport.self, ContactsList.self])
}

struct ContactsImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Read contacts (vCards 2.1/3.0/4.0, a Mac's AddressBook-v22.abcddb or its folder, a Google Contacts CSV) into the store; a card read again is updated."
    )

    @Argument(help: "Contacts files.")
    var files: [String]

    @OptionGroup var store: StoreOptions

    @Option(help: "The country numbers without one are read in (ISO code: US, DE, GB…; default from the locale, else they match by their last 7 digits).")
    var region: String?

    func validate() throws {
        if let region, NumberingPlan.region(region) == nil {
            throw ValidationError("--region '\(region)' is not a region the numbering plan knows; expected an ISO code such as US, DE, GB, FR")
        }
    }

    func run() async throws {
        try await Self.run(files, region: region, into: try await store.open())
    }

    /// Reads `files` (warnings on stderr) and keeps their cards in `db`; prints what changed.
    static func run(_ files: [String], region: String?, into db: any ConversationStore) async throws {
        let read = try InputOptions.readContacts(files)
        let region = region?.uppercased() ?? PhoneNumber.localeRegion
        let summary = try await storeErrors { try await db.importContacts(read.contacts, region: region) }
        print(
            "contacts: \(Plural.count(read.contacts.count, "card")) read: \(summary.added) new, \(summary.updated) updated, "
                + "\(summary.unchanged) unchanged"
                + (region.map { "; numbers read in \($0)" } ?? "; no region: numbers match by their last \(PhoneNumber.minimumMatch) digits"))
    }
}

struct ContactsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the contacts kept in the store, with their numbers and emails.")

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print a JSON array (name, identities, avatar).")
    var json = false

    func run() async throws {
        let db = try await store.openExisting()
        let snapshot = try await storeErrors { try await db.peopleSnapshot() }
        let cards = snapshot.persons.filter { $0.card != nil }
        if json {
            // The picture's file as it is on disk (the store keeps `media/…`, inside its own media folder).
            try printJSON(
                cards.map {
                    [
                        "name": $0.name, "identities": $0.identities.map(\.key),
                        "avatar": $0.avatar.map(db.mediaPath) ?? NSNull()
                    ] as [String: Any]
                })
            return
        }
        if cards.isEmpty { print("no contacts; add some with `bubbles contacts import FILE`"); return }
        for p in cards { print("\(p.name)  ·  \(p.identities.map(\.key).joined(separator: ", "))") }
    }
}

/// `bubbles people [--json]`, `people merge`, `people split`.
struct People: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The people of the store's conversations: each person with their numbers, emails and app ids, and their conversations from every app.",
        subcommands: [PeopleList.self, PeopleMerge.self, PeopleSplit.self], defaultSubcommand: PeopleList.self)
}

struct PeopleList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the people (the default).")

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print a JSON array: [{\"name\", \"identities\": [...], \"conversations\": [ids]}].")
    var json = false

    func run() async throws {
        let entries = try await storeErrors { try await store.openExisting().peopleEntries() }
        if json {
            try printJSON(entries.map { ["name": $0.name, "identities": $0.identities, "conversations": $0.conversations] as [String: Any] })
            return
        }
        if entries.isEmpty { print("no people; import conversations with `bubbles import FILE`"); return }
        for e in entries {
            let chats =
                e.conversations.isEmpty
                ? "no conversations"
                : Plural.noun(e.conversations.count, "conversation") + " " + e.conversations.map(String.init).joined(separator: ", ")
            print("\(e.name)  ·  \(e.identities.joined(separator: ", "))  ·  " + chats)
        }
    }
}

struct PeopleMerge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Make one person of several: the first keeps its name, the others' numbers, emails and app ids join it.")

    @Argument(help: "Two or more people: names, or identities (+15550102000, kai@example.org, whatsapp:Ann).")
    var people: [String]

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let db = try await store.openExisting()
        do { try await db.mergePeople(people) } catch let e as PeopleError { throw CLIError(e.description) } catch let e as StoreError {
            throw CLIError(e.description)
        }
        print("merged: \(people.joined(separator: " + ")) are one person, \"\(people[0])\"")
    }
}

struct PeopleSplit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "split",
        abstract: "Take numbers, emails or app ids away from a person: each then stands alone, and no contact card takes it back.")

    @Argument(help: "The person (a name or one of their identities).")
    var person: String

    @Argument(help: "The identities to take away.")
    var identities: [String]

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let db = try await store.openExisting()
        do { try await db.splitPeople(person, identities: identities) } catch let e as PeopleError { throw CLIError(e.description) } catch let e as StoreError {
            throw CLIError(e.description)
        }
        print("split: \(identities.joined(separator: ", ")) no longer belong to \(person)")
    }
}
#endif
