import BubbleCore
import BubblePeople
import Foundation
import GRDB

/// Every conversation of an iPhone's backup (`IPhoneBackup`), in one import: Messages
/// (`HomeDomain` `Library/SMS/sms.db`, read as a chat.db, its attachments from `MediaDomain`),
/// WhatsApp (`ChatStorage.sqlite` of the app's group container, its media) — with the phone's
/// own address book (`Library/AddressBook/AddressBook.sqlitedb`) naming the people, numbers read
/// in the phone's region. Files are found through `Manifest.db`, never by guessing paths;
/// decrypted ones go into a private folder that is removed when the import ends.
enum IPhoneBackupImporter {
    static let whatsAppDomain = "AppDomainGroup-group.net.whatsapp.WhatsApp.shared"

    /// With `context.everyChat`: every conversation (or those `chats` names); else the one `chat` names.
    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        guard let delivery = context.chatDelivery else { return try one(source, context: context) }
        // Databases here (removed when this returns); attachments where the importers put photos
        // (they outlive this call when a conversation is returned, and are removed with the
        // command's temporary files).
        let scratch = try ScratchSpace.makeFolder("iphone")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let media = try context.attachmentsFolder() + "/iphone-\(UUID().uuidString.prefix(8))"
        let backup = try IPhoneBackup(folder: source.path, password: context.options.password, scratch: scratch, progress: context.options.progress)
        let title = Self.title(backup.device)
        context.note("\(title): \(backup.encrypted ? "an encrypted" : "an unencrypted") backup")
        var options = context.options
        options.contacts = try contacts(backup, scratch: scratch, media: media, given: options.contacts, context: context)
        options.homeFolder = media + "/home"
        context.options = options
        // A chat asked for by a contact's name stands also for their numbers and emails (the
        // phone's address book is known only now).
        let wanted = delivery.chats
        var aliases: [String: [String]] = [:]
        for name in wanted {
            let person = options.contacts?.persons.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            aliases[name] = [name] + (person?.identities ?? [])
        }
        delivery.chats = wanted.flatMap { aliases[$0] ?? [$0] }
        defer { delivery.chats = wanted }
        var unmatched = Set(delivery.chats)
        if let sms = try backup.entry("HomeDomain", "Library/SMS/sms.db") {
            let path = scratch + "/sms.db"
            try extract(sms, with: ["-wal", "-shm"], to: path, from: backup)
            for attachment in try backup.entries("MediaDomain", under: "Library/SMS/Attachments") where safe(attachment.relativePath) {
                try backup.extract(attachment, to: media + "/home/" + attachment.relativePath)
            }
            _ = try IMessageImporter.load(ImportSource(path: path, format: .imessage, displayPath: source.displayPath + " (Messages)"), context: context)
            unmatched.formIntersection(delivery.unmatched)
        }
        if let chats = try backup.entry(whatsAppDomain, "ChatStorage.sqlite") {
            let path = scratch + "/whatsapp/ChatStorage.sqlite"
            try extract(chats, with: ["-wal", "-shm"], to: path, from: backup)
            for file in try backup.entries(whatsAppDomain, under: "Message/Media") where safe(file.relativePath) {
                try backup.extract(file, to: media + "/whatsapp/" + file.relativePath)
            }
            try WhatsAppIOSReader(path: path, mediaRoot: media + "/whatsapp/Message").read(context: context)
            unmatched.formIntersection(delivery.unmatched)
        }
        delivery.unmatched = wanted.filter { (aliases[$0] ?? [$0]).allSatisfy(unmatched.contains) }
        return ImportResult(conversation: Conversation(title: title, participants: [], messages: []), format: .iphoneBackup)
    }

    /// One conversation (`chat`): the backup read with that one wanted.
    private static func one(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        guard let chat = context.options.chat else {
            throw ImportError(
                path: source.displayPath,
                reason: "is an iPhone backup: it holds every conversation of the phone; give `chat` (a name or number) for one, or --all for every one")
        }
        var found: ImportResult?
        let one = ChatDelivery(chats: [chat]) { result in if found == nil { found = result } }
        defer { one.remove() }
        _ = try context.reading(with: .everyChat(one)) { () throws(ImportError) in try load(source, context: context) }
        guard var result = found else {
            throw ImportError(
                path: source.displayPath, reason: "holds no conversation named \"\(chat)\" (Messages or WhatsApp); give a contact's name or number, or --all")
        }
        result.chatKey = nil
        return result
    }

    /// "Sam's iPhone, 21 March 2024".
    static func title(_ device: IPhoneBackup.Device) -> String {
        guard let date = device.date else { return device.name }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_GB")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "d MMMM yyyy"
        return "\(device.name), \(f.string(from: date))"
    }

    /// A path inside its domain (no `..`, not absolute).
    static func safe(_ relativePath: String) -> Bool { !relativePath.hasPrefix("/") && !relativePath.split(separator: "/").contains("..") }

    /// A database and the journal files beside it (a phone's databases are often in WAL mode).
    private static func extract(_ entry: IPhoneBackup.Entry, with suffixes: [String], to path: String, from backup: IPhoneBackup) throws(ImportError) {
        try backup.extract(entry, to: path)
        for suffix in suffixes {
            if let side = try backup.entry(entry.domain, entry.relativePath + suffix) { try backup.extract(side, to: path + suffix) }
        }
    }

    /// The phone's address book as a directory (beside `given`, the `--contacts` ones, which come
    /// first), numbers read in the phone's region.
    private static func contacts(
        _ backup: IPhoneBackup, scratch: String, media: String, given: PeopleDirectory?,
        context: ImportContext
    ) throws(ImportError) -> PeopleDirectory? {
        let region = backup.device.phoneNumber.flatMap(NumberingPlan.region(ofInternational:)) ?? given?.region ?? PhoneNumber.localeRegion
        guard let book = try backup.entry("HomeDomain", "Library/AddressBook/AddressBook.sqlitedb") else { return given }
        let path = scratch + "/AddressBook.sqlitedb"
        try extract(book, with: ["-wal", "-shm"], to: path, from: backup)
        let cards = try PhoneAddressBook.read(path, shown: backup.folder + ": HomeDomain/Library/AddressBook/AddressBook.sqlitedb")
        context.note("the phone's address book: \(Plural.count(cards.count, "contact")), numbers read as \(region ?? "international")")
        let phone = ContactsReader.directory(cards, region: region, pictures: media + "/contacts")
        return PeopleDirectory(persons: (given?.persons ?? []) + phone.persons, region: region)
    }
}

