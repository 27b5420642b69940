import BubbleCore
import Foundation
import GRDB
import ServiceLifecycle

/// The embedded store: one SQLite file through GRDB (WAL, foreign keys, versioned migrations),
/// its pictures and files beside it in `NAME-media/`, named by their SHA-256.
///
/// Why files and not blobs: a chat's media is most of its bytes (gigabytes of photos against
/// megabytes of text); as files they are written once, shared by every message and conversation
/// that holds the same bytes, streamed to renderers and a server without passing through SQLite,
/// and the database stays small enough to back up with `sqlite3 bubbles.sqlite ".backup x"` while
/// it is being served. Paths in the database are always `media/<sha256>.<ext>`, inside the store.
public final class SQLiteStore: ConversationStore, @unchecked Sendable {
    /// `PRAGMA application_id`: "BBK1".
    static let applicationID: Int32 = 0x4242_4B31
    public let path: String
    /// Where the store keeps pictures and files.
    public let mediaFolder: String
    let pool: DatabasePool
    /// Message counts by conversation, with the highest sequence number they were counted at:
    /// messages are only ever added with higher numbers, so an equal highest number (an index
    /// look-up) means an equal count, and a million-message conversation is not counted again
    /// (~30 ms) for every page the server shows.
    let counted = CountCache()
    /// Access events this process wrote and told its listeners of already (`writeRevoking`).
    let ownAccessEvents = OwnAccessEvents()
    let people = PeopleCache()
    /// Every live change, right after its commit, in revision order (`SQLiteStore+Live`).
    public let feed = ChangeFeed()
    public let timing = StoreTiming()

    /// The default database: `BUBBLES_DB`, else `~/.local/share/bubblekit/bubbles.sqlite`.
    public static var defaultPath: String {
        if let env = ProcessInfo.processInfo.environment["BUBBLES_DB"], !env.isEmpty { return env }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/bubblekit/bubbles.sqlite"
    }

