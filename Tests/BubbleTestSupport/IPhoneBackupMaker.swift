import Crypto
import Foundation
import GRDB
import _CryptoExtras

/// Writes an iPhone backup as Finder and iTunes do (iOS 10.2+), encrypted or not, from the files
/// it is to hold: `Manifest.plist` (the device, `IsEncrypted`, the keybag and `ManifestKey`),
/// `Manifest.db` (`Files`) and each file under `fileID[0..2]/fileID`, `fileID` the SHA-1 of
/// "domain-relativePath". Encrypted: eleven class keys wrapped (RFC 3394) with the key the
/// password derives — `PBKDF2-SHA1(PBKDF2-SHA256(password, DPSL, DPIC), SALT, ITER)` — the
/// manifest and each file AES-256-CBC (IV zero) under keys of their own, wrapped with class 3's
/// (the manifest's with class 4's). What independent readers (iphone_backup_decrypt) expect.
public struct IPhoneBackupMaker {
    /// A file of the phone.
    public struct File {
        public var domain: String
        public var relativePath: String
        public var data: Data
        public init(_ domain: String, _ relativePath: String, _ data: Data) { self.domain = domain; self.relativePath = relativePath; self.data = data }
    }

    public var files: [File] = []
    public var deviceName = "Sam's iPhone"
    public var productVersion = "17.4.1"
    public var phoneNumber: String? = "+44 7700 900001"
    /// 2024-03-21T09:30:00Z.
    public var date = Date(timeIntervalSince1970: 1_711_013_400)
    /// nil: not encrypted.
    public var password: String?
    /// The password's PBKDF2-SHA256 rounds (real backups: 10,000,000) and PBKDF2-SHA1 ones.
    public var rounds = 10_000_000
    public var iterations = 10_000

    public init() {}

    /// The `fileID` of a file.
    public static func fileID(_ domain: String, _ relativePath: String) -> String {
        Insecure.SHA1.hash(data: Data("\(domain)-\(relativePath)".utf8)).map { String(format: "%02x", $0) }.joined()
    }

