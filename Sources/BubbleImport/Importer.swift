import BubbleCore
import BubblePeople
import Foundation

/// The chat exports BubbleKit reads. The raw value is what a `--format` option takes.
public enum ImportFormat: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// BubbleKit's own JSON (`ConversationFile`).
    case native
    /// SMS Backup & Restore (Android) XML: `<smses><sms …/><mms …>…</mms></smses>`.
    case smsBackup = "sms"
    /// WhatsApp "Export chat": the .txt, the folder it sits in, or the .zip WhatsApp makes.
    case whatsapp
    /// Telegram Desktop `result.json`, one chat or the whole account.
    case telegram
    /// macOS/iOS Messages `chat.db` (SQLite).
    case imessage
    /// Facebook Messenger "Download your information" (JSON): the .zip, its folder, a thread's
    /// `message_N.json`; or the separate download of end-to-end encrypted chats.
    case messenger
    /// Instagram "Download your information" (JSON): read as Messenger's, its own name.
    case instagram
    /// DiscordChatExporter JSON: one channel's file (its `[part N]` files joined), or a folder of them.
    case discord
    /// WhatsApp for Android's own database: `msgstore.db` (with `wa.db` beside it for names), or
    /// its encrypted backup `msgstore.db.crypt14` / `.crypt15` with `ImportOptions.key`.
    case whatsappDatabase = "whatsapp-db"
    /// Signal Desktop: its profile folder (`config.json`, `sql/db.sqlite` in SQLCipher 4,
    /// `attachments.noindex`) or the database file, with the key from `config.json` or `ImportOptions.key`.
    case signal
    /// signal-export's output: a chat's folder with `chat.md` (and `data.json`), or either file.
    case signalExport = "signal-export"
    /// An iPhone's backup (Finder/iTunes; the folder named by the device's UDID), encrypted with
    /// `ImportOptions.password` or not: Messages, WhatsApp and the phone's contacts.
    case iphoneBackup = "iphone-backup"

    public var description: String {
        switch self {
        case .native: "BubbleKit JSON"
        case .smsBackup: "SMS Backup & Restore XML"
        case .whatsapp: "WhatsApp export"
        case .telegram: "Telegram Desktop JSON"
        case .imessage: "iMessage chat.db"
        case .messenger: "Messenger download (JSON)"
        case .instagram: "Instagram download (JSON)"
        case .discord: "DiscordChatExporter JSON"
        case .whatsappDatabase: "WhatsApp msgstore.db"
        case .signal: "Signal Desktop database"
        case .signalExport: "signal-export chat"
        case .iphoneBackup: "iPhone backup"
        }
    }
}

/// Safety limits; the defaults suit real exports. Every limit that is hit is an error or a warning
/// naming it, never a crash.
public struct ImportLimits: Hashable, Sendable {
    /// Longest line a text export may have (WhatsApp). A longer one is an error naming the line:
    /// without a cap, a 1 GB line would be read into memory whole.
    public var maxLineBytes: Int = 16 << 20
    /// Largest single JSON value read whole (one Telegram message, a chat's name). A longer one is
    /// an error naming its JSON path and byte offset: the rest of the file is streamed.
    public var maxJSONValueBytes: Int = 16 << 20
    /// Most bytes all entries taken out of one .zip may add up to (zip-bomb guard).
    public var maxZipTotalBytes: Int64 = 4 << 30
    /// Largest uncompressed ÷ compressed ratio accepted for a zip entry over 1 MiB. Deflate cannot
    /// do better than about 1032:1; chat text and photos stay far below 100:1.
    public var maxZipRatio: Double = 200
    /// Most warnings kept in `ImportResult.warnings`; the rest are counted in one last warning.
    public var maxWarnings: Int = 1000

    /// The default limits.
    public init() {}
}

