import BubbleImport
import Foundation
import Synchronization
import ZIPFoundation
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
            let plist = (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) as? [String: Any]
        else { return false }
        return plist["IsEncrypted"] as? Bool ?? false
    }

    /// What `bubbles serve`'s upload form gave for a backup's folder (unique per upload): its
    /// password, or none — then nobody is asked (a server has no terminal). Kept in memory only
    /// while that import runs.
    enum Given: Sendable { case password(String), noPassword }
    private static let presets = Mutex<[String: Given]>([:])

    static func preset(_ given: Given?, for folder: String) { presets.withLock { $0[folder] = given } }

    static func preset(for folder: String) -> Given? { presets.withLock { $0[folder] } }

    /// A .zip holding an iPhone backup (its `Manifest.plist` at the top or one folder down),
    /// unpacked beside it; the backup's folder, or nil for any other file.
    static func unpackedBackup(_ path: String) throws -> String? {
        guard path.lowercased().hasSuffix(".zip") else { return nil }
        let archive: Archive
        do { archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read) } catch { return nil }
        guard
            let manifest = archive.first(where: { entry in
                let parts = entry.path.split(separator: "/")
                return parts.last == "Manifest.plist" && parts.count <= 2 && !parts.contains("..")
            })
        else { return nil }
        // The importers' zip limits (a bomb is refused before anything is written).
        let limits = ImportLimits()
        var total: Int64 = 0
        for entry in archive {
            total += Int64(entry.uncompressedSize)
            if entry.uncompressedSize > 1 << 20, Double(entry.uncompressedSize) > Double(max(entry.compressedSize, 1)) * limits.maxZipRatio {
                throw CLIError(
                    "\((path as NSString).lastPathComponent): \(entry.path) would unpack \(entry.compressedSize) bytes into \(entry.uncompressedSize); refused as a zip bomb"
                )
            }
        }
        guard total <= limits.maxZipTotalBytes else {
            throw CLIError("\((path as NSString).lastPathComponent): would unpack to \(total) bytes, over the \(limits.maxZipTotalBytes)-byte limit")
        }
        let into = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("backup-\(UUID().uuidString.prefix(8))")
        do { try FileManager.default.unzipItem(at: URL(fileURLWithPath: path), to: into) } catch {
            throw CLIError("\((path as NSString).lastPathComponent): cannot be unpacked as an iPhone backup's .zip: \(error)")
        }
        try? FileManager.default.removeItem(atPath: path)
        let folder = (manifest.path as NSString).deletingLastPathComponent
        return folder.isEmpty ? into.path : into.appendingPathComponent(folder).path
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
    /// Set by `bubbles serve`: its own shutdown handles the signals.
    nonisolated(unsafe) static var disabled = false
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

    static func install() { if !disabled { _ = once } }
}
