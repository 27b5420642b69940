import BubbleCore

/// A reader of Apple's `typedstream` archives (NSArchiver), enough for the `attributedBody` of
/// Messages: objects with their class chains, shared strings (type descriptors, class names,
/// C strings), integers, floats and byte strings. Tags: 0x84 a new entry, 0x85 nil, 0x86 the end
/// of an object, 0x92 + n a reference to entry n (strings and objects count apart).
///
/// Any byte it cannot read makes `parse` return nil: the caller keeps the plain text.
struct TypedStream {
    enum Value {
        case int(Int64)
        case real(Double)
        case string(String)
        case object(Int)
        case null
    }
    enum Entry {
        case placeholder
        case classInfo(name: String)
        case object(className: String, groups: [[Value]])
        case cString(String)
    }

    private let b: [UInt8]
    private var i = 0
    /// Objects inside objects being read: a damaged or hostile archive nested deeper than any
    /// attributed string is refused, not followed until the stack runs out.
    private var depth = 0
    private static let maxDepth = 32
    private(set) var strings: [String] = []
    private(set) var objects: [Entry] = []
    private static let start: UInt8 = 0x84, empty: UInt8 = 0x85, end: UInt8 = 0x86, reference: UInt8 = 0x92

    private struct Bad: Error {}

    private init(_ bytes: [UInt8]) { b = bytes }

    /// The archive's entries and the index of its root object, or nil when it is not one.
    static func parse(_ bytes: [UInt8]) -> (stream: TypedStream, root: Int)? {
        var s = TypedStream(bytes)
        guard bytes.count > 16, bytes[0] == 0x04, bytes[1] == 0x0B, Array(bytes[2..<13]) == Array("streamtyped".utf8) else { return nil }
        s.i = 13
        do {
            _ = try s.integer()  // system version (1000)
            guard let type = try s.type() else { return nil }
            let values = try s.values(for: type)
            guard case .object(let root)? = values.first else { return nil }
            return (s, root)
        } catch {
            return nil
        }
    }

    // MARK: Reading

    private mutating func byte() throws -> UInt8 {
        guard i < b.count else { throw Bad() }
        defer { i += 1 }
        return b[i]
    }

    private mutating func integer() throws -> Int64 {
        let tag = try byte()
        switch tag {
        case 0x81:
            guard i + 2 <= b.count else { throw Bad() }
            defer { i += 2 }
            return Int64(Int16(bitPattern: UInt16(b[i]) | UInt16(b[i + 1]) << 8))
        case 0x82:
            guard i + 4 <= b.count else { throw Bad() }
            defer { i += 4 }
            return Int64(Int32(bitPattern: UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24))
        default:
            return Int64(Int8(bitPattern: tag))
        }
    }

    private mutating func real(double: Bool) throws -> Double {
        guard i < b.count else { throw Bad() }
        guard b[i] == 0x83 else { return Double(try integer()) }
        i += 1
        let n = double ? 8 : 4
        guard i + n <= b.count else { throw Bad() }
        var raw: UInt64 = 0
        for k in 0..<n { raw |= UInt64(b[i + k]) << (8 * UInt64(k)) }
        i += n
        return double ? Double(bitPattern: raw) : Double(Float(bitPattern: UInt32(raw)))
    }

    /// A length and that many bytes, as UTF-8.
    private mutating func rawString() throws -> String {
        let length = Int(try integer())
        guard length >= 0, i + length <= b.count, let s = String(validating: b[i..<(i + length)], as: UTF8.self) else { throw Bad() }
        i += length
        return s
    }

    /// A shared string: new (registered) or a reference.
    private mutating func sharedString() throws -> String {
        let tag = try byte()
        if tag == Self.start {
            let s = try rawString()
            strings.append(s)
            return s
        }
        let n = Int(tag) - Int(Self.reference)
        guard tag >= Self.reference, n < strings.count else { throw Bad() }
        return strings[n]
    }

