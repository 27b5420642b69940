import BubbleCore
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The shared store: conversations in PostgreSQL (through postgres-nio), so several `bubbles
/// serve` processes on several machines keep one set of conversations.
///
/// Pictures and files stay out of the database, in `mediaFolder`, a folder every server mounts
/// (NFS, a shared volume): they are written once, named by their SHA-256, never changed, so
/// servers need no coordination for them, the database stays small (a chat's bytes are mostly
/// its photos) and a server streams them without a round trip through PostgreSQL.
///
/// Sequence numbers and revisions are taken from the conversation's row
/// (`UPDATE conversation SET last_seq = last_seq + 1 … RETURNING`), whose lock orders every
/// write of one conversation: two servers never hand out the same number, and changes commit in
/// revision order. Each live commit sends `NOTIFY bubbles_changes, 'C:REV'`; every server
/// LISTENs and reads what it lacks by revision (`PostgresFeed`).
public final class PostgresStore: ConversationStore, @unchecked Sendable {
    /// Where the database is.
    public let location: PostgresLocation
    /// The URL without its password.
    public var path: String { location.redacted }
    public let mediaFolder: String
    public let feed = ChangeFeed()
    public let timing = StoreTiming()
    let db: PostgresDB
    let counted = CountCache()
    let people = PeopleCache()
    /// This process among the store's servers (its own typing notifications are not passed on twice).
    var nodeID: String { listener.nodeID }
    var logger: Logger { db.logger }
    /// Fans changes out between servers (runs with the store).
    let listener: PostgresFeed
    /// The schema brought up to date, once, on first use.
    private let migration = Once()
    /// `start()`'s task (a store used outside a `ServiceGroup`).
    private let started = Mutex<Task<Void, Never>?>(nil)

    /// A store at `url`; nothing is connected until it runs (`run()` in a `ServiceGroup`, or
    /// `start()`). `mediaFolder` defaults to `$BUBBLES_MEDIA`, else
    /// `~/.local/share/bubblekit/DATABASE-media`.
    public init(url: String, mediaFolder: String? = nil) throws {
        location = try PostgresLocation(url: url)
        let env = ProcessInfo.processInfo.environment
        let home = env["HOME"] ?? NSHomeDirectory()
        self.mediaFolder =
            mediaFolder ?? env["BUBBLES_MEDIA"].flatMap { $0.isEmpty ? nil : $0 }
            ?? home + "/.local/share/bubblekit/\(location.database)-media"
        db = PostgresDB(location: location)
        listener = PostgresFeed(db: db, feed: feed)
        listener.reader.set { [weak self] conversation, rev in try await self?.changes(in: conversation, since: rev, limit: 1_000) ?? [] }
    }

    deinit { started.withLock { $0?.cancel() } }

    /// The connection pool and the change feed, until the task is cancelled or the service
    /// group shuts down gracefully (then its connections close).
    public func run() async throws {
        await cancelWhenGracefulShutdown { [db, listener] in
            await Self.runAll(db, listener)
        }
    }

