import Foundation
#if Decrypt
import Crypto
import _CryptoExtras
#endif

/// An SQLCipher 4 database (Signal Desktop's `sql/db.sqlite`) opened with a raw key, decrypted
/// page by page into a plain SQLite file that GRDB can read. Debian's `sqlcipher` (3.4.1) cannot
/// open SQLCipher 4 files, so BubbleKit does what SQLCipher 4 does with its defaults:
///
/// - 4096-byte pages; the file's first 16 bytes are the salt (no plain header);
/// - each page ends in a reserved area of 80 bytes: the IV (16) and an HMAC-SHA512 (64) over the
///   page's ciphertext, the IV and the page number (4 bytes, little-endian);
/// - the page (from byte 16 on page 1) is AES-256-CBC without padding under the raw key;
/// - the HMAC key is PBKDF2-HMAC-SHA512 of the raw key with the salt XOR 0x3A, 2 iterations.
///
/// The plain file keeps the page size and the 80 reserved bytes (zeros; SQLite's header says
/// they are reserved), and page 1 starts with "SQLite format 3". A write-ahead log beside the
/// database (`db.sqlite-wal`: Signal Desktop runs in WAL mode, so the newest messages are often
/// only there) is applied the way a checkpoint would: each frame up to the last commit of the
/// log's current generation replaces its page.
enum SQLCipher {
    static let pageSize = 4096
    static let reserve = 80

    /// What was read: the database's pages, the log's frames applied, and the frame where the log
    /// stopped being readable (a torn or damaged frame: SQLite ignores it and what follows; so
    /// does this, and the caller warns).
    struct Decrypted {
        var pages: Int
        var walFrames: Int
        var walDamagedFrame: Int?
    }

