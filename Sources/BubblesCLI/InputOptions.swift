import ArgumentParser
import BubbleCore
import BubbleImport
import BubblePeople
#if Server
import BubbleStore
#endif
import Foundation

/// How an export is read: its format, whose messages are outgoing, which chats, its key and media,
/// contacts, dates and time zone. The one set of input options of `render`, `convert`, `book`,
/// `stats` and `import` (each declares only where the conversation comes from).
struct ReadOptions: ParsableArguments {
    @Option(name: .customLong("input-format"), help: ArgumentHelp("The export's format (default: detected from the content)."))
    var inputFormat: ImportFormat?

    @Option(help: "Whose messages are outgoing: a participant id, name or phone number (overrides the file's \"me\").")
    var me: String?

    @Option(
        help:
            "Which chat of an export that holds several (name or id; a Messenger thread's title or folder, a Discord channel's name or id); the error lists them when needed. With --all and import, may be given several times: those chats only."
    )
    var chat: [String] = []

    @Option(
        help:
            "The key of an encrypted input: a WhatsApp .crypt15 backup's 64-digit end-to-end key; Signal Desktop's database key (64 hex digits) when config.json has none, or the desktop keyring's \"Signal Safe Storage\" password for its encryptedKey."
    )
    var key: String?

    @Option(
        name: .customLong("key-file"),
        help: "A file holding the key: WhatsApp's `key` (crypt14) or `encrypted_backup.key` (crypt15) from the phone, or a text file with the 64 hex digits.")
    var keyFile: String?

    @Flag(
        name: .customLong("password-stdin"),
        help:
            "Read an encrypted iPhone backup's password from standard input (its first line). Without it, a terminal is asked; the password is never an option."
    )
    var passwordStdin = false

    @Option(
        help:
            "With a WhatsApp msgstore.db: the phone's WhatsApp/Media folder (default: a Media folder beside the database or one up); with Signal Desktop: its attachments.noindex."
    )
    var media: String?

    @Option(
        help:
            "Contacts that name the numbers and emails of a file's conversations: vCards (.vcf), a Mac's AddressBook-v22.abcddb (or its folder), a Google Contacts CSV; may be given several times."
    )
    var contacts: [String] = []

    @Option(
        help:
            "The country numbers without one are read in, for --contacts (ISO code: US, DE, GB…; default from the locale, else numbers match by their last 7 digits)."
    )
    var region: String?

    @Option(help: "Keep messages from this date or time on (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][±HH:MM], in --tz).")
    var since: String?

    @Option(help: "Keep messages before this date or time (exclusive; same forms as --since).")
    var until: String?

    @Option(help: "Time zone for wall-clock times, days and times shown (IANA name, e.g. Europe/Berlin); default the system's.")
    var tz: String?

    @Flag(
        help:
            "Refuse the input where it would warn about a line it cannot read as its format says (WhatsApp: a line shaped like a message header whose date or time does not parse), and a conversation whose pictures are missing."
    )
    var strict = false

    /// The options given that only mean something for an export file, for the error that says so.
    var fileOnly: [String] {
        [
            inputFormat.map { _ in "--input-format" }, chat.isEmpty ? nil : "--chat", me.map { _ in "--me" }, strict ? "--strict" : nil,
            key.map { _ in "--key" }, keyFile.map { _ in "--key-file" }, media.map { _ in "--media" },
            contacts.isEmpty ? nil : "--contacts", passwordStdin ? "--password-stdin" : nil
        ].compactMap { $0 }
    }

    func validate() throws {
        if let region, NumberingPlan.region(region) == nil {
            throw ValidationError("--region '\(region)' is not a region the numbering plan knows; expected an ISO code such as US, DE, GB, FR")
        }
        if key != nil && keyFile != nil { throw ValidationError("give --key or --key-file, not both") }
    }
}

extension ImportFormat: ExpressibleByArgument {
    /// `--input-format whatsapp-db` (any case); the help and the error list every format.
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}

