import BubbleCore
import Foundation
import GRDB

/// WhatsApp for Android's own database, `msgstore.db` — decrypted, or its `.crypt14`/`.crypt15`
/// backup with a key — with `wa.db` beside it for contact names. Both schemas in the wild:
///
/// - **normalised** (2022 on): `message`, `chat`, `jid`, `message_media`, `message_quoted`,
///   `message_add_on` + `message_add_on_reaction`, `message_system*`, `message_edit_info`,
///   `message_revoked`, `message_vcard`, `message_location`, `message_poll_option`, `call_log`;
/// - **legacy**: `messages` (`key_remote_jid`, `data`, `media_wa_type`…), `messages_quotes`, `chat_list`.
///
/// One conversation per chat; status updates (`status@broadcast`) are not one. Times are
/// milliseconds since 1970. Media files are looked up in the phone's `WhatsApp/Media` folder
/// (`ImportOptions.mediaFolder`, else a `Media` folder beside the database or one level up).
enum WhatsAppDatabaseImporter {
    struct Chat {
        var id: Int64
        var jid: String
        var jidRow: Int64
        var subject: String?
        var count: Int
        var title: String
        var isGroup: Bool { jid.hasSuffix("@g.us") }
    }

    /// Whether `path` (an SQLite file) has WhatsApp's tables.
    static func isWhatsAppDatabase(_ db: Database) throws -> Bool {
        if try db.tableExists("message"), try db.tableExists("jid"), try db.tableExists("chat") { return true }
        if try db.tableExists("messages"), try db.columns(in: "messages").contains(where: { $0.name == "key_remote_jid" }) { return true }
        return false
    }

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        var databasePath = source.path
        var scratch: String?
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        let head = (try? FormatDetector.readHead(source.path, count: 512)) ?? []
        if !head.starts(with: Array("SQLite format 3".utf8)) {
            // An encrypted backup: decrypted into a private temporary folder, removed when done.
            let folder = try ScratchSpace.makeFolder("decrypted")
            scratch = folder
            databasePath = (folder as NSString).appendingPathComponent("msgstore.db")
            try WhatsAppBackup.decrypt(path: source.path, displayPath: source.displayPath, key: context.options.key, to: databasePath)
        }
        var configuration = Configuration()
        configuration.readonly = true
        let queue: DatabaseQueue
        do { queue = try DatabaseQueue(path: databasePath, configuration: configuration) } catch {
            throw ImportError(path: source.displayPath, reason: "cannot be opened as SQLite: \(describe(error))")
        }
        defer { try? queue.close() }
        let folder = (source.path as NSString).deletingLastPathComponent
        let contacts = Contacts(waDB: (folder as NSString).appendingPathComponent("wa.db"), context: context)
        let media = MediaFolder(given: context.options.mediaFolder, beside: folder)
        do {
            return try queue.read { db throws -> ImportResult in
                guard try isWhatsAppDatabase(db) else {
                    throw ImportError(path: source.displayPath, reason: "is SQLite but not a WhatsApp msgstore.db (no message/chat/jid or messages tables)")
                }
                let reader = try Reader(db: db, source: source, context: context, contacts: contacts, media: media)
                return try reader.run()
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError(path: source.displayPath, reason: "cannot be read as a WhatsApp msgstore.db: \(describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        if let db = error as? DatabaseError {
            if db.resultCode == .SQLITE_CORRUPT || db.resultCode == .SQLITE_NOTADB {
                return "the database is damaged or truncated (\(db.message ?? "\(db)"))"
            }
            return db.message ?? "\(db)"
        }
        return "\(error)"
    }

    /// Names from `wa.db`: the address-book name, else the verified business name, else the name
    /// the person gave WhatsApp; a number's jid without a name reads as "+<number>".
    final class Contacts {
        var names: [String: String] = [:]
        /// Names already worked out, by jid (one lookup a message).
        private var shown: [String: String] = [:]

        init(waDB path: String, context: ImportContext) {
            guard FileManager.default.fileExists(atPath: path) else { return }
            var configuration = Configuration()
            configuration.readonly = true
            do {
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                defer { try? queue.close() }
                names = try queue.read { db -> [String: String] in
                    var out: [String: String] = [:]
                    guard try db.tableExists("wa_contacts") else { return out }
                    let columns = Set(try db.columns(in: "wa_contacts").map(\.name))
                    func c(_ name: String) -> String { columns.contains(name) ? name : "NULL" }
                    let vnames = try db.tableExists("wa_vnames")
                    let rows = try Row.fetchCursor(
                        db,
                        sql: """
                            SELECT c.jid, \(c("display_name")), \(vnames ? "(SELECT verified_name FROM wa_vnames v WHERE v.jid = c.jid)" : "NULL"), \(c("wa_name"))
                            FROM wa_contacts c
                            """)
                    while let row = try rows.next() {
                        guard let jid: String = row.lenient(at: 0) else { continue }
                        let name = [row.lenient(at: 1) as String?, row.lenient(at: 2), row.lenient(at: 3)]
                            .compactMap { $0 }.map(TextCleanup.cleanName).first { !$0.isEmpty }
                        if let name { out[jid] = name }
                    }
                    return out
                }
            } catch {
                context.warn(nil, "wa.db", "cannot be read (\(describe(error))); people are shown by number", file: path)
            }
        }

        func name(_ jid: String) -> String {
            if let n = shown[jid] { return n }
            var n = names[jid]
            if n == nil {
                let user = jid.split(separator: "@").first.map(String.init) ?? jid
                n = jid.hasSuffix("@s.whatsapp.net") && user.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) ? "+" + user : user
            }
            shown[jid] = n
            return n!
        }
    }

