// The store and the server: built with the `Server` trait (on by default; off in `make demo`).
#if Server
import ArgumentParser
import BubbleStore
import BubbleCore
import Foundation

/// `bubbles db`: whole stores.
struct DB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Whole stores: copy one into another (SQLite ⇄ PostgreSQL).", subcommands: [DBCopy.self])
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
    @Option(name: .customLong("from-media"), help: "PostgreSQL source only: its media folder (default: $BUBBLES_MEDIA, else ~/.local/share/bubblekit/DBNAME-media).")
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
        print(String(format: "copied %@ from %@ to %@: %d messages added (%d were there already), %d media files; verified in %.1f s",
                     Plural.count(report.conversations, "conversation"), a.path, b.path, report.messagesCopied,
                     report.messagesAlreadyThere, report.mediaCopied, Date().timeIntervalSince(started)))
    }
}
#endif