/// The input side of the commands that read one conversation: an export file (any supported
/// format, read as `ReadOptions` say), or a conversation or person of the store. The read
/// options are reached as if they were this type's own (`input.me`).
@dynamicMemberLookup
struct InputOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            """
            Conversation: BubbleKit JSON, SMS Backup & Restore XML, WhatsApp .txt/.zip/folder, \
            Telegram result.json, iMessage chat.db, a Messenger or Instagram download (.zip, folder or \
            message_1.json), DiscordChatExporter JSON (file or folder), WhatsApp's msgstore.db or its \
            .crypt14/.crypt15 backup, a Signal Desktop profile folder, signal-export's chat.md; - for standard input. Or --conversation.
            """, valueName: "input"))
    var file: String?

    @Option(help: "Instead of a file: this conversation of the store (its id in `bubbles list`).")
    var conversation: Int64?

    @Option(
        help:
            "Instead of a file: one timeline of every one-to-one conversation of the store with this person (a name or a number, email or app id from `bubbles people`), from every app, in time order."
    )
    var person: String?

    @Option(
        help:
            "The store's database (an SQLite file or a postgres:// URL), with --conversation (default: $BUBBLES_DB, else ~/.local/share/bubblekit/bubbles.sqlite)."
    )
    var db: String?

    @Option(name: .customLong("store-media"), help: "PostgreSQL, with --conversation: the store's folder of pictures and files (default: $BUBBLES_MEDIA).")
    var storeMedia: String?

    @OptionGroup(title: "Reading the export") var read: ReadOptions

    subscript<T>(dynamicMember path: WritableKeyPath<ReadOptions, T>) -> T {
        get { read[keyPath: path] }
        set { read[keyPath: path] = newValue }
    }

    /// The options of one file of `bubbles import` (or an upload): `file` read as `read` says.
    static func file(_ file: String, read: ReadOptions = ReadOptions()) throws -> InputOptions {
        var input = try InputOptions.parse([file])
        input.read = read
        return input
    }

    /// Refuses an output file that is a folder, or that is the input itself (links resolved): an
    /// input is never overwritten.
    func refuseUnsafeOutput(_ output: String) throws {
        if (try? URL(fileURLWithPath: output).resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
            throw CLIError("\(output): is a folder; expected an output file name")
        }
        if let file, file != "-",
            URL(fileURLWithPath: file).standardizedFileURL.resolvingSymlinksInPath()
                == URL(fileURLWithPath: output).standardizedFileURL.resolvingSymlinksInPath()
        {
            throw CLIError("\(output): is the input file; refusing to overwrite it")
        }
    }

    /// The file, or the store's conversation, as messages name it.
    var input: String { file ?? person.map { "the timeline of \($0)" } ?? "conversation \(conversation ?? 0)" }

    /// A conversation read from the input, ready to render; `close()` removes what reading made.
    struct Loaded {
        var result: ImportResult
        /// Folder that relative photo paths are resolved against (the input's folder).
        var folder: String
        var timeZone: TimeZone
        /// Temporary files made for standard input and for photos taken out of the export.
        var temporary: [String]
        /// With `each`: the conversations handed over, and the `--chat` names that matched none.
        var batch: (conversations: [ChatSummary], unmatched: [String])?
        var conversation: Conversation { result.conversation }

        func close() {
            for path in temporary { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    func validate() throws {
        if person != nil {
            if file != nil || conversation != nil { throw ValidationError("give an input file, --conversation or --person, not two of them") }
            if !read.fileOnly.isEmpty {
                throw ValidationError("\(read.fileOnly.joined(separator: ", ")): apply to files; --person reads the store, whose contacts name its people")
            }
            return
        }
        switch (file, conversation) {
        case (nil, nil): throw ValidationError("expected an input file, --conversation ID of the store (see `bubbles list`) or --person NAME")
        case (.some, .some): throw ValidationError("give an input file or --conversation, not both")
        case (nil, .some):
            if !read.fileOnly.isEmpty {
                throw ValidationError(
                    "\(read.fileOnly.joined(separator: ", ")): apply to files; a stored conversation was read when it was imported (its names come from the store's contacts)"
                )
            }
        case (.some, nil):
            if db != nil || storeMedia != nil { throw ValidationError("--db and --store-media go with --conversation or --person") }
        }
    }

    func zone() throws -> TimeZone { try timeZone(read.tz) }

    /// The region numbers are read in: --region, else the locale's.
    var numberRegion: String? { read.region?.uppercased() ?? PhoneNumber.localeRegion }

    /// `--contacts` read (warnings on stderr), nil when none was given.
    func readContacts() throws -> ContactsReader.Result? {
        read.contacts.isEmpty ? nil : try Self.readContacts(read.contacts)
    }

    /// Contacts files read (`--contacts`, `bubbles contacts import`), their warnings on stderr; an
    /// unreadable file is an error naming it.
    static func readContacts(_ files: [String]) throws -> ContactsReader.Result {
        let result: ContactsReader.Result
        do { result = try ContactsReader.read(files) } catch { throw CLIError(error.description) }
        if !result.warnings.isEmpty {
            FileHandle.standardError.write(Data(result.warnings.map { "warning: " + $0.description + "\n" }.joined().utf8))
        }
        return result
    }

    /// The persons of `--contacts`, their pictures written into `pictures`.
    func contactsDirectory(pictures: String) throws -> PeopleDirectory? {
        guard let read = try readContacts() else { return nil }
        return ContactsReader.directory(read.contacts, region: numberRegion, pictures: pictures)
    }

    /// The folder relative photo paths of `input` are resolved against: its own folder, the
    /// input itself when it is a folder, the working folder for standard input.
    static func folder(of input: String) -> String {
        if input == "-" { return FileManager.default.currentDirectoryPath }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: input, isDirectory: &isDir), isDir.boolValue { return input }
        return URL(fileURLWithPath: input).deletingLastPathComponent().path
    }

    /// The importers name their options as `ImportOptions` fields (`chat`, `me`); here they are options.
    static func optionNames(_ text: String) -> String {
        text.replacingOccurrences(of: "`chat`", with: "--chat").replacingOccurrences(of: "`me`", with: "--me")
    }

    /// `load`, or the stored conversation `--conversation` names (read from the store, which
    /// is async; `--since`/`--until` kept).
    func loadAny(
        messages sink: ((Message) throws -> Void)? = nil, provisional: Bool = false,
        before: ((_ folder: String, _ temporary: [String]) -> Void)? = nil
    ) async throws -> Loaded {
        guard conversation != nil || person != nil else { return try load(messages: sink, provisional: provisional, before: before) }
        #if Server
        let zone = try zone()
        let since = try read.since.map { try parseDate($0, option: "--since", zone: zone) }
        let until = try read.until.map { try parseDate($0, option: "--until", zone: zone) }
        if let s = since, let u = until, s >= u { throw ValidationError("--since \(read.since!) is not before --until \(read.until!)") }
        // From the store: photo paths are the store's, absolute.
        let store = try await StoreOptions(db: db, media: storeMedia).open()
        var c: Conversation
        do {
            if let person { c = try await store.timeline(with: person) } else { c = try await store.load(conversation!) }
        } catch let e as StoreError { throw CLIError(e.description) } catch let e as PeopleError { throw CLIError("--person: " + e.description) }
        let all = c.messages.count
        c.messages.removeAll { m in since.map { m.date < $0 } == true || until.map { m.date >= $0 } == true }
        var result = ImportResult(conversation: c, format: .native)
        result.excluded = all - c.messages.count
        if let sink {
            for m in result.conversation.messages { try sink(m) }
            result.conversation.messages = []
        }
        before?(store.mediaFolder, [])
        return Loaded(result: result, folder: store.mediaFolder, timeZone: zone, temporary: [])
        #else
        throw CLIError(
            "\(person == nil ? "--conversation" : "--person"): this bubbles was built without the store (`make demo` builds it lean); build it with `swift build` or `make serve`"
        )
        #endif
    }

    /// Reads the input. With `sink`, messages go there as they are read (see `Importer.load`) and
    /// the loaded conversation has none; `before` learns first the folder photo paths are relative
    /// to and the temporary folders photos may be written into.
    ///
    /// With `each` (`--all`), every conversation of the input (or those `--chat` names) is handed
    /// to it, finished, one at a time; the loaded result then has no messages and `batch` says
    /// what was handed over.
    func load(
        messages sink: ((Message) throws -> Void)? = nil, provisional: Bool = false,
        before: ((_ folder: String, _ temporary: [String]) -> Void)? = nil,
        each: (@Sendable (ImportResult) throws -> Void)? = nil
    ) throws -> Loaded {
        let zone = try zone()
        let format = read.inputFormat
        var options = ImportOptions(
            me: read.me, chat: read.chat.first, timeZone: zone, strict: read.strict,
            key: read.key.map(DecryptionKey.text) ?? read.keyFile.map(DecryptionKey.file), mediaFolder: read.media)
        options.since = try read.since.map { try parseDate($0, option: "--since", zone: zone) }
        options.until = try read.until.map { try parseDate($0, option: "--until", zone: zone) }
        if let s = options.since, let u = options.until, s >= u {
            throw ValidationError("--since \(read.since!) is not before --until \(read.until!)")
        }
        options.progress = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
        CleanupOnStop.install()
        if let file, let given = IPhoneBackupInput.preset(for: file) {
            switch given {
            case .password(let password): options.password = password
            case .noPassword:
                if IPhoneBackupInput.isEncryptedBackup(file) {
                    throw CLIError("the backup is encrypted: give its password with the upload (the form's Backup password field)")
                }
            }
        } else if read.passwordStdin || (file.map(IPhoneBackupInput.isEncryptedBackup) ?? false) {
            if file == nil || file == "-" {
                throw ValidationError("--password-stdin reads the password from standard input: give the backup as a folder, not -")
            }
            options.password = try IPhoneBackupInput.password(fromStandardInput: read.passwordStdin)
        }

        if let conversation {
            if each != nil { throw ValidationError("--all reads an export file; a stored conversation is one (use --conversation without --all)") }
            throw ValidationError("--conversation \(conversation): a stored conversation is read by `loadAny`")
        }
        var temporary: [String] = []
        let input = file ?? "-"
        var path = input
        var folder: String
        if input == "-" {
            // Importers read files (SQLite, zip, streaming XML): standard input goes to one first.
            let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-stdin-\(UUID().uuidString)").path
            guard FileManager.default.createFile(atPath: tmp, contents: FileHandle.standardInput.readDataToEndOfFile()) else {
                throw CLIError("<stdin>: cannot be saved to \(tmp) to be read")
            }
            temporary.append(tmp)
            path = tmp
            folder = FileManager.default.currentDirectoryPath
        } else {
            guard FileManager.default.fileExists(atPath: input) else { throw CLIError("\(input): no such file") }
            guard FileManager.default.isReadableFile(atPath: input) else { throw CLIError("\(input): cannot be read (permission denied?)") }
            folder = Self.folder(of: input)
        }
        // Photos taken out of the export (MMS parts, a WhatsApp .zip) go into a folder of ours.
        // (a private folder named for this process: one a killed run leaves is removed by the next).
        let attachments = ScratchSpace.reservePath("attachments")
        options.attachmentsFolder = attachments
        temporary.append(attachments)
        options.contacts = try contactsDirectory(pictures: attachments + "/contacts")
        // --chat "Ann Lee": a contact's name stands for their number (else email), which the
        // export knows.
        var chats = read.chat
        if let people = options.contacts {
            chats = chats.map { name in
                guard let p = people.persons.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else { return name }
                return p.identities.first { !$0.contains("@") } ?? p.identities.first ?? name
            }
            options.chat = chats.first
        }
        before?(folder, temporary)
        do {
            if let each {
                let detected = try format ?? Importer.detect(path: path)
                let batch = try Importer.loadEach(path: path, format: detected, options: options, chats: chats, each: each)
                var loaded = Loaded(
                    result: ImportResult(conversation: Conversation(title: nil, participants: [], messages: []), format: detected),
                    folder: folder, timeZone: zone, temporary: temporary)
                loaded.batch = batch
                return loaded
            }
            let result = try Importer.load(path: path, format: format, options: options, messages: sink, provisional: provisional)
            if let made = result.attachmentsFolder { temporary.append(made) }
            return Loaded(result: result, folder: folder, timeZone: zone, temporary: temporary)
        } catch let error as ImportError {
            for path in temporary { try? FileManager.default.removeItem(atPath: path) }
            var text = input == "-" ? error.description.replacingOccurrences(of: path, with: "<stdin>") : error.description
            text = Self.optionNames(text)
            throw CLIError(text)
        } catch {
            for path in temporary { try? FileManager.default.removeItem(atPath: path) }
            throw error
        }
    }
}

extension InputOptions.Loaded {
    /// An error when --since/--until left none of the messages: nothing is written (an empty
    /// picture or transcript would look like a conversation without messages).
    func refuseEmptyRange(_ source: InputOptions, kept: Int? = nil) throws {
        guard (kept ?? result.conversation.messages.count) == 0, result.excluded > 0 else { return }
        let range = [source.since.map { "--since \($0)" }, source.until.map { "--until \($0)" }].compactMap { $0 }.joined(separator: " ")
        throw CLIError(
            "\(source.input): none of its \(Plural.count(result.excluded, "message")) \(result.excluded == 1 ? "is" : "are") inside \(range); "
                + "nothing written (widen the range)")
    }

    /// Tells the user on stderr what was skipped, left out or changed (silent when nothing was).
    func reportWarnings(maxShown: Int = 20, messageCount: Int? = nil) {
        let report = ImportReport()
        report.add(result)
        report.tell(maxShown: maxShown, messageCount: messageCount ?? result.conversation.messages.count)
    }
}

/// What the importers said while reading (notes, warnings, what was skipped or left out), gathered
/// over one conversation or every one of a backup and told once on standard error, the same way
/// by every command that reads exports (`render`, `convert`, `book`, `stats`, `import`, with `--all` too).
final class ImportReport: @unchecked Sendable {
    private let lock = NSLock()
    private var format: ImportFormat?
    private var notes: [String] = []
    private var warnings: [String] = []
    private var seen = Set<String>()
    private var skipped = 0
    private var excluded = 0

    /// One conversation's result. With `Importer.loadEach` each result carries the notes,
    /// warnings and skipped count of the whole read so far: they are told once.
    func add(_ r: ImportResult) {
        lock.lock(); defer { lock.unlock() }
        format = r.format
        for n in r.notes where seen.insert("n" + n).inserted { notes.append("note: " + InputOptions.optionNames(n)) }
        for w in r.warnings where seen.insert("w" + w.description).inserted { warnings.append("warning: " + InputOptions.optionNames(w.description)) }
        skipped = max(skipped, r.skipped)
        excluded += r.excluded
    }

    func tell(maxShown: Int = 20, messageCount: Int) {
        lock.lock(); defer { lock.unlock() }
        var lines = notes + warnings.prefix(maxShown)
        if warnings.count > maxShown { lines.append("warning: … and \(Plural.count(warnings.count - maxShown, "more warning"))") }
        var summary: [String] = []
        if skipped > 0 { summary.append("skipped \(Plural.count(skipped, "item")) (see the warnings)") }
        if excluded > 0 { summary.append("left out \(Plural.count(excluded, "message")) outside --since/--until") }
        if let format, !summary.isEmpty || !warnings.isEmpty {
            lines.append("\(format): read \(Plural.count(messageCount, "message"))" + (summary.isEmpty ? "" : "; " + summary.joined(separator: "; ")))
        }
        if !lines.isEmpty { FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8)) }
    }
}