    /// A type descriptor, or nil at an object's end.
    private mutating func type() throws -> String? {
        guard i < b.count else { throw Bad() }
        if b[i] == Self.end || b[i] == Self.empty { i += 1; return nil }
        return try sharedString()
    }

    /// The class chain of a new object: the first (most derived) class's name.
    private mutating func classChain() throws -> String? {
        var first: String?
        while true {
            let tag = try byte()
            if tag == Self.start {
                let name = try sharedString()
                _ = try integer()  // version
                objects.append(.classInfo(name: name))
                if first == nil { first = name }
            } else if tag == Self.empty {
                return first
            } else {
                let n = Int(tag) - Int(Self.reference)
                guard tag >= Self.reference, n < objects.count else { throw Bad() }
                if first == nil, case .classInfo(let name) = objects[n] { first = name }
                return first
            }
        }
    }

    private mutating func object() throws -> Value {
        let tag = try byte()
        if tag == Self.empty { return .null }
        if tag != Self.start {
            let n = Int(tag) - Int(Self.reference)
            guard tag >= Self.reference, n < objects.count else { throw Bad() }
            return .object(n)
        }
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw Bad() }
        let slot = objects.count
        objects.append(.placeholder)
        guard let name = try classChain() else { throw Bad() }
        var groups: [[Value]] = []
        while true {
            guard i < b.count else { throw Bad() }
            if b[i] == Self.end { i += 1; break }
            guard let type = try type() else { break }
            groups.append(try values(for: type))
        }
        objects[slot] = .object(className: name, groups: groups)
        return .object(slot)
    }

    /// One value per type character of a descriptor (structs flattened, arrays of chars as bytes).
    private mutating func values(for type: String) throws -> [Value] {
        var out: [Value] = []
        var chars = Array(type.utf8)[...]
        while let c = chars.popFirst() {
            switch c {
            case UInt8(ascii: "@"): out.append(try object())
            case UInt8(ascii: "+"): out.append(.string(try rawString()))
            case UInt8(ascii: "*"):
                let tag = try byte()
                if tag == Self.empty { out.append(.null); continue }
                if tag == Self.start {
                    let s = try sharedString()
                    objects.append(.cString(s))
                    out.append(.string(s))
                } else {
                    let n = Int(tag) - Int(Self.reference)
                    guard tag >= Self.reference, n < objects.count, case .cString(let s) = objects[n] else { throw Bad() }
                    out.append(.string(s))
                }
            case UInt8(ascii: ":"):
                if i < b.count, b[i] == Self.empty { i += 1; out.append(.null) } else { out.append(.string(try sharedString())) }
            case UInt8(ascii: "#"): out.append(try classChain().map { .string($0) } ?? .null)
            case UInt8(ascii: "f"): out.append(.real(try real(double: false)))
            case UInt8(ascii: "d"): out.append(.real(try real(double: true)))
            case UInt8(ascii: "c"), UInt8(ascii: "C"), UInt8(ascii: "s"), UInt8(ascii: "S"), UInt8(ascii: "i"), UInt8(ascii: "I"),
                UInt8(ascii: "l"), UInt8(ascii: "L"), UInt8(ascii: "q"), UInt8(ascii: "Q"), UInt8(ascii: "B"):
                out.append(.int(try integer()))
            case UInt8(ascii: "{"):
                // A struct: its members' types follow the name and "=".
                while let k = chars.first, k != UInt8(ascii: "=") { chars.removeFirst(); if k == UInt8(ascii: "}") { break } }
                if chars.first == UInt8(ascii: "=") { chars.removeFirst() }
            case UInt8(ascii: "}"): continue
            default: throw Bad()
            }
        }
        return out
    }

    // MARK: Foundation objects

    func entry(_ value: Value) -> Entry? {
        guard case .object(let n) = value, n < objects.count else { return nil }
        return objects[n]
    }

    /// The text of an NSString (or NSMutableString) value.
    func string(_ value: Value) -> String? {
        if case .string(let s) = value { return s }
        guard case .object(_, let groups)? = entry(value) else { return nil }
        for g in groups { for v in g { if case .string(let s) = v { return s } } }
        return nil
    }

    /// The first string anywhere inside a value (an NSURL's address).
    func firstString(_ value: Value, depth: Int = 0) -> String? {
        if let s = string(value) { return s }
        guard depth < 4, case .object(_, let groups)? = entry(value) else { return nil }
        for g in groups { for v in g { if let s = firstString(v, depth: depth + 1) { return s } } }
        return nil
    }

    /// An NSDictionary's keys (as strings) and values.
    func dictionary(_ value: Value) -> [(key: String, value: Value)]? {
        guard case .object(_, let groups)? = entry(value), let first = groups.first, case .int(let count)? = first.first else { return nil }
        var out: [(key: String, value: Value)] = []
        var k = 1
        for _ in 0..<max(0, Int(count)) {
            guard k + 1 < groups.count, let keyValue = groups[k].first, let key = string(keyValue), let v = groups[k + 1].first else { return nil }
            out.append((key, v))
            k += 2
        }
        return out
    }
}