/// How to read an export.
///
///     var options = ImportOptions(me: "Ann", timeZone: TimeZone(identifier: "Europe/Berlin")!)
///     options.chat = "Family"
public struct ImportOptions: Sendable {
    /// WhatsApp and Telegram: the author (name, phone number or Telegram `from_id`) whose messages
    /// are outgoing. Native JSON: overrides the file's `me`. SMS and iMessage already mark the
    /// phone owner's messages (`type`, `is_from_me`); there `me` only names that owner ("Me" when nil).
    public var me: String?
    /// Which conversation of a multi-conversation export: Telegram chat name or id, iMessage
    /// `display_name` or `chat_identifier`, SMS contact name or phone number. Needed when the export
    /// holds more than one; the error then lists them.
    public var chat: String?
    /// Keep messages dated at or after `since`…
    public var since: Date?
    /// …and strictly before `until`.
    public var until: Date?
    /// Zone of wall-clock times (WhatsApp lines, Telegram `date` without `date_unixtime`).
    public var timeZone: TimeZone
    /// Where photos decoded or extracted from an export are written (MMS parts, WhatsApp .zip).
    /// nil: a new folder in the temporary directory, made only when a photo needs it.
    public var attachmentsFolder: String?
    /// The home folder that `~` stands for in iMessage attachment paths (nil: the folder holding
    /// `Library/Messages/chat.db` when the database sits in such a tree, else this user's home;
    /// photos are also looked for beside chat.db when its Messages folder was copied on its own).
    public var homeFolder: String?
    /// Sizes and counts beyond which an export is refused or cut short (`ImportLimits`).
    public var limits: ImportLimits
    /// Refuse what would otherwise be a warning about a line that could not be read as its
    /// format says (WhatsApp: a line that looks like a message header but does not parse).
    public var strict: Bool
    /// The key of an encrypted input: a WhatsApp backup's 64-digit key or key file, Signal
    /// Desktop's raw database key (64 hex digits) when its `config.json` holds none.
    public var key: DecryptionKey?
    /// The folder an app database's media live in: the phone's `WhatsApp/Media`, Signal's
    /// `attachments.noindex` (nil: looked for beside the database).
    public var mediaFolder: String?
    /// Names for numbers: each conversation's participants named from these persons (contact
    /// cards, `ContactsReader.directory`), their pictures as avatars, titles that were only a
    /// number or an id replaced (`PeopleDirectory.name`).
    public var contacts: PeopleDirectory?
    /// An encrypted iPhone backup's password (the one set in Finder or iTunes).
    public var password: String?
    /// Told about slow steps as they start (an encrypted backup's 10,000,000 password rounds).
    public var progress: (@Sendable (String) -> Void)?

    /// Options for one import; every parameter is the property of the same name.
    public init(
        me: String? = nil, chat: String? = nil, since: Date? = nil, until: Date? = nil,
        timeZone: TimeZone = .current, attachmentsFolder: String? = nil, homeFolder: String? = nil,
        limits: ImportLimits = ImportLimits(), strict: Bool = false, key: DecryptionKey? = nil,
        mediaFolder: String? = nil
    ) {
        self.key = key; self.mediaFolder = mediaFolder
        self.me = me; self.chat = chat; self.since = since; self.until = until
        self.timeZone = timeZone; self.attachmentsFolder = attachmentsFolder; self.homeFolder = homeFolder
        self.limits = limits; self.strict = strict
    }
}

/// Something the importer skipped or changed, and why: "chat.txt: line 12: attachment
/// ../../etc/passwd: path leaves the export folder; kept as text".
public struct ImportWarning: Hashable, Sendable, CustomStringConvertible {
    /// The file (or zip entry) the warning is about.
    public var path: String
    /// "line 12", "line 3, column 40", "messages[17]", "message ROWID 42"; nil for the whole file.
    public var location: String?
    /// What was skipped or changed.
    public var what: String
    /// Why, and what was kept instead.
    public var why: String

    /// A warning about `what` at `location` (a line, a JSON path, a row) of the file at `path`.
    public init(path: String, location: String?, what: String, why: String) {
        self.path = path; self.location = location; self.what = what; self.why = why
    }

    public var description: String {
        "\(path)" + (location.map { ": \($0)" } ?? "") + ": \(what): \(why)"
    }
}

/// An export that cannot be read: the file, where in it (line, XML line/column, JSON path, table
/// row), and what was expected. Same shape as `ConversationFileError`.
public struct ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file that could not be read.
    public var path: String
    /// Where in it: a line, an XML line and column, a JSON path or a table row; nil for the whole file.
    public var location: String?
    /// What was wrong and what was expected.
    public var reason: String

    /// An error about the file at `path`, at `location` when known.
    public init(path: String, location: String? = nil, reason: String) {
        self.path = path; self.location = location; self.reason = reason
    }

    public var description: String {
        "\(path)" + (location.map { ": \($0)" } ?? "") + ": \(reason)"
    }
}

