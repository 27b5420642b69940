import Foundation
#if Decrypt
import Crypto
import _CryptoExtras

/// An iPhone backup's keybag (`Manifest.plist`'s `BackupKeyBag`): TLV records — a 4-byte tag,
/// a 4-byte big-endian length, the value — first the bag's own (`VERS TYPE UUID HMCK WRAP SALT
/// ITER DPWT DPIC DPSL`), then for each protection class `UUID CLAS WRAP KTYP WPKY`.
struct Keybag {
    /// The bag's own records.
    var attributes: [String: [UInt8]] = [:]
    /// Each class's records, by `CLAS`.
    var classes: [UInt32: [String: [UInt8]]] = [:]

    init(_ data: Data, path: String) throws(ImportError) {
        let bytes = Array(data)
        var at = 0
        var current: [String: [UInt8]]?
        func close() { if let c = current, let clas = c["CLAS"].map(Self.integer) { classes[UInt32(truncatingIfNeeded: clas)] = c } }
        while at < bytes.count {
            guard at + 8 <= bytes.count else { throw ImportError(path: path, location: "BackupKeyBag, byte \(at)", reason: "a record is cut short") }
            let tag = String(decoding: bytes[at..<(at + 4)], as: UTF8.self)
            let length = Int(Self.integer(Array(bytes[(at + 4)..<(at + 8)])))
            guard length >= 0, at + 8 + length <= bytes.count else {
                throw ImportError(path: path, location: "BackupKeyBag, record \(tag)", reason: "says \(length) bytes, past the end of the keybag")
            }
            let value = Array(bytes[(at + 8)..<(at + 8 + length)])
            at += 8 + length
            if tag == "UUID" && attributes["UUID"] != nil {
                // A new class's first record.
                close()
                current = ["UUID": value]
            } else if current != nil && ["CLAS", "WRAP", "WPKY", "KTYP", "PBKY"].contains(tag) {
                current?[tag] = value
            } else {
                attributes[tag] = value
            }
        }
        close()
        for tag in ["SALT", "ITER", "DPSL", "DPIC"] where attributes[tag] == nil {
            throw ImportError(path: path, location: "BackupKeyBag", reason: "has no \(tag) record; expected a backup keybag (SALT, ITER, DPSL, DPIC)")
        }
    }

    /// A big-endian unsigned integer.
    static func integer(_ bytes: [UInt8]) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

    /// The password's rounds (DPIC: 10,000,000 on real backups).
    var rounds: Int { Int(Self.integer(attributes["DPIC"] ?? [])) }

    /// The class keys, unwrapped with the key the password derives; a wrong password is an
    /// error (the first class key's integrity check fails).
    func unlock(password: String, path: String) throws(ImportError) -> [UInt32: SymmetricKey] {
        let iterations = Int(Self.integer(attributes["ITER"] ?? []))
        guard rounds > 0, iterations > 0 else { throw ImportError(path: path, location: "BackupKeyBag", reason: "has no rounds (DPIC or ITER is 0)") }
        let passcodeKey: SymmetricKey
        do {
            let first = try KDF.Insecure.PBKDF2.deriveKey(
                from: Array(password.utf8), salt: attributes["DPSL"] ?? [], using: .sha256,
                outputByteCount: 32, unsafeUncheckedRounds: rounds)
            passcodeKey = try KDF.Insecure.PBKDF2.deriveKey(
                from: first.withUnsafeBytes { Array($0) }, salt: attributes["SALT"] ?? [], using: .insecureSHA1,
                outputByteCount: 32, unsafeUncheckedRounds: iterations)
        } catch {
            throw ImportError(path: path, reason: "the password's key cannot be derived: \(error)")
        }
        var keys: [UInt32: SymmetricKey] = [:]
        for (clas, records) in classes.sorted(by: { $0.key < $1.key }) {
            guard let wrapped = records["WPKY"], Self.integer(records["WRAP"] ?? []) & 2 != 0 else { continue }
            do { keys[clas] = try AES.KeyWrap.unwrap(wrapped, using: passcodeKey) } catch {
                throw ImportError(path: path, reason: "the password is not this backup's (its keys do not unlock with it); nothing was read")
            }
        }
        guard !keys.isEmpty else { throw ImportError(path: path, location: "BackupKeyBag", reason: "has no class key wrapped with the password") }
        return keys
    }
}
#endif