    /// The phone's `WhatsApp/Media` folder: a database path such as `Media/WhatsApp Images/x.jpg`
    /// (or an absolute `/storage/…/WhatsApp/Media/…`) is looked up under it, else by file name.
    final class MediaFolder {
        let root: String?
        /// The folder as messages name it: as typed with `--media`, else where it was found
        /// beside the database ("Media beside the database").
        let shown: String?
        private var byName: [String: String]?

        init(given: String?, beside folder: String) {
            if let given {
                root = URL(fileURLWithPath: given).standardizedFileURL.path
                shown = given
                return
            }
            let names = ["Media", "../Media", "WhatsApp/Media", "../WhatsApp/Media"]
            var isDir: ObjCBool = false
            let found = names.first { name in
                let path = URL(fileURLWithPath: (folder as NSString).appendingPathComponent(name)).standardizedFileURL.path
                return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
            }
            root = found.map { URL(fileURLWithPath: (folder as NSString).appendingPathComponent($0)).standardizedFileURL.path }
            shown = found.map { "\($0) beside the database" }
        }

        /// The file for a database path or name, when the folder holds it.
        func resolve(path stored: String?, name: String?) -> String? {
            guard let root else { return nil }
            if let stored, !stored.isEmpty {
                var relative = stored
                if let r = stored.range(of: "/Media/", options: .backwards) {
                    relative = String(stored[r.upperBound...])
                } else if stored.hasPrefix("Media/") {
                    relative = String(stored.dropFirst(6))
                }
                // Never outside the media folder.
                if !relative.split(separator: "/").contains("..") {
                    let full = (root as NSString).appendingPathComponent(relative)
                    if FileManager.default.fileExists(atPath: full) { return full }
                }
            }
            let fileName = name ?? stored.map { ($0 as NSString).lastPathComponent }
            guard let fileName, !fileName.isEmpty else { return nil }
            if byName == nil {
                var index: [String: String] = [:]
                if let walker = FileManager.default.enumerator(atPath: root) {
                    while let rel = walker.nextObject() as? String {
                        let last = (rel as NSString).lastPathComponent
                        if index[last] == nil { index[last] = (root as NSString).appendingPathComponent(rel) }
                    }
                }
                byName = index
            }
            return byName?[fileName]
        }
    }
}

extension Row {
    /// The value at column `index`, or nil when NULL or not convertible (see `lenient(_:)`).
    func lenient<T: DatabaseValueConvertible>(at index: Int) -> T? {
        T.fromDatabaseValue(self[index] as DatabaseValue)
    }

    /// An integer column without the generic conversion (the hot loops): nil for NULL or text.
    func int64(at index: Int) -> Int64? {
        if hasNull(atIndex: index) { return nil }
        switch (self[index] as DatabaseValue).storage {
        case .int64(let v): return v
        case .double(let v): return v.isFinite && abs(v) < 9e18 ? Int64(v) : nil
        default: return nil
        }
    }

    /// A text column without the generic conversion: nil for NULL or a number.
    func text(at index: Int) -> String? {
        if hasNull(atIndex: index) { return nil }
        if case .string(let s) = (self[index] as DatabaseValue).storage { return s }
        return nil
    }
}

extension WhatsAppDatabaseImporter: ExportReader {
    static let formats: [ImportFormat] = [.whatsappDatabase]
    static let holdsManyChats = true
    static let fileInFolder: String? = "msgstore.db"

    /// An SQLite file with WhatsApp's tables, a crypt14/crypt15 backup's header, or a folder
    /// holding `msgstore.db`. A file named as an older or damaged backup is an error that says so.
    static func recognizes(_ probe: ExportProbe) throws(ImportError) -> Recognition? {
        if probe.isFolder { return probe.file("msgstore.db").map { .certain(.whatsappDatabase, path: $0) } }
        if probe.isSQLite { return FormatDetector.isWhatsAppDatabase(probe.path) ? .certain(.whatsappDatabase) : nil }
        if WhatsAppBackup.header(Array(probe.head.prefix(512))) != nil { return .certain(.whatsappDatabase) }
        // Named as a backup but not one from its first byte (cut short while copied, or damaged):
        // say that, not that its "line 1" starts no known export.
        let path = probe.path
        if let m = path.lowercased().firstMatch(of: #/\.crypt(\d+)$/#), let n = Int(m.1), n < 14 {
            throw ImportError(
                path: path,
                reason: "is a WhatsApp .crypt\(n) backup; only crypt14 and crypt15 backups are read "
                    + "(give the phone's msgstore.db, or make a newer backup)")
        }
        if path.range(of: #"\.crypt1[0-9]$"#, options: [.regularExpression, .caseInsensitive]) != nil {
            throw ImportError(
                path: path, location: "header",
                reason: "is not a whole WhatsApp crypt14/crypt15 backup header "
                    + "(\(Plural.count(probe.head.count, "byte")): a length byte, then the key type and IV); the file is cut short or damaged, "
                    + "copy it from the phone again")
        }
        return nil
    }
}