/// A conversation read from an export, with what was left out.
public struct ImportResult: Sendable {
    /// The conversation read: participants, messages in time order, attachments' paths.
    public var conversation: Conversation
    /// The format that was read (detected or asked for).
    public var format: ImportFormat
    /// Participant id whose messages are outgoing, when known ("me" for SMS and iMessage).
    public var me: String?
    /// Theme a native file asks for.
    public var theme: String?
    /// What was skipped or changed (at most `ImportLimits.maxWarnings`, then one summary).
    public var warnings: [ImportWarning]
    /// Messages and attachments that could not be shown (each has a warning, or a summary one).
    public var skipped: Int
    /// Messages left out on purpose: outside `since`/`until`.
    public var excluded: Int
    /// Folder the importer wrote photos into, if it wrote any.
    public var attachmentsFolder: String?
    /// What was inferred rather than read: whose messages are outgoing when `me` was not given
    /// ("me: Ben, the author who is not Ann, whom the chat is named after").
    public var notes: [String] = []
    /// With `Importer.loadEach`: how the export tells this conversation from the others (a
    /// contact and number, a chat's name and id), stable from one export to the next.
    public var chatKey: String?
    /// With `Importer.loadEach`: what tells this chat apart across backups of different phones
    /// when `chatKey` (a label with the contact's name) would not — an SMS conversation's
    /// normalised numbers; nil when `chatKey` is it.
    public var chatIdentity: String?
    /// With `Importer.loadEach`: this conversation's number (1, 2, …) among the `chatCount` the
    /// export holds that are wanted (0 when not known).
    public var chatNumber = 0
    /// How many wanted conversations the export holds (with `Importer.loadEach`; 0 when not known).
    public var chatCount = 0
    /// Why every message is incoming when the export's owner is not known (no `me` given and
    /// none inferable, or a `me` that names nobody here): the warning's text; nil when the sides are known.
    public var unknownOwner: String?
    /// How many pictures and files of this conversation the export names but does not hold
    /// (missing, left out, outside the export, unreadable), and the first of them: each is a
    /// placeholder, and with `ImportOptions.strict` an error (`strictMediaError`).
    public var missingMedia = 0
    /// The first picture or file of `missingMedia`, with where the export names it.
    public var firstMissingMedia: ImportWarning?
}

extension ImportResult {
    /// With `--strict`: the error for this conversation's missing media, naming the first (nil
    /// when nothing is missing).
    public var strictMediaError: ImportError? {
        guard missingMedia > 0, let first = firstMissingMedia else { return nil }
        var why = first.why
        if let cut = why.range(of: "; shown as a placeholder") { why.removeSubrange(cut) }
        let more = missingMedia > 1 ? " (and \(missingMedia - 1) more)" : ""
        return ImportError(
            path: first.path,
            reason: (first.location.map { $0 + ": " } ?? "") + "\(first.what): \(why)\(more); "
                + "--strict refuses missing media (without it each is a placeholder)")
    }
}

extension ImportResult {

    /// A conversation that was not read from an export (one from a store): no warnings, nothing skipped.
    public init(conversation: Conversation, format: ImportFormat, me: String? = nil) {
        self.conversation = conversation
        self.format = format
        self.me = me
        warnings = []
        skipped = 0
        excluded = 0
    }
}

/// The one entry point: detects the format and reads the export.
///
///     let result = try Importer.load(path: "WhatsApp Chat with Ann.zip",
///                                    options: ImportOptions(me: "Ben", timeZone: .current))
///     print(result.conversation.messages.count, result.warnings.count)
public enum Importer {
    /// Reads `path` (a file, or an export folder) as `format`, or as the detected format when nil.
    ///
    /// With `sink`, every kept message is handed to it as soon as it is read, and the result's
    /// conversation has no messages (its title, participants and `me` are complete; `replies` and
    /// `statuses` are left empty). Messages come in the source's order: an SMS backup, which
    /// `load` without a sink sorts by date, arrives in file order (`sortsByDate` says so).
    /// Importers that decide sides only once everything is read (WhatsApp, Telegram) deliver at
    /// the end (`streamsMessages`). An error from the sink ends the import with an error naming it.
    ///
    /// With `provisional`, the formats that decide sides at the end stream too
    /// (`streamsProvisionally`: Telegram): each message comes as soon as it is read, on the
    /// incoming side, and a reply with only its original's id; `result.me` then says who is
    /// outgoing and `StreamedFixup` settles both — memory stays flat whatever the export's size.
    public static func load(
        path: String, format: ImportFormat? = nil, options: ImportOptions = ImportOptions(),
        messages sink: ((Message) throws -> Void)? = nil, provisional: Bool = false
    ) throws(ImportError) -> ImportResult {
        let source: ImportSource
        if let format {
            source = FormatDetector.source(path: path, format: format)
        } else {
            source = try FormatDetector.detect(path: path)
        }
        // Only importers that know each message's side as they read it stream; the others
        // (WhatsApp, Telegram: "me" is decided once all authors are known) deliver at the end.
        var stream: MessageStream?
        if let sink, streamsMessages(source.format) || (provisional && streamsProvisionally(source.format)) {
            stream = MessageStream(replyIDs: provisional, sink: sink)
        }
        let context = ImportContext(path: source.displayPath, options: options, delivery: stream.map { .stream($0) } ?? .whole)
        var result = try ExportReaders.reader(of: source.format).load(source, context: context)
        if let sink, !result.conversation.messages.isEmpty {
            // An importer that gathered its messages first: deliver them now.
            let late = MessageStream(sink: sink)
            for m in result.conversation.messages where !late.deliver(m) { break }
            result.conversation.messages = []
            stream = late
        }
        if let failed = stream?.error {
            throw ImportError(path: source.displayPath, reason: "stopped: the messages could not be passed on: \(failed)")
        }
        context.finish(&result)
        if options.strict, let error = result.strictMediaError { throw error }
        return result
    }

