import BubbleCore
import Foundation

/// Reads vCards 2.1, 3.0 and 4.0 as phones write them: several cards a file, folded lines (a
/// leading space or tab), quoted-printable values with soft line breaks and a `CHARSET`,
/// `item1.TEL` groups, `TYPE=` and bare 2.1 parameters, `PHOTO` as base64 (`ENCODING=b`,
/// `ENCODING=BASE64`) or a `data:` URI. A broken card (no `END:VCARD`, a photo that is not
/// base64 or too large) gives a warning naming it; the rest is read.
struct VCardReader {
    let path: String
    let maxPhotoBytes: Int
    private(set) var contacts: [Contact] = []
    private(set) var warnings: [ImportWarning] = []

    init(path: String, maxPhotoBytes: Int) { self.path = path; self.maxPhotoBytes = maxPhotoBytes }

    /// One property: `[group.]NAME;param;param:value`.
    struct Property {
        var name: String
        var params: [(name: String, value: String)]
        var value: String
        var line: Int

        func param(_ key: String) -> String? { params.first { $0.name == key }?.value }
        /// A 2.1 bare parameter ("QUOTED-PRINTABLE", "JPEG") or a value of `TYPE`/`ENCODING`.
        func has(_ word: String) -> Bool {
            params.contains { $0.name == word || $0.value.uppercased().split(separator: ",").contains(Substring(word)) }
        }
        var quotedPrintable: Bool { has("QUOTED-PRINTABLE") }
    }

    private struct Card {
        var number: Int
        var line: Int
        var fn: String?
        var n: String?
        var nickname: String?
        var org: String?
        var phones: [String] = []
        var emails: [String] = []
        var photo: Data?
    }

    mutating func read(_ text: String) {
        var card: Card?
        var count = 0
        for property in Self.properties(text) {
            switch (property.name, property.value.uppercased()) {
            case ("BEGIN", "VCARD"):
                if let open = card {
                    warn(open, "has no END:VCARD before the next card (line \(property.line)); read as far as it went")
                    finish(open)
                }
                count += 1
                card = Card(number: count, line: property.line)
            case ("END", "VCARD"):
                if let open = card { finish(open) }
                card = nil
            default:
                guard card != nil else { continue }
                take(property, into: &card!)
            }
        }
        if let open = card {
            warn(open, "has no END:VCARD (the file ends inside it); read as far as it went")
            finish(open)
        }
    }

    private mutating func take(_ p: Property, into card: inout Card) {
        switch p.name {
        case "FN": card.fn = Self.text(p)
        case "N": card.n = Self.structuredName(Self.decoded(p))
        case "NICKNAME": card.nickname = Self.text(p)
        case "ORG": card.org = Self.split(Self.decoded(p), by: ";").first.map(Self.unescape)
        case "TEL":
            let t = Self.text(p)
            if !t.isEmpty { card.phones.append(t) }
        case "EMAIL":
            let t = Self.text(p)
            if !t.isEmpty { card.emails.append(t) }
        case "PHOTO": card.photo = photo(p, card: card) ?? card.photo
        default: break
        }
    }

    /// The picture of a `PHOTO` property; nil with a warning when it cannot be used.
    private mutating func photo(_ p: Property, card: Card) -> Data? {
        var value = p.value
        if value.lowercased().hasPrefix("data:") {
            // 4.0: data:image/jpeg;base64,….
            guard let comma = value.firstIndex(of: ","), value[..<comma].lowercased().hasSuffix(";base64") else {
                warn(card, "PHOTO (line \(p.line)) is a data: URI without base64; card read without its photo")
                return nil
            }
            value = String(value[value.index(after: comma)...])
        } else if !(p.has("B") || p.has("BASE64")) {
            // A link (VALUE=uri: http…): nothing is fetched.
            return nil
        }
        let encodedLimit = (maxPhotoBytes / 3 + 1) * 4 + 1024
        let encoded = value.utf8.count
        if encoded > encodedLimit {
            let mb = Double(encoded) * 3 / 4 / 1_000_000
            warn(card, String(format: "PHOTO (line \(p.line)) is %.1f MB, more than %d MB; card read without its photo", mb, maxPhotoBytes / 1_000_000))
            return nil
        }
        let cleaned = value.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: cleaned, options: .ignoreUnknownCharacters), !data.isEmpty,
              cleaned.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" || $0 == "=" || $0 == "-" || $0 == "_") }) else {
            warn(card, "PHOTO (line \(p.line)) is not valid base64; card read without its photo")
            return nil
        }
        guard Contact.pictureExtension(data) != nil else {
            warn(card, "PHOTO (line \(p.line)) is not a JPEG, PNG or GIF picture; card read without its photo")
            return nil
        }
        return data
    }

    private mutating func finish(_ card: Card) {
        let candidates = [card.fn, card.n, card.nickname, card.org]
        guard let name = candidates.compactMap({ $0?.trimmingCharacters(in: .whitespaces) }).first(where: { !PeopleDirectory.isPlaceholder($0) }) else {
            if !card.phones.isEmpty || !card.emails.isEmpty { warn(card, "has no name (FN, N, NICKNAME or ORG); skipped") }
            return
        }
        contacts.append(Contact(name: name, phones: card.phones, emails: card.emails, photo: card.photo,
                                origin: "\(path): card \(card.number) (line \(card.line))"))
    }

    private mutating func warn(_ card: Card, _ why: String) {
        let name = [card.fn, card.n, card.org].compactMap { $0 }.first
        warnings.append(ImportWarning(path: path, location: "card \(card.number) (line \(card.line))",
                                      what: name.map { "\"\($0)\"" } ?? "card", why: why))
    }

    // MARK: lines and values

    /// The logical lines of `text` as properties: folded lines joined, quoted-printable soft
    /// breaks joined, empty lines skipped.
    static func properties(_ text: String) -> [Property] {
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

    static func parse(_ line: String, line number: Int) -> Property? {
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
    static func decoded(_ p: Property) -> String {
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
        let encoding: String.Encoding = switch charset {
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
    static func text(_ p: Property) -> String {
        unescape(decoded(p)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `N`: family;given;additional;prefixes;suffixes → "prefix given additional family suffix".
    static func structuredName(_ value: String) -> String? {
        let parts = split(value, by: ";").map { unescape($0).trimmingCharacters(in: .whitespaces) }
        func at(_ i: Int) -> String { i < parts.count ? parts[i] : "" }
        let name = [at(3), at(1), at(2), at(0), at(4)].filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? nil : name
    }

    /// Splits at `separator`s that are not escaped with a backslash.
    static func split(_ value: String, by separator: Character) -> [String] {
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

    static func unescape(_ value: String) -> String {
        guard value.contains("\\") else { return value }
        var out = "", escaped = false
        for ch in value {
            if escaped {
                switch ch {
                case "n", "N": out.append("\n")
                default: out.append(ch)
                }
                escaped = false
            } else if ch == "\\" { escaped = true } else { out.append(ch) }
        }
        return out
    }
}
