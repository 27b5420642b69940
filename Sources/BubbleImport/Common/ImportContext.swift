import BubbleCore
import BubbleMedia
import Foundation

/// What every importer shares while it reads one export: the options, the warnings so far, the
/// skipped count, and the attachments folder (made on first use).
final class ImportContext {
    let path: String
    /// The options (an importer that reads others' files — an iPhone backup — adds to them).
    var options: ImportOptions
    private(set) var skipped = 0
    private var warnings: [ImportWarning] = []
    private var unlistedWarnings = 0
    private(set) var createdAttachmentsFolder: String?
    /// How what is read leaves the importer: fixed when the import starts (`Importer`).
    private(set) var delivery: ImportDelivery

    init(path: String, options: ImportOptions, delivery: ImportDelivery = .whole) {
        self.path = path
        self.options = options
        self.delivery = delivery
    }

    /// The stream kept messages go to as they are read, if the import streams.
    var stream: MessageStream? {
        if case .stream(let stream) = delivery { return stream }
        return nil
    }

    /// Every wanted chat is handed over finished (`Importer.loadEach`).
    var everyChat: Bool { chatDelivery != nil }
    /// With `everyChat`: the chats asked for, and those that matched nothing.
    var chatDelivery: ChatDelivery? {
        if case .everyChat(let chats) = delivery { return chats }
        return nil
    }

    /// Reads with another delivery for the time of `body` (an iPhone backup asked for one chat
    /// reads every chat with only that one wanted), then the import's own again.
    func reading<T>(with other: ImportDelivery, _ body: () throws(ImportError) -> T) throws(ImportError) -> T {
        let own = delivery
        delivery = other
        defer { delivery = own }
        return try body()
    }

    /// Hands a finished conversation over (with `everyChat`; with this context's warnings so far).
    func deliverConversation(
        _ result: ImportResult, key: String, of total: Int, owner: Int = -1,
        identity: String? = nil
    ) throws(ImportError) {
        guard let chats = chatDelivery else { return }
        var r = result
        r.chatIdentity = identity
        // Missing media are counted per conversation.
        finish(&r, owner: owner)
        try chats.deliver(r, key: key, of: total, path: path)
    }

    /// With `everyChat`: the chats of `all` the caller named (all of them when it named none);
    /// the names that matched none are reported as unmatched. Without it: all of them.
    func wanted<Chat>(_ all: [Chat], matches: (Chat, String) -> Bool) -> [Chat] {
        chatDelivery?.wanted(all, matches: matches) ?? all
    }

    /// Whether a chat is wanted (with `everyChat`: no names given, or one of them matches).
    func wants(_ matches: (String) -> Bool) -> Bool { chatDelivery?.wants(matches) ?? true }

    /// A spool for a builder's messages while every chat is read (files removed by `Importer.loadEach`).
    func makeSpool() throws(ImportError) -> MessageSpool {
        guard let chats = chatDelivery else {
            throw ImportError(path: path, reason: "cannot keep conversations apart on disk unless every chat is read (an importer's mistake)")
        }
        return try chats.makeSpool()
    }

    /// Records what was skipped or changed; `skipped: true` also counts it in `ImportResult.skipped`;
    /// `media: true` marks a picture or file the export names but does not hold (`missingMedia`).
    func warn(_ location: String?, _ what: String, _ why: String, skipped: Bool = false, file: String? = nil, media: Bool = false) {
        if skipped { self.skipped += 1 }
        let warning = ImportWarning(path: file ?? path, location: location, what: what, why: why)
        if media {
            missing[mediaOwner, default: (0, nil)].count += 1
            if missing[mediaOwner]?.first == nil { missing[mediaOwner]?.first = warning }
        }
        if warnings.count < options.limits.maxWarnings {
            warnings.append(warning)
        } else {
            unlistedWarnings += 1
        }
    }

