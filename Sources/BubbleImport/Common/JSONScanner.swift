import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pull reader over a JSON file, read `chunkSize` bytes at a time: it walks objects and arrays
/// without building them, skips values it is not asked for (checking their syntax), and hands out
/// the bytes of one value at a time (`capture`), up to a size limit. Memory: one chunk plus the
/// largest value captured, whatever the file's size.
///
///     let scanner = try JSONScanner(path: path, displayPath: path)
///     try scanner.object { key in
///         if key == "messages" {
///             try scanner.array { i in let bytes = try scanner.capture(limit: 1 << 20); … }
///         } else {
///             try scanner.skipValue()
///         }
///     }
///
/// Errors carry the byte offset and the JSON path of the value being read (`Failure`); the line
/// and column are worked out only when one is reported (`position(ofOffset:)`).
final class JSONScanner {
    struct Failure: Error, CustomStringConvertible {
        enum Kind: Equatable {
            /// The file stops inside a value; `expected` says what should have come there.
            case truncated(expected: String)
            /// A byte that cannot come here; `expected` says what could.
            case syntax(expected: String)
            /// A value of the wrong kind ("an array", "an object", "a string").
            case wrongType(expected: String)
            /// A captured value longer than its limit.
            case oversize(limit: Int)
            /// Arrays and objects nested deeper than `maxDepth`.
            case tooDeep
            /// Bytes that are not UTF-8 (a key or a small value).
            case notUTF8
            /// The file could not be read.
            case unreadable(String)
        }
        var kind: Kind
        /// Byte offset in the file where the problem is.
        var offset: Int64
        /// "chats.list[2].messages[17]"; "(top level)" when empty.
        var path: String

        var description: String { "\(path) at byte \(offset): \(kind)" }
    }

    /// One step of the path to the value being read.
    enum PathComponent {
        case key(String)
        case index(Int)
    }

    let displayPath: String
    static let chunkSize = 256 << 10
    static let maxDepth = 512

    private let fd: Int32
    private var buf: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Valid bytes are buf[0..<end]; the next one to read is buf[pos].
    private var pos = 0
    private var end = 0
    /// File offset of buf[0].
    private var base: Int64 = 0
    private var eof = false
    /// Start of the value being captured (buf index), kept across refills; nil when not capturing.
    private var captureStart: Int?
    private var captureLimit = Int.max
    private(set) var path: [PathComponent] = []