    private static func runAll(_ db: PostgresDB, _ listener: PostgresFeed) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await db.client.run() }
            group.addTask { await listener.run() }
        }
    }

    /// Runs the store in a task of its own, for a store used outside a `ServiceGroup` (a
    /// command, a test); it ends when the store goes or `stop()` is called.
    public func start() {
        started.withLock { task in
            guard task == nil else { return }
            // The task holds the pool and the feed, not the store: the store going ends it.
            task = Task { [db, listener] in await Self.runAll(db, listener) }
        }
    }

    /// Ends what `start()` started: the connections close.
    public func stop() {
        started.withLock { $0?.cancel() }
    }

    /// Waits until the schema is up to date, trying for 5 s at most to reach a server that is
    /// away (a typo in the URL should not hang; a slow migration is waited for).
    public func prepare() async throws {
        try await migration.run { [self] in
            try await reach(patience: .seconds(5))
            try await migrate()
        }
    }

    /// Connects once on a connection of its own (the pool retries a refused connection without
    /// saying so): a server that refuses or cannot be found for `patience` is a `StoreError`.
    func reach(patience: Duration) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        var delay = Duration.milliseconds(50)
        while true {
            do {
                let c = try await db.connect(id: 0)
                try? await c.close()
                return
            } catch {
                guard PostgresDB.isConnectionError(error), clock.now - start < patience else { throw self.error(error) }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }

    func error(_ error: any Error) -> any Error {
        if error is StoreError || error is LiveError { return error }
        return StoreError(path: path, reason: PostgresDB.describe(error))
    }

    /// `db.with` once the schema is ready, errors as `StoreError`s naming the database.
    /// Timed as one round of the store call `function` (`StoreTiming`).
    func read<T: Sendable>(call function: String = #function, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await prepare()
        do { return try await timing.time(function) { try await db.with(body) } } catch { throw self.error(error) }
    }

    /// `db.transaction` once the schema is ready, errors as `StoreError`s naming the database.
    func transaction<T: Sendable>(call function: String = #function, retry: Bool, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await prepare()
        do { return try await timing.time(function) { try await db.transaction(retry: retry, body) } } catch { throw self.error(error) }
    }

    // MARK: schema

    /// The migrations, in order; each runs once, in a transaction, under an advisory lock (two
    /// servers starting together do not both run it). `bubbles_schema` lists those applied.
    static let migrations: [(id: String, sql: String)] = [
        (
            "v1",
            """
            CREATE EXTENSION IF NOT EXISTS unaccent;
            CREATE EXTENSION IF NOT EXISTS pg_trgm;
            CREATE TEXT SEARCH CONFIGURATION bubbles_search (COPY = simple);
            ALTER TEXT SEARCH CONFIGURATION bubbles_search ALTER MAPPING FOR hword, hword_part, word, numword, hword_numpart WITH unaccent, simple;
            CREATE TABLE conversation (
                id BIGSERIAL PRIMARY KEY,
                title TEXT NOT NULL,
                source_format TEXT NOT NULL,
                chat_key TEXT NOT NULL,
                added DOUBLE PRECISION NOT NULL,
                last_seq BIGINT NOT NULL DEFAULT 0,
                last_rev BIGINT NOT NULL DEFAULT 0,
                owner TEXT,
                UNIQUE (source_format, chat_key)
            );
            CREATE TABLE participant (
                conversation_id BIGINT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                id TEXT NOT NULL,
                position BIGINT NOT NULL,
                name TEXT NOT NULL,
                avatar TEXT,
                PRIMARY KEY (conversation_id, id)
            );
            CREATE TABLE message (
                id BIGSERIAL PRIMARY KEY,
                conversation_id BIGINT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                seq BIGINT NOT NULL,
                source_key BIGINT NOT NULL,
                date DOUBLE PRECISION NOT NULL,
                utc_offset BIGINT,
                sender TEXT,
                outgoing BOOLEAN NOT NULL,
                system BOOLEAN NOT NULL,
                text TEXT,
                status TEXT,
                status_date DOUBLE PRECISION,
                source_id TEXT,
                extra TEXT,
                edited DOUBLE PRECISION,
                client_id TEXT,
                rev BIGINT,
                change TEXT,
                -- What search sees (SearchText.indexed: CJK runs as bigrams), its words, and
                -- whether it holds CJK (those messages get a trigram index for substrings).
                body TEXT,
                words TSVECTOR GENERATED ALWAYS AS (to_tsvector('bubbles_search'::regconfig, coalesce(body, ''))) STORED,
                cjk BOOLEAN NOT NULL DEFAULT false
            );
            CREATE UNIQUE INDEX message_seq ON message (conversation_id, seq);
            CREATE UNIQUE INDEX message_source ON message (conversation_id, source_key);
            CREATE INDEX message_date ON message (conversation_id, date);
            CREATE UNIQUE INDEX message_client ON message (conversation_id, client_id) WHERE client_id IS NOT NULL;
            CREATE INDEX message_rev ON message (conversation_id, rev) WHERE rev IS NOT NULL;
            CREATE INDEX message_words ON message USING gin (words);
            CREATE INDEX message_cjk ON message USING gin (lower(text) gin_trgm_ops) WHERE cjk;
            """
        ),
        // Accounts, as in the SQLite store's `v3-accounts` (media names filled from what the
        // conversations already hold).
        (
            "v3-accounts",
            """
            CREATE TABLE account (
                id BIGSERIAL PRIMARY KEY,
                name TEXT NOT NULL,
                name_key TEXT NOT NULL UNIQUE,
                display_name TEXT NOT NULL,
                role TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                created DOUBLE PRECISION NOT NULL,
                disabled BOOLEAN NOT NULL DEFAULT false
            );
            CREATE TABLE account_session (
                hash TEXT PRIMARY KEY,
                account_id BIGINT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                created DOUBLE PRECISION NOT NULL,
                last_seen DOUBLE PRECISION NOT NULL,
                expires DOUBLE PRECISION NOT NULL
            );
            CREATE INDEX account_session_account ON account_session (account_id);
            CREATE TABLE account_token (
                id BIGSERIAL PRIMARY KEY,
                account_id BIGINT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                hash TEXT NOT NULL UNIQUE,
                created DOUBLE PRECISION NOT NULL,
                last_used DOUBLE PRECISION
            );
            CREATE TABLE member (
                conversation_id BIGINT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                account_id BIGINT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                access TEXT NOT NULL,
                added DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (conversation_id, account_id)
            );
            CREATE INDEX member_account ON member (account_id);
            CREATE TABLE invite (
                hash TEXT PRIMARY KEY,
                conversation_id BIGINT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                created_by BIGINT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                access TEXT NOT NULL,
                created DOUBLE PRECISION NOT NULL,
                expires DOUBLE PRECISION NOT NULL,
                used_by BIGINT,
                used DOUBLE PRECISION
            );
            CREATE TABLE conversation_media (
                conversation_id BIGINT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                file TEXT NOT NULL,
                PRIMARY KEY (conversation_id, file)
            );
            CREATE INDEX conversation_media_file ON conversation_media (file);
            INSERT INTO conversation_media (conversation_id, file)
            SELECT DISTINCT conversation_id, (regexp_matches(extra, 'media\\\\?/[0-9a-f]{2}\\\\?/([0-9a-f]{64}(?:\\.[a-z0-9]{1,10})?)', 'g'))[1]
            FROM message WHERE extra LIKE '%media%'
            UNION SELECT conversation_id, regexp_replace(avatar, '^.*/', '') FROM participant WHERE avatar LIKE 'media/%'
            ON CONFLICT DO NOTHING;
            """
        ),
        (
            "v4-people",
            """
            CREATE TABLE person (
                id BIGSERIAL PRIMARY KEY,
                name TEXT NOT NULL,
                avatar TEXT,
                card TEXT UNIQUE,
                merged_into BIGINT REFERENCES person(id) ON DELETE SET NULL
            );
            CREATE TABLE person_identity (
                key TEXT PRIMARY KEY,
                person_id BIGINT REFERENCES person(id) ON DELETE CASCADE,
                origin TEXT NOT NULL,
                added BIGSERIAL
            );
            CREATE INDEX person_identity_person ON person_identity (person_id);
            CREATE TABLE store_setting (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL
            );
            """
        ),
        // Read marks (issue 63): per user and conversation, the newest message read and the
        // newest delivered to one of their devices; user 0 is the owner of a server without accounts.
        (
            "v6-read-marks",
            """
            CREATE TABLE read_mark (
                conversation_id BIGINT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
                account_id BIGINT NOT NULL,
                read_seq BIGINT NOT NULL DEFAULT 0,
                delivered_seq BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (conversation_id, account_id)
            );
            """
        ),
        // Each user's settings in the web app (its theme, light or dark); user 0 is the owner.
        (
            "v7-settings",
            """
            CREATE TABLE account_setting (
                account_id BIGINT NOT NULL,
                name TEXT NOT NULL,
                value TEXT NOT NULL,
                PRIMARY KEY (account_id, name)
            );
            """
        ),
        // Messages by source key through a hash index, not a unique b-tree: source keys are
        // hashes, so each b-tree insert went to a random page of a growing index (a quarter of
        // a million-message import). Each conversation's source keys stay unique by the writers:
        // an import numbers what it lacks under the conversation's row lock, live messages have
        // their own key per client id, and a store copy refuses a key the conversation has.
        (
            "v8-source-hash",
            """
            DROP INDEX message_source;
            CREATE INDEX message_source ON message USING hash (source_key);
            """
        )
    ]

    func migrate() async throws {
        do {
            try await db.transaction(retry: true) { c in
                // One migrator at a time across servers (the key is "BBK1").
                try await c.run("SELECT pg_advisory_xact_lock(1111641905)", logger)
                try await c.run("CREATE TABLE IF NOT EXISTS bubbles_schema (id TEXT PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)", logger)
                let applied = Set(try await c.run("SELECT id FROM bubbles_schema", logger).map { try $0.decode(String.self) })
                let known = Set(Self.migrations.map(\.id))
                let newer = applied.subtracting(known).sorted()
                if !newer.isEmpty {
                    throw StoreError(
                        path: path,
                        reason:
                            "was written by a newer BubbleKit (schema \(newer.joined(separator: ", ")) is unknown here); upgrade BubbleKit to open it — it is never downgraded"
                    )
                }
                if applied.isEmpty {
                    let others = try await c.run(
                        """
                        SELECT count(*) FROM information_schema.tables
                        WHERE table_schema = current_schema() AND table_name IN ('conversation', 'participant', 'message')
                        """, logger
                    ).first!.decode(Int64.self)
                    if others > 0 {
                        throw StoreError(
                            path: path, reason: "is not a BubbleKit database (it holds tables named conversation, participant or message of its own)")
                    }
                }
                for m in Self.migrations where !applied.contains(m.id) {
                    try await c.simple(m.sql, logger)
                    try await c.run("INSERT INTO bubbles_schema (id, applied) VALUES (\(m.id), \(Date().timeIntervalSince1970))", logger)
                }
            }
        } catch { throw self.error(error) }
    }

    /// What the `body` column holds: the indexed text (`StoreCodec.indexBody`) with everything
    /// but letters, digits and marks turned into spaces, so PostgreSQL's parser splits words
    /// where SQLite's `unicode61` does (a URL's words are words, not one `url` token).
    static func searchBody(_ body: String?) -> String? {
        guard let body else { return nil }
        var out = String.UnicodeScalarView()
        var changed = false
        for s in body.unicodeScalars {
            switch s.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber, .letterNumber,
                .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
                out.append(s)
            default:
                out.append(" ")
                changed = changed || s != " "
            }
        }
        return changed ? String(out) : body
    }

    // MARK: rows

    static let columns = "seq, date, utc_offset, sender, outgoing, system, text, status, status_date, source_id, extra, edited"

    /// A message from a row of `columns` (after `skip` leading columns; more may follow).
    func message(_ row: PostgresRow, decoder: JSONDecoder, skip: Int = 0) throws -> StoredMessage {
        let cells = Array(row)
        func cell<T: PostgresDecodable>(_ i: Int, _: T.Type = T.self) throws -> T { try cells[skip + i].decode(T.self) }
        return try StoreCodec.message(
            MessageRow(
                seq: cell(0), date: cell(1), utcOffset: (cell(2) as Int64?).map(Int.init), sender: cell(3),
                outgoing: cell(4), system: cell(5), text: cell(6), status: cell(7), statusDate: cell(8),
                sourceID: cell(9), extra: cell(10), edited: cell(11)),
            decoder: decoder, absolute: mediaPath)
    }

    func messages(_ c: PostgresConnection, _ query: PostgresQuery) async throws -> [StoredMessage] {
        let decoder = JSONDecoder()
        return try await c.run(query, logger).map { try message($0, decoder: decoder) }
    }
}

extension PostgresConnection {
    /// Runs several statements, one at a time (each ends with `;` at the end of a line), for migrations.
    func simple(_ sql: String, _ logger: Logger) async throws {
        for statement in sql.components(separatedBy: ";\n") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            try await run(PostgresQuery(unsafeSQL: statement), logger)
        }
    }
}