/// `2024-03-01`, `2024-03-01T09:30`, `2024-03-01 09:30:15`, `2024-03-01T09:30:00Z`, `…+02:00`:
/// a date or time; without an offset it is read in `zone`.
func parseDate(_ text: String, option: String, zone: TimeZone) throws -> Date {
    let s = text.trimmingCharacters(in: .whitespaces)
    let pattern = #/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?(Z|[+-]\d{2}:?\d{2})?$/#
    guard let m = s.wholeMatch(of: pattern) else {
        throw ValidationError("\(option) '\(text)' is not a date; expected YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] with an optional Z or ±HH:MM")
    }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    if let offset = m.7 {
        if offset == "Z" {
            calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        } else {
            let digits = offset.dropFirst().filter(\.isNumber)
            let minutes = Int(digits.prefix(2))! * 60 + Int(digits.suffix(2))!
            calendar.timeZone = TimeZone(secondsFromGMT: (offset.first == "-" ? -1 : 1) * minutes * 60)!
        }
    }
    let parts = DateComponents(
        year: Int(m.1)!, month: Int(m.2)!, day: Int(m.3)!,
        hour: m.4.map { Int($0)! } ?? 0, minute: m.5.map { Int($0)! } ?? 0,
        second: m.6.map { Int($0)! } ?? 0)
    guard let month = parts.month, (1...12).contains(month), let day = parts.day, (1...31).contains(day),
        (0...23).contains(parts.hour!), (0...59).contains(parts.minute!), (0...60).contains(parts.second!),
        let date = calendar.date(from: parts),
        calendar.component(.day, from: date) == day
    else {
        throw ValidationError("\(option) '\(text)' is not a valid date or time")
    }
    return date
}