    init(path: String, displayPath: String) throws(ImportError) {
        fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw ImportError(path: displayPath, reason: "cannot be opened for reading: \(String(cString: strerror(errno)))")
        }
        self.displayPath = displayPath
        capacity = Self.chunkSize * 2
        buf = .allocate(capacity: capacity)
    }

    deinit {
        buf.deallocate()
        close(fd)
    }

    /// Byte offset of the next byte to be read.
    var offset: Int64 { base + Int64(pos) }

    /// "chats.list[2].messages[17]", or "(top level)".
    var pathString: String { Self.string(path) }

    static func string(_ path: [PathComponent]) -> String {
        var out = ""
        for c in path {
            switch c {
            case .key(let k): out += (out.isEmpty ? "" : ".") + k
            case .index(let i): out += "[\(i)]"
            }
        }
        return out.isEmpty ? "(top level)" : out
    }

    func failure(_ kind: Failure.Kind, at offset: Int64? = nil) -> Failure {
        Failure(kind: kind, offset: offset ?? self.offset, path: pathString)
    }

    /// Goes back to `offset` (a value's first byte, as `offset` was there) and reads on from it, with
    /// `path` as the path of that value.
    func seek(to offset: Int64, path: [PathComponent]) throws(Failure) {
        guard lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw failure(.unreadable(String(cString: strerror(errno))))
        }
        base = offset
        pos = 0
        end = 0
        eof = false
        captureStart = nil
        self.path = path
    }

    // MARK: Bytes

    /// Reads the next chunk. Bytes before `pos` (or before the value being captured) are dropped.
    private func refill() throws(Failure) {
        let keep = captureStart ?? pos
        if keep > 0 {
            let live = end - keep
            if live > 0 { memmove(buf, buf + keep, live) }
            base += Int64(keep)
            pos -= keep
            end = live
            if captureStart != nil { captureStart = 0 }
        }
        if let start = captureStart, end - start > captureLimit {
            throw failure(.oversize(limit: captureLimit), at: base + Int64(start))
        }
        if capacity - end < Self.chunkSize {
            let grown = max(capacity * 2, end + Self.chunkSize)
            let new = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            new.update(from: buf, count: end)
            buf.deallocate()
            buf = new
            capacity = grown
        }
        var got: Int
        repeat {
            got = read(fd, buf + end, Self.chunkSize)
        } while got < 0 && errno == EINTR
        if got < 0 { throw failure(.unreadable(String(cString: strerror(errno)))) }
        if got == 0 { eof = true }
        end += got
    }

    /// The next byte, not consumed; nil at the end of the file.
    @inline(__always)
    private func peek() throws(Failure) -> UInt8? {
        if pos == end {
            if eof { return nil }
            try refill()
            if pos == end { return nil }
        }
        return buf[pos]
    }

    /// The next byte that is not white space, not consumed; nil at the end of the file.
    @inline(__always)
    func peekNonSpace() throws(Failure) -> UInt8? {
        while true {
            if pos == end {
                if eof { return nil }
                try refill()
                if pos == end { return nil }
            }
            let c = buf[pos]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { pos += 1 } else { return c }
        }
    }

    /// The next byte that is not white space; the file must not end here.
    @inline(__always)
    private func nonSpace(expected: String) throws(Failure) -> UInt8 {
        guard let c = try peekNonSpace() else { throw failure(.truncated(expected: expected)) }
        return c
    }

    private func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        let c = try nonSpace(expected: what)
        guard c == byte else { throw failure(.syntax(expected: what)) }
        pos += 1
    }

    /// Whether the rest of the file is only white space.
    func atEndOfDocument() throws(Failure) -> Bool { try peekNonSpace() == nil }

    // MARK: Skipping

    /// Skips a string whose opening quote is at `pos`, checking escapes and control characters.
    private func skipString() throws(Failure) {
        pos += 1
        while true {
            if pos == end {
                if eof { throw failure(.truncated(expected: "the rest of a string and its closing quote")) }
                try refill()
                continue
            }
            // Fast run over plain bytes.
            var p = pos
            while p < end {
                let c = buf[p]
                if c == 0x22 || c == 0x5C || c < 0x20 { break }
                p += 1
            }
            pos = p
            if p == end { continue }
            let c = buf[p]
            if c == 0x22 { pos += 1; return }
            if c < 0x20 { throw failure(.syntax(expected: "a control character escaped (\\n, \\t, \\u…) inside a string")) }
            // A backslash: one escaped character.
            pos += 1
            guard let e = try peek() else { throw failure(.truncated(expected: "an escaped character after \\")) }
            switch e {
            case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74: pos += 1
            case 0x75:
                pos += 1
                for _ in 0..<4 {
                    guard let h = try peek() else { throw failure(.truncated(expected: "four hex digits after \\u")) }
                    guard (0x30...0x39).contains(h) || (0x41...0x46).contains(h) || (0x61...0x66).contains(h) else {
                        throw failure(.syntax(expected: "four hex digits after \\u"))
                    }
                    pos += 1
                }
            default:
                throw failure(.syntax(expected: "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)"))
            }
        }
    }

    private func skipLiteral(_ word: StaticString) throws(Failure) {
        let start = offset
        for i in 0..<word.utf8CodeUnitCount {
            guard let c = try peek() else { throw failure(.truncated(expected: "the rest of \(word)")) }
            guard c == word.utf8Start[i] else { throw failure(.syntax(expected: "a value"), at: start) }
            pos += 1
        }
    }

    private func skipNumber() throws(Failure) {
        let start = offset
        var digits = 0
        while let c = try peek() {
            switch c {
            case 0x30...0x39: digits += 1
            case 0x2D, 0x2B, 0x2E, 0x45, 0x65: break
            default:
                guard digits > 0 else { throw failure(.syntax(expected: "a value"), at: start) }
                return
            }
            pos += 1
        }
        guard digits > 0 else { throw failure(.truncated(expected: "a number's digits")) }
    }

    /// Skips one value of any kind (nested ones too, without recursion), checking its syntax.
    func skipValue() throws(Failure) {
        // Open containers, innermost last: true for an object.
        var stack: [Bool] = []
        while true {
            // A value.
            let c = try nonSpace(expected: "a value")
            var closed = false
            switch c {
            case 0x7B:  // {
                guard stack.count < Self.maxDepth else { throw failure(.tooDeep) }
                pos += 1
                if try nonSpace(expected: "a key or '}'") == 0x7D {
                    pos += 1
                    closed = true
                } else {
                    stack.append(true)
                    try key()
                }
            case 0x5B:  // [
                guard stack.count < Self.maxDepth else { throw failure(.tooDeep) }
                pos += 1
                if try nonSpace(expected: "a value or ']'") == 0x5D {
                    pos += 1
                    closed = true
                } else {
                    stack.append(false)
                }
            case 0x22: try skipString(); closed = true
            case 0x74: try skipLiteral("true"); closed = true
            case 0x66: try skipLiteral("false"); closed = true
            case 0x6E: try skipLiteral("null"); closed = true
            case 0x2D, 0x30...0x39: try skipNumber(); closed = true
            default: throw failure(.syntax(expected: "a value"))
            }
            guard closed else { continue }
            // After a value: a comma (then the next key or element) or the end of containers.
            while let isObject = stack.last {
                let n = try nonSpace(expected: isObject ? "',' or '}'" : "',' or ']'")
                if n == 0x2C {
                    pos += 1
                    if isObject { try key() }
                    break
                }
                guard n == (isObject ? 0x7D : 0x5D) else { throw failure(.syntax(expected: isObject ? "',' or '}'" : "',' or ']'")) }
                pos += 1
                stack.removeLast()
            }
            if stack.isEmpty { return }
        }
    }

    /// Skips `"key" :`.
    private func key() throws(Failure) {
        guard try nonSpace(expected: "a key") == 0x22 else { throw failure(.syntax(expected: "a key in quotes")) }
        try skipString()
        try expect(0x3A, ":")
    }

    // MARK: Walking

    /// Calls `body` with each key of the object that starts here; `body` must read or skip its value.
    func object(_ body: (String) throws -> Void) throws {
        let c = try nonSpace(expected: "an object")
        guard c == 0x7B else {
            throw c == 0x22 || c == 0x5B || c == 0x74 || c == 0x66 || c == 0x6E || c == 0x2D || (0x30...0x39).contains(c)
                ? failure(.wrongType(expected: "an object")) : failure(.syntax(expected: "a value"))
        }
        pos += 1
        if try nonSpace(expected: "a key or '}'") == 0x7D { pos += 1; return }
        while true {
            guard try nonSpace(expected: "a key") == 0x22 else { throw failure(.syntax(expected: "a key in quotes")) }
            let name = try readKey()
            try expect(0x3A, ":")
            path.append(.key(name))
            try body(name)
            path.removeLast()
            let n = try nonSpace(expected: "',' or '}'")
            pos += 1
            if n == 0x7D { return }
            guard n == 0x2C else { pos -= 1; throw failure(.syntax(expected: "',' or '}'")) }
        }
    }

    /// Calls `body` with the index of each element of the array that starts here; `body` must read
    /// or skip the element.
    func array(_ body: (Int) throws -> Void) throws {
        let c = try nonSpace(expected: "an array")
        guard c == 0x5B else {
            throw c == 0x22 || c == 0x7B || c == 0x74 || c == 0x66 || c == 0x6E || c == 0x2D || (0x30...0x39).contains(c)
                ? failure(.wrongType(expected: "an array")) : failure(.syntax(expected: "a value"))
        }
        pos += 1
        if try nonSpace(expected: "a value or ']'") == 0x5D { pos += 1; return }
        var i = 0
        path.append(.index(0))
        while true {
            path[path.count - 1] = .index(i)
            try body(i)
            let n = try nonSpace(expected: "',' or ']'")
            pos += 1
            if n == 0x5D { break }
            guard n == 0x2C else { pos -= 1; throw failure(.syntax(expected: "',' or ']'")) }
            i += 1
        }
        path.removeLast()
    }

    /// A key (or any string) starting here, unescaped.
    private func readKey() throws(Failure) -> String {
        let bytes = try capture(limit: 1 << 20)
        if !bytes.contains(0x5C), let s = String(validating: bytes.dropFirst().dropLast(), as: UTF8.self) { return s }
        guard let s = try? JSONDecoder().decode(String.self, from: Data(bytes)) else {
            throw failure(.notUTF8)
        }
        return s
    }

    /// The bytes of the value that starts here (after white space), at most `limit` of them; the
    /// value is checked and consumed. A longer value is an error at its first byte.
    func capture(limit: Int) throws(Failure) -> [UInt8] {
        _ = try nonSpace(expected: "a value")
        let startOffset = offset
        captureStart = pos
        captureLimit = limit
        defer { captureStart = nil; captureLimit = .max }
        try skipValue()
        let start = captureStart!
        guard pos - start <= limit else { throw failure(.oversize(limit: limit), at: startOffset) }
        return Array(UnsafeBufferPointer(start: buf + start, count: pos - start))
    }

    /// Like `capture`, but hands the bytes and the file offset of the first to `body` without
    /// copying them (valid only inside it).
    func withCaptured<T>(limit: Int, _ body: (UnsafeBufferPointer<UInt8>, Int64) throws -> T) throws -> T {
        _ = try nonSpace(expected: "a value")
        let startOffset = offset
        captureStart = pos
        captureLimit = limit
        do {
            try skipValue()
        } catch {
            captureStart = nil
            captureLimit = .max
            throw error
        }
        let start = captureStart!
        captureStart = nil
        captureLimit = .max
        guard pos - start <= limit else { throw failure(.oversize(limit: limit), at: startOffset) }
        return try body(UnsafeBufferPointer(start: buf + start, count: pos - start), startOffset)
    }

    // MARK: Positions

    /// "line L, column C" of a byte offset in the file (columns count characters), read again from
    /// the start: only done when an error is reported.
    func position(ofOffset target: Int64) -> String {
        guard lseek(fd, 0, SEEK_SET) == 0 else { return "byte \(target)" }
        var line = 1, column = 1
        var seen: Int64 = 0
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.chunkSize)
        defer { chunk.deallocate() }
        while seen < target {
            let got = read(fd, chunk, Int(min(Int64(Self.chunkSize), target - seen)))
            if got <= 0 { break }
            for i in 0..<got {
                let b = chunk[i]
                if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
            }
            seen += Int64(got)
        }
        return "line \(line), column \(column)"
    }
}
