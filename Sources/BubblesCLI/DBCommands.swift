// The store and the server: built with the `Server` trait (on by default; off in `make demo`).
#if Server
import ArgumentParser
import BubbleStore
import BubbleCore
import Foundation

/// `bubbles db`: whole stores.
struct DB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Whole stores: back up, restore, check, copy one into another (SQLite ⇄ PostgreSQL).",
        subcommands: [DBBackup.self, DBRestore.self, DBCheck.self, DBCopy.self])
}

struct DBCopy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy every conversation of a store into another, then verify counts and checksums.",
        discussion: """
            Either side is an SQLite file or a postgres:// URL. Conversations are matched by where they \
            came from (format and chat key), so running it again after an interruption goes on where it \
            stopped and copies nothing twice; 10,000 messages go in per transaction. Pictures and files \
            are copied into the target's media folder. Stop the servers writing to the source first: a \
            conversation changed during the copy fails the check (run it again).
            """)

    @Option(help: "The store to read: an SQLite file or a postgres:// URL.") var from: String
    @Option(help: "The store to write (made when missing): an SQLite file or a postgres:// URL.") var to: String
    @Option(
        name: .customLong("from-media"), help: "PostgreSQL source only: its media folder (default: $BUBBLES_MEDIA, else ~/.local/share/bubblekit/DBNAME-media)."
    )
    var fromMedia: String?
    @Option(name: .customLong("to-media"), help: "PostgreSQL target only: its media folder (default as for --from-media).")
    var toMedia: String?

    func run() async throws {
        guard from != to else { throw ValidationError("--from and --to are the same store") }
        // The source is read, never made: a mistyped path is an error, not a new empty database.
        let source = try await StoreOptions(db: from, media: fromMedia).openExisting()
        let target = try await StoreOptions(db: to, media: toMedia).open()
        guard let a = source as? any CopyableStore, let b = target as? any CopyableStore else { throw CLIError("these stores cannot be copied") }
        let started = Date()
        let report: StoreCopier.Report
        do {
            report = try await StoreCopier(from: a, to: b).run { line in
                if isatty(2) != 0 { FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8)) }
            }
        } catch let e as StoreError { throw CLIError(e.description) }
        if isatty(2) != 0 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        for v in report.verified { print("  \(v.title): \(v.count) messages, SHA-256 \(v.checksum.prefix(16))… on both sides") }
        print(
            String(
                format: "copied %@ from %@ to %@: %d messages added (%d were there already), %d media files; verified in %.1f s",
                Plural.count(report.conversations, "conversation"), a.path, b.path, report.messagesCopied,
                report.messagesAlreadyThere, report.mediaCopied, Date().timeIntervalSince(started)))
    }
}