extension IMessageImporter {
    /// The styled ranges of an `attributedBody` (an archived NSAttributedString): its runs of
    /// bold, italic, underline and strikethrough (iOS 18's formatting), links and mentions, as
    /// spans of `text` (UTF-8; the blob counts UTF-16). Empty when the blob has none or cannot be
    /// read.
    static func attributedBodySpans(_ blob: [UInt8], text: String) -> [TextSpan] {
        guard let (stream, root) = TypedStream.parse(blob), case .object(_, let groups)? = stream.entry(.object(root)),
            let first = groups.first?.first, let string = stream.string(first)
        else { return [] }
        // UTF-16 offsets → UTF-8 offsets of the archived string.
        var utf8At: [Int] = [0]
        var at = 0
        for scalar in string.unicodeScalars {
            at += String(scalar).utf8.count
            if scalar.value > 0xFFFF { utf8At.append(at) }
            utf8At.append(at)
        }
        var styles: [Int64: [(TextSpan.Style, String?)]] = [:]
        var spans: [TextSpan] = []
        var position = 0
        var g = 1
        while g < groups.count {
            guard groups[g].count == 2, case .int(let id) = groups[g][0], case .int(let length) = groups[g][1], length >= 0 else { g += 1; continue }
            g += 1
            if styles[id] == nil {
                var found: [(TextSpan.Style, String?)] = []
                if g < groups.count, let dict = groups[g].first.flatMap(stream.dictionary) {
                    g += 1
                    for (key, value) in dict {
                        switch key {
                        case "__kIMTextBoldAttributeName": found.append((.bold, nil))
                        case "__kIMTextItalicAttributeName": found.append((.italic, nil))
                        case "__kIMTextUnderlineAttributeName": found.append((.underline, nil))
                        case "__kIMTextStrikethroughAttributeName": found.append((.strike, nil))
                        case "__kIMLinkAttributeName": found.append((.link, stream.firstString(value)))
                        case "__kIMMentionConfirmedMention": found.append((.mention, stream.string(value)))
                        default: break
                        }
                    }
                }
                styles[id] = found
            }
            let lo = min(position, utf8At.count - 1), hi = min(position + Int(length), utf8At.count - 1)
            position += Int(length)
            for (style, url) in styles[id] ?? [] where utf8At[hi] > utf8At[lo] {
                spans.append(TextSpan(style, utf8At[lo]..<utf8At[hi], url: url))
            }
        }
        // The importer trims the text and drops U+FFFC: map onto it only when it is unchanged.
        guard string == text else {
            guard let offset = text.isEmpty ? nil : string.range(of: text).map({ string.utf8.distance(from: string.startIndex, to: $0.lowerBound) })
            else { return [] }
            let count = text.utf8.count
            return spans.compactMap { s in
                let lo = max(0, s.range.lowerBound - offset), hi = min(count, s.range.upperBound - offset)
                return hi > lo ? TextSpan(s.style, lo..<hi, url: s.url) : nil
            }
        }
        return spans
    }
}
