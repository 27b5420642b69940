import Foundation

/// The tests' own PostgreSQL 15 (Debian's packages, installed by the bootstrap): `initdb` into a
/// temporary folder as an unprivileged user (PostgreSQL refuses to run as root: under root the
/// `postgres` system user the package made runs it), `pg_ctl start` on a free port with its socket
/// in that folder, trust authentication on loopback only. Started once per test process, when a
/// test first asks; stopped when the process exits (`atexit`), and `scripts/test-postgres-cleanup`
/// (run by `make test` whatever the tests did) stops one a crashed process left behind.
public final class TestPostgres: @unchecked Sendable {
    public let folder: String
    public let port: Int
    public let bin: String
    /// The user that owns and runs the server (nil: this process's own user).
    let runAs: String?

    /// The server, started on first use; throws (naming what is missing) when it cannot start.
    public static func shared() throws -> TestPostgres {
        switch started {
        case .success(let pg): return pg
        case .failure(let e): throw e
        }
    }

    private static let started: Result<TestPostgres, TestPostgresError> = Result { try TestPostgres() }.mapError {
        $0 as? TestPostgresError ?? TestPostgresError(description: "\($0)")
    }

    /// A server of the caller's own (for tests that restart it); `stop()` it when done (it is
    /// stopped at exit too).
    /// `durable`: PostgreSQL's own settings but `synchronous_commit = off` (benchmarks), else
    /// fsync off (tests).
    public static func privateServer(durable: Bool = false) throws -> TestPostgres { try TestPostgres(durable: durable) }

    private init(durable: Bool = false) throws {
        let fm = FileManager.default
        guard
            let bin = ["/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"]
                .first(where: { fm.isExecutableFile(atPath: $0 + "/initdb") })
        else {
            throw TestPostgresError(description: "PostgreSQL is not installed (no /usr/lib/postgresql/15/bin/initdb); `scripts/bootstrap.sh` installs it")
        }
        self.bin = bin
        runAs = getuid() == 0 ? "postgres" : nil
        folder = "/tmp/bubblekit-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if let runAs { try Self.shell(["chown", runAs, folder]) }
        port = Self.freePort()
        try run(["\(bin)/initdb", "-D", folder + "/data", "-U", "bubbles", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "-N"])
        // Tests want speed over durability (a crash of the machine loses a test database).
        let settings =
            durable
            ? "-c synchronous_commit=off -c max_wal_size=4GB -c log_min_duration_statement=1000"
            : "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        try run([
            "\(bin)/pg_ctl", "-D", folder + "/data", "-l", folder + "/log", "-w", "-t", "60", "start", "-o",
            "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c max_connections=200 \(settings)"
        ])
        TestPostgres.atExit(self)
    }

    /// The server's log so far.
    public var log: String { (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? "" }

    /// `postgres://bubbles@127.0.0.1:PORT/NAME`.
    public func url(_ database: String) -> String { "postgres://bubbles@127.0.0.1:\(port)/\(database)" }

    /// A new empty database; its URL.
    public func createDatabase(_ prefix: String = "t") throws -> String {
        let name = prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try Self.shell(["\(bin)/createdb", "-h", "127.0.0.1", "-p", String(port), "-U", "bubbles", name])
        return url(name)
    }

    /// Runs SQL on `database` (psql), giving its output.
    @discardableResult
    public func psql(_ database: String, _ sql: String) throws -> String {
        try Self.shell([
            "\(bin)/psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", "bubbles",
            "-d", database, "-c", sql
        ])
    }

    /// `pg_dump` of `database` (every table's rows as SQL).
    public func dump(_ database: String) throws -> String {
        try Self.shell(["\(bin)/pg_dump", "-h", "127.0.0.1", "-p", String(port), "-U", "bubbles", database])
    }

    /// `pg_ctl restart -m fast`: every connection is cut, the server is back a moment later.
    public func restart() throws {
        try run(["\(bin)/pg_ctl", "-D", folder + "/data", "-l", folder + "/log", "-w", "-t", "60", "restart", "-m", "fast"])
    }

    public func stop() {
        _ = try? run(["\(bin)/pg_ctl", "-D", folder + "/data", "-w", "-t", "30", "stop", "-m", "immediate"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A PostgreSQL program as the server's user.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        try Self.shell(runAs.map { ["runuser", "-u", $0, "--"] + arguments } ?? arguments)
    }

    /// Runs a program, giving its output. Spawned and waited for with `waitpid` (Foundation's
    /// `Process` did not see `pg_ctl start` end), its output through files, not pipes: the server
    /// `pg_ctl start` leaves running would hold a pipe open for ever.
    @discardableResult
    static func shell(_ arguments: [String]) throws -> String {
        let base = NSTemporaryDirectory() + "bk-pg-out-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base + ".out"); try? FileManager.default.removeItem(atPath: base + ".err") }
        let argv = ["/bin/sh", "-c", "cd /tmp && exec \"$@\" >'\(base).out' 2>'\(base).err' </dev/null", "sh"] + arguments
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, cArgs, environ)
        guard spawned == 0 else { throw TestPostgresError(description: "cannot run \(arguments[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = FileManager.default.contents(atPath: base + ".out") ?? Data()
        let errors = FileManager.default.contents(atPath: base + ".err") ?? Data()
        let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard exitCode == 0 else {
            throw TestPostgresError(description: "\(arguments.joined(separator: " ")) failed (\(exitCode)): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A port nothing listens on now.
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    private static let registry = NSLock()
    nonisolated(unsafe) private static var toStop: [TestPostgres] = []
    private static func atExit(_ pg: TestPostgres) {
        registry.lock(); defer { registry.unlock() }
        if toStop.isEmpty { atexit { TestPostgres.stopAll() } }
        toStop.append(pg)
    }

    private static func stopAll() {
        registry.lock()
        let all = toStop
        toStop = []
        registry.unlock()
        for pg in all where FileManager.default.fileExists(atPath: pg.folder) { pg.stop() }
    }
}

public struct TestPostgresError: Error, CustomStringConvertible {
    public var description: String
}
