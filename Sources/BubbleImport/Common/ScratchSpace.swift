import Foundation

/// Private temporary folders for what an import must not leave behind: a decrypted database, a
/// decrypted attachment. Each is `<tmp>/bubblekit-<purpose>-<pid>-<uuid>` with rights 0700 (its
/// files 0600). They are removed when the import ends; a process killed before that (`kill -9`)
/// leaves its folder, which the next one removes (`sweep`): the name carries the pid, and a
/// folder whose process is gone is stale.
package enum ScratchSpace {
    static let prefix = "bubblekit-"

    /// A new private folder for `purpose` ("decrypted", "attachments"), after removing the stale
    /// ones of processes that are gone.
    package static func makeFolder(_ purpose: String) throws(ImportError) -> String {
        let path = reservePath(purpose)
        guard mkdir(path, 0o700) == 0 else {
            throw ImportError(path: path, reason: "cannot create a private temporary folder: \(String(cString: strerror(errno)))")
        }
        return path
    }

    /// The path of a new private folder for `purpose`, not yet made (whoever writes there first
    /// makes it, 0700), after removing stale ones.
    package static func reservePath(_ purpose: String) -> String {
        sweep()
        return (NSTemporaryDirectory() as NSString).appendingPathComponent("\(prefix)\(purpose)-\(getpid())-\(UUID().uuidString)")
    }

    /// Removes the folders of this kind whose process no longer runs.
    package static func sweep() {
        let tmp = NSTemporaryDirectory()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: tmp) else { return }
        for name in names where name.hasPrefix(prefix) {
            // bubblekit-<purpose>-<pid>-<uuid>: the pid is the field before the UUID's five.
            let fields = name.split(separator: "-")
            guard fields.count >= 8, let pid = Int32(fields[fields.count - 6]), pid > 0,
                fields.suffix(5).map(\.count) == [8, 4, 4, 4, 12]
            else { continue }
            if pid == getpid() { continue }
            if kill(pid, 0) == 0 || errno == EPERM { continue }  // still running (or someone else's)
            try? FileManager.default.removeItem(atPath: (tmp as NSString).appendingPathComponent(name))
        }
    }

    /// Removes this process's folders (on Ctrl-C or SIGTERM: decrypted files never outlive the
    /// command that made them).
    package static func removeOwn() {
        let tmp = NSTemporaryDirectory()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: tmp) else { return }
        for name in names where name.hasPrefix(prefix) && name.contains("-\(getpid())-") {
            try? FileManager.default.removeItem(atPath: (tmp as NSString).appendingPathComponent(name))
        }
    }

    /// Creates (or truncates) `path` with rights 0600 and returns a handle for writing.
    static func createPrivateFile(_ path: String) throws(ImportError) -> FileHandle {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else {
            throw ImportError(path: path, reason: "cannot be created: \(String(cString: strerror(errno)))")
        }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }
}
