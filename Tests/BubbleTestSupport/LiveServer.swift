import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `bubbles serve` on a store of its own at a fixed free port, so that it can be killed
/// (`kill -9`) and started again where clients expect it; stopped (and its folder removed) by
/// `stop()`, which tests call in a `defer` so a failing check stops it too.
public final class LiveServer: @unchecked Sendable {
    public let binary: String
    public let folder: URL
    public let port: Int
    public let arguments: [String]
    /// The store: a file of its own, or the PostgreSQL URL it was given (several servers share one).
    public let db: String
    /// With PostgreSQL: the media folder every server of that database shares.
    public let media: String?
    private var process: Process?
    private let environment: [String: String]

    public init(binary: String, fontconfig: String, arguments: [String] = [], db: String? = nil, media: String? = nil) throws {
        self.binary = binary
        self.arguments = arguments
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("bk-live-\(UUID().uuidString)")
        self.db = db ?? folder.appendingPathComponent("live.sqlite").path
        self.media = media
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = HTTP.freePort()
        var env = ProcessInfo.processInfo.environment
        env["FONTCONFIG_FILE"] = fontconfig
        environment = env
        try start()
    }

    deinit { stop() }

    /// Starts it and waits until it answers.
    public func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["serve", "--db", db, "--port", String(port)] + (media.map { ["--store-media", $0] } ?? []) + arguments
        p.environment = environment
        p.standardOutput = FileHandle.nullDevice
        // Its log (standard error), kept across restarts: `log`.
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        p.standardError = log ?? FileHandle.nullDevice
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            // Any answer will do (with a token, /healthz answers 401).
            if let status = (try? HTTP.request(port: port, method: "GET", path: "/healthz", timeout: 2))?.status, status > 0 { return }
            guard p.isRunning else { throw BrowserlessError("bubbles serve ended with \(p.terminationStatus)") }
            usleep(50_000)
        }
        throw BrowserlessError("bubbles serve did not answer on \(port)")
    }

    /// Where its standard error goes.
    public var logPath: String { folder.appendingPathComponent("serve.log").path }

    /// What it has written to standard error so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL: no shutdown, nothing flushed by the process.
    public func kill9() {
        guard let p = process, p.isRunning else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// SIGINT (as Ctrl-C), or `signal`: its exit status when it ended by itself within
    /// `seconds`, else nil (then it is killed).
    public func interrupt(within seconds: Double = 10, signal: Int32 = SIGINT) -> Int32? {
        guard let p = process, p.isRunning else { return nil }
        kill(p.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(seconds)
        while p.isRunning, Date() < deadline { usleep(20_000) }
        process = nil
        if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit(); return nil }
        return p.terminationStatus
    }

    /// SIGINT (as Ctrl-C), then the folder removed.
    public func stop() {
        if let p = process, p.isRunning {
            kill(p.processIdentifier, SIGINT)
            let deadline = Date().addingTimeInterval(10)
            while p.isRunning, Date() < deadline { usleep(20_000) }
            if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        }
        process = nil
        try? FileManager.default.removeItem(at: folder)
    }

    /// A JSON request; the status and the decoded body.
    public func call(_ method: String, _ path: String, _ body: Any? = nil) throws -> (status: Int, json: Any?) {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let reply = try HTTP.request(port: port, method: method, path: path, body: data)
        return (reply.status, try? reply.json())
    }

    /// Every message of `conversation` in the store, in order: (seq, clientId, text).
    public func stored(_ conversation: Int) throws -> [(seq: Int, clientID: String, text: String)] {
        var out: [(Int, String, String)] = []
        var after = 0
        while true {
            let r = try call("GET", "/api/v1/conversations/\(conversation)/messages?after=\(after)&limit=1000")
            guard r.status == 200, let page = (r.json as? [String: Any])?["messages"] as? [[String: Any]] else {
                throw BrowserlessError("messages after \(after): \(r.status)")
            }
            for m in page { out.append((m["seq"] as! Int, m["id"] as? String ?? "", m["text"] as? String ?? "")) }
            guard let last = page.last?["seq"] as? Int, page.count == 1000 else { return out }
            after = last
        }
    }
}
