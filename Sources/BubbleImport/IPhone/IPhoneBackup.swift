import BubbleCore
import Foundation
import GRDB
#if Decrypt
import Crypto
import _CryptoExtras
#endif

/// An iPhone's backup as Finder or iTunes makes it (iOS 10.2+): a folder named by the device's
/// UDID holding `Manifest.plist` (the device, whether it is encrypted, the keybag), `Manifest.db`
/// (`Files`: every file's domain, path and `fileID`) and the files under `fileID[0..2]/fileID`.
///
/// Encrypted backups: the keybag is unlocked with the password — `PBKDF2-SHA256(password,
/// DPSL, DPIC)` then `PBKDF2-SHA1(…, SALT, ITER)` — its class keys unwrapped (RFC 3394), the
/// `ManifestKey` opens `Manifest.db` (AES-256-CBC, IV zero) and each file's own key, wrapped in
/// its `Files.file` record, opens the file. Decrypted files go into `scratch` only.
struct IPhoneBackup {
    /// What `Manifest.plist` says of the phone.
    struct Device {
        /// "Sam's iPhone".
        var name: String
        /// "17.4.1".
        var version: String?
        /// When the backup was made.
        var date: Date?
        /// The phone's own number, as iOS writes it (not every backup has it).
        var phoneNumber: String?
    }

    /// One row of `Files`.
    struct Entry {
        var fileID: String
        var domain: String
        var relativePath: String
        /// The `MBFile` archive (encryption key, protection class, size).
        var record: Data?
    }

    let folder: String
    let device: Device
    let encrypted: Bool
    /// Where decrypted files go (private, removed by whoever made it).
    let scratch: String
    private let manifest: DatabaseQueue
    #if Decrypt
    private let classKeys: [UInt32: SymmetricKey]
    #endif

    /// Whether `folder` is a backup (it holds `Manifest.plist` and `Manifest.db`).
    static func isBackup(_ folder: String) -> Bool {
        let fm = FileManager.default
        return fm.fileExists(atPath: folder + "/Manifest.plist") && fm.fileExists(atPath: folder + "/Manifest.db")
    }

    /// Opens the backup in `folder`; an encrypted one with `password` (nil: an error asking for
    /// it). `progress` hears about the slow step (the password's 10,000,000 rounds).
    init(folder: String, password: String?, scratch: String, progress: ((String) -> Void)? = nil) throws(ImportError) {
        self.folder = folder
        self.scratch = scratch
        let plistPath = folder + "/Manifest.plist"
        guard let data = FileManager.default.contents(atPath: plistPath) else { throw ImportError(path: plistPath, reason: "cannot be read") }
        guard let plist = (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) as? [String: Any] else {
            throw ImportError(path: plistPath, reason: "is not a property list; expected an iPhone backup's Manifest.plist")
        }
        let lockdown = plist["Lockdown"] as? [String: Any] ?? [:]
        device = Device(
            name: lockdown["DeviceName"] as? String ?? "iPhone", version: lockdown["ProductVersion"] as? String,
            date: plist["Date"] as? Date, phoneNumber: lockdown["PhoneNumber"] as? String)
        encrypted = plist["IsEncrypted"] as? Bool ?? false
        var manifestPath = folder + "/Manifest.db"
        #if Decrypt
        var keys: [UInt32: SymmetricKey] = [:]
        if encrypted {
            guard let password else {
                throw ImportError(path: folder, reason: "is an encrypted iPhone backup; give its password (--password-stdin, or type it when asked)")
            }
            guard let bag = plist["BackupKeyBag"] as? Data else {
                throw ImportError(path: plistPath, location: "BackupKeyBag", reason: "is missing; an encrypted backup's Manifest.plist holds its keybag")
            }
            let keybag = try Keybag(bag, path: plistPath)
            progress?("Unlocking the backup with its password (\(keybag.rounds.formatted(.number.locale(Locale(identifier: "en_US")))) rounds)…")
            keys = try keybag.unlock(password: password, path: folder)
            guard let manifestKey = plist["ManifestKey"] as? Data, manifestKey.count == 44 else {
                throw ImportError(path: plistPath, location: "ManifestKey", reason: "is missing or not 44 bytes (a class and a wrapped key)")
            }
            let key = try Self.unwrap(Array(manifestKey), classKeys: keys, path: plistPath + ": ManifestKey")
            guard let sealed = FileManager.default.contents(atPath: manifestPath) else {
                throw ImportError(path: manifestPath, reason: "cannot be read")
            }
            let plain = try Self.decrypt(Array(sealed), key: key, size: nil, path: manifestPath)
            manifestPath = scratch + "/Manifest.db"
            guard FileManager.default.createFile(atPath: manifestPath, contents: Data(plain), attributes: [.posixPermissions: 0o600]) else {
                throw ImportError(path: manifestPath, reason: "cannot be written (the decrypted manifest)")
            }
        }
        classKeys = keys
        #else
        if encrypted {
            throw ImportError(
                path: folder,
                reason: "is an encrypted iPhone backup; this bubbles was built without decryption (the Decrypt trait): build it with `swift build`")
        }
        #endif
        var configuration = Configuration()
        configuration.readonly = true
        do {
            manifest = try DatabaseQueue(path: manifestPath, configuration: configuration)
            guard try manifest.read({ db in try db.tableExists("Files") }) else {
                throw ImportError(path: folder + "/Manifest.db", location: "table Files", reason: "is missing; expected an iPhone backup's manifest")
            }
        } catch let e as ImportError { throw e } catch {
            throw ImportError(path: folder + "/Manifest.db", reason: "cannot be read as SQLite\(encrypted ? " after decryption" : ""): \(error)")
        }
    }