    /// Warns that no message of the conversation being read is outgoing because its owner is not
    /// known (`me` not given and not inferable, or naming nobody here); the conversation's result
    /// says so in `unknownOwner`.
    func warnUnknownOwner(_ what: String, _ why: String, file: String? = nil) {
        warn(nil, what, why, file: file)
        unknownOwner = "\(what): \(why)"
    }
    private var unknownOwner: String?

    /// Missing media by the conversation they belong to: an importer that reads several at once
    /// (an SMS backup's messages are interleaved) says whose message it reads (`mediaOwner`);
    /// the others read one conversation after another and leave it at -1.
    var mediaOwner = -1
    private var missing: [Int: (count: Int, first: ImportWarning?)] = [:]

    /// What the import gathered besides the messages, into `result`: with `owner`, that
    /// conversation's missing media (and those of no owner), which are then forgotten.
    func finish(_ result: inout ImportResult, owner: Int? = nil) {
        if let contacts = options.contacts {
            for note in contacts.name(&result.conversation, app: result.format.rawValue, me: result.me) { self.note(note) }
        }
        result.warnings = finishedWarnings()
        result.notes = notes
        result.unknownOwner = unknownOwner
        unknownOwner = nil
        result.skipped = skipped
        result.attachmentsFolder = createdAttachmentsFolder
        // Contact pictures written into the attachments folder: it goes with the result too
        // (a converter copies what is in it before it is removed).
        if result.attachmentsFolder == nil, let folder = options.attachmentsFolder,
            result.conversation.participants.contains(where: { $0.avatar?.hasPrefix(folder + "/") == true })
        {
            result.attachmentsFolder = folder
        }
        let owners = owner.map { Array(Set([$0, -1])) } ?? Array(missing.keys)
        let taken = owners.compactMap { missing.removeValue(forKey: $0) }
        result.missingMedia = taken.reduce(0) { $0 + $1.count }
        result.firstMissingMedia = taken.compactMap(\.first).first
    }

    /// What the importer inferred that the export did not say outright ("me: Ben, …").
    private(set) var notes: [String] = []
    func note(_ text: String) { notes.append(text) }

    /// Counts a skipped item whose warning is given once for all of them (e.g. tapbacks).
    func countSkipped(_ n: Int = 1) { skipped += n }

    func finishedWarnings() -> [ImportWarning] {
        guard unlistedWarnings > 0 else { return warnings }
        return warnings + [
            ImportWarning(
                path: path, location: nil, what: "\(unlistedWarnings) more warnings",
                why: "not listed (limit \(options.limits.maxWarnings))")
        ]
    }

    /// The folder photos are written to: `options.attachmentsFolder`, or a fresh temporary one.
    func attachmentsFolder() throws(ImportError) -> String {
        if let created = createdAttachmentsFolder { return created }
        guard let given = options.attachmentsFolder else {
            // A private folder of this process's (swept by the next import if this one is killed).
            let made = try ScratchSpace.makeFolder("import")
            createdAttachmentsFolder = made
            return made
        }
        let folder = URL(fileURLWithPath: given).standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ImportError(path: folder, reason: "cannot create the attachments folder: \(error.localizedDescription)")
        }
        createdAttachmentsFolder = folder
        return folder
    }

    /// A file name in the attachments folder that this import has not used yet: `stem.ext`,
    /// else `stem-2.ext`, `stem-3.ext`… (re-running an import overwrites its own earlier files).
    private var usedNames = Set<String>()
    func uniqueAttachmentName(stem: String, ext: String) -> String {
        var name = stem + (ext.isEmpty ? "" : "." + ext)
        var n = 2
        while !usedNames.insert(name).inserted {
            name = "\(stem)-\(n)" + (ext.isEmpty ? "" : "." + ext)
            n += 1
        }
        return name
    }

    /// Keeps `since ≤ date < until`.
    func isWanted(_ date: Date) -> Bool {
        if let since = options.since, date < since { return false }
        if let until = options.until, date >= until { return false }
        return true
    }
}
