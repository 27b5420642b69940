import CZlibInflate
import Foundation
#if Decrypt
import Crypto
import _CryptoExtras
#endif

/// The key a user gives for an encrypted input (`--key`, `--key-file`).
public enum DecryptionKey: Sendable, Equatable {
    /// As typed: 64 hex digits (a WhatsApp backup's key, Signal's database key), or for Signal
    /// Desktop the keyring's password that unseals its `encryptedKey`.
    case text(String)
    /// A file holding it: WhatsApp's `key` / `encrypted_backup.key`, or a text file with the hex
    /// digits (a pipe works: `--key-file <(…)`).
    case file(String)
}

/// What a key file or hex string holds, read for a WhatsApp backup.
enum WhatsAppKey {
    /// A crypt15 root key (64 hex digits, or `encrypted_backup.key`): the AES key is derived.
    case root([UInt8])
    /// A crypt14 `key` file's AES key (the last 32 bytes of its 131-byte array), used as it is.
    case direct([UInt8])
}

enum KeyMaterial {
    /// 64 hex digits (spaces and a leading "0x" allowed) as 32 bytes, or nil.
    static func bytes(hex text: String) -> [UInt8]? {
        var digits = text.lowercased().filter { !$0.isWhitespace }
        if digits.hasPrefix("0x") { digits.removeFirst(2) }
        if digits.hasPrefix("x'"), digits.hasSuffix("'") { digits = String(digits.dropFirst(2).dropLast()) }
        guard digits.count == 64 else { return nil }
        return decodeHex(digits)
    }

    /// Hex digits, two a byte, as bytes; nil for an odd count or a character that is no digit.
    static func decodeHex(_ digits: some StringProtocol) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var it = digits.makeIterator()
        while let a = it.next(), let b = it.next() {
            guard let v = UInt8(String([a, b]), radix: 16) else { return nil }
            out.append(v)
        }
        return out
    }

    #if Decrypt
    /// PBKDF2 (RFC 8018) with HMAC over `H`, one block: `length` ≤ `H`'s digest size. SQLCipher's
    /// page MAC key (SHA-512, 2 rounds) and Chromium's safe storage (SHA-1, 1 or 1003 rounds)
    /// ask for so few rounds that _CryptoExtras' PBKDF2 (which refuses them) cannot serve.
    static func pbkdf2<H: HashFunction>(_: H.Type, password: [UInt8], salt: [UInt8], rounds: Int, length: Int) -> [UInt8] {
        let k = SymmetricKey(data: password)
        var u = Array(HMAC<H>.authenticationCode(for: salt + [0, 0, 0, 1], using: k))
        var t = u
        for _ in 1..<max(rounds, 1) {
            u = Array(HMAC<H>.authenticationCode(for: u, using: k))
            for i in t.indices { t[i] ^= u[i] }
        }
        return Array(t.prefix(length))
    }
    #endif

    /// The byte array a Java-serialised `byte[]` holds (WhatsApp's key files): magic AC ED 00 05,
    /// TC_ARRAY, the class "[B", its serial number, then a 4-byte length and the bytes.
    static func javaByteArray(_ data: [UInt8]) -> [UInt8]? {
        guard data.count > 27, data.starts(with: [0xAC, 0xED, 0x00, 0x05, 0x75, 0x72, 0x00, 0x02, 0x5B, 0x42]) else { return nil }
        let n = Int(data[23]) << 24 | Int(data[24]) << 16 | Int(data[25]) << 8 | Int(data[26])
        guard n > 0, 27 + n <= data.count else { return nil }
        return Array(data[27..<(27 + n)])
    }

    /// A key file's bytes, read to its end (also a pipe: `--key-file <(secret-tool …)`).
    static func readKeyFile(_ path: String) throws(ImportError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() else {
            throw ImportError(path: path, reason: "cannot be read (the key file)")
        }
        try? handle.close()
        return [UInt8](data)
    }

    static func whatsApp(_ key: DecryptionKey) throws(ImportError) -> WhatsAppKey {
        switch key {
        case .text(let text):
            guard let bytes = bytes(hex: text) else {
                throw ImportError(path: "--key", reason: "expected the 64 hex digits of the end-to-end backup key (0-9, a-f); got \(text.count) characters")
            }
            return .root(bytes)
        case .file(let path):
            let raw = try readKeyFile(path)
            if let array = javaByteArray(raw) {
                if array.count == 32 { return .root(array) }
                if array.count == 131 { return .direct(Array(array.suffix(32))) }
                throw ImportError(
                    path: path, reason: "holds a \(array.count)-byte key; expected WhatsApp's 131-byte crypt14 `key` or 32-byte `encrypted_backup.key`")
            }
            if let bytes = bytes(hex: String(decoding: raw, as: UTF8.self)) { return .root(bytes) }
            throw ImportError(path: path, reason: "is not a WhatsApp key file (a Java-serialised byte array) nor 64 hex digits")
        }
    }
}

