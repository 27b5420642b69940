import BubbleCore
import Foundation

/// Reads one JSON value — bytes `JSONScanner` has already checked to be well-formed JSON — field
/// by field into the caller's own types: keys compared as bytes, strings made only for the fields
/// read, nothing kept of the rest. Each app's element decoder (a Telegram message, a Messenger
/// message, a Discord message) is an extension with its schema; a value of the wrong shape is a
/// `Failure` naming its path below the element.
struct JSONElementReader {
    struct Failure: Error {
        enum Kind { case wrongType(expected: String), notUTF8 }
        var kind: Kind
        /// Below the element: ["reactions", 0, "count"].
        var path: [JSONScanner.PathComponent]
        /// Offset of the value in the element's bytes.
        var offset: Int
    }

    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    /// Where the value being read is; keys as byte ranges, made into strings only for a failure.
    enum Step { case key(Range<Int>), escapedKey(String), index(Int) }
    var steps: [Step] = []
    var path: [JSONScanner.PathComponent] {
        steps.map {
            switch $0 {
            case .key(let r): .key(String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self))
            case .escapedKey(let k): .key(k)
            case .index(let n): .index(n)
            }
        }
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

    // MARK: Values

    /// A key's bytes, compared with string literals without making a String (a key with escapes,
    /// which the apps never write, is kept decoded).
    struct Key: ExpressibleByStringLiteral, Equatable {
        var bytes: UnsafeBufferPointer<UInt8>
        var decoded: String?
        init(stringLiteral value: StaticString) {
            bytes = UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount)
        }
        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }
        init(decoded: String) { bytes = UnsafeBufferPointer(start: nil, count: 0); self.decoded = decoded }
        static func == (a: Key, b: Key) -> Bool {
            if let d = a.decoded ?? b.decoded {
                let other = a.decoded == nil ? a : b
                return d.utf8.elementsEqual(other.bytes)
            }
            // memcmp, not the generic elementsEqual (unspecialised across the switch: metadata
            // look-ups at every key).
            guard a.bytes.count == b.bytes.count else { return false }
            guard let x = a.bytes.baseAddress, let y = b.bytes.baseAddress else { return a.bytes.count == 0 }
            return memcmp(x, y, a.bytes.count) == 0
        }
        static func ~= (pattern: Key, value: Key) -> Bool { pattern == value }
    }

    var peek: UInt8 { i < b.count ? b[i] : 0 }
    var peekAfterSpace: UInt8 {
        mutating get { space(); return peek }
    }

    mutating func space() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    func wrongType(_ expected: String) -> Failure { Failure(kind: .wrongType(expected: expected), path: path, offset: i) }

    /// An object's members, each handed to `member` with the decoder at its value (which it
    /// must read or skip).
    mutating func object(_ member: (inout JSONElementReader, Key) throws(Failure) -> Void) throws(Failure) {
        space()
        guard peek == UInt8(ascii: "{") else { throw wrongType("an object") }
        i += 1
        while true {
            space()
            if peek == UInt8(ascii: "}") { i += 1; return }
            if peek == UInt8(ascii: ",") { i += 1; space() }
            // Keys are plain in the apps' exports; one with escapes is read as a string.
            let keyStart = i + 1
            var k = keyStart
            while k < b.count, b[k] != UInt8(ascii: "\""), b[k] != UInt8(ascii: "\\") { k += 1 }
            let key: Key
            if k < b.count, b[k] == UInt8(ascii: "\"") {
                key = Key(UnsafeBufferPointer(rebasing: b[keyStart..<k]))
                steps.append(.key(keyStart..<k))
                i = k + 1
            } else {
                let text = try string()
                key = Key(decoded: text)
                steps.append(.escapedKey(text))
            }
            space()
            i += 1  // ':'
            try member(&self, key)
            steps.removeLast()
        }
    }

    mutating func optionalObject(_ member: (inout JSONElementReader, Key) throws(Failure) -> Void) throws(Failure) {
        if peekAfterSpace == UInt8(ascii: "n") { skip(); return }
        try object(member)
    }

    mutating func optionalArray<T>(_ element: (inout JSONElementReader) throws(Failure) -> T) throws(Failure) -> [T]? {
        space()
        if peek == UInt8(ascii: "n") { skip(); return nil }
        guard peek == UInt8(ascii: "[") else { throw wrongType("an array") }
        i += 1
        var out: [T] = []
        while true {
            space()
            if peek == UInt8(ascii: "]") { i += 1; return out }
            if peek == UInt8(ascii: ",") { i += 1; space() }
            steps.append(.index(out.count))
            out.append(try element(&self))
            steps.removeLast()
        }
    }

    mutating func optionalString() throws(Failure) -> String? {
        space()
        if peek == UInt8(ascii: "n") { skip(); return nil }
        guard peek == UInt8(ascii: "\"") else { throw wrongType("a string") }
        return try string()
    }

    /// true, false or null.
    mutating func optionalBool() throws(Failure) -> Bool? {
        space()
        switch peek {
        case UInt8(ascii: "n"): skip(); return nil
        case UInt8(ascii: "t"): skip(); return true
        case UInt8(ascii: "f"): skip(); return false
        default: throw wrongType("true or false")
        }
    }

    /// A string or a whole number, as a string (ids that exports write either way).
    mutating func flexible() throws(Failure) -> String? {
        space()
        if peek == UInt8(ascii: "n") { skip(); return nil }
        if peek == UInt8(ascii: "\"") { return try string() }
        guard let n = try optionalNumber(), let whole = Int64(exactly: n) else { throw wrongType("a number") }
        return String(whole)
    }

    mutating func optionalNumber() throws(Failure) -> Double? {
        space()
        if peek == UInt8(ascii: "n") { skip(); return nil }
        let start = i
        // Whole numbers (almost every one) without Foundation.
        var negative = false, value: Int64 = 0, digits = 0, plain = true
        if peek == UInt8(ascii: "-") { negative = true; i += 1 }
        while i < b.count {
            let c = b[i]
            if c >= 0x30 && c <= 0x39 {
                if digits < 18 { value = value * 10 + Int64(c - 0x30) } else { plain = false }
                digits += 1
            } else if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") || c == UInt8(ascii: "+")
                || c == UInt8(ascii: "-")
            {
                plain = false
            } else {
                break
            }
            i += 1
        }
        guard digits > 0 else { i = start; throw wrongType("a number") }
        if plain { return Double(negative ? -value : value) }
        return Double(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self))
    }

    /// A string whose opening quote is at `i` (after spaces): escapes decoded, UTF-8 checked.
    mutating func string() throws(Failure) -> String {
        space()
        guard peek == UInt8(ascii: "\"") else { throw wrongType("a string") }
        let start = i + 1
        if let plain = plainString() {
            let raw = UnsafeBufferPointer(rebasing: b[plain])
            guard let s = String(validating: raw, as: UTF8.self) else { throw invalidUTF8(in: raw, from: start) }
            return s
        }
        // With escapes: bytes copied, escapes replaced, then checked as UTF-8.
        var k = start
        while k < b.count, b[k] != UInt8(ascii: "\\") { k += 1 }
        var out: [UInt8] = Array(b[start..<k])
        i = k
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            i += 1
            let e = peek
            i += 1
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                var unit = hex4()
                if unit >= 0xD800, unit < 0xDC00, peek == UInt8(ascii: "\\"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "u") {
                    i += 2
                    let low = hex4()
                    if low >= 0xDC00, low < 0xE000 {
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        out.append(contentsOf: Array("\u{FFFD}".utf8))
                        unit = low
                    }
                }
                let scalar = Unicode.Scalar(unit) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default: out.append(e)  // \" \\ \/
            }
        }
        return try out.withUnsafeBufferPointer { (raw) throws(Failure) -> String in
            guard let s = String(validating: raw, as: UTF8.self) else { throw invalidUTF8(in: raw, from: start) }
            return s
        }
    }

    mutating func hex4() -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 where i < b.count {
            let c = b[i] | 0x20
            v = v << 4 | UInt32(c >= 0x61 ? c - 0x61 + 10 : c - 0x30)
            i += 1
        }
        return v
    }

    func invalidUTF8(in raw: UnsafeBufferPointer<UInt8>, from start: Int) -> Failure {
        let bad = TelegramImporter.firstInvalidUTF8(raw) ?? 0
        return Failure(kind: .notUTF8, path: path, offset: start + bad)
    }

    /// A string's bytes handed to `body` (escapes decoded first when it has any; the bytes are
    /// valid only inside `body`), or nil for null: no String made for a value only looked at.
    mutating func withStringBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) throws(Failure) -> T? {
        space()
        if peek == UInt8(ascii: "n") { skip(); return nil }
        guard peek == UInt8(ascii: "\"") else { throw wrongType("a string") }
        if let plain = plainString() { return body(UnsafeBufferPointer(rebasing: b[plain])) }
        var decoded = try string()
        return decoded.withUTF8 { body($0) }
    }

    /// The string whose opening quote is at `i`, when it has no escapes: its bytes' range, and
    /// `i` moved past it; nil (and `i` left) when it has escapes.
    private mutating func plainString() -> Range<Int>? {
        let start = i + 1
        var k = start
        while k < b.count, b[k] != UInt8(ascii: "\""), b[k] != UInt8(ascii: "\\") { k += 1 }
        guard k < b.count, b[k] == UInt8(ascii: "\"") else { return nil }
        i = k + 1
        return start..<k
    }

    /// Moves `i` past the string whose opening quote is at `i` (escapes stepped over).
    private mutating func skipString() {
        i += 1
        while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
        i += 1
    }

    /// Skips the rest of the object being read: `object`'s loop then finds its end.
    mutating func skipRestOfObject() {
        var depth = 0
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                skipString()
                continue
            }
            if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { depth += 1 }
            if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                if depth == 0 { return }
                depth -= 1
            }
            i += 1
        }
    }

    /// Skips one value (the scanner checked the syntax: only brackets and strings matter).
    mutating func skip() {
        space()
        var depth = 0
        repeat {
            guard i < b.count else { return }
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                skipString()
            } else if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                depth += 1; i += 1
            } else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                if depth == 0 { return }
                depth -= 1; i += 1
            } else if c == UInt8(ascii: ",") {
                if depth == 0 { return }
                i += 1
            } else {
                i += 1
            }
        } while depth > 0 || (i < b.count && b[i] != UInt8(ascii: ",") && b[i] != UInt8(ascii: "}") && b[i] != UInt8(ascii: "]"))
    }
}
