import Foundation

/// A JSON object written straight into bytes: numbers, booleans, arrays of numbers and strings
/// escaped as RFC 8259 asks (quote, backslash, control characters; everything else as UTF-8).
struct JSONBytes {
    fileprivate(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var first = true

    init() { bytes.reserveCapacity(16_384) }

    mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    mutating func field(_ name: StaticString, _ value: Double) { key(name); number(value) }
    mutating func field(_ name: StaticString, _ value: Int) { key(name); bytes.append(contentsOf: String(value).utf8) }
    mutating func field(_ name: StaticString, _ value: Int64) { key(name); bytes.append(contentsOf: String(value).utf8) }
    mutating func field(_ name: StaticString, _ value: Bool) { key(name); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    mutating func field(_ name: StaticString, _ value: String) { key(name); string(value) }
    mutating func null() { bytes.append(contentsOf: "null".utf8) }

    /// A finite number (whole ones without a fraction); null otherwise.
    mutating func number(_ v: Double) {
        if !v.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if v == v.rounded(), abs(v) < 1e15 {
            bytes.append(contentsOf: String(Int64(v)).utf8)
        } else {
            bytes.append(contentsOf: "\(v)".utf8)
        }
    }

    /// `[a,b,…]`, each value written by `write`.
    mutating func list<T>(_ values: [T], _ write: (inout JSONBytes, T) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for (i, v) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            write(&self, v)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func array(_ values: [Double]) { list(values) { $0.number($1) } }
    mutating func array(_ values: [Int64]) { list(values) { $0.bytes.append(contentsOf: String($1).utf8) } }

    /// `s` quoted and escaped; runs of bytes that need no escape are copied whole (a window's
    /// HTML is most of its answer).
    mutating func string(_ s: String) {
        var s = s
        bytes.append(UInt8(ascii: "\""))
        s.withUTF8 { utf8 in
            var start = 0
            for i in 0..<utf8.count {
                let b = utf8[i]
                guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
                if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i])) }
                escape(b)
                start = i + 1
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ b: UInt8) {
        let hex = Array("0123456789abcdef".utf8)
        switch b {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        default: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 15)]])
        }
    }

    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

/// Any JSON value made of dictionaries, arrays, strings, numbers, booleans and `NSNull` — as
/// `JSONSerialization` writes it with sorted keys, several times faster (the live path writes
/// one of these per change and per acknowledgement).
enum JSONWriter {
    static func string(_ value: Any) -> String {
        var out = JSONBytes(raw: ())
        write(value, into: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    static func write(_ value: Any, into out: inout JSONBytes) {
        // Exact types first: a failed `as?` from `Any` tries Objective-C bridging, the slow part.
        let t = type(of: value)
        if t == String.self {
            out.string(value as! String)
        } else if t == Int.self {
            out.append(String(value as! Int))
        } else if t == Int64.self {
            out.append(String(value as! Int64))
        } else if t == Double.self {
            out.number(value as! Double)
        } else if t == Bool.self {
            out.append((value as! Bool) ? "true" : "false")
        } else if t == [String: Any].self {
            object(value as! [String: Any], into: &out)
        } else if let a = value as? [Any] {
            out.list(a) { write($1, into: &$0) }
        } else if let o = value as? [String: Any] {
            object(o, into: &out)
        } else if value is NSNull {
            out.append("null")
        } else if let n = value as? NSNumber {
            out.append(n.stringValue)
        } else {
            out.string("\(value)")
        }
    }

    static func object(_ o: [String: Any], into out: inout JSONBytes) {
        out.append("{")
        for (i, k) in o.keys.sorted().enumerated() {
            if i > 0 { out.append(",") }
            out.string(k)
            out.append(":")
            write(o[k]!, into: &out)
        }
        out.append("}")
    }
}

extension JSONBytes {
    /// An empty buffer for `JSONWriter` (no opening brace).
    init(raw: Void) { self.init(); bytes.removeAll(keepingCapacity: true) }

    mutating func append(_ s: StaticString) { s.withUTF8Buffer { bytes.append(contentsOf: $0) } }
    mutating func append(_ s: String) { bytes.append(contentsOf: s.utf8) }
}