    /// Opens (and creates, with its folder, when missing) the store at `path`, bringing its
    /// schema up to date. Throws `StoreError` for a file that is not a BubbleKit database, one
    /// that is damaged or cut short, or one written by a newer BubbleKit.
    public init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().lastPathComponent
        mediaFolder = url.deletingLastPathComponent().appendingPathComponent(stem + "-media").path
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            if isDir.boolValue { throw StoreError(path: path, reason: "is a folder; expected a database file") }
            try Self.checkHeader(path)
        } else {
            do {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw StoreError(path: path, reason: "cannot create its folder: \(error.localizedDescription)")
            }
        }
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            // WAL makes NORMAL durable against crashes of the process (a power cut may lose the
            // last commits, never corrupt the file); 32 MB of page cache for imports and the index
            // (the writer), 4 MB for each reader (a server's windows and searches: the system's
            // file cache holds the rest; 32 MB each took ~170 MB more under load).
            let cache = db.configuration.readonly ? -4096 : -32768
            try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = \(cache)")
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
        } catch {
            throw Self.storeError(path, error)
        }
        try migrate()
    }

    /// A file that exists must start like an SQLite database (a truncated or foreign file is
    /// refused before SQLite sees it).
    static func checkHeader(_ path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StoreError(path: path, reason: "cannot be read") }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 100)) ?? Data()
        if head.isEmpty { return }  // an empty file becomes a new database
        guard head.count == 100, head.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            throw StoreError(path: path, reason: "is not a BubbleKit database (not an SQLite file, or cut short in its header)")
        }
    }

    /// SQLite's `error` as a `StoreError` naming `path`; a full disk is marked `outOfSpace`.
    static func storeError(_ path: String, _ error: any Error) -> StoreError {
        var full = false
        if let e = error as? DatabaseError {
            full = e.resultCode == .SQLITE_FULL || e.extendedResultCode == .SQLITE_IOERR_WRITE || e.extendedResultCode == .SQLITE_IOERR_FSYNC
        }
        return StoreError(path: path, reason: describe(error), outOfSpace: full)
    }

    /// Closes the database, its WAL checkpointed into the file first (the connection that closes
    /// last may be a read-only one, which cannot); the store is not used after.
    func close() throws {
        do {
            try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            try pool.close()
        } catch { throw Self.storeError(path, error) }
    }

    static func describe(_ error: any Error) -> String {
        if let e = error as? DatabaseError {
            switch e.resultCode {
            case .SQLITE_NOTADB: return "is not a BubbleKit database (SQLite: file is not a database)"
            case .SQLITE_CORRUPT: return "is damaged or cut short (SQLite: \(e.message ?? "database disk image is malformed"))"
            case .SQLITE_CANTOPEN: return "cannot be opened (\(e.message ?? "permission denied or missing folder"))"
            case .SQLITE_FULL:
                return "cannot be written: no space left on the device, or the file-size limit (SQLite: \(e.message ?? "database or disk is full"))"
            case .SQLITE_IOERR where e.extendedResultCode == .SQLITE_IOERR_WRITE || e.extendedResultCode == .SQLITE_IOERR_FSYNC:
                return "cannot be written: the disk refused the write (no space left, or the file-size limit?) (SQLite: \(e.message ?? "disk I/O error"))"
            default: return "SQLite: \(e.message ?? e.description)"
            }
        }
        return "\(error)"
    }

    /// Runs `body` in a read on one of GRDB's reader threads (the task suspends meanwhile),
    /// turning SQLite's errors into `StoreError`s naming the file.
    /// Timed as one round of the store call `function` (`StoreTiming`).
    func read<T: Sendable>(call function: String = #function, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do { return try await timing.time(function) { try await pool.read(body) } } catch let e as StoreError { throw e } catch {
            throw Self.storeError(path, error)
        }
    }

    /// Runs `body` in a write transaction on GRDB's writer (the task suspends meanwhile).
    func write<T: Sendable>(call function: String = #function, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await timing.time(function) { try await pool.write(body) }
        } catch let e as StoreError { throw e } catch let e as LiveError { throw e } catch {
            throw Self.storeError(path, error)
        }
    }

    /// The file is opened and its schema brought up to date by `init`: nothing to wait for.
    public func prepare() async throws {}

    /// An SQLite store has no connections to keep or work of its own to run: it waits for the
    /// service group to shut down (the server's writes finish before), then closes the file.
    public func run() async throws {
        // Until shutdown: access changes of other processes (`bubbles users …`) reach the server.
        await cancelWhenGracefulShutdown { await self.watchAccessEvents() }
        try? pool.close()
    }

    // MARK: schema

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    PRAGMA application_id = \(applicationID);
                    CREATE TABLE conversation (
                        id INTEGER PRIMARY KEY,
                        title TEXT NOT NULL,
                        source_format TEXT NOT NULL,
                        chat_key TEXT NOT NULL,
                        added REAL NOT NULL,
                        UNIQUE (source_format, chat_key)
                    );
                    CREATE TABLE participant (
                        conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        name TEXT NOT NULL,
                        avatar TEXT,
                        PRIMARY KEY (conversation_id, id)
                    ) WITHOUT ROWID;
                    CREATE TABLE message (
                        id INTEGER PRIMARY KEY,
                        conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                        seq INTEGER NOT NULL,
                        source_key INTEGER NOT NULL,
                        date REAL NOT NULL,
                        utc_offset INTEGER,
                        sender TEXT,
                        outgoing INTEGER NOT NULL,
                        system INTEGER NOT NULL,
                        text TEXT,
                        status TEXT,
                        status_date REAL,
                        source_id TEXT,
                        extra TEXT
                    );
                    CREATE UNIQUE INDEX message_seq ON message (conversation_id, seq);
                    CREATE UNIQUE INDEX message_source ON message (conversation_id, source_key);
                    CREATE INDEX message_date ON message (conversation_id, date);
                    CREATE TABLE media (
                        sha256 TEXT PRIMARY KEY,
                        size INTEGER NOT NULL,
                        file TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE VIRTUAL TABLE message_fts USING fts5 (body, content = '', tokenize = 'unicode61 remove_diacritics 2');
                    """)
        }
        // Live conversations: per-conversation revisions (every added, edited, deleted or reacted
        // message takes the next), client ids unique per conversation (exactly once), edits and
        // the participant whose messages are outgoing. Imported messages keep no revision (the
        // partial indexes leave imports as fast as they were).
        m.registerMigration("v2-live") { db in
            try db.execute(
                sql: """
                    ALTER TABLE conversation ADD COLUMN last_rev INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE conversation ADD COLUMN owner TEXT;
                    ALTER TABLE message ADD COLUMN client_id TEXT;
                    ALTER TABLE message ADD COLUMN rev INTEGER;
                    ALTER TABLE message ADD COLUMN change TEXT;
                    ALTER TABLE message ADD COLUMN edited REAL;
                    CREATE UNIQUE INDEX message_client ON message (conversation_id, client_id) WHERE client_id IS NOT NULL;
                    CREATE INDEX message_rev ON message (conversation_id, rev) WHERE rev IS NOT NULL;
                    """)
        }
        // Accounts (`SQLiteStore+Accounts`): users, sessions and API tokens kept by their
        // SHA-256, conversations' members and invitations, and which media files each
        // conversation shows (attachments are served to those who reach one of them) — filled
        // here from what the conversations already hold.
        m.registerMigration("v3-accounts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE account (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL,
                        name_key TEXT NOT NULL UNIQUE,
                        display_name TEXT NOT NULL,
                        role TEXT NOT NULL,
                        password_hash TEXT NOT NULL,
                        created REAL NOT NULL,
                        disabled INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE account_session (
                        hash TEXT PRIMARY KEY,
                        account_id INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        created REAL NOT NULL,
                        last_seen REAL NOT NULL,
                        expires REAL NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX account_session_account ON account_session (account_id);
                    CREATE TABLE account_token (
                        id INTEGER PRIMARY KEY,
                        account_id INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        hash TEXT NOT NULL UNIQUE,
                        created REAL NOT NULL,
                        last_used REAL
                    );
                    CREATE TABLE member (
                        conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                        account_id INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        access TEXT NOT NULL,
                        added REAL NOT NULL,
                        PRIMARY KEY (conversation_id, account_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX member_account ON member (account_id);
                    CREATE TABLE invite (
                        hash TEXT PRIMARY KEY,
                        conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                        created_by INTEGER NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                        access TEXT NOT NULL,
                        created REAL NOT NULL,
                        expires REAL NOT NULL,
                        used_by INTEGER,
                        used REAL
                    ) WITHOUT ROWID;
                    CREATE TABLE conversation_media (
                        conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                        file TEXT NOT NULL,
                        PRIMARY KEY (conversation_id, file)
                    ) WITHOUT ROWID;
                    CREATE INDEX conversation_media_file ON conversation_media (file);
                    """)
            let add = try db.makeStatement(sql: "INSERT OR IGNORE INTO conversation_media (conversation_id, file) VALUES (?, ?)")
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT conversation_id, extra FROM message WHERE extra LIKE '%media%'
                    UNION ALL SELECT conversation_id, avatar FROM participant WHERE avatar IS NOT NULL
                    """)
            while let row = try rows.next() {
                let id: Int64 = row[0]
                for file in MediaNames.files(in: row[1] ?? "") {
                    add.setUncheckedArguments([id, file])
                    try add.execute()
                }
            }
        }
        // People: persons from contact cards or made by hand, the identities (numbers, emails,
        // app ids) linked to them, and the region numbers are read in. Names resolve when read.
        m.registerMigration("v4-people") { db in
            try db.execute(
                sql: """
                    CREATE TABLE person (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL,
                        avatar TEXT,
                        card TEXT UNIQUE,
                        merged_into INTEGER REFERENCES person(id) ON DELETE SET NULL
                    );
                    CREATE TABLE person_identity (
                        key TEXT PRIMARY KEY,
                        person_id INTEGER REFERENCES person(id) ON DELETE CASCADE,
                        origin TEXT NOT NULL
                    );
                    CREATE INDEX person_identity_person ON person_identity (person_id);
                    CREATE TABLE store_setting (
                        name TEXT PRIMARY KEY,
                        value TEXT NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        // Changes of who reaches what, for the other processes of the same file (a server told
        // that `bubbles users sign-out` ended a session): kept a day.
        m.registerMigration("v5-access-events") { db in
            try db.execute(
                sql: """
                    CREATE TABLE access_event (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        account_id INTEGER NOT NULL,
                        conversation_id INTEGER,
                        at REAL NOT NULL
                    );
                    """)
        }
        // Read marks (issue 63): per user and conversation, the newest message read and the newest
        // delivered to one of their devices. User 0 is the owner of a server without accounts.
        m.registerMigration("v6-read-marks") { db in
            try db.execute(
                sql: """
                    CREATE TABLE read_mark (
                        conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                        account_id INTEGER NOT NULL,
                        read_seq INTEGER NOT NULL DEFAULT 0,
                        delivered_seq INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (conversation_id, account_id)
                    ) WITHOUT ROWID;
                    """)
        }
        // Each user's settings in the web app (its theme, light or dark); user 0 is the owner.
        m.registerMigration("v7-settings") { db in
            try db.execute(
                sql: """
                    CREATE TABLE account_setting (
                        account_id INTEGER NOT NULL,
                        name TEXT NOT NULL,
                        value TEXT NOT NULL,
                        PRIMARY KEY (account_id, name)
                    ) WITHOUT ROWID;
                    """)
        }
        return m
    }

    func migrate() throws {
        do {
            try pool.write { db in
                let id = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") ?? 0
                if tables > 0 && id != Self.applicationID {
                    throw StoreError(path: path, reason: "is not a BubbleKit database (it holds \(Plural.count(tables, "other table")))")
                }
                if try Self.migrator.hasBeenSuperseded(db) {
                    let known = Set(Self.migrator.migrations)
                    let newer = try Self.migrator.appliedIdentifiers(db).subtracting(known).sorted()
                    throw StoreError(
                        path: path,
                        reason:
                            "was written by a newer BubbleKit (schema \(newer.joined(separator: ", ")) is unknown here); upgrade BubbleKit to open it — it is never downgraded"
                    )
                }
            }
            try Self.migrator.migrate(pool)
        } catch let e as StoreError { throw e } catch {
            throw Self.storeError(path, error)
        }
    }
}

/// `SQLiteStore.counted`: conversation id → (highest sequence number, count).
final class CountCache: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int64: (last: Int64, count: Int)] = [:]
    func get(_ id: Int64, last: Int64) -> Int? {
        lock.lock(); defer { lock.unlock() }
        return values[id].flatMap { $0.last == last ? $0.count : nil }
    }
    func set(_ id: Int64, last: Int64, count: Int) {
        lock.lock(); defer { lock.unlock() }
        values[id] = (last, count)
    }
}
