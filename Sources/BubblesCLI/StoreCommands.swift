// The store and the server: built with the `Server` trait (on by default; off in `make demo`).
#if Server
import ArgumentParser
import BubbleCore
import BubbleImport
import BubbleStore
import Foundation

/// `--db`, shared by the commands that use the store.
struct StoreOptions: ParsableArguments {
    @Option(help: "The database: an SQLite file or a postgres://user@host:port/db URL (default: $BUBBLES_DB, else ~/.local/share/bubblekit/bubbles.sqlite).")
    var db: String?

    @Option(
        name: .customLong("store-media"),
        help:
            "PostgreSQL only: the store's folder of pictures and files, the same for every server (default: $BUBBLES_MEDIA, else ~/.local/share/bubblekit/DBNAME-media)."
    )
    var media: String?

    init() {}
    init(db: String?, media: String? = nil) { self.db = db; self.media = media }

    /// The store, ready (a PostgreSQL store runs in a task of its own until the command ends).
    func open() async throws -> any ConversationStore & AccountStore {
        do { return try await openStore(db ?? SQLiteStore.defaultPath, media: media) } catch let e as StoreError { throw CLIError(e.description) }
    }

    /// The store for a command that only reads it (`list`, `search`, `db copy`'s source): a path
    /// that names no file is an error, not a new empty database.
    func openExisting() async throws -> any ConversationStore & AccountStore {
        let location = db ?? SQLiteStore.defaultPath
        if !PostgresLocation.isPostgres(location), !FileManager.default.fileExists(atPath: location) {
            throw CLIError(
                "\(location): no such store (expected an SQLite file made by BubbleKit or a postgres:// URL; `bubbles import FILE --db \(location)` makes one)")
        }
        return try await open()
    }

    /// The store to run in `bubbles serve`'s service group (nothing started yet).
    func make() throws -> any ConversationStore & AccountStore {
        do { return try makeStore(db ?? SQLiteStore.defaultPath, media: media) } catch let e as StoreError { throw CLIError(e.description) }
    }
}

func storeErrors<T>(_ body: () async throws -> T) async throws -> T {
    // A full disk stays a StoreError (printed the same), so a server's upload answers 507.
    do { return try await body() } catch let e as StoreError where !e.outOfSpace { throw CLIError(e.description) }
}

/// ISO 8601 in UTC (`2023-11-14T22:13:20Z`).
func iso(_ date: Date) -> String {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime]
    return f.string(from: date)
}

