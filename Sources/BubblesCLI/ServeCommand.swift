// The store and the server: built with the `Server` trait (on by default; off in `make demo`).
#if Server
import ArgumentParser
import BubbleRender
import BubbleServer
import BubbleStore
import BubbleCore
import Foundation
import Logging
import ZIPFoundation

/// `bubbles serve`: the store in the browser (and its JSON API), until Ctrl-C.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the store: its conversations in the browser and as a JSON API (docs/SERVER.md).",
        discussion: """
            Listens on 127.0.0.1 (this machine only) unless --host says otherwise. A store without \
            users is served to its one owner: on any other address that needs a token on every \
            request, given with --token or made up and printed with the URL. Once the store has users \
            (`bubbles users add`), every page and API call needs a signed-in user, who sees the \
            conversations they are a member of. Ctrl-C stops it after the requests in flight.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: "Address to listen on (default 127.0.0.1: this machine only).") var host = "127.0.0.1"
    @Option(help: "Port (0: any free one; the URL printed says which).") var port = 8080
    @Option(help: "Token every request must carry (?token=… or Authorization: Bearer …); made up when listening beyond this machine.")
    var token: String?
    @Option(help: "Theme of the pages (see `bubbles themes`).") var theme = "imessage"
    @Option(name: .customLong("max-upload"), help: "Largest upload taken, in MB (default 512).") var maxUpload = 512
    @Option(name: .customLong("max-message"), help: "Largest text of a live message, in KiB (default 64).") var maxMessage = 64
    @Option(help: "Live writes a second one connection may make on average (0: no limit; default 100).") var rate = 100.0
    @Option(help: "Live writes one connection may make at once (default 200).") var burst = 200.0
    @Option(name: .customLong("header-timeout"), help: "Seconds a request's headers may take to arrive (default 20; then 408).")
    var headerTimeout = 20.0

    @Option(
        name: .customLong("compact-from"),
        help:
            "Conversations of at least this many messages are laid out compactly for the viewer: a few dozen bytes a message, windows read from the store (default 20000)."
    )
    var compactFrom = 20_000
    @Flag(name: .customLong("secure-cookies"), help: "Mark the session cookie Secure (a TLS proxy in front; also when it sends X-Forwarded-Proto: https).")
    var secureCookies = false
    @Option(
        name: .customLong("sign-in-limit"),
        help: "Failed sign-ins a minute for one name from one address before 429 (default 10; an address gets ten times as many for all names).")
    var signInLimit = 10
    @Option(
        name: .customLong("public-host"),
        help: "A name the server is reached by (its Host header), e.g. chat.example.org behind a proxy; repeatable. Requests for other names are refused (421)."
    )
    var publicHosts: [String] = []
    @Option(
        name: .customLong("trusted-proxy"),
        help: "A proxy (address or CIDR range, e.g. 127.0.0.1 or 10.0.0.0/8) whose X-Forwarded-For names the client for the sign-in limits; repeatable.")
    var trustedProxies: [String] = []
    @Option(name: .customLong("session-days"), help: "Days a session lasts from sign-in (default 30).") var sessionDays = 30.0
    @Option(name: .customLong("idle-days"), help: "Days a session lasts without a request (default 7).") var idleDays = 7.0
    @Option(
        name: .customLong("log-level"),
        help: "What the log (standard error) says: trace, debug, info (a line per request, with its id), notice (default), warning, error, critical.")
    var logLevel = "notice"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) must be between 0 and 65535") }
        if let token, token.count < 16 { throw ValidationError("--token must be at least 16 characters") }
        guard (1...65_536).contains(maxUpload) else { throw ValidationError("--max-upload \(maxUpload) must be between 1 and 65536 (MB)") }
        guard (1...16_384).contains(maxMessage) else { throw ValidationError("--max-message \(maxMessage) must be between 1 and 16384 (KiB)") }
        guard rate >= 0, rate.isFinite, burst >= 1, burst.isFinite else { throw ValidationError("--rate must be ≥ 0 and --burst ≥ 1") }
        guard signInLimit >= 1 else { throw ValidationError("--sign-in-limit \(signInLimit) must be ≥ 1") }
        guard sessionDays > 0, idleDays > 0 else { throw ValidationError("--session-days and --idle-days must be > 0") }
        guard compactFrom >= 0 else { throw ValidationError("--compact-from \(compactFrom) must be a number of messages ≥ 0") }
        guard headerTimeout > 0, headerTimeout <= 3_600 else { throw ValidationError("--header-timeout \(headerTimeout) must be between 0 and 3600 seconds") }
        for proxy in trustedProxies where TrustedProxies.Range(proxy) == nil {
            throw ValidationError("--trusted-proxy \(proxy) is not an address or a CIDR range; expected e.g. 127.0.0.1, 10.0.0.0/8 or fd00::/8")
        }
        for name in publicHosts where name.isEmpty || name.contains(where: { $0 == "/" || $0 == " " || $0 == "@" }) {
            throw ValidationError("--public-host \"\(name)\" is not a host name; expected e.g. chat.example.org (no scheme, no path)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel) is not a level; expected one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() async throws {
        // Uploads read exports in this process: the server's own shutdown handles Ctrl-C.
        CleanupOnStop.disabled = true
        var config = ServerConfiguration(
            host: host, port: port, token: token, theme: theme, maxUpload: maxUpload << 20,
            live: LiveLimits(maxText: maxMessage << 10, rate: rate, burst: burst),
            logLevel: Logger.Level(rawValue: logLevel) ?? .notice)
        config.headerTimeout = .milliseconds(Int64(headerTimeout * 1000))
        config.compactFrom = compactFrom
        config.accounts.secureCookies = secureCookies
        config.accounts.failedSignInsPerMinute = signInLimit
        config.publicHosts = publicHosts
        config.trustedProxies = trustedProxies
        config.accounts.sessions = SessionPolicy(lifetime: sessionDays * 86_400, idle: idleDays * 86_400)
        // The store runs in the server's service group (PostgreSQL: its pool and, between
        // several servers, the LISTEN feed); the HTTP server starts once it is ready.
        let db = try store.make()
        // With users, people sign in (the token is for single-owner mode only); an SQLite file
        // says so at once (a PostgreSQL store is asked once it runs, per request).
        let users = db is SQLiteStore ? ((try? await db.userCount()) ?? 0) : 0
        if !config.isLoopback && config.token == nil && users == 0 {
            config.token = (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max)) }.joined()
        }
        let server: BubbleServer
        do {
            server = try BubbleServer(
                store: db, configuration: config, pictures: PhotoDecoder(),
                importer: UploadImporter(), exporter: SubprocessExporter(), metrics: ServerMetrics.bootstrap())
        } catch {
            throw CLIError("cannot start: \(error)")
        }
        let shown = config.host.contains(":") ? "[\(config.host)]" : config.host
        let tokenPart = users > 0 ? "login (\(Plural.count(users, "user")) sign in)" : config.token.map { "?token=\($0)" } ?? ""
        do {
            try await server.run { port in
                FileHandle.standardOutput.write(Data("bubbles serve: http://\(shown):\(port)/\(tokenPart) (\(db.path)); Ctrl-C stops it\n".utf8))
            }
        } catch let e as StoreError {
            throw CLIError("bubbles serve: \(e.description)")
        } catch {
            throw CLIError("bubbles serve: \(error)")
        }
    }
}

/// Uploads go through `bubbles import`'s own code.
struct UploadImporter: ExportImporting {
    func importExport(
        _ path: String, password: String?, into store: any ConversationStore,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void
    ) async throws -> WholeImportReport {
        // An iPhone backup comes as a .zip of its folder: unpacked beside the upload, read as the folder.
        let source = try IPhoneBackupInput.unpackedBackup(path) ?? path
        IPhoneBackupInput.preset(password.map(IPhoneBackupInput.Given.password) ?? .noPassword, for: source)
        defer { IPhoneBackupInput.preset(nil, for: source) }
        let input = try InputOptions.parse([source])
        return try await Import.importAny(source, input: input, into: store, progress: { p in progress(max(0, p.conversation - 1), p.of) })
    }
}

/// Downloads are made by `bubbles render` / `bubbles convert` on the stored conversation, in a
/// child process (a render of a long conversation takes its memory with it when it ends, and a
/// failure there cannot take the server down). Several PNG pages come as one .zip.
struct SubprocessExporter: ConversationExporting {
    var formats: [String] { ["pdf", "png", "html", "json", "csv"] }

    func export(
        conversation: Int64, from store: any ConversationStore, format: String, theme: String,
        since: String?, until: String?, into folder: String
    ) throws -> String {
        let command = ["json", "csv"].contains(format) ? "convert" : "render"
        let output = folder + "/conversation." + format
        var arguments = [command, "--conversation", String(conversation), "-o", output, "--tz", "UTC"]
        var environment = ProcessInfo.processInfo.environment
        if let pg = store as? PostgresStore {
            // The URL with its password goes through the environment, not the command line.
            environment["BUBBLES_DB"] = pg.location.url
            arguments += ["--store-media", pg.mediaFolder]
        } else {
            arguments += ["--db", store.path]
        }
        // Self-contained downloads: photos inside the JSON, beside the CSV in a folder (zipped).
        if command == "render" { arguments += ["--theme", theme] } else { arguments += ["--assets", format == "json" ? "embed" : "folder"] }
        if format == "png" { arguments += ["--pages"] }
        if let since { arguments += ["--since", since] }
        if let until { arguments += ["--until", until] }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        p.arguments = arguments
        p.environment = environment
        let errors = Pipe()
        p.standardError = errors
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            let text = String(decoding: said, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "exit status \(p.terminationStatus)"
            throw CLIError(text)
        }
        let made = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        if made.count == 1 { return folder + "/" + made[0] }
        // Several files (PNG pages, a CSV and its photos): one .zip of them.
        let zip = folder + "/conversation-\(format).zip"
        let archive = try Archive(url: URL(fileURLWithPath: zip), accessMode: .create)
        let base = URL(fileURLWithPath: folder)
        let files = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
        for name in files.sorted() where name != (zip as NSString).lastPathComponent {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder), !isFolder.boolValue {
                try archive.addEntry(with: name, relativeTo: base)
            }
        }
        return zip
    }
}
#endif
