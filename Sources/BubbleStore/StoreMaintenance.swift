import Crypto
import BubbleCore
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// Backups, restores and checks of a store (`bubbles db backup | restore | check`).
///
/// A backup is a folder laid out as an SQLite store — `bubbles.sqlite`, its pictures and files in
/// `bubbles-media/` — plus `manifest.json`: what it holds (conversations, messages) and the size
/// and SHA-256 of every file. It is read by restoring it (a store opened in place writes to its
/// database file, which then no longer matches the manifest). It is made in a temporary folder beside the target and
/// renamed into place at the end, so a backup that fails (a full disk) leaves nothing.
package enum StoreMaintenance {
    /// The manifest of a backup folder.
    package struct Manifest: Codable, Sendable {
        package var format = "bubblekit-backup"
        package var version = 1
        package var created: Date
        /// Where it was taken from (a path, or a PostgreSQL URL without its password).
        package var source: String
        package var conversations: Int
        package var messages: Int
        package var files: [File]

        package struct File: Codable, Sendable, Equatable {
            /// Relative to the backup folder (`bubbles.sqlite`, `bubbles-media/ab/<sha256>.jpg`).
            package var path: String
            package var size: Int64
            package var sha256: String
        }
    }

    package static let databaseName = "bubbles.sqlite"
    package static let mediaName = "bubbles-media"
    package static let manifestName = "manifest.json"

    // MARK: Backup

    /// Backs up the SQLite store at `store` into the new folder `target`: the database through
    /// SQLite's online backup (a consistent snapshot, also while a server writes), then every
    /// picture and file the snapshot names, hard-linked where the file system allows, else copied.
    package static func backup(_ store: SQLiteStore, to target: String) throws -> Manifest {
        let work = try workFolder(for: target)
        do {
            let database = work + "/" + databaseName
            do {
                let copy = try DatabaseQueue(path: database)
                try store.pool.backup(to: copy)
                try copy.close()
            } catch let e as StoreError { throw e } catch {
                throw StoreError(path: target, reason: "the database cannot be copied: \(SQLiteStore.describe(error))")
            }
            let snapshot = try SQLiteStore(path: database)
            let files = try referencedFiles(snapshot)
            let counted = try counts(snapshot)
            try snapshot.close()
            for file in files {
                let from = store.mediaFolder + "/" + file.prefix(2) + "/" + file
                let to = work + "/" + mediaName + "/" + file.prefix(2) + "/" + file
                guard FileManager.default.fileExists(atPath: from) else {
                    throw StoreError(path: from, reason: "is named by the store but missing (run `bubbles db check`)")
                }
                try DurableFile.link(from, to: to)
            }
            return try seal(work, source: store.path, counts: counted, as: target)
        } catch {
            try? FileManager.default.removeItem(atPath: work)
            throw error
        }
    }

    /// The portable copy of any store (a PostgreSQL one) as a backup folder: `StoreCopier` into an
    /// SQLite store in a temporary folder, then the manifest.
    package static func backup(copying source: any CopyableStore, described: String, to target: String) async throws -> Manifest {
        let work = try workFolder(for: target)
        do {
            let copy = try SQLiteStore(path: work + "/" + databaseName)
            _ = try await StoreCopier(from: source, to: copy).run { _ in }
            let counted = try counts(copy)
            // Closed (its WAL checkpointed into the file) before the files are hashed.
            try copy.close()
            return try seal(work, source: described, counts: counted, as: target)
        } catch {
            try? FileManager.default.removeItem(atPath: work)
            throw error
        }
    }

    // MARK: Restore

    /// Reads `folder`'s manifest and checks every file it lists (present, its size, its SHA-256);
    /// the manifest, or a list of what is wrong.
    package static func verify(_ folder: String) throws -> Manifest {
        let path = folder + "/" + manifestName
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StoreError(path: folder, reason: "is not a BubbleKit backup (no \(manifestName); `bubbles db backup --to` makes one)")
        }
        let manifest: Manifest
        do { manifest = try decoder().decode(Manifest.self, from: data) } catch {
            throw StoreError(path: path, reason: "is not a backup manifest: \(error)")
        }
        guard manifest.format == "bubblekit-backup", manifest.version == 1 else {
            throw StoreError(path: path, reason: "is a \(manifest.format) version \(manifest.version); expected bubblekit-backup version 1")
        }
        var wrong: [String] = []
        for file in manifest.files {
            let full = folder + "/" + file.path
            // Only plain files inside the folder: no `..`, no link that reads something else.
            var info = stat()
            if file.path.split(separator: "/").contains("..") || file.path.hasPrefix("/") {
                wrong.append("\(file.path): leaves the backup folder"); continue
            }
            if lstat(full, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
                wrong.append("\(file.path): is not a plain file (a link or a folder)"); continue
            }
            guard let (size, sha) = try? DurableFile.digest(full) else {
                wrong.append("\(file.path): missing"); continue
            }
            if size != file.size || sha != file.sha256 { wrong.append("\(file.path): changed since the backup (size or SHA-256 differ)") }
        }
        guard wrong.isEmpty else {
            throw StoreError(
                path: folder,
                reason: "is damaged: " + wrong.prefix(10).joined(separator: "; ")
                    + (wrong.count > 10 ? "; and \(wrong.count - 10) more" : ""))
        }
        return manifest
    }

    /// Restores the checked backup `folder` into the SQLite store `target`, which must not exist
    /// yet: the database and the media are copied beside it under temporary names, then renamed.
    package static func restore(_ folder: String, toSQLite target: String) throws -> Manifest {
        let manifest = try verify(folder)
        let media = URL(fileURLWithPath: target).deletingPathExtension().lastPathComponent + "-media"
        let mediaTarget = URL(fileURLWithPath: target).deletingLastPathComponent().appendingPathComponent(media).path
        for path in [target, mediaTarget] where FileManager.default.fileExists(atPath: path) {
            throw StoreError(path: path, reason: "exists; a backup is restored into a new store (give another --db, or move it away)")
        }
        let parent = URL(fileURLWithPath: target).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let work = try workFolder(for: target)
        do {
            try DurableFile.copy(folder + "/" + databaseName, to: work + "/db")
            for file in manifest.files where file.path.hasPrefix(mediaName + "/") {
                try DurableFile.link(folder + "/" + file.path, to: work + "/media/" + file.path.dropFirst(mediaName.count + 1))
            }
            if !FileManager.default.fileExists(atPath: work + "/media") {
                try FileManager.default.createDirectory(atPath: work + "/media", withIntermediateDirectories: true)
            }
            guard rename(work + "/media", mediaTarget) == 0, rename(work + "/db", target) == 0 else {
                throw StoreError(path: target, reason: "cannot be put in place: \(String(cString: strerror(errno)))")
            }
            try? FileManager.default.removeItem(atPath: work)
            return manifest
        } catch {
            try? FileManager.default.removeItem(atPath: work)
            if !FileManager.default.fileExists(atPath: target) { try? FileManager.default.removeItem(atPath: mediaTarget) }
            throw error
        }
    }

    // MARK: Check

    /// What `check` found wrong; empty when the store is sound.
    package struct CheckReport: Sendable {
        package var problems: [String] = []
        /// Files in the media folder nothing names (a crash between a file and its rows), and
        /// temporary files a killed writer left.
        package var orphans: [String] = []
        package var filesChecked = 0
        package var messages = 0
        package var indexed = 0
    }

    /// SQLite's `integrity_check` and the search index's own, every file the store names present
    /// with the SHA-256 its name says, the search index holding exactly the messages that have
    /// text, and the files nothing names. With `repair`, orphans are removed and messages missing
    /// from the index are indexed.
    package static func check(_ store: SQLiteStore, repair: Bool) async throws -> CheckReport {
        var report = CheckReport()
        let integrity = try await store.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        if integrity != ["ok"] { report.problems += integrity.prefix(20).map { "SQLite: \($0)" } }
        do {
            try await store.write { db in try db.execute(sql: "INSERT INTO message_fts (message_fts, rank) VALUES ('integrity-check', 0)") }
        } catch {
            report.problems.append("search index: \(error)")
        }
        // The index against the messages: every indexed row is a message, every message the
        // import would index (`StoreCodec.indexBody`) is indexed.
        let (messages, dangling, missing) = try await store.read { db -> (Int, [Int64], [Int64]) in
            var indexed = Set(try Int64.fetchAll(db, sql: "SELECT rowid FROM message_fts"))
            var messages = 0
            var missing: [Int64] = []
            let decoder = JSONDecoder()
            let rows = try Row.fetchCursor(db, sql: "SELECT id, text, extra FROM message")
            while let row = try rows.next() {
                messages += 1
                let id: Int64 = row["id"]
                if indexed.remove(id) != nil { continue }
                let extra = try? (row["extra"] as String?).flatMap { try decoder.decode(MessageExtra.self, from: Data($0.utf8)) }
                if StoreCodec.indexBody(text: row["text"], spans: extra?.spans ?? [], attachment: extra?.attachment) != nil { missing.append(id) }
            }
            return (messages, indexed.sorted(), missing)
        }
        report.messages = messages
        report.indexed = try await store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM message_fts") ?? 0 }
        if !dangling.isEmpty { report.problems.append("search index: \(dangling.count) entries name no message (first: \(dangling[0]))") }
        if !missing.isEmpty {
            if repair {
                let fixed = try await reindex(store, missing)
                report.problems.append("search index: \(missing.count) messages were not indexed; \(fixed) indexed now (--repair)")
            } else {
                report.problems.append("search index: \(missing.count) messages are not indexed (first: message \(missing[0])); --repair indexes them")
            }
        }
        // Files: every named one present and whole; the others are orphans.
        let named = try referencedFiles(store)
        for file in named {
            let path = store.mediaFolder + "/" + file.prefix(2) + "/" + file
            report.filesChecked += 1
            guard let (_, sha) = try? DurableFile.digest(path) else { report.problems.append("\(path): named by the store but missing"); continue }
            if !file.hasPrefix(sha) { report.problems.append("\(path): its content is not what its name says (SHA-256 \(sha.prefix(16))…)") }
        }
        let known = Set(named)
        if let walker = FileManager.default.enumerator(atPath: store.mediaFolder) {
            while let relative = walker.nextObject() as? String {
                let name = (relative as NSString).lastPathComponent
                var isDir: ObjCBool = false
                let full = store.mediaFolder + "/" + relative
                guard FileManager.default.fileExists(atPath: full, isDirectory: &isDir), !isDir.boolValue else { continue }
                if name.hasPrefix(".tmp-") || !known.contains(name) && !relative.hasPrefix("thumbnails/") { report.orphans.append(full) }
            }
        }
        report.orphans.sort()
        if repair { for path in report.orphans { try? FileManager.default.removeItem(atPath: path) } }
        return report
    }

    /// Indexes `ids` (messages missing from the search index) as an import indexes them.
    static func reindex(_ store: SQLiteStore, _ ids: [Int64]) async throws -> Int {
        try await store.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)")
            var done = 0
            for id in ids {
                guard let row = try Row.fetchOne(db, sql: "SELECT text, extra FROM message WHERE id = ?", arguments: [id]) else { continue }
                let extra = try (row["extra"] as String?).flatMap { try JSONDecoder().decode(MessageExtra.self, from: Data($0.utf8)) }
                guard let body = StoreCodec.indexBody(text: row["text"], spans: extra?.spans ?? [], attachment: extra?.attachment) else { continue }
                insert.setUncheckedArguments([id, body])
                try insert.execute()
                done += 1
            }
            return done
        }
    }

    // MARK: Parts

    /// The file names (`<sha256>.ext`) the store names: its conversations' media, and the
    /// participants' and persons' pictures.
    static func referencedFiles(_ store: SQLiteStore) throws -> [String] {
        try store.pool.read { db in
            var names = Set(try String.fetchAll(db, sql: "SELECT file FROM conversation_media"))
            for avatar in try String.fetchAll(
                db,
                sql: """
                    SELECT avatar FROM participant WHERE avatar LIKE 'media/%' UNION SELECT avatar FROM person WHERE avatar LIKE 'media/%'
                    """)
            {
                names.insert((avatar as NSString).lastPathComponent)
            }
            return names.filter { !$0.isEmpty && !$0.contains("/") && !$0.hasPrefix(".") }.sorted()
        }
    }

    static func counts(_ store: SQLiteStore) throws -> (conversations: Int, messages: Int) {
        try store.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM conversation") ?? 0, try Int.fetchOne(db, sql: "SELECT count(*) FROM message") ?? 0)
        }
    }

    static func makeManifest(folder: String, source: String, counts: (conversations: Int, messages: Int)) throws -> Manifest {
        var files: [Manifest.File] = []
        let walker = FileManager.default.enumerator(atPath: folder)
        while let relative = walker?.nextObject() as? String {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + relative, isDirectory: &isDir), !isDir.boolValue,
                relative != manifestName, !relative.hasSuffix("-wal"), !relative.hasSuffix("-shm")
            else { continue }
            let (size, sha) = try DurableFile.digest(folder + "/" + relative)
            files.append(.init(path: relative, size: size, sha256: sha))
        }
        return Manifest(
            created: Date(), source: source, conversations: counts.conversations, messages: counts.messages,
            files: files.sorted { $0.path < $1.path })
    }

    /// A private folder beside `target` to build it in (removed on failure).
    static func workFolder(for target: String) throws -> String {
        if FileManager.default.fileExists(atPath: target) {
            throw StoreError(path: target, reason: "exists; a backup goes into a new folder")
        }
        let parent = URL(fileURLWithPath: target).deletingLastPathComponent().path
        let work = parent + "/.tmp-\(URL(fileURLWithPath: target).lastPathComponent)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do { try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true) } catch {
            throw StoreError(path: target, reason: "cannot be made: \(DurableFile.reason(error))")
        }
        return work
    }

    /// The end of both backups: the manifest of what `work` holds written into it, then `work`
    /// renamed to `target`.
    static func seal(_ work: String, source: String, counts: (conversations: Int, messages: Int), as target: String) throws -> Manifest {
        let manifest = try makeManifest(folder: work, source: source, counts: counts)
        try DurableFile.write(work + "/" + manifestName, data: try encoder().encode(manifest))
        try publish(work, as: target)
        return manifest
    }

    static func publish(_ work: String, as target: String) throws {
        // The database's WAL was checkpointed when it closed; the -wal and -shm files go.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: work + "/" + databaseName + suffix) }
        guard rename(work, target) == 0 else {
            throw StoreError(path: target, reason: "cannot be put in place: \(String(cString: strerror(errno)))")
        }
    }

    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        e.dateEncodingStrategy = .iso8601
        return e
    }

    static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }
}