    static func decrypt(path: String, displayPath: String, key: [UInt8], to output: String) throws(ImportError) -> Decrypted {
        #if Decrypt
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ImportError(path: displayPath, reason: "cannot be opened for reading") }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        guard size >= pageSize else {
            throw ImportError(path: displayPath, reason: "is \(size) bytes, too short for an SQLCipher database (pages of \(pageSize) bytes)")
        }
        guard size % pageSize == 0 else {
            throw ImportError(
                path: displayPath, location: "page \(size / pageSize + 1)",
                reason: "is truncated: \(size) bytes is not a whole number of \(pageSize)-byte pages")
        }
        let first = [UInt8]((try? handle.read(upToCount: pageSize)) ?? Data())
        let salt = Array(first[0..<16])
        let cipher = PageCipher(key: key, salt: salt)
        let out = try ScratchSpace.createPrivateFile(output)
        defer { try? out.close() }
        // Page 1 first: a wrong key fails its HMAC, and says so.
        guard let page1 = cipher.decrypt(first, number: 1) else {
            throw ImportError(
                path: displayPath, reason: "cannot be decrypted with this key (wrong key, or not an SQLCipher 4 database: page 1's HMAC does not match)")
        }
        var pages = [page1]
        let count = size / pageSize
        var number = 1
        func flush() throws(ImportError) {
            do { for p in pages { try out.write(contentsOf: p) } } catch { throw ImportError(path: output, reason: "cannot be written: \(error)") }
            pages.removeAll(keepingCapacity: true)
        }
        while number < count {
            number += 1
            guard let data = try? handle.read(upToCount: pageSize), data.count == pageSize else {
                throw ImportError(path: displayPath, location: "page \(number)", reason: "cannot be read (truncated?)")
            }
            guard let plain = cipher.decrypt([UInt8](data), number: number) else {
                throw ImportError(path: displayPath, location: "page \(number) of \(count)", reason: "is damaged: its HMAC does not match")
            }
            pages.append(plain)
            if pages.count >= 256 { try flush() }
        }
        try flush()
        let wal = try applyWAL(path + "-wal", displayPath: displayPath + "-wal", cipher: cipher, into: out)
        return Decrypted(pages: count, walFrames: wal.applied, walDamagedFrame: wal.damaged)
        #else
        throw ImportError(path: displayPath, reason: Decryption.unavailable)
        #endif
    }

    #if Decrypt
    struct PageCipher {
        let key: SymmetricKey
        let macKey: SymmetricKey

        init(key: [UInt8], salt: [UInt8]) {
            self.key = SymmetricKey(data: key)
            macKey = SymmetricKey(data: Self.macKey(rawKey: key, salt: salt))
        }

        /// The pages' HMAC key: PBKDF2-HMAC-SHA512 of the raw key with the salt XOR 0x3A, 2 rounds, 32 bytes.
        static func macKey(rawKey: [UInt8], salt: [UInt8]) -> [UInt8] {
            KeyMaterial.pbkdf2(SHA512.self, password: rawKey, salt: salt.map { $0 ^ 0x3A }, rounds: 2, length: 32)
        }

        /// The plain page, or nil when its HMAC does not match.
        func decrypt(_ page: [UInt8], number: Int) -> [UInt8]? {
            let start = number == 1 ? 16 : 0
            let ivAt = pageSize - reserve
            var mac = HMAC<SHA512>(key: macKey)
            mac.update(data: page[start..<(ivAt + 16)])
            withUnsafeBytes(of: UInt32(number).littleEndian) { mac.update(data: Array($0)) }
            guard Array(mac.finalize()) == Array(page[(ivAt + 16)..<pageSize]) else { return nil }
            guard let iv = try? AES._CBC.IV(ivBytes: page[ivAt..<(ivAt + 16)]),
                let plain = try? AES._CBC.decrypt(page[start..<ivAt], using: key, iv: iv, noPadding: true)
            else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(pageSize)
            if number == 1 { out += Array("SQLite format 3\u{0}".utf8) }
            out += plain
            out += [UInt8](repeating: 0, count: reserve)
            return out
        }
    }

    /// Applies the frames of the WAL's current generation up to its last commit before the end or
    /// the first frame that does not decrypt (a write torn by a crash, or damage: as SQLite, the
    /// log is read up to there); returns how many were applied and that frame's number.
    private static func applyWAL(_ wal: String, displayPath: String, cipher: PageCipher, into out: FileHandle) throws(ImportError) -> (
        applied: Int, damaged: Int?
    ) {
        guard let data = FileManager.default.contents(atPath: wal), data.count >= 32 else { return (0, nil) }
        let b = [UInt8](data)
        func be32(_ at: Int) -> UInt32 { UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3]) }
        guard be32(0) & 0xFFFF_FFFE == 0x377F_0682, Int(be32(8)) == pageSize else {
            throw ImportError(path: displayPath, location: "header", reason: "is not a write-ahead log of \(pageSize)-byte pages")
        }
        let salt1 = be32(16), salt2 = be32(20)
        var appliedFrames = 0
        var pagesAfter: UInt32 = 0
        var damaged: Int?
        // The newest committed version of each page (a page is often logged many times).
        var pending: [Int: [UInt8]] = [:]
        var committed: [Int: [UInt8]] = [:]
        var frames = 0
        var at = 32
        let frameSize = 24 + pageSize
        while at + frameSize <= b.count {
            let number = Int(be32(at)), commit = be32(at + 4)
            guard be32(at + 8) == salt1, be32(at + 12) == salt2, number > 0 else { break }  // an older generation's leftovers
            let page = Array(b[(at + 24)..<(at + frameSize)])
            guard let plain = cipher.decrypt(page, number: number) else {
                damaged = (at - 32) / frameSize + 1
                break
            }
            pending[number] = plain
            frames += 1
            if commit != 0 {
                committed.merge(pending) { $1 }
                pending = [:]
                appliedFrames = frames
                pagesAfter = commit
            }
            at += frameSize
        }
        do {
            for (number, plain) in committed.sorted(by: { $0.key < $1.key }) {
                try out.seek(toOffset: UInt64((number - 1) * pageSize))
                try out.write(contentsOf: plain)
            }
            // A commit frame holds the database's size in pages after it: a shrink (vacuum) truncates.
            if pagesAfter > 0 { try out.truncate(atOffset: UInt64(pagesAfter) * UInt64(pageSize)) }
        } catch {
            throw ImportError(path: displayPath, reason: "cannot be applied: \(error)")
        }
        return (appliedFrames, damaged)
    }
    #endif
}

/// A Signal Desktop attachment file, "version 2": IV (16) | AES-256-CBC with PKCS#7 | HMAC-SHA256
/// (32) over IV and ciphertext; the 64-byte `localKey` is the AES key then the MAC key; the
/// plaintext is cut to the attachment's `size` (Signal pads it).
enum SignalAttachmentCipher {
    static func decrypt(_ file: [UInt8], localKey: [UInt8], size: Int?) -> [UInt8]? {
        #if Decrypt
        guard localKey.count == 64, file.count >= 16 + 16 + 32, (file.count - 48) % 16 == 0 else { return nil }
        let macKey = SymmetricKey(data: localKey[32..<64])
        let body = file[0..<(file.count - 32)]
        guard Array(HMAC<SHA256>.authenticationCode(for: body, using: macKey)) == Array(file.suffix(32)) else { return nil }
        guard let iv = try? AES._CBC.IV(ivBytes: file[0..<16]),
            let plain = try? AES._CBC.decrypt(file[16..<(file.count - 32)], using: SymmetricKey(data: localKey[0..<32]), iv: iv)
        else { return nil }
        let bytes = [UInt8](plain)
        if let size, size > 0, size <= bytes.count { return Array(bytes.prefix(size)) }
        return bytes
        #else
        return nil
        #endif
    }
}
