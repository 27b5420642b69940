import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Where a PostgreSQL store is: `postgres://user[:password]@host[:port]/database`, or a
/// socket folder as `?host=/path/to/dir` (libpq's form; the port names the socket file).
public struct PostgresLocation: Sendable, Hashable {
    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    /// A Unix socket folder instead of TCP.
    public var socketFolder: String?

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

    var configuration: PostgresConnection.Configuration {
        if let socketFolder {
            return .init(unixSocketPath: socketFolder + "/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }
}

/// A few connections to one PostgreSQL server, used from ordinary threads: every call blocks its
/// thread on a NIO future (never on a Swift task, so a blocked caller cannot starve the work it
/// waits for). A connection that breaks is dropped; the next call opens another, waiting with
/// back-off while the server is away (`patience`), so a restart of the database is a pause, not
/// an error.
final class PostgresPool: @unchecked Sendable {
    let location: PostgresLocation
    let logger: Logger
    let size: Int
    /// How long a call waits for the server to come back before it fails.
    var patience: TimeInterval = 20
    private let lock = NSLock()
    private var idle: [PostgresConnection] = []
    private let slots: DispatchSemaphore
    private var nextID = 0
    private var closed = false
    /// Live writes run here (off Swift's cooperative threads, which a blocking call would hold).
    let queue = DispatchQueue(label: "bubblekit.postgres", attributes: .concurrent)

    init(location: PostgresLocation, size: Int = 8) {
        self.location = location
        self.size = size
        slots = DispatchSemaphore(value: size)
        var logger = Logger(label: "bubblekit.postgres")
        logger.logLevel = .critical
        self.logger = logger
    }

    /// A new connection (not from the pool), for LISTEN or COPY.
    func connect() throws -> PostgresConnection {
        lock.lock(); nextID += 1; let id = nextID; lock.unlock()
        return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: location.configuration,
                                              id: id, logger: logger).wait()
    }

    /// Runs `body` with a connection of the pool. `retry`: when the connection breaks (or none
    /// can be made), wait and run it again on a new one, up to `patience` — only for bodies that
    /// may run twice (reads; writes that find what they already did).
    func with<T>(retry: Bool = true, _ body: (PostgresConnection) throws -> T) throws -> T {
        slots.wait()
        defer { slots.signal() }
        let start = Date()
        var delay = 0.05
        while true {
            var connection: PostgresConnection?
            do {
                let c = try checkout()
                connection = c
                let result = try body(c)
                checkin(c)
                return result
            } catch {
                let broken = connection.map { $0.isClosed } ?? true
                if let connection {
                    if broken || Self.isConnectionError(error) { connection.discard() } else { checkin(connection) }
                }
                guard retry, broken || Self.isConnectionError(error), Date().timeIntervalSince(start) < patience, !isClosed else { throw error }
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 1)
            }
        }
    }

    /// `with` on the pool's own threads, for async callers.
    func run<T: Sendable>(retry: Bool = true, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.with(retry: retry, body) })
            }
        }
    }

    /// Runs `body` between BEGIN and COMMIT (ROLLBACK when it throws).
    func transaction<T>(retry: Bool = true, _ body: (PostgresConnection) throws -> T) throws -> T {
        try with(retry: retry) { c in
            try c.run("BEGIN", logger)
            do {
                let result = try body(c)
                try c.run("COMMIT", logger)
                return result
            } catch {
                if !c.isClosed { _ = try? c.run("ROLLBACK", logger) }
                throw error
            }
        }
    }

    private func checkout() throws -> PostgresConnection {
        lock.lock()
        while let c = idle.popLast() {
            if !c.isClosed { lock.unlock(); return c }
        }
        lock.unlock()
        return try connect()
    }

    private func checkin(_ c: PostgresConnection) {
        lock.lock(); defer { lock.unlock() }
        if c.isClosed || closed { c.discard(); return }
        idle.append(c)
    }

    var isClosed: Bool { lock.lock(); defer { lock.unlock() }; return closed }

    func close() {
        lock.lock()
        closed = true
        let all = idle
        idle = []
        lock.unlock()
        for c in all { c.discard() }
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
        return "\(error)"
    }
}

extension PostgresConnection {
    /// Runs `query` and waits for all its rows.
    @discardableResult
    func run(_ query: PostgresQuery, _ logger: Logger) throws -> PostgresQueryResult {
        try self.query(query, logger: logger).wait()
    }
}

extension PostgresConnection {
    /// Closes the connection and keeps it until its channel has closed. postgres-nio asserts (in
    /// debug builds) that a connection is closed before it is freed, and `close()` only starts
    /// closing: a connection dropped right after it (its close failing at once while the server
    /// ended the session, or checked in while the pool closed) crashed the test process under
    /// load (the database-restart test, in 2 of 3 loaded runs).
    func discard() {
        _ = close() as EventLoopFuture<Void>
        closeFuture.whenComplete { _ in withExtendedLifetime(self) {} }
    }
}