/// A WhatsApp for Android backup, `msgstore.db.crypt14` / `.crypt15`: one length byte N, an
/// optional 0x01, N bytes of a `BackupPrefix` protobuf (key type, the IV, app version, the
/// phone number's last two digits), AES-256-GCM ciphertext of the zlib-deflated database, the
/// 16-byte GCM tag, and an MD5 of everything before it.
enum WhatsAppBackup {
    struct Header: Equatable {
        /// Where the ciphertext starts.
        var dataOffset: Int
        var iv: [UInt8]
        /// crypt15 (an IV in field 3) or crypt14 (field 2).
        var crypt15: Bool
        var appVersion: String?
        var jidSuffix: String?
    }

    /// The header, when `head` starts like a backup (the protobuf must parse and hold a 16-byte IV).
    static func header(_ head: [UInt8]) -> Header? {
        guard head.count > 2 else { return nil }
        let n = Int(head[0])
        for start in head[1] == 0x01 ? [2, 1] : [1] {
            guard start + n <= head.count, n > 0 else { continue }
            var header = Header(dataOffset: start + n, iv: [], crypt15: false)
            var ok = true, innerOK = true
            Protobuf.fields(head[start..<(start + n)], ok: &ok) { field, value in
                switch (field, value) {
                case (2, .bytes(let c14)): Protobuf.fields(c14, ok: &innerOK) { f, v in if f == 5, case .bytes(let iv) = v { header.iv = Array(iv) } }
                case (3, .bytes(let c15)):
                    header.crypt15 = true
                    Protobuf.fields(c15, ok: &innerOK) { f, v in if f == 1, case .bytes(let iv) = v { header.iv = Array(iv) } }
                case (4, .bytes(let info)):
                    Protobuf.fields(info, ok: &innerOK) { f, v in
                        if case .bytes(let s) = v, f == 1 { header.appVersion = String(decoding: s, as: UTF8.self) }
                        if case .bytes(let s) = v, f == 3 { header.jidSuffix = String(decoding: s, as: UTF8.self) }
                    }
                default: break
                }
            }
            ok = ok && innerOK
            if ok, header.iv.count == 16 { return header }
        }
        return nil
    }

    /// Decrypts `path` with `key` and writes the database it holds to `output` (0600).
    static func decrypt(path: String, displayPath: String, key: DecryptionKey?, to output: String) throws(ImportError) {
        #if Decrypt
        guard let key else {
            throw ImportError(
                path: displayPath,
                reason: "is an encrypted WhatsApp backup; give its key: --key with the 64-digit end-to-end backup key, "
                    + "or --key-file with the phone's `key` (crypt14) or `encrypted_backup.key` file")
        }
        let material = try KeyMaterial.whatsApp(key)
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else {
            throw ImportError(path: displayPath, reason: "cannot be read")
        }
        // The mapped file is read in place (no copy of it): only GCM's ciphertext and the
        // plaintext take memory, each about the file's size.
        guard let header = header(Array(data.prefix(300))) else {
            throw ImportError(path: displayPath, location: "header", reason: "is not a WhatsApp crypt14/crypt15 backup header")
        }
        let aesKey: [UInt8]
        switch material {
        case .root(let root):
            // k1 = HMAC-SHA256(key: 32 zero bytes, root); aes = HMAC-SHA256(key: k1, "backup encryption" + 0x01).
            let k1 = Array(HMAC<SHA256>.authenticationCode(for: root, using: SymmetricKey(data: [UInt8](repeating: 0, count: 32))))
            aesKey = Array(HMAC<SHA256>.authenticationCode(for: Array("backup encryption".utf8) + [0x01], using: SymmetricKey(data: k1)))
        case .direct(let k):
            aesKey = k
        }
        let count = data.count
        guard count >= header.dataOffset + 32 else {
            throw ImportError(path: displayPath, reason: "is truncated: \(count) bytes, too short for a backup")
        }
        // With the MD5 trailer (a database backup) the tag sits before it; without (other
        // backups), the last 16 bytes are the tag.
        let base = data.startIndex
        let md5OK = Array(Insecure.MD5.hash(data: data[base..<(base + count - 16)])) == Array(data[(base + count - 16)...])
        let tagEnd = base + (md5OK ? count - 16 : count)
        let plain: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: header.iv),
                ciphertext: data[(base + header.dataOffset)..<(tagEnd - 16)],
                tag: data[(tagEnd - 16)..<tagEnd])
            plain = try AES.GCM.open(box, using: SymmetricKey(data: aesKey))
        } catch {
            if md5OK {
                throw ImportError(path: displayPath, reason: "cannot be decrypted with this key (wrong key: the file itself is intact, its checksum matches)")
            }
            throw ImportError(path: displayPath, reason: "cannot be decrypted: wrong key, or the file is damaged or truncated (its checksum does not match)")
        }
        try writeDatabase(plain, displayPath: displayPath, to: output)
        #else
        throw ImportError(path: displayPath, reason: Decryption.unavailable)
        #endif
    }

    /// The decrypted payload: zlib-deflated (0x78…) or, rarely, the database itself.
    private static func writeDatabase(_ plain: Data, displayPath: String, to output: String) throws(ImportError) {
        let handle = try ScratchSpace.createPrivateFile(output)
        defer { try? handle.close() }
        let sqliteMagic = Array("SQLite format 3\u{0}".utf8)
        if plain.starts(with: sqliteMagic) {
            do { try handle.write(contentsOf: plain) } catch { throw ImportError(path: output, reason: "cannot be written: \(error)") }
            return
        }
        var first = true
        try Inflater.inflate(plain, displayPath: displayPath) { (chunk: UnsafeBufferPointer<UInt8>) throws(ImportError) in
            if first {
                first = false
                guard chunk.starts(with: sqliteMagic.prefix(min(16, chunk.count))) else {
                    throw ImportError(path: displayPath, reason: "decrypted, but what it holds is not an SQLite database")
                }
            }
            do { try handle.write(contentsOf: chunk) } catch { throw ImportError(path: output, reason: "cannot be written: \(error)") }
        }
    }
}