/// Files written so that a reader or a crash never sees half of one: a temporary file in the
/// target's folder, written, flushed to the disk (`fsync`), then renamed. Errors say what the
/// system said in words a user knows ("no space left on the device").
package enum DurableFile {
    /// `errno` as the reason of an error: ENOSPC and EFBIG (a process's file-size limit) by name.
    /// Whether `errno` says the disk (or the file-size limit) refused the write.
    package static func isOutOfSpace(_ code: Int32) -> Bool { code == ENOSPC || code == EFBIG || code == EDQUOT }

    /// Whether `error` (a `StoreError`, a POSIX or Foundation error, NIO's file system's) says the
    /// disk or the file-size limit refused a write.
    package static func isOutOfSpace(_ error: any Error) -> Bool {
        if let e = error as? StoreError { return e.outOfSpace }
        return errorNumber(of: error).map(isOutOfSpace) ?? false
    }

    /// The system's error number behind `error`: a POSIX error, a Foundation error in the POSIX
    /// domain or wrapping one, or NIO's FileSystemError, which names it only in its text.
    static func errorNumber(of error: any Error) -> Int32? {
        if let e = error as? POSIXError { return e.code.rawValue }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        let text = "\(error)"
        return [("No space left on device", ENOSPC), ("File too large", EFBIG), ("Disk quota exceeded", EDQUOT)]
            .first { text.contains($0.0) }?.1
    }

    package static func reason(errno code: Int32) -> String {
        switch code {
        case ENOSPC: "no space left on the device"
        case EFBIG: "the file is larger than this process may write (the file-size limit)"
        case EDQUOT: "the disk quota is used up"
        default: String(cString: strerror(code))
        }
    }

    package static func reason(_ error: any Error) -> String {
        errorNumber(of: error).map { reason(errno: $0) } ?? error.localizedDescription
    }

    /// Writes `data` to `path` through a temporary file, fsync and rename.
    package static func write(_ path: String, data: Data) throws {
        try through(path) { fd in
            try data.withUnsafeBytes { raw in try writeAll(fd, raw, path: path) }
        }
    }

    /// Copies `source` to `target` through a temporary file, fsync and rename.
    package static func copy(_ source: String, to target: String) throws {
        let input = open(source, O_RDONLY)
        guard input >= 0 else { throw StoreError(path: source, reason: "cannot be read: \(reason(errno: errno))") }
        defer { close(input) }
        try through(target) { fd in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if n < 0 { throw StoreError(path: source, reason: "cannot be read: \(reason(errno: errno))") }
                if n == 0 { break }
                try buffer.withUnsafeBytes { try writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[0..<n]), path: target) }
            }
        }
    }

    /// A hard link of `source` at `target` (folders made), else a copy (another file system).
    package static func link(_ source: String, to target: String) throws {
        let folder = (target as NSString).deletingLastPathComponent
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw StoreError(path: folder, reason: "cannot be made: \(reason(error))")
        }
        if Glibc.link(source, target) == 0 { return }
        try copy(source, to: target)
    }

    /// The size and SHA-256 (hex) of the file at `path`, read 1 MiB at a time.
    package static func digest(_ path: String) throws -> (Int64, String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw StoreError(path: path, reason: "cannot be read: \(reason(errno: errno))") }
        defer { close(fd) }
        var hash = SHA256()
        var size: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { throw StoreError(path: path, reason: "cannot be read: \(reason(errno: errno))") }
            if n == 0 { break }
            buffer.withUnsafeBytes { hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            size += Int64(n)
        }
        return (size, hash.hex())
    }

    private static func through(_ path: String, _ body: (Int32) throws -> Void) throws {
        let folder = (path as NSString).deletingLastPathComponent
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw StoreError(path: folder, reason: "cannot be made: \(reason(error))")
        }
        let tmp = folder + "/.tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { throw StoreError(path: path, reason: "cannot be written: \(reason(errno: errno))") }
        var open = true
        do {
            try body(fd)
            guard fsync(fd) == 0 else {
                let code = errno; throw StoreError(path: path, reason: "cannot be written: \(reason(errno: code))", outOfSpace: isOutOfSpace(code))
            }
            open = false
            guard close(fd) == 0 else { throw StoreError(path: path, reason: "cannot be written: \(reason(errno: errno))") }
            guard rename(tmp, path) == 0 else { throw StoreError(path: path, reason: "cannot be put in place: \(reason(errno: errno))") }
        } catch {
            if open { close(fd) }
            unlink(tmp)
            throw error
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var at = 0
        while at < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + at, bytes.count - at)
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw StoreError(path: path, reason: "cannot be written: \(reason(errno: code))", outOfSpace: isOutOfSpace(code))
            }
            at += n
        }
    }
}