    /// Whether `load` with a sink hands messages over as they are read (SMS backups, iMessage,
    /// native JSON) rather than once the whole export is read (WhatsApp, Telegram).
    /// Reads every conversation of an export — a phone's SMS backup, a Telegram full export, an
    /// iMessage chat.db; one for the formats that hold one — handing each, finished, to `each`,
    /// one at a time, so memory holds one conversation (and `each`'s work) rather than the whole
    /// export: SMS backups keep each conversation on disk while the file is read; Telegram and
    /// iMessage read one chat after another. `chats` keeps only the conversations they name
    /// (as `ImportOptions.chat` names one); empty keeps all. Each result carries the warnings
    /// so far. Returns what was handed over, and the `chats` that matched nothing.
    @discardableResult
    public static func loadEach(
        path: String, format: ImportFormat? = nil, options: ImportOptions = ImportOptions(),
        chats: [String] = [], each: @escaping (ImportResult) throws -> Void
    )
        throws(ImportError) -> (conversations: [ChatSummary], unmatched: [String])
    {
        let source: ImportSource
        if let format {
            source = FormatDetector.source(path: path, format: format)
        } else {
            source = try FormatDetector.detect(path: path)
        }
        var options = options
        options.chat = nil
        let chats = ChatDelivery(chats: chats, each: each)
        let context = ImportContext(path: source.displayPath, options: options, delivery: .everyChat(chats))
        defer { chats.remove() }
        let reader = ExportReaders.reader(of: source.format)
        if reader.holdsManyChats {
            _ = try reader.load(source, context: context)
        } else {
            // One conversation per export: read whole, then handed over if wanted.
            var result = try context.reading(with: .whole) { () throws(ImportError) in try reader.load(source, context: context) }
            context.finish(&result)
            let title = result.conversation.title ?? result.conversation.participants.map(\.name).joined(separator: ", ")
            guard chats.wants({ $0.caseInsensitiveCompare(title) == .orderedSame }) else { return ([], chats.chats) }
            try chats.deliver(result, key: result.chatKey ?? title, of: 1, path: source.displayPath)
            return (chats.delivered, [])
        }
        return (chats.delivered, chats.unmatched)
    }

    package static func streamsMessages(_ format: ImportFormat) -> Bool { ExportReaders.reader(of: format).delivery == .whenRead }

    /// Whether `load(…, provisional: true)` with a sink streams `format`'s messages with their
    /// sides and reply quotes left for `StreamedFixup` (Telegram: "me" is known at the end).
    public static func streamsProvisionally(_ format: ImportFormat) -> Bool { ExportReaders.reader(of: format).delivery == .provisionally }

    /// Whether `load` without a sink orders `format`'s messages by date (SMS backups list all SMS
    /// before all MMS); a sink receives them in file order.
    public static func sortsByDate(_ format: ImportFormat) -> Bool { ExportReaders.reader(of: format).sortsByDate }

    /// The format `path` holds, judged from its content (first bytes, structure, SQLite header,
    /// zip with a .txt inside, a folder with a WhatsApp `_chat.txt`), not from its name.
    public static func detect(path: String) throws(ImportError) -> ImportFormat {
        try FormatDetector.detect(path: path).format
    }
}