/// An iPhone's own address book (`AddressBook.sqlitedb`): `ABPerson` (first, last, organisation)
/// and `ABMultiValue` (`property` 3: a phone number, 4: an email) by `record_id`.
enum PhoneAddressBook {
    static func read(_ path: String, shown: String) throws(ImportError) -> [Contact] {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in
                guard try db.tableExists("ABPerson"), try db.tableExists("ABMultiValue") else {
                    throw ImportError(path: shown, reason: "has no ABPerson and ABMultiValue tables; expected an iPhone's address book")
                }
                var values: [Int64: (phones: [String], emails: [String])] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT record_id, property, value FROM ABMultiValue WHERE value IS NOT NULL ORDER BY UID") {
                    guard let id: Int64 = row[0], let value: String = row[2] else { continue }
                    switch row[1] as Int64? {
                    case 3: values[id, default: ([], [])].phones.append(value)
                    case 4: values[id, default: ([], [])].emails.append(value)
                    default: break
                    }
                }
                return try Row.fetchAll(db, sql: "SELECT ROWID, First, Last, Organization FROM ABPerson ORDER BY ROWID").compactMap { row -> Contact? in
                    let id: Int64 = row[0]
                    let name = [row[1] as String?, row[2] as String?].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
                    let shownName = name.isEmpty ? (row[3] as String?) ?? "" : name
                    guard !shownName.isEmpty, let v = values[id] else { return nil }
                    return Contact(name: shownName, phones: v.phones, emails: v.emails, origin: "\(shown): ABPerson \(id)")
                }
            }
        } catch let e as ImportError { throw e } catch {
            throw ImportError(path: shown, reason: "cannot be read: \(error)")
        }
    }
}

extension IPhoneBackupImporter: ExportReader {
    static let formats: [ImportFormat] = [.iphoneBackup]
    static let holdsManyChats = true
    static let delivery = MessageTiming.atEnd

    /// A Finder/iTunes backup folder: `Manifest.plist` and `Manifest.db` at its top.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        probe.isFolder && IPhoneBackup.isBackup(probe.path) ? .certain(.iphoneBackup) : nil
    }
}
