import BubbleCore
import Foundation

/// vCard text as phones write it (2.1, 3.0, 4.0): logical lines (folded lines joined, a
/// quoted-printable value's soft line breaks joined), properties with their parameters, values
/// decoded and unescaped. The contacts reader (BubbleImport's `VCardReader`) reads cards with
/// it; `name(ofCard:)` is what a contact card sent in a chat is called.
package enum VCardText {
    /// One property: `[group.]NAME;param;param:value`.
    package struct Property: Sendable {
        package var name: String
        package var params: [(name: String, value: String)]
        package var value: String
        package var line: Int

        package func param(_ key: String) -> String? { params.first { $0.name == key }?.value }
        /// A 2.1 bare parameter ("QUOTED-PRINTABLE", "JPEG") or a value of `TYPE`/`ENCODING`.
        package func has(_ word: String) -> Bool {
            params.contains { $0.name == word || $0.value.uppercased().split(separator: ",").contains(Substring(word)) }
        }
        package var quotedPrintable: Bool { has("QUOTED-PRINTABLE") }
    }

    /// The logical lines of `text` as properties: folded lines joined, quoted-printable soft
    /// breaks joined, empty lines skipped.
    package static func properties(_ text: String) -> [Property] {
        var out: [Property] = []
        var current: (text: String, line: Int)?
        var lineNumber = 0
        func flush() {
            if let c = current, let p = parse(c.text, line: c.line) { out.append(p) }
            current = nil
        }
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })[...]
        if lines.first?.first == "\u{FEFF}" { lines[lines.startIndex].removeFirst() }
        for raw in lines {
            lineNumber += 1
            if let first = raw.first, first == " " || first == "\t", current != nil {
                current!.text += raw.dropFirst()
                continue
            }
            // 2.1 quoted-printable: a value ending in "=" goes on in the next line.
            if let c = current, c.text.hasSuffix("="), isQuotedPrintableHead(c.text) {
                current!.text.removeLast()
                current!.text += raw
                continue
            }
            flush()
            if raw.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            current = (String(raw), lineNumber)
        }
        flush()
        return out
    }

    private static func isQuotedPrintableHead(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        return text[..<colon].uppercased().contains("QUOTED-PRINTABLE")
    }

    package static func parse(_ line: String, line number: Int) -> Property? {
        // The first ':' outside double quotes ends the name and parameters.
        var inQuotes = false
        var colon: String.Index?
        for i in line.indices {
            if line[i] == "\"" { inQuotes.toggle() } else if line[i] == ":", !inQuotes { colon = i; break }
        }
        guard let colon else { return nil }
        let head = split(String(line[..<colon]), by: ";")
        guard var name = head.first?.uppercased(), !name.isEmpty else { return nil }
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        let params: [(String, String)] = head.dropFirst().map { p in
            if let eq = p.firstIndex(of: "=") {
                return (p[..<eq].uppercased(), p[p.index(after: eq)...].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            }
            return (p.uppercased(), "")
        }
        return Property(name: name, params: params, value: String(line[line.index(after: colon)...]), line: number)
    }

    /// The value with quoted-printable decoded in its `CHARSET` (UTF-8 when none is named).
    package static func decoded(_ p: Property) -> String {
        guard p.quotedPrintable else { return p.value }
        var bytes: [UInt8] = []
        let utf8 = Array(p.value.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "="), i + 2 < utf8.count, let h = hex(utf8[i + 1]), let l = hex(utf8[i + 2]) {
                bytes.append(h << 4 | l)
                i += 3
            } else {
                bytes.append(utf8[i])
                i += 1
            }
        }
        let charset = (p.param("CHARSET") ?? "UTF-8").uppercased()
        let encoding: String.Encoding =
            switch charset {
            case "ISO-8859-1", "LATIN1": .isoLatin1
            case "WINDOWS-1252", "CP1252": .windowsCP1252
            case "SHIFT_JIS", "SJIS": .shiftJIS
            case "UTF-16": .utf16
            default: .utf8
            }
        return String(data: Data(bytes), encoding: encoding) ?? String(decoding: bytes, as: UTF8.self)
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// A text value: decoded, unescaped, trimmed (a 4.0 `tel:` URI keeps its number).
    package static func text(_ p: Property) -> String {
        unescape(decoded(p)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `N`: family;given;additional;prefixes;suffixes → "prefix given additional family suffix".
    package static func structuredName(_ value: String) -> String? {
        let parts = split(value, by: ";").map { unescape($0).trimmingCharacters(in: .whitespaces) }
        func at(_ i: Int) -> String { i < parts.count ? parts[i] : "" }
        let name = [at(3), at(1), at(2), at(0), at(4)].filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? nil : name
    }

    /// Splits at `separator`s that are not escaped with a backslash.
    package static func split(_ value: String, by separator: Character) -> [String] {
        var parts: [String] = [], current = "", escaped = false
        for ch in value {
            if escaped { current.append("\\"); current.append(ch); escaped = false; continue }
            if ch == "\\" { escaped = true; continue }
            if ch == separator { parts.append(current); current = ""; continue }
            current.append(ch)
        }
        if escaped { current.append("\\") }
        parts.append(current)
        return parts
    }

    package static func unescape(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var out = "", escaped = false
        for ch in value {
            if escaped {
                switch ch {
                case "n", "N": out.append("\n")
                default: out.append(ch)
                }
                escaped = false
            } else if ch == "\\" {
                escaped = true
            } else {
                out.append(ch)
            }
        }
        return out
    }

    /// The `FN` of the first card in `card` (decoded, unescaped), nil when it has none.
    package static func name(ofCard card: String) -> String? {
        for p in properties(card) where p.name == "FN" {
            let name = text(p)
            if !name.isEmpty { return name }
        }
        return nil
    }
}
