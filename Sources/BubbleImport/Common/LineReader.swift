import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a text file one line at a time, in 1 MiB chunks: memory holds one chunk plus the line
/// being read, whatever the file's size. A line longer than `maxLineBytes` is an error naming it
/// (it is never read whole). UTF-8 with or without BOM; UTF-16 with a BOM is turned into UTF-8
/// on the fly. Lines come without their "\n" or "\r\n".
final class LineReader {
    enum Encoding { case utf8, utf16LittleEndian, utf16BigEndian }

    let displayPath: String
    let maxLineBytes: Int
    private(set) var encoding: Encoding = .utf8
    /// Number of the line `nextLine` returned last (1-based).
    private(set) var lineNumber = 0
    /// The last line read ended at the end of the file, without a line break (cut short?).
    private(set) var lastLineUnterminated = false
    /// UTF-16 code units that were not valid (lone surrogates, odd trailing byte), now U+FFFD.
    private(set) var invalidUTF16Units = 0

    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var position = 0
    private var scanFrom = 0
    private var atEnd = false
    private var started = false
    private var oddByte: UInt8?
    private var pendingHigh: UInt16?
    private static let chunkSize = 1 << 20

    init(path: String, displayPath: String, maxLineBytes: Int) throws(ImportError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ImportError(path: displayPath, reason: "cannot be opened for reading")
        }
        self.handle = handle
        self.displayPath = displayPath
        self.maxLineBytes = maxLineBytes
    }

    deinit { try? handle.close() }

    /// The next line's bytes, or nil at the end of the file.
    func nextLine() throws(ImportError) -> [UInt8]? {
        while true {
            if let newline = find(0x0A, from: scanFrom) {
                var end = newline
                if end > position && buffer[end - 1] == 0x0D { end -= 1 }
                lastLineUnterminated = false
                return try take(position..<end, next: newline + 1)
            }
            scanFrom = buffer.count
            if buffer.count - position > maxLineBytes { throw lineTooLong() }
            if atEnd {
                guard position < buffer.count else { return nil }
                var end = buffer.count
                if buffer[end - 1] == 0x0D { end -= 1 }
                lastLineUnterminated = true
                return try take(position..<end, next: buffer.count)
            }
            try refill()
        }
    }

    private func take(_ range: Range<Int>, next: Int) throws(ImportError) -> [UInt8] {
        if range.count > maxLineBytes { throw lineTooLong() }
        let line = Array(buffer[range])
        position = next
        scanFrom = next
        lineNumber += 1
        return line
    }

    private func lineTooLong() -> ImportError {
        ImportError(
            path: displayPath, location: "line \(lineNumber + 1)",
            reason: "is longer than \(maxLineBytes >> 20) MB; expected a chat line "
                + "(is this a binary file, or a text without line breaks?)")
    }

    private func find(_ byte: UInt8, from start: Int) -> Int? {
        guard start < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { all -> Int? in
            guard let base = all.baseAddress,
                let hit = memchr(base + start, Int32(byte), all.count - start)
            else { return nil }
            return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
    }

    private func refill() throws(ImportError) {
        if position > 0 {
            buffer.removeSubrange(0..<position)
            scanFrom -= position
            position = 0
        }
        let chunk: Data
        do {
            chunk = try handle.read(upToCount: Self.chunkSize) ?? Data()
        } catch {
            throw ImportError(
                path: displayPath, location: "line \(lineNumber + 1)",
                reason: "cannot be read: \(error.localizedDescription)")
        }
        var bytes = chunk[...]
        if !started {
            started = true
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
                bytes = bytes.dropFirst(3)
            } else if bytes.starts(with: [0xFF, 0xFE]) {
                encoding = .utf16LittleEndian
                bytes = bytes.dropFirst(2)
            } else if bytes.starts(with: [0xFE, 0xFF]) {
                encoding = .utf16BigEndian
                bytes = bytes.dropFirst(2)
            }
        }
        if chunk.isEmpty {
            atEnd = true
            if encoding != .utf8 { finishUTF16() }
            return
        }
        switch encoding {
        case .utf8: buffer.append(contentsOf: bytes)
        case .utf16LittleEndian, .utf16BigEndian: appendUTF16(bytes)
        }
    }

    // MARK: UTF-16 → UTF-8, carrying an odd byte and a high surrogate across chunks.

    private func appendUTF16(_ bytes: Data.SubSequence) {
        var i = bytes.startIndex
        let littleEndian = encoding == .utf16LittleEndian
        while i < bytes.endIndex {
            let first: UInt8
            if let odd = oddByte {
                first = odd
                oddByte = nil
            } else {
                first = bytes[i]
                i += 1
                if i == bytes.endIndex { oddByte = first; break }
            }
            let second = bytes[i]
            i += 1
            let unit = littleEndian ? UInt16(first) | UInt16(second) << 8 : UInt16(first) << 8 | UInt16(second)
            appendUnit(unit)
        }
    }

    private func appendUnit(_ unit: UInt16) {
        if let high = pendingHigh {
            pendingHigh = nil
            if (0xDC00...0xDFFF).contains(unit) {
                let value = 0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(unit) - 0xDC00)
                appendScalar(Unicode.Scalar(value)!)
                return
            }
            invalidUTF16Units += 1
            appendScalar("\u{FFFD}")
        }
        switch unit {
        case 0xD800...0xDBFF: pendingHigh = unit
        case 0xDC00...0xDFFF:
            invalidUTF16Units += 1
            appendScalar("\u{FFFD}")
        default: appendScalar(Unicode.Scalar(unit)!)
        }
    }

    private func finishUTF16() {
        if pendingHigh != nil || oddByte != nil {
            invalidUTF16Units += 1
            appendScalar("\u{FFFD}")
            pendingHigh = nil
            oddByte = nil
        }
    }

    private func appendScalar(_ s: Unicode.Scalar) {
        UTF8.encode(s) { buffer.append($0) }
    }
}

/// Byte-level text decoding with a visible fallback.
enum TextDecoding {
    /// Whether `bytes` are valid UTF-8, without making a String when they are all ASCII.
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        let ascii = bytes.withUnsafeBytes { raw -> Bool in
            var i = 0
            let n = raw.count
            while i + 8 <= n {
                if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
                i += 8
            }
            while i < n {
                if raw[i] >= 0x80 { return false }
                i += 1
            }
            return true
        }
        return ascii || String(validating: bytes, as: UTF8.self) != nil
    }

    /// UTF-8 when the bytes are valid UTF-8; otherwise Windows-1252 (Latin-1 plus the “smart”
    /// punctuation in 0x80–0x9F), which maps every byte to a character, so nothing is lost silently:
    /// the caller warns.
    static func decode(_ bytes: some Collection<UInt8>) -> (String, isUTF8: Bool) {
        if let s = String(validating: bytes, as: UTF8.self) { return (s, true) }
        var scalars = String.UnicodeScalarView()
        for b in bytes {
            if (0x80...0x9F).contains(b), let mapped = windows1252[Int(b - 0x80)] {
                scalars.append(mapped)
            } else {
                scalars.append(Unicode.Scalar(b))
            }
        }
        return (String(scalars), false)
    }

    private static let windows1252: [Unicode.Scalar?] = [
        "\u{20AC}", nil, "\u{201A}", "\u{0192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}",
        "\u{02C6}", "\u{2030}", "\u{0160}", "\u{2039}", "\u{0152}", nil, "\u{017D}", nil,
        nil, "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}",
        "\u{02DC}", "\u{2122}", "\u{0161}", "\u{203A}", "\u{0153}", nil, "\u{017E}", "\u{0178}"
    ]
}