    public func write(to folder: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let random = { (n: Int) in Data((0..<n).map { _ in UInt8.random(in: 0...255) }) }
        var classKeys: [UInt32: SymmetricKey] = [:]
        var keybag = Data(), manifestKey = Data()
        if let password {
            let salt = random(20), dpsl = random(20)
            let first = try KDF.Insecure.PBKDF2.deriveKey(
                from: Array(password.utf8), salt: dpsl, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
            let kek = try KDF.Insecure.PBKDF2.deriveKey(
                from: first.withUnsafeBytes { Array($0) }, salt: salt, using: .insecureSHA1,
                outputByteCount: 32, unsafeUncheckedRounds: iterations)
            func tlv(_ tag: String, _ value: Data) { keybag += Data(tag.utf8) + Self.be32(UInt32(value.count)) + value }
            tlv("VERS", Self.be32(3)); tlv("TYPE", Self.be32(1)); tlv("UUID", random(16)); tlv("HMCK", random(40)); tlv("WRAP", Self.be32(0))
            tlv("SALT", salt); tlv("ITER", Self.be32(UInt32(iterations))); tlv("DPWT", Self.be32(1)); tlv("DPIC", Self.be32(UInt32(rounds))); tlv("DPSL", dpsl)
            for clas in UInt32(1)...11 {
                let key = SymmetricKey(size: .bits256)
                classKeys[clas] = key
                tlv("UUID", random(16)); tlv("CLAS", Self.be32(clas)); tlv("WRAP", Self.be32(2)); tlv("KTYP", Self.be32(0))
                tlv("WPKY", try AES.KeyWrap.wrap(key, using: kek))
            }
        }
        let manifestPath = folder + "/Manifest.db"
        let plainManifest = password == nil ? manifestPath : NSTemporaryDirectory() + "/bk-manifest-\(UUID().uuidString).db"
        try? fm.removeItem(atPath: plainManifest)
        let queue = try DatabaseQueue(path: plainManifest)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE Files (fileID TEXT PRIMARY KEY, domain TEXT, relativePath TEXT, flags INTEGER, file BLOB);
                    CREATE INDEX FilesDomainIdx ON Files(domain); CREATE INDEX FilesRelativePathIdx ON Files(relativePath);
                    CREATE TABLE Properties (key TEXT PRIMARY KEY, value BLOB);
                    """)
            var folders = Set<String>()
            for file in files {
                // Each folder on the way has a row of its own (flags 2), as in real manifests.
                var parts = file.relativePath.split(separator: "/").dropLast().map(String.init)
                while !parts.isEmpty {
                    let path = parts.joined(separator: "/")
                    if folders.insert(file.domain + "-" + path).inserted {
                        try db.execute(
                            sql: "INSERT INTO Files VALUES (?, ?, ?, 2, ?)",
                            arguments: [Self.fileID(file.domain, path), file.domain, path, Self.record(size: 0, protection: 0, path: path, key: nil)])
                    }
                    parts.removeLast()
                }
                let id = Self.fileID(file.domain, file.relativePath)
                var stored = file.data
                var wrapped: Data?
                if password != nil {
                    let key = SymmetricKey(size: .bits256)
                    stored = try AES._CBC.encrypt(file.data, using: key, iv: AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16)))
                    wrapped = Self.le32(3) + (try AES.KeyWrap.wrap(key, using: classKeys[3]!))
                }
                try fm.createDirectory(atPath: folder + "/" + id.prefix(2), withIntermediateDirectories: true)
                try stored.write(to: URL(fileURLWithPath: folder + "/" + id.prefix(2) + "/" + id))
                try db.execute(
                    sql: "INSERT INTO Files VALUES (?, ?, ?, 1, ?)",
                    arguments: [id, file.domain, file.relativePath, Self.record(size: file.data.count, protection: 3, path: file.relativePath, key: wrapped)])
            }
        }
        try queue.close()
        if password != nil {
            let key = SymmetricKey(size: .bits256)
            let plain = try Data(contentsOf: URL(fileURLWithPath: plainManifest))
            try? fm.removeItem(atPath: plainManifest)
            // Padded (PKCS#7) like the files, though its pages are whole blocks: independent
            // readers insist on the padding.
            try AES._CBC.encrypt(plain, using: key, iv: AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16)))
                .write(to: URL(fileURLWithPath: manifestPath))
            manifestKey = Self.le32(4) + (try AES.KeyWrap.wrap(key, using: classKeys[4]!))
        }
        var lockdown: [String: Any] = ["DeviceName": deviceName, "ProductVersion": productVersion, "ProductType": "iPhone15,2"]
        if let phoneNumber { lockdown["PhoneNumber"] = phoneNumber }
        var plist: [String: Any] = [
            "Version": "10.0", "IsEncrypted": password != nil, "Date": date, "Lockdown": lockdown,
            "SystemDomainsVersion": "24.0", "WasPasscodeSet": true
        ]
        if password != nil { plist["BackupKeyBag"] = keybag; plist["ManifestKey"] = manifestKey }
        try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0).write(to: URL(fileURLWithPath: folder + "/Manifest.plist"))
        let info: [String: Any] = ["Device Name": deviceName, "Display Name": deviceName, "Last Backup Date": date, "Product Version": productVersion]
        try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0).write(to: URL(fileURLWithPath: folder + "/Info.plist"))
    }

    /// A file's `MBFile` record, archived by NSKeyedArchiver (a binary plist with UIDs, as
    /// the phone writes it): size, protection class, path and, encrypted, the wrapped key as
    /// `{"NS.data": …}`.
    static func record(size: Int, protection: Int, path: String, key: Data?) -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(MBFileRecord(size: size, protection: protection, path: path, key: key), forKey: "root")
        archiver.finishEncoding()
        return archiver.encodedData
    }

    static func be32(_ v: UInt32) -> Data { Data([UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]) }
    static func le32(_ v: UInt32) -> Data { Data([UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]) }
}

/// A file's record in `Manifest.db` (archived as `MBFile` is; top level: NSKeyedArchiver names classes).
final class MBFileRecord: NSObject, NSCoding {
    let size: Int, protection: Int, path: String, key: Data?
    init(size: Int, protection: Int, path: String, key: Data?) { self.size = size; self.protection = protection; self.path = path; self.key = key }
    required init?(coder: NSCoder) { nil }
    func encode(with coder: NSCoder) {
        coder.encode(size, forKey: "Size")
        coder.encode(protection, forKey: "ProtectionClass")
        coder.encode(path as NSString, forKey: "RelativePath")
        coder.encode(33188, forKey: "Mode")
        coder.encode(1_711_000_000, forKey: "LastModified")
        if let key { coder.encode(KeyData(key), forKey: "EncryptionKey") }
    }
}

/// An NSData archived inline (`NS.data` holds the bytes, as Apple's archives have it).
final class KeyData: NSObject, NSCoding {
    let data: Data
    init(_ data: Data) { self.data = data }
    required init?(coder: NSCoder) { nil }
    func encode(with coder: NSCoder) {
        data.withUnsafeBytes { coder.encodeBytes($0.bindMemory(to: UInt8.self).baseAddress, length: data.count, forKey: "NS.data") }
    }
}
