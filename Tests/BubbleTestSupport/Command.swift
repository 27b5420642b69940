import Foundation

/// What a command printed and how it ended.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: Data
    public var stderr: Data
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// A command that was still running after its time: it was killed; `stacks` are its threads'
/// stacks just before (gdb's `thread apply all bt`, when the machine has gdb).
public struct CommandTimedOut: Error, CustomStringConvertible {
    public var command: String
    public var seconds: Double
    public var stacks: String
    public var description: String {
        "\(command) was still running after \(Int(seconds)) s and was killed" + (stacks.isEmpty ? "" : "; its threads:\n\(stacks)")
    }
}

/// Runs other programs for the tests: standard input written, standard output and error read
/// at the same time on threads of their own (reading one pipe to its end while the program
/// fills the other would wait forever), and a time limit, so a program that hangs fails its test
/// with its stacks instead of stalling the whole run.
public enum Command {
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: Data? = nil, in folder: URL? = nil, timeout: Double = 600
    ) throws -> CommandResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let environment { p.environment = environment }
        if let folder { p.currentDirectoryURL = folder }
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        try p.run()
        let done = DispatchGroup()
        let stdout = PipeReader(out.fileHandleForReading, group: done)
        let stderr = PipeReader(err.fileHandleForReading, group: done)
        let writer = Thread {
            if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        if done.wait(timeout: .now() + timeout) == .timedOut {
            let stacks = Self.stacks(of: p.processIdentifier)
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            _ = done.wait(timeout: .now() + 10)
            throw CommandTimedOut(command: ([executable] + arguments).joined(separator: " "), seconds: timeout, stacks: stacks)
        }
        p.waitUntilExit()
        return CommandResult(status: p.terminationStatus, stdout: stdout.data, stderr: stderr.data)
    }

    /// Runs `executable`; its standard output, or an error with its standard error when it
    /// exits with another status than 0.
    public static func output(_ executable: String, _ arguments: [String], timeout: Double = 600) throws -> String {
        let r = try run(executable, arguments, timeout: timeout)
        guard r.status == 0 else {
            throw CommandFailed(command: ([executable] + arguments).joined(separator: " "), status: r.status, stderr: r.stderrText)
        }
        return r.stdoutText
    }

    /// Every thread's stack of process `pid` (empty without gdb).
    static func stacks(of pid: Int32) -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return "" }
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        gdb.arguments = ["-p", String(pid), "-batch", "-ex", "thread apply all bt 25"]
        let pipe = Pipe()
        gdb.standardOutput = pipe
        gdb.standardError = FileHandle.nullDevice
        guard (try? gdb.run()) != nil else { return "" }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        gdb.waitUntilExit()
        return text.split(separator: "\n").filter { $0.hasPrefix("Thread") || $0.hasPrefix("#") }
            .map { String($0.prefix(240)) }.joined(separator: "\n")
    }
}

/// A command that exited with another status than 0.
public struct CommandFailed: Error, CustomStringConvertible {
    public var command: String
    public var status: Int32
    public var stderr: String
    public var description: String { "\(command) exited with status \(status): \(stderr)" }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeReader: @unchecked Sendable {
    private let lock = NSLock()
    private var collected = Data()
    var data: Data { lock.lock(); defer { lock.unlock() }; return collected }

    init(_ handle: FileHandle, group: DispatchGroup) {
        group.enter()
        let thread = Thread { [self] in
            let all = handle.readDataToEndOfFile()
            lock.lock(); collected = all; lock.unlock()
            group.leave()
        }
        thread.start()
    }
}
