import Foundation

/// Finds the first place a JSON text breaks the grammar, and says what could have come there:
/// "line 3, column 1: unexpected end of file, expected a value". Foundation's decoders on Linux
/// say only "not valid JSON" (and give no position at all for a file cut short), so errors take
/// their position from here. One pass over the bytes, no recursion (nesting is a stack of flags).
package enum JSONSyntax {
    package struct Problem: Hashable, Sendable {
        /// Byte offset of the problem (the file's length when it ends early).
        package var offset: Int
        package var line: Int
        package var column: Int
        /// "unexpected end of file (cut short?), expected a value", "is not valid JSON, expected ',' or ']'".
        package var reason: String
        package var location: String { "line \(line), column \(column)" }
    }

    /// The first problem in `b`, or nil when it is valid JSON.
    package static func firstProblem(_ b: [UInt8]) -> Problem? {
        b.withUnsafeBufferPointer { firstProblem($0) }
    }

    /// The first problem in `data`, read in place.
    package static func firstProblem(_ data: Data) -> Problem? {
        data.withUnsafeBytes { firstProblem($0.bindMemory(to: UInt8.self)) }
    }

    /// The first problem in `b`, or nil when it is valid JSON (strict: no trailing commas, which
    /// Foundation's decoder lets through).
    package static func firstProblem(_ b: UnsafeBufferPointer<UInt8>) -> Problem? {
        var i = 0
        var stack: [Bool] = []  // true: inside an object
        func problem(_ expected: String, at offset: Int? = nil) -> Problem {
            let at = offset ?? i
            var line = 1, column = 1
            for k in 0..<min(at, b.count) {
                if b[k] == 0x0A { line += 1; column = 1 } else if b[k] & 0xC0 != 0x80 { column += 1 }
            }
            let reason = at >= b.count ? "unexpected end of file (cut short?), expected \(expected)" : "is not valid JSON, expected \(expected)"
            return Problem(offset: at, line: line, column: column, reason: reason)
        }
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }
        func string() -> Problem? {
            i += 1
            while i < b.count {
                let c = b[i]
                if c == 0x22 { i += 1; return nil }
                if c < 0x20 { return problem("a control character escaped (\\n, \\t, \\u…) inside a string") }
                if c == 0x5C {
                    i += 1
                    guard i < b.count else { return problem("an escaped character after \\") }
                    if b[i] == 0x75 {
                        for _ in 0..<4 {
                            i += 1
                            guard i < b.count else { return problem("four hex digits after \\u") }
                            let h = b[i] | 0x20
                            guard (0x30...0x39).contains(b[i]) || (0x61...0x66).contains(h) else { return problem("four hex digits after \\u") }
                        }
                    } else if ![0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74].contains(b[i]) {
                        return problem("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)")
                    }
                }
                i += 1
            }
            return problem("the rest of a string and its closing quote")
        }
        /// A value starts at `i` (after spaces): scalars are read whole, containers opened.
        func value() -> Problem? {
            skipSpace()
            guard i < b.count else { return problem("a value") }
            switch b[i] {
            case 0x22: return string()
            case 0x7B: stack.append(true); i += 1; return nil
            case 0x5B: stack.append(false); i += 1; return nil
            case 0x74, 0x66, 0x6E:
                let word: [UInt8] = b[i] == 0x74 ? Array("true".utf8) : b[i] == 0x66 ? Array("false".utf8) : Array("null".utf8)
                let start = i
                for c in word {
                    guard i < b.count else { return problem("the rest of \(String(decoding: word, as: UTF8.self))") }
                    guard b[i] == c else { return problem("a value", at: start) }
                    i += 1
                }
                return nil
            case 0x2D, 0x30...0x39:
                let start = i
                i += 1
                while i < b.count, (0x30...0x39).contains(b[i]) || [0x2E, 0x45, 0x65, 0x2B, 0x2D].contains(b[i]) { i += 1 }
                return b[start] == 0x2D && i == start + 1 ? problem(i >= b.count ? "a number's digits" : "a value", at: i) : nil
            default:
                return problem("a value")
            }
        }

        if let p = value() { return p }
        // After each value or opening: what the open container wants next.
        var justOpened = !stack.isEmpty
        while !stack.isEmpty {
            skipSpace()
            let inObject = stack.last!
            if justOpened {
                justOpened = false
                guard i < b.count else { return problem(inObject ? "a key or '}'" : "a value or ']'") }
                if b[i] == (inObject ? 0x7D : 0x5D) { stack.removeLast(); i += 1; continue }
            } else {
                guard i < b.count else { return problem(inObject ? "',' or '}'" : "',' or ']'") }
                if b[i] == (inObject ? 0x7D : 0x5D) { stack.removeLast(); i += 1; continue }
                guard b[i] == 0x2C else { return problem(inObject ? "',' or '}'" : "',' or ']'") }
                i += 1
                skipSpace()
            }
            if inObject {
                guard i < b.count else { return problem("a key") }
                guard b[i] == 0x22 else { return problem("a key in quotes") }
                if let p = string() { return p }
                skipSpace()
                guard i < b.count else { return problem("':'") }
                guard b[i] == 0x3A else { return problem("':'") }
                i += 1
            }
            let depth = stack.count
            if let p = value() { return p }
            if stack.count > depth { justOpened = true }
        }
        skipSpace()
        return i < b.count ? problem("the end of the file after the document") : nil
    }
}