    /// The file `relativePath` of `domain`, when the backup holds it.
    func entry(_ domain: String, _ relativePath: String) throws(ImportError) -> Entry? {
        try entries(
            sql: "SELECT fileID, domain, relativePath, file FROM Files WHERE domain = ? AND relativePath = ? AND flags = 1",
            arguments: [domain, relativePath]
        ).first
    }

    /// Every file of `domain` under `prefix` (a folder's path, without the trailing `/`).
    func entries(_ domain: String, under prefix: String) throws(ImportError) -> [Entry] {
        try entries(
            sql: "SELECT fileID, domain, relativePath, file FROM Files WHERE domain = ? AND substr(relativePath, 1, ?) = ? AND flags = 1 ORDER BY relativePath",
            arguments: [domain, prefix.utf8.count + 1, prefix + "/"])
    }

    private func entries(sql: String, arguments: StatementArguments) throws(ImportError) -> [Entry] {
        do {
            return try manifest.read { db in
                try Row.fetchAll(db, sql: sql, arguments: arguments).map {
                    Entry(fileID: $0[0], domain: $0[1], relativePath: $0[2], record: $0[3])
                }
            }
        } catch {
            throw ImportError(path: folder + "/Manifest.db", location: "table Files", reason: "cannot be read: \(error)")
        }
    }

    /// Where the backup keeps `entry`'s bytes.
    func storedPath(_ entry: Entry) -> String { folder + "/" + entry.fileID.prefix(2) + "/" + entry.fileID }