enum Decryption {
    static let unavailable =
        "is encrypted, and this bubbles was built without decryption (the `Decrypt` trait; `make demo` builds it lean): build it with `swift build` or `make serve`"
}

/// zlib's inflate over a buffer, in chunks handed to `consume`; a damaged or cut stream is an error.
enum Inflater {
    static func inflate(_ input: Data, displayPath: String, consume: (UnsafeBufferPointer<UInt8>) throws(ImportError) -> Void) throws(ImportError) {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ImportError(path: displayPath, reason: "cannot start zlib")
        }
        defer { inflateEnd(&stream) }
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 20)
        defer { out.deallocate() }
        var failure: ImportError?
        let status: Int32 = input.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int32 in
            stream.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: UInt8.self).baseAddress)
            stream.avail_in = UInt32(raw.count)
            while true {
                stream.next_out = out
                stream.avail_out = 1 << 20
                let r = CZlibInflate.inflate(&stream, Z_NO_FLUSH)
                let produced = (1 << 20) - Int(stream.avail_out)
                if produced > 0 {
                    do throws(ImportError) { try consume(UnsafeBufferPointer(start: out, count: produced)) } catch { failure = error; return Z_OK }
                }
                if r == Z_STREAM_END { return r }
                if r != Z_OK { return r }
                if stream.avail_in == 0 && produced == 0 { return Z_BUF_ERROR }
            }
        }
        if let failure { throw failure }
        guard status == Z_STREAM_END else {
            throw ImportError(
                path: displayPath,
                reason: status == Z_BUF_ERROR
                    ? "is truncated: the compressed database ends early"
                    : "is damaged: the compressed database cannot be inflated (zlib error \(status))")
        }
    }
}

/// The few protobuf wire types a backup header uses.
enum Protobuf {
    enum Value { case varint(UInt64), bytes(ArraySlice<UInt8>) }

    /// Calls `body` for each field of `data`; `ok` turns false on anything malformed.
    static func fields(_ data: ArraySlice<UInt8>, ok: inout Bool, _ body: (Int, Value) -> Void) {
        var i = data.startIndex
        func varint() -> UInt64? {
            var v: UInt64 = 0, shift: UInt64 = 0
            while i < data.endIndex, shift < 64 {
                let b = data[i]; i += 1
                v |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return v }
                shift += 7
            }
            return nil
        }
        while i < data.endIndex {
            guard let tag = varint(), tag >> 3 > 0 else { ok = false; return }
            switch tag & 7 {
            case 0:
                guard let v = varint() else { ok = false; return }
                body(Int(tag >> 3), .varint(v))
            case 2:
                guard let n = varint(), n <= UInt64(data.endIndex - i) else { ok = false; return }
                body(Int(tag >> 3), .bytes(data[i..<(i + Int(n))]))
                i += Int(n)
            case 5: i += 4
            case 1: i += 8
            default: ok = false; return
            }
            if i > data.endIndex { ok = false; return }
        }
    }
}