/// `bubbles db backup --to FOLDER`: a consistent copy of the store and its media, while a server
/// writes to it.
struct DBBackup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up the store and its pictures and files into a new folder, also while a server writes to it.",
        discussion: """
            The folder holds bubbles.sqlite, bubbles-media/ and manifest.json: the counts and the SHA-256 \
            of every file; `db check --backup FOLDER` checks it, `db restore FOLDER --db NEW` makes a store \
            of it (read it that way: a store opened in place changes its database file). \
            SQLite: the database through SQLite's online backup (a snapshot; writers go on), the media \
            hard-linked (copied across file systems). PostgreSQL: the portable copy `db copy` makes. \
            It is made under a temporary name beside FOLDER and renamed at the end: a backup that \
            fails leaves nothing.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: "The new folder to write the backup into.") var to: String

    func run() async throws {
        let source = try await store.openExisting()
        let started = Date()
        let manifest: StoreMaintenance.Manifest
        do {
            if let sqlite = source as? SQLiteStore {
                manifest = try StoreMaintenance.backup(sqlite, to: to)
            } else if let copyable = source as? any CopyableStore {
                manifest = try await StoreMaintenance.backup(copying: copyable, described: source.path, to: to)
            } else {
                throw CLIError("\(source.path): this store cannot be backed up")
            }
        } catch let e as StoreError { throw CLIError(e.description) }
        let bytes = manifest.files.reduce(Int64(0)) { $0 + $1.size }
        print(
            "\(to): \(Plural.count(manifest.conversations, "conversation")), \(Plural.count(manifest.messages, "message")), "
                + "\(Plural.count(manifest.files.count - 1, "media file")); \(bytes / 1_048_576) MiB, every file's SHA-256 in manifest.json; "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
    }
}

/// `bubbles db restore FOLDER --db NEW`: a checked backup into a new store.
struct DBRestore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a backup (bubbles db backup) into a new, empty store, after checking every file against its manifest.")

    @Argument(help: "The backup folder.") var folder: String
    @OptionGroup var store: StoreOptions

    func run() async throws {
        let target = store.db ?? SQLiteStore.defaultPath
        do {
            if PostgresLocation.isPostgres(target) {
                _ = try StoreMaintenance.verify(folder)
                // Read from a copy: a database opened in place is written to, and the backup must
                // stay what its manifest says.
                let work = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-restore-\(UUID().uuidString)").path
                defer { try? FileManager.default.removeItem(atPath: work) }
                try DurableFile.copy(folder + "/" + StoreMaintenance.databaseName, to: work + "/" + StoreMaintenance.databaseName)
                try FileManager.default.createSymbolicLink(
                    atPath: work + "/" + StoreMaintenance.mediaName,
                    withDestinationPath: URL(fileURLWithPath: folder).standardizedFileURL.path + "/" + StoreMaintenance.mediaName)
                let backup = try SQLiteStore(path: work + "/" + StoreMaintenance.databaseName)
                let into = try await store.open()
                guard let to = into as? any CopyableStore else { throw CLIError("\(target): this store cannot be restored into") }
                if try await !into.conversations().isEmpty { throw CLIError("\(into.path): is not empty; a backup is restored into an empty store") }
                let report = try await StoreCopier(from: backup, to: to).run()
                print("restored \(Plural.count(report.conversations, "conversation")) (\(report.messagesCopied) messages) into \(into.path); verified")
            } else {
                let manifest = try StoreMaintenance.restore(folder, toSQLite: target)
                print(
                    "restored \(Plural.count(manifest.conversations, "conversation")), \(Plural.count(manifest.messages, "message")) and "
                        + "\(Plural.count(manifest.files.count - 1, "media file")) into \(target); every file checked against the manifest")
            }
        } catch let e as StoreError { throw CLIError(e.description) }
    }
}

/// `bubbles db check [--repair]`.
struct DBCheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract:
            "Check the store: SQLite's integrity check, every picture and file present with the SHA-256 its name says, the search index in step with the messages.",
        discussion:
            "Exit 1 and a list of what is wrong. Files nothing names (left by a crash between a file and its rows) are listed; --repair removes them and indexes messages the search index lacks."
    )

    @OptionGroup var store: StoreOptions
    @Flag(help: "Remove files nothing names and temporary files a crash left; index messages missing from the search index.")
    var repair = false
    @Option(help: "A backup folder to check against its manifest instead of a store.") var backup: String?

    func run() async throws {
        if let backup {
            do {
                let m = try StoreMaintenance.verify(backup)
                print(
                    "\(backup): every one of its \(Plural.count(m.files.count, "file")) matches the manifest "
                        + "(\(Plural.count(m.conversations, "conversation")), \(Plural.count(m.messages, "message")))")
            } catch let e as StoreError { throw CLIError(e.description) }
            return
        }
        let opened = try await store.openExisting()
        guard let sqlite = opened as? SQLiteStore else {
            throw CLIError("db check reads an SQLite store; PostgreSQL checks its own data (pg_amcheck), and `db backup` of it checks every file")
        }
        let report: StoreMaintenance.CheckReport
        do { report = try await StoreMaintenance.check(sqlite, repair: repair) } catch let e as StoreError { throw CLIError(e.description) }
        for p in report.problems { print("problem: \(p)") }
        for o in report.orphans.prefix(50) { print("\(repair ? "removed" : "orphan"): \(o)") }
        if report.orphans.count > 50 { print("… and \(report.orphans.count - 50) more") }
        let ok = report.problems.filter { !$0.contains("(--repair)") }.isEmpty && (repair || report.orphans.isEmpty)
        print(
            "\(sqlite.path): \(ok ? "sound" : "not sound"): \(Plural.count(report.messages, "message")), \(report.indexed) indexed, "
                + "\(Plural.count(report.filesChecked, "media file")) checked, \(Plural.count(report.orphans.count, "orphan"))\(repair && !report.orphans.isEmpty ? " removed" : "")"
        )
        if !ok { throw ExitCode.failure }
    }
}
#endif
