import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Where a PostgreSQL store is: `postgres://user[:password]@host[:port]/database`, or a
/// socket folder as `?host=/path/to/dir` (libpq's form; the port names the socket file).
public struct PostgresLocation: Sendable, Hashable {
    /// The user to connect as.
    public var user: String
    /// The password, when the URL gives one (never shown in `path` or errors).
    public var password: String?
    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 unless the URL says).
    public var port: Int
    /// The database's name.
    public var database: String
    /// A Unix socket folder instead of TCP.
    public var socketFolder: String?

    /// True when `location` is a `postgres://` or `postgresql://` URL.
    public static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// Reads a URL; a `StoreError` names what is wrong with it.
    public init(url: String) throws {
        func bad(_ why: String) -> StoreError {
            StoreError(path: Self.redact(url), reason: "\(why); expected postgres://user[:password]@host[:port]/database")
        }
        guard Self.isPostgres(url), let c = URLComponents(string: url) else { throw bad("is not a URL") }
        guard let user = c.user, !user.isEmpty else { throw bad("names no user") }
        self.user = user.removingPercentEncoding ?? user
        password = c.password?.removingPercentEncoding
        let database = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
        guard !database.isEmpty, !database.contains("/") else { throw bad("names no database") }
        self.database = database.removingPercentEncoding ?? database
        port = c.port ?? 5432
        socketFolder = c.queryItems?.first { $0.name == "host" }?.value.flatMap { $0.hasPrefix("/") ? $0 : nil }
        host = c.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        for item in c.queryItems ?? [] where !["host", "sslmode"].contains(item.name) {
            throw bad("has an option \(item.name) BubbleKit does not know (host, sslmode)")
        }
        if let mode = c.queryItems?.first(where: { $0.name == "sslmode" })?.value, !["disable", "prefer", "allow"].contains(mode) {
            throw bad("asks for sslmode=\(mode); BubbleKit connects without TLS (put the database on a private network or a socket)")
        }
    }

    /// The URL with its password left out (for errors and logs).
    public var redacted: String {
        var s = "postgres://\(user)@\(host):\(port)/\(database)"
        if let socketFolder { s += "?host=\(socketFolder)" }
        return s
    }

    /// The URL with its password (to hand to a child process).
    public var url: String {
        var c = URLComponents()
        c.scheme = "postgres"; c.user = user; c.password = password; c.host = host; c.port = port; c.path = "/" + database
        if let socketFolder { c.queryItems = [URLQueryItem(name: "host", value: socketFolder)] }
        return c.string ?? redacted
    }

    static func redact(_ url: String) -> String {
        guard var c = URLComponents(string: url) else { return "postgres://…" }
        if c.password != nil { c.password = "…" }
        return c.string ?? "postgres://…"
    }

    var clientConfiguration: PostgresClient.Configuration {
        if let socketFolder {
            return .init(unixSocketPath: socketFolder + "/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }

    var configuration: PostgresConnection.Configuration {
        if let socketFolder {
            return .init(unixSocketPath: socketFolder + "/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }
}

/// The connections of one PostgreSQL store: postgres-nio's own `PostgresClient` (its pool,
/// run as a `Service` by the store), with the retries a store needs on top. A connection that
/// breaks is dropped by the pool; a call that met a broken connection (the database restarted)
/// is run again on another, waiting with back-off while the server is away (`patience`), so a
/// restart of the database is a pause, not an error.
final class PostgresDB: Sendable {
    let location: PostgresLocation
    let logger: Logger
    let client: PostgresClient
    /// How long a call waits for the server to come back before it fails.
    let patience: Duration

    init(location: PostgresLocation, size: Int = 8, patience: Duration = .seconds(20)) {
        self.location = location
        self.patience = patience
        var logger = Logger(label: "bubblekit.postgres")
        logger.logLevel = .critical
        self.logger = logger
        var config = location.clientConfiguration
        config.options.maximumConnections = size
        config.options.connectTimeout = .seconds(5)
        client = PostgresClient(configuration: config, backgroundLogger: logger)
    }

    /// A new connection of its own (not from the pool), for LISTEN.
    func connect(id: Int) async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: location.configuration, id: id, logger: logger)
    }

    /// Runs `body` with a connection of the pool. `retry`: when the connection breaks, wait and
    /// run it again on another, up to `patience` — only for bodies that may run twice (reads;
    /// writes that find what they already did).
    func with<T: Sendable>(retry: Bool = true, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let clock = ContinuousClock()
        let start = clock.now
        var delay = Duration.milliseconds(50)
        while true {
            do {
                return try await client.withConnection { c in try await body(c) }
            } catch {
                guard retry, Self.isConnectionError(error), clock.now - start < patience else { throw error }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }

    /// Runs `body` between BEGIN and COMMIT (ROLLBACK when it throws).
    func transaction<T: Sendable>(retry: Bool = true, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await with(retry: retry) { c in
            try await c.run("BEGIN", logger)
            do {
                let result = try await body(c)
                try await c.run("COMMIT", logger)
                return result
            } catch {
                if !c.isClosed { _ = try? await c.run("ROLLBACK", logger) }
                throw error
            }
        }
    }

    /// Whether `error` means the connection (or the server) went away rather than the query failed.
    static func isConnectionError(_ error: any Error) -> Bool {
        if let e = error as? PSQLError {
            switch e.code {
            case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection: return true
            case .server:
                // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up).
                return ["57P01", "57P02", "57P03", "08006", "08003", "08001"].contains(e.serverInfo?[.sqlState] ?? "")
            default: return false
            }
        }
        return error is ChannelError || error is IOError || "\(type(of: error))".contains("NIOConnectionError")
    }

    /// What went wrong, as a sentence (PostgreSQL's own message when the server sent one).
    static func describe(_ error: any Error) -> String {
        if let e = error as? PSQLError {
            if let message = e.serverInfo?[.message] {
                let detail = e.serverInfo?[.detail].map { " (\($0))" } ?? ""
                return "PostgreSQL: \(message)\(detail)"
            }
            return "PostgreSQL connection: \(e.code)"
        }
        if isConnectionError(error) { return "cannot reach PostgreSQL (\(error))" }
        if "\(error)".contains("CircuitBreaker") { return "cannot reach PostgreSQL (no connection could be made)" }
        return "\(error)"
    }
}

extension PostgresConnection {
    /// Runs `query` and gives all its rows.
    @discardableResult
    func run(_ query: PostgresQuery, _ logger: Logger) async throws -> [PostgresRow] {
        try await self.query(query, logger: logger).collect()
    }

    /// Runs a statement that ends in `RETURNING …` inside `WITH changed AS (…)`, and gives how
    /// many rows it returned (postgres-nio's async queries give no row count of their own).
    func changed(_ statement: PostgresQuery, _ logger: Logger) async throws -> Int {
        let rows = try await run(PostgresQuery(unsafeSQL: "WITH changed AS (\(statement.sql)) SELECT count(*) FROM changed", binds: statement.binds), logger)
        return Int(try rows.first?.decode(Int64.self) ?? 0)
    }
}