func printJSON(_ value: Any) throws {
    let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import chat exports into the store: every conversation of a whole backup, each in one transaction; importing again adds only what is new.")

    @Argument(
        help: ArgumentHelp(
            """
            Exports: BubbleKit JSON, SMS Backup & Restore XML, WhatsApp .txt/.zip/folder, Telegram result.json, \
            iMessage chat.db, a Messenger or Instagram download (.zip, folder or message_1.json), \
            DiscordChatExporter JSON (file or folder), WhatsApp's msgstore.db or its .crypt14/.crypt15 backup, \
            a Signal Desktop profile folder, signal-export's chat.md.
            """, valueName: "export"))
    var files: [String]

    @OptionGroup var store: StoreOptions

    @Option(help: "Title of the conversation in the store (default: the export's; for one conversation).")
    var title: String?

    @Flag(
        name: .customLong("all-incoming"),
        help:
            "Store a conversation whose owner is neither given (--me) nor found in the export with every message incoming (import refuses it otherwise: the sides of stored messages stay as first imported)."
    )
    var allIncoming = false

    @OptionGroup(title: "Reading the export") var read: ReadOptions

    func validate() throws {
        if read.since != nil || read.until != nil {
            // Importing again adds what is new: a range would make "new" mean "inside the range".
            throw ValidationError(
                "--since and --until choose what is shown; import keeps every message (render or convert a range of the store with --conversation)")
        }
    }

    func run() async throws {
        // Every input is checked before the store is opened or made: a failed import of a file
        // that is no export leaves no new, empty store behind.
        for file in files where file != "-" {
            guard FileManager.default.fileExists(atPath: file) else { throw CLIError("\(file): no such file") }
            if read.inputFormat == nil { _ = try reporting { try Importer.detect(path: file) } }
        }
        // A store this import makes is removed again when nothing went into it.
        let location = store.db ?? SQLiteStore.defaultPath
        let fresh = !PostgresLocation.isPostgres(location) && !FileManager.default.fileExists(atPath: location)
        let db = try await store.open()
        var stored = false
        do {
            try await importAll(into: db, stored: &stored)
        } catch {
            // Only a store that holds nothing: a whole import stopped half-way keeps what it stored.
            if fresh, !stored, (try? await db.conversations())?.isEmpty == true { Self.remove(db) }
            throw error
        }
    }

    /// Imports every file; `stored` tells whether something went into the store. Throws the exit
    /// code when some conversations were not stored.
    private func importAll(into db: any ConversationStore & AccountStore, stored: inout Bool) async throws {
        if !read.contacts.isEmpty { try await ContactsImport.run(read.contacts, region: read.region, into: db) }
        var read = self.read
        read.contacts = []
        var failed = false
        stored = !self.read.contacts.isEmpty
        for file in files {
            let input = try InputOptions.file(file, read: read)
            let progress = Progress(label: file)
            let report = try await Self.importAny(
                file, input: input, into: db, title: title, unknownOwner: allIncoming ? .keep : .refuse,
                progress: progress.update)
            progress.finish()
            // A whole backup: the conversations that changed, then the sum; one conversation: its line.
            let one = report.stored.count + report.failed.count == 1
            for s in report.stored where one || s.isNew || s.grew {
                print(
                    "\(file): \"\(s.title)\" (conversation \(s.summary.conversationID)\(s.isNew ? ", new" : "")): "
                        + "added \(Plural.count(s.summary.messagesAdded, "message")), "
                        + "\(Plural.count(s.summary.attachmentsAdded, "attachment")); "
                        + "skipped \(s.summary.messagesSkipped) already present")
            }
            for f in report.failed { FileHandle.standardError.write(Data("error: \(file): \(f.name): \(f.reason)\n".utf8)) }
            if !one { print("\(file): \(report.line)") }
            failed = failed || !report.failed.isEmpty
            stored = stored || !report.stored.isEmpty
        }
        // As for --all: some conversations were not stored, the others are.
        if failed { throw ExitCode(BatchOptions.someFailedExitCode) }
    }

    /// An SQLite store this run made and put nothing into: its files and its empty media folder.
    private static func remove(_ db: any ConversationStore) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: db.path + suffix) }
        // Its media folder too when it holds no file (a refused import's pictures are removed,
        // their two-letter folders may remain).
        guard let sqlite = db as? SQLiteStore, let walker = FileManager.default.enumerator(atPath: sqlite.mediaFolder) else { return }
        while let relative = walker.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: sqlite.mediaFolder + "/" + relative, isDirectory: &isFolder), !isFolder.boolValue { return }
        }
        try? FileManager.default.removeItem(atPath: sqlite.mediaFolder)
    }

    /// What happens to a conversation whose owner is not known: `bubbles import` refuses it (its
    /// sides would be kept for good), an upload to `bubbles serve` keeps it as read.
    enum UnknownOwner: Sendable { case refuse, keep }

    /// The reason a conversation is not stored when its owner is not known.
    static func refusal(_ result: ImportResult) -> String? {
        guard let why = result.unknownOwner else { return nil }
        return InputOptions.optionNames(why.replacingOccurrences(of: "so every message is incoming", with: "so every message would be stored as incoming"))
            + "; give --me NAME (then import again: nothing is stored twice), or --all-incoming to keep it so"
    }

    /// The exports that hold many conversations: every one (or those --chat names) is imported.
    static let wholeFormats: Set<ImportFormat> = [.smsBackup, .telegram, .imessage, .messenger, .instagram, .discord, .whatsappDatabase, .signal, .iphoneBackup]

    /// `bubbles import` of one file (and `bubbles serve`'s uploads): a whole backup conversation
    /// by conversation (`importWhole`), else its one conversation (`importExport`). What the
    /// importers noted and warned is told on standard error.
    static func importAny(
        _ file: String, input: InputOptions, into db: any ConversationStore, title: String? = nil,
        unknownOwner: UnknownOwner = .keep,
        progress: @escaping @Sendable (ImportProgress) -> Void
    ) async throws -> WholeImportReport {
        let format = try input.inputFormat ?? (file == "-" ? nil : reporting { try Importer.detect(path: file) })
        if let format, wholeFormats.contains(format) {
            return try await importWhole(file, format: format, input: input, into: db, title: title, unknownOwner: unknownOwner, progress: progress)
        }
        var report = WholeImportReport()
        do {
            let summary = try await importExport(file, input: input, into: db, title: title, unknownOwner: unknownOwner) {
                progress(ImportProgress(conversation: 1, of: 1, messages: $0))
            }
            let name = try await storeErrors { try await db.conversation(id: summary.conversationID)?.title } ?? ""
            report.stored.append(.init(title: name, summary: summary))
        } catch let refused as Refused {
            report.failed.append(.init(name: refused.name, reason: refused.reason))
        }
        return report
    }

    /// A conversation `importExport` did not store (its owner is not known), with why.
    struct Refused: Error {
        var name: String
        var reason: String
    }

    /// Every conversation of a whole export, read on a thread of its own (the importers are
    /// synchronous) and stored one at a time, each in its own transaction: the reader waits
    /// while one is stored, so memory holds one conversation (`Importer.loadEach` keeps the
    /// others on disk or unread). One that fails (the store refuses it, `--strict` and missing
    /// media, an unknown owner) is reported and the others are kept.
    static func importWhole(
        _ file: String, format: ImportFormat, input: InputOptions, into db: any ConversationStore, title: String?,
        unknownOwner: UnknownOwner, progress: @escaping @Sendable (ImportProgress) -> Void
    ) async throws -> WholeImportReport {
        let handoff = ConversationHandoff()
        let thread = Thread {
            do {
                let loaded = try input.load(each: { result in try handoff.put(result) })
                handoff.finish(loaded: loaded)
            } catch {
                handoff.finish(error: error)
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
        var report = WholeImportReport()
        let said = ImportReport()
        var messages = 0
        do {
            for try await (result, done) in handoff.stream {
                defer { done.signal() }
                said.add(result)
                let c = result.conversation
                let name = result.chatKey ?? c.title ?? c.participants.map(\.name).joined(separator: ", ")
                progress(ImportProgress(conversation: result.chatNumber, of: result.chatCount, messages: messages))
                if input.strict, let error = result.strictMediaError {
                    report.failed.append(.init(name: name, reason: error.description))
                    continue
                }
                if unknownOwner == .refuse, let why = refusal(result) {
                    report.failed.append(.init(name: name, reason: why))
                    continue
                }
                // --since/--until left none of its messages: nothing to store.
                if c.messages.isEmpty, result.excluded > 0 { continue }
                do {
                    let one = result.chatCount == 1 ? title : nil
                    let summary = try await db.importStream(
                        sourceFormat: format.rawValue, title: one, mediaFolder: InputOptions.folder(of: file),
                        sortByDate: Importer.sortsByDate(format)
                    ) { add in
                        for m in c.messages { try add(m) }
                        // Which stored conversation it goes into: the same chat of another backup,
                        // also another phone's (its numbers, whatever the contact is called there).
                        return (c, result.chatIdentity ?? name)
                    }
                    messages += c.messages.count
                    report.stored.append(.init(title: one ?? c.title ?? name, summary: summary))
                } catch let e as StoreError where e.outOfSpace {
                    // The next conversation would fail the same way: stop at the first.
                    throw StoreError(
                        path: e.path,
                        reason: "\(e.reason) (while storing \(name) of \(file)); stopped: "
                            + "\(Plural.count(report.stored.count, "conversation")) stored before it are kept, the rest is not stored "
                            + "(run it again with room: it goes on where it stopped)", outOfSpace: true)
                } catch let e as StoreError {
                    report.failed.append(.init(name: name, reason: e.description))
                }
            }
        } catch {
            handoff.close()
            throw error
        }
        said.tell(messageCount: messages)
        if let loaded = handoff.loaded {
            defer { loaded.close() }
            for name in loaded.batch?.unmatched ?? [] {
                FileHandle.standardError.write(Data("warning: \(file): --chat \(name): matches no conversation\n".utf8))
            }
        }
        return report
    }

    /// One conversation's export: the importer's messages go into the database as they are
    /// read, in one transaction; on an error nothing is stored. A conversation whose owner is
    /// not known is `Refused` with `unknownOwner: .refuse` (its transaction rolled back).
    static func importExport(
        _ file: String, input: InputOptions, into db: any ConversationStore, title: String? = nil,
        unknownOwner: UnknownOwner = .keep, progress: @escaping (Int) -> Void
    ) async throws -> StoreImportSummary {
        let format = try input.inputFormat ?? (file == "-" ? nil : reporting { try Importer.detect(path: file) })
        var loaded: InputOptions.Loaded?
        defer { loaded?.close() }
        return try await storeErrors {
            try await db.importStream(
                sourceFormat: format?.rawValue ?? "native", title: title, mediaFolder: InputOptions.folder(of: file),
                sortByDate: format.map(Importer.sortsByDate) ?? false
            ) { add in
                var count = 0
                // The importer keeps the sink only while it reads.
                let result = try withoutActuallyEscaping(add) { add in
                    try input.load(messages: { m in
                        try add(m)
                        count += 1
                        progress(count)
                    })
                }
                loaded = result
                result.reportWarnings(messageCount: count)
                let c = result.conversation
                if unknownOwner == .refuse, let why = refusal(result.result) {
                    throw Refused(name: c.title ?? c.participants.map(\.name).joined(separator: ", "), reason: why)
                }
                // Which stored conversation a newer export of the same chat goes into.
                return (c, input.chat.first ?? c.title ?? c.participants.map(\.id).sorted().joined(separator: ","))
            }
        }
    }
}

/// How far an import is: conversation `conversation` of `of` (1 of 1 for a one-chat export),
/// `messages` stored so far.
struct ImportProgress: Sendable {
    var conversation: Int
    var of: Int
    var messages: Int
}

/// Conversations read by a synchronous importer on its own thread, handed to the async store
/// one at a time: `put` waits until the conversation is stored; `close` (the consumer gave up)
/// makes the next `put` throw, which stops the reader.
final class ConversationHandoff: @unchecked Sendable {
    struct Closed: Error {}
    let stream: AsyncThrowingStream<(ImportResult, DispatchSemaphore), any Error>
    private let continuation: AsyncThrowingStream<(ImportResult, DispatchSemaphore), any Error>.Continuation
    private let lock = NSLock()
    private var closed = false
    private var finishedLoad: InputOptions.Loaded?

    init() {
        (stream, continuation) = AsyncThrowingStream.makeStream(bufferingPolicy: .unbounded)
    }

    func put(_ result: ImportResult) throws {
        let done = DispatchSemaphore(value: 0)
        lock.lock()
        let isClosed = closed
        lock.unlock()
        guard !isClosed, case .enqueued = continuation.yield((result, done)) else { throw Closed() }
        done.wait()
    }

    func finish(loaded: InputOptions.Loaded) {
        lock.lock(); finishedLoad = loaded; lock.unlock()
        continuation.finish()
    }

    func finish(error: any Error) { continuation.finish(throwing: error) }

    func close() {
        lock.lock(); closed = true; lock.unlock()
        continuation.finish()
    }

    var loaded: InputOptions.Loaded? {
        lock.lock(); defer { lock.unlock() }
        return finishedLoad
    }
}

/// A count of messages on standard error, redrawn in place, only when it is a terminal.
final class Progress: @unchecked Sendable {
    let label: String
    let enabled = isatty(2) != 0
    private var shown = 0
    init(label: String) { self.label = label }

    func update(_ count: Int) {
        guard enabled, count - shown >= 5_000 else { return }
        shown = count
        FileHandle.standardError.write(Data("\r\(label): \(count) messages…".utf8))
    }

    func update(_ p: ImportProgress) {
        guard enabled else { return }
        if p.of > 1 {
            shown = max(shown, 1)
            FileHandle.standardError.write(Data("\r\(label): conversation \(p.conversation) of \(p.of), \(p.messages) messages…".utf8))
        } else {
            update(p.messages)
        }
    }

    func finish() {
        if enabled && shown > 0 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the conversations in the store.")

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print a JSON array (id, title, format, participants, messageCount, first, last).")
    var json = false

    func run() async throws {
        let all = try await storeErrors { try await store.openExisting().conversations() }
        if json {
            try printJSON(
                all.map { c -> [String: Any] in
                    var o: [String: Any] = [
                        "id": c.id, "title": c.title, "format": c.sourceFormat, "messageCount": c.messageCount,
                        "participants": c.participants.map(\.name)
                    ]
                    o["first"] = c.first.map(iso) ?? NSNull()
                    o["last"] = c.last.map(iso) ?? NSNull()
                    return o
                })
            return
        }
        if all.isEmpty { print("no conversations; add some with `bubbles import FILE`"); return }
        for c in all {
            let range = [c.first, c.last].compactMap { $0.map { String(iso($0).prefix(10)) } }.joined(separator: " – ")
            print(
                "\(String(c.id).padding(toLength: 5, withPad: " ", startingAt: 0)) \(c.title)  ·  \(Plural.count(c.messageCount, "message"))  ·  \(range)  ·  \(c.sourceFormat)"
            )
        }
    }
}

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Search the store: words, \"phrases\", prefix*, -excluded; accents and case ignored.")

    @Argument(help: "What to find, e.g. 'cafe \"see you\" tomorr* -work'.")
    var query: String

    @OptionGroup var store: StoreOptions

    @Option(help: "Only this conversation (its id in `bubbles list`).")
    var conversation: Int64?

    @Option(help: "Only messages from this participant (id or name).")
    var from: String?

    @Option(help: "From this date or time on (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][±HH:MM], in --tz).")
    var since: String?

    @Option(help: "Before this date or time (exclusive).")
    var until: String?

    @Option(help: "Time zone for --since/--until and the times shown (IANA name); default the system's.")
    var tz: String?

    @Option(help: "At most this many hits (best first).")
    var limit = 50

    @Flag(help: "Print a JSON array of hits (conversation, seq, date, sender, senderID, text, snippet).")
    var json = false

    func run() async throws {
        guard limit > 0 else { throw ValidationError("--limit \(limit) must be at least 1") }
        let zone = try timeZone(tz)
        var s = StoreSearch(query, conversation: conversation, sender: from, limit: limit)
        s.since = try since.map { try parseDate($0, option: "--since", zone: zone) }
        s.until = try until.map { try parseDate($0, option: "--until", zone: zone) }
        let hits = try await storeErrors { try await store.openExisting().search(s) }
        if json {
            try printJSON(
                hits.map { h -> [String: Any] in
                    var o: [String: Any] = [
                        "conversation": h.conversation, "seq": h.seq, "date": iso(h.date), "text": h.text,
                        "snippet": h.snippet
                    ]
                    o["sender"] = (h.senderName ?? h.sender).map { $0 as Any } ?? NSNull()
                    o["senderID"] = h.sender.map { $0 as Any } ?? NSNull()
                    return o
                })
            return
        }
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd HH:mm"
        f.timeZone = zone
        for h in hits { print("#\(h.conversation):\(h.seq)  \(f.string(from: h.date))  \(h.senderName ?? h.sender ?? "-"): \(h.snippet)") }
        if hits.isEmpty { FileHandle.standardError.write(Data("no messages match \"\(query)\"\n".utf8)) }
    }
}
#endif
