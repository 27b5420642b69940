import BubbleImport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The password of an encrypted iPhone backup: the first line of standard input
/// (`--password-stdin`), else asked on the terminal without echo — never an option, where it
/// would sit in the shell's history and the process list.
enum IPhoneBackupInput {
    /// Whether `path` is an iPhone backup folder whose Manifest.plist says it is encrypted.
    static func isEncryptedBackup(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path + "/Manifest.plist"),
              let plist = (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) as? [String: Any] else { return false }
        return plist["IsEncrypted"] as? Bool ?? false
    }

    static func password(fromStandardInput: Bool) throws -> String {
        if fromStandardInput {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw CLIError("--password-stdin: standard input held no password (expected it on the first line)")
            }
            return line
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIError("the backup is encrypted: give its password with --password-stdin (standard input is not a terminal to ask on)")
        }
        FileHandle.standardError.write(Data("Backup password: ".utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("no password typed; nothing was read") }
        return line
    }
}

/// Ctrl-C or SIGTERM while an export is read: this process's temporary folders (decrypted files
/// among them) go with it. Installed by the commands that read exports (not `serve`, which
/// shuts down gracefully on its own).
enum CleanupOnStop {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    private static let once: Void = {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                ScratchSpace.removeOwn()
                exit(128 + number)
            }
            source.resume()
            sources.append(source)
        }
    }()

    static func install() { _ = once }
}
