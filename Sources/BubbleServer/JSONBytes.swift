/// A JSON object written straight into bytes: numbers, booleans, arrays of numbers and strings
/// escaped as RFC 8259 asks (quote, backslash, control characters; everything else as UTF-8).
struct JSONBytes {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]
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

    /// A finite number (whole ones without a fraction); null otherwise.
    mutating func number(_ v: Double) {
        if !v.isFinite { bytes.append(contentsOf: "null".utf8) } else if v == v.rounded(), abs(v) < 1e15 {
            bytes.append(contentsOf: String(Int64(v)).utf8)
        } else {
            bytes.append(contentsOf: "\(v)".utf8)
        }
    }

    mutating func array(_ values: [Double]) {
        bytes.append(UInt8(ascii: "["))
        for (i, v) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            number(v)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func strings(_ values: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (i, v) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            string(v)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        let hex = Array("0123456789abcdef".utf8)
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
