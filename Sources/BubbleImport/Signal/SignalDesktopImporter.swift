import BubbleCore
import Foundation
import GRDB
#if Decrypt
import Crypto
import _CryptoExtras
#endif

/// Signal Desktop's database: a profile folder (`config.json`, `sql/db.sqlite`,
/// `attachments.noindex/`) or `db.sqlite` itself. The database is SQLCipher 4 (see `SQLCipher`),
/// decrypted with the raw key from `config.json` (`"key"`) or `ImportOptions.key`, into a private
/// temporary file that is removed when the import ends. Its write-ahead log is applied.
///
/// Messages are the `messages` table's `json` column: `type` incoming/outgoing (and call-history,
/// timer-notification, group-v2-change…), `body` with `bodyRanges` (offsets in UTF-16 units),
/// `sent_at` (ms), `sourceServiceId`, `quote`, `reactions` (`fromId` is a conversation id),
/// `editHistory`, `attachments` (older profiles) — current profiles keep attachments in the
/// `message_attachments` table, each file under `attachments.noindex` encrypted ("version 2").
enum SignalDesktopImporter {
    struct Profile {
        var database: String
        var config: String?
        var attachments: String?
        /// `stickers.noindex`: installed sticker packs' files.
        var stickers: String?
    }

    /// The database, config.json and attachments folder of a profile folder or database path.
    static func profile(_ path: String, mediaFolder: String?) -> Profile {
        var isDir: ObjCBool = false
        let fm = FileManager.default
        let path = URL(fileURLWithPath: path).standardizedFileURL.path
        let mediaFolder = mediaFolder.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        var root: String
        var database: String
        if fm.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            root = path
            database = (path as NSString).appendingPathComponent("sql/db.sqlite")
        } else {
            database = path
            let parent = (path as NSString).deletingLastPathComponent
            root = (parent as NSString).lastPathComponent == "sql" ? (parent as NSString).deletingLastPathComponent : parent
        }
        let config = (root as NSString).appendingPathComponent("config.json")
        let attachments = mediaFolder ?? (root as NSString).appendingPathComponent("attachments.noindex")
        let stickers = (root as NSString).appendingPathComponent("stickers.noindex")
        return Profile(
            database: database, config: fm.fileExists(atPath: config) ? config : nil,
            attachments: fm.fileExists(atPath: attachments) ? attachments : nil,
            stickers: fm.fileExists(atPath: stickers) ? stickers : nil)
    }

    /// Whether `path` looks like a Signal Desktop profile or its database.
    static func looksLikeProfile(_ path: String) -> Bool {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDir) else { return false }
        if isDir.boolValue {
            // The database is what makes a profile; config.json (its key) may be gone, the key
            // then given with --key.
            return fm.fileExists(atPath: (path as NSString).appendingPathComponent("sql/db.sqlite"))
        }
        let parent = (path as NSString).deletingLastPathComponent
        return (path as NSString).lastPathComponent == "db.sqlite" && (parent as NSString).lastPathComponent == "sql"
    }

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let profile = profile(source.path, mediaFolder: context.options.mediaFolder)
        guard FileManager.default.fileExists(atPath: profile.database) else {
            throw ImportError(
                path: source.displayPath, reason: "has no sql/db.sqlite; expected a Signal Desktop profile folder (with config.json and sql/) or its db.sqlite")
        }
        let key = try databaseKey(profile: profile, given: context.options.key, displayPath: source.displayPath)
        let scratch = try ScratchSpace.makeFolder("decrypted")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let plain = (scratch as NSString).appendingPathComponent("db.sqlite")
        let shown = source.displayPath == source.path ? profile.database : source.displayPath
        let decrypted = try SQLCipher.decrypt(path: profile.database, displayPath: shown, key: key, to: plain)
        if let frame = decrypted.walDamagedFrame {
            context.warn(
                "frame \(frame)", "the write-ahead log",
                "does not decrypt from there on (a write cut short, or damage); "
                    + "\(decrypted.walFrames) frames before it were applied, the rest left out as Signal itself would",
                file: shown + "-wal")
        }
        var configuration = Configuration()
        configuration.readonly = true
        let queue: DatabaseQueue
        do { queue = try DatabaseQueue(path: plain, configuration: configuration) } catch {
            throw ImportError(path: shown, reason: "decrypted, but cannot be opened as SQLite: \(WhatsAppDatabaseImporter.describe(error))")
        }
        defer { try? queue.close() }
        do {
            return try queue.read { db throws -> ImportResult in
                for table in ["messages", "conversations"] where try !db.tableExists(table) {
                    throw ImportError(path: shown, location: "table \(table)", reason: "is missing; expected a Signal Desktop database")
                }
                return try SignalReader(
                    db: db, source: source, shownPath: shown, context: context, attachments: profile.attachments,
                    stickers: profile.stickers
                ).run()
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError(path: shown, reason: "cannot be read as a Signal Desktop database: \(WhatsAppDatabaseImporter.describe(error))")
        }
    }

    /// The raw 32-byte key: `--key` as 64 hex digits; else config.json's `key`; else its
    /// `encryptedKey` opened with `--key` as the desktop keyring's "Signal Safe Storage" password.
    static func databaseKey(profile: Profile, given: DecryptionKey?, displayPath: String) throws(ImportError) -> [UInt8] {
        var givenText: String?
        switch given {
        case .text(let text): givenText = text
        case .file(let path):
            givenText = String(decoding: try KeyMaterial.readKeyFile(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        case nil: break
        }
        if let givenText, let bytes = KeyMaterial.bytes(hex: givenText) { return bytes }
        var config: [String: Any] = [:]
        if let path = profile.config {
            guard let data = FileManager.default.contents(atPath: path),
                let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            else {
                throw ImportError(path: path, reason: "is not JSON; expected Signal Desktop's config.json")
            }
            config = object
        }
        if let key = config["key"] as? String {
            guard let bytes = KeyMaterial.bytes(hex: key) else {
                throw ImportError(path: profile.config!, location: "key", reason: "is not 64 hex digits")
            }
            return bytes
        }
        if let sealed = config["encryptedKey"] as? String {
            guard let password = givenText else {
                throw ImportError(
                    path: profile.config!, location: "encryptedKey",
                    reason: "the database key is sealed by the desktop keyring; give the keyring's \"Signal Safe Storage\" password "
                        + "with --key (on GNOME: `secret-tool lookup application Signal`), or the 64-digit database key itself")
            }
            if let key = unsealKey(sealed, password: password) { return key }
            throw ImportError(path: profile.config!, location: "encryptedKey", reason: "cannot be opened with the password given (--key)")
        }
        if let givenText {
            throw ImportError(
                path: displayPath,
                reason: "--key \(givenText.count > 12 ? givenText.prefix(6) + "…" : givenText[...]): is not the database's key; "
                    + "expected 64 hex digits" + (profile.config == nil ? " (the profile has no config.json)" : ""))
        }
        throw ImportError(
            path: displayPath,
            reason: profile.config == nil
                ? "needs its key: the profile has no config.json; give the database key with --key (64 hex digits)"
                : "needs its key: config.json has no \"key\"; give it with --key (64 hex digits)")
    }

    /// Chromium's "safe storage" sealing as Signal Desktop uses it on Linux ("v11", PBKDF2-SHA1
    /// with 1 round) and macOS ("v10", 1003 rounds): salt "saltysalt", AES-128-CBC, IV of 16 spaces.
    static func unsealKey(_ hex: String, password: String) -> [UInt8]? {
        #if Decrypt
        guard let bytes = KeyMaterial.decodeHex(hex), bytes.count > 3 else { return nil }
        let prefix = String(decoding: bytes.prefix(3), as: UTF8.self)
        let t = KeyMaterial.pbkdf2(
            Insecure.SHA1.self, password: Array(password.utf8), salt: Array("saltysalt".utf8),
            rounds: prefix == "v10" ? 1003 : 1, length: 16)
        guard let iv = try? AES._CBC.IV(ivBytes: [UInt8](repeating: 0x20, count: 16)),
            let plain = try? AES._CBC.decrypt(bytes[3...], using: SymmetricKey(data: t), iv: iv)
        else { return nil }
        return KeyMaterial.bytes(hex: String(decoding: plain, as: UTF8.self))
        #else
        return nil
        #endif
    }
}

extension SignalDesktopImporter: ExportReader {
    static let formats: [ImportFormat] = [.signal]
    static let holdsManyChats = true

    /// Known by where it sits, not by its first bytes (the database is encrypted from the first):
    /// a profile folder with `sql/db.sqlite`, or that file itself.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        looksLikeProfile(probe.path) ? .certain(.signal) : nil
    }
}