    /// Writes `entry`'s contents (decrypted when the backup is) to `destination` (0600); its
    /// folder is made.
    func extract(_ entry: Entry, to destination: String) throws(ImportError) {
        let source = storedPath(entry)
        let shown = "\(entry.domain)/\(entry.relativePath)"
        guard Self.sha1Name(entry.domain, entry.relativePath).map({ $0 == entry.fileID.lowercased() }) ?? true,
            entry.fileID.wholeMatch(of: #/[0-9a-fA-F]{40}/#) != nil
        else {
            throw ImportError(path: folder + "/Manifest.db", location: shown, reason: "its fileID \(entry.fileID) is not the SHA-1 of its domain and path")
        }
        guard let stored = FileManager.default.contents(atPath: source) else {
            throw ImportError(path: source, reason: "is missing from the backup (\(shown))")
        }
        var bytes = stored
        if encrypted {
            #if Decrypt
            guard let record = entry.record, let (wrapped, size) = Self.fileKey(record) else {
                throw ImportError(path: folder + "/Manifest.db", location: shown, reason: "has no encryption key in its file record")
            }
            let key = try Self.unwrap(wrapped, classKeys: classKeys, path: shown)
            bytes = Data(try Self.decrypt(Array(stored), key: key, size: size, path: source))
            #endif
        }
        do {
            try FileManager.default.createDirectory(
                atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw ImportError(path: destination, reason: "cannot make its folder: \(error.localizedDescription)")
        }
        guard FileManager.default.createFile(atPath: destination, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw ImportError(path: destination, reason: "cannot be written")
        }
    }

    /// `fileID`: the SHA-1 of "domain-relativePath", in hex (nil in a build without swift-crypto,
    /// which then takes the manifest's word).
    static func sha1Name(_ domain: String, _ relativePath: String) -> String? {
        #if Decrypt
        return Insecure.SHA1.hash(data: Data("\(domain)-\(relativePath)".utf8)).map { String(format: "%02x", $0) }.joined()
        #else
        return nil
        #endif
    }

    /// The wrapped key (class first) and size of a file's `MBFile` record (an NSKeyedArchiver
    /// plist): the 44-byte data whose first four bytes, little-endian, are its `ProtectionClass`.
    static func fileKey(_ record: Data) -> (wrapped: [UInt8], size: Int?)? {
        guard let plist = (try? PropertyListSerialization.propertyList(from: record, options: [], format: nil)) as? [String: Any],
            let objects = plist["$objects"] as? [Any]
        else { return nil }
        guard let file = objects.compactMap({ $0 as? [String: Any] }).first(where: { $0["ProtectionClass"] != nil }),
            let protection = (file["ProtectionClass"] as? NSNumber)?.uint32Value
        else { return nil }
        let size = (file["Size"] as? NSNumber)?.intValue
        for object in objects {
            let data = (object as? Data) ?? ((object as? [String: Any])?["NS.data"] as? Data)
            guard let data, data.count == 44 else { continue }
            let bytes = Array(data)
            if UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24 == protection { return (bytes, size) }
        }
        return nil
    }

    #if Decrypt
    /// A key wrapped for a protection class (4-byte little-endian class, then RFC 3394's 40 bytes).
    static func unwrap(_ blob: [UInt8], classKeys: [UInt32: SymmetricKey], path: String) throws(ImportError) -> SymmetricKey {
        guard blob.count == 44 else { throw ImportError(path: path, reason: "its wrapped key is \(blob.count) bytes; expected 44") }
        let protection = UInt32(blob[0]) | UInt32(blob[1]) << 8 | UInt32(blob[2]) << 16 | UInt32(blob[3]) << 24
        guard let kek = classKeys[protection] else {
            throw ImportError(path: path, reason: "is protected by class \(protection), which the backup's keybag does not unlock")
        }
        do { return try AES.KeyWrap.unwrap(blob[4...], using: kek) } catch {
            throw ImportError(path: path, reason: "its key does not unwrap with class \(protection)'s key (the backup is damaged)")
        }
    }

    /// AES-256-CBC with a zero IV; what is past `size` taken off, else the PKCS#7 padding (as
    /// `Manifest.db` has it).
    static func decrypt(_ sealed: [UInt8], key: SymmetricKey, size: Int?, path: String) throws(ImportError) -> [UInt8] {
        guard sealed.count % 16 == 0 else {
            throw ImportError(path: path, reason: "is \(sealed.count) bytes, not whole AES blocks (the backup is damaged or cut short)")
        }
        guard !sealed.isEmpty else { return [] }
        var plain: [UInt8]
        do { plain = Array(try AES._CBC.decrypt(sealed, using: key, iv: AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16)), noPadding: true)) } catch {
            throw ImportError(path: path, reason: "cannot be decrypted: \(error)")
        }
        if let size {
            // The file's size as the record gives it: the padding (and nothing else) is past it.
            guard size >= 0, size <= plain.count, plain.count - size <= 16 else {
                throw ImportError(path: path, reason: "decrypts to \(plain.count) bytes, which does not fit its size \(size) (the backup is damaged)")
            }
            plain.removeSubrange(size...)
        } else if let pad = plain.last, (1...16).contains(pad), plain.suffix(Int(pad)).allSatisfy({ $0 == pad }) {
            plain.removeLast(Int(pad))
        }
        return plain
    }
    #endif
}
