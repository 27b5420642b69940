import BubbleCore
import Foundation

/// Reads one element of a Telegram `messages` array — bytes the scanner has already checked to be
/// well-formed JSON — straight into a `TGMessage`, field by field: no `JSONDecoder`, no `Data`,
/// nothing kept of a field this reader does not use. About ten times faster than the decoder,
/// which made Telegram the slowest import by far. Lenient as `TGMessage` is documented to be; a
/// value of a shape no message can have is a failure naming its path below the element.
struct TelegramMessageDecoder {
    struct Failure: Error {
        enum Kind { case wrongType(expected: String), notUTF8 }
        var kind: Kind
        /// Below the element: ["reactions", 0, "count"].
        var path: [JSONScanner.PathComponent]
        /// Offset of the value in the element's bytes.
        var offset: Int
    }

    private let b: UnsafeBufferPointer<UInt8>
    private var i = 0
    /// Where the value being read is; keys as byte ranges, made into strings only for a failure.
    private enum Step { case key(Range<Int>), escapedKey(String), index(Int) }
    private var steps: [Step] = []
    private var path: [JSONScanner.PathComponent] {
        steps.map {
            switch $0 {
            case .key(let r): .key(String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self))
            case .escapedKey(let k): .key(k)
            case .index(let n): .index(n)
            }
        }
    }

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> TelegramImporter.TGMessage {
        var d = TelegramMessageDecoder(bytes)
        return try d.message()
    }

    // MARK: The message

    private mutating func message() throws(Failure) -> TelegramImporter.TGMessage {
        var m = TelegramImporter.TGMessage()
        try object { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
            switch key {
            case "id": m.rawID = try d.flexible()
            case "type": m.type = try d.optionalString()
            case "date": m.date = try d.optionalString()
            case "date_unixtime": m.dateUnixtime = try d.flexible()
            case "from": m.from = try d.optionalString()
            case "from_id": m.fromID = try d.flexible()
            case "actor": m.actor = try d.optionalString()
            case "actor_id": m.actorID = try d.flexible()
            case "action": m.action = try d.optionalString()
            case "title": m.title = try d.optionalString()
            case "members": m.members = try d.optionalArray { (d: inout TelegramMessageDecoder) throws(Failure) in try d.optionalString() }
            case "duration_seconds": m.durationSeconds = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) }
            case "discard_reason": m.discardReason = try d.optionalString()
            case "text": m.text = try d.text()
            case "edited": m.edited = try d.optionalString()
            case "edited_unixtime": m.editedUnixtime = try d.flexible()
            case "forwarded_from": m.forwardedFrom = .some(try d.optionalString())
            case "reply_to_message_id": m.replyToMessageID = try d.optionalNumber().flatMap { Int64(exactly: $0.rounded()) }
            case "reactions": m.reactions = try d.optionalArray { (d: inout TelegramMessageDecoder) throws(Failure) in try d.reaction() }
            case "photo": m.photo = try d.optionalString()
            case "file": m.file = try d.optionalString()
            case "file_name": m.fileName = try d.optionalString()
            case "mime_type": m.mimeType = try d.optionalString()
            case "media_type": m.mediaType = try d.optionalString()
            case "sticker_emoji": m.stickerEmoji = try d.optionalString()
            case "thumbnail": m.thumbnail = try d.optionalString()
            case "width": m.width = try d.optionalNumber()
            case "height": m.height = try d.optionalNumber()
            case "poll":
                var poll = TelegramImporter.Poll()
                try d.optionalObject { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
                    switch key {
                    case "question": poll.question = try d.optionalString()
                    case "total_voters": poll.totalVoters = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) }
                    case "answers":
                        poll.answers = try d.optionalArray { (d: inout TelegramMessageDecoder) throws(Failure) in
                            var answer = PollAnswer(text: "")
                            try d.object { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
                                switch key {
                                case "text": answer.text = try d.optionalString() ?? ""
                                case "voters": answer.votes = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) } ?? 0
                                case "chosen": answer.chosen = try d.optionalBool() ?? false
                                default: d.skip()
                                }
                            }
                            return answer
                        }
                    default: d.skip()
                    }
                }
                m.poll = poll
            case "location_information":
                var l = TelegramImporter.Location()
                try d.optionalObject { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
                    switch key {
                    case "latitude": l.latitude = try d.optionalNumber()
                    case "longitude": l.longitude = try d.optionalNumber()
                    case "place_name": l.title = try d.optionalString()
                    case "address": l.address = try d.optionalString()
                    default: d.skip()
                    }
                }
                m.locationInformation = l
            case "contact_information":
                var c = TelegramImporter.Contact()
                try d.optionalObject { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
                    switch key {
                    case "first_name": c.firstName = try d.optionalString()
                    case "last_name": c.lastName = try d.optionalString()
                    case "phone_number": c.phoneNumber = try d.optionalString()
                    default: d.skip()
                    }
                }
                m.contactInformation = c
            default:
                d.skip()
            }
        }
        return m
    }

    private mutating func reaction() throws(Failure) -> TGReaction {
        var r = TGReaction()
        try object { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
            switch key {
            case "type": r.type = try d.optionalString()
            case "count": r.count = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) }
            case "emoji": r.emoji = try d.optionalString()
            case "recent":
                r.recent = try d.optionalArray { (d: inout TelegramMessageDecoder) throws(Failure) in
                    var recent = TGReaction.Recent()
                    try d.object { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
                        if key == "from_id" { recent.fromID = try d.optionalString() } else { d.skip() }
                    }
                    return recent
                }
            default: d.skip()
            }
        }
        return r
    }

    /// `text`: a string, a number, null, or an array of strings and `{type, text}` entities (anything
    /// else in it skipped); an object reads as no text. Entities become spans of the text
    /// (`TelegramImporter.spanStyle`).
    private mutating func text() throws(Failure) -> TelegramImporter.TGText {
        space()
        switch peek {
        case UInt8(ascii: "\""): return TelegramImporter.TGText(value: try string())
        case UInt8(ascii: "n"): skip(); return TelegramImporter.TGText(value: "")
        case UInt8(ascii: "{"): skip(); return TelegramImporter.TGText(value: "")
        case UInt8(ascii: "["):
            var out = ""
            var spans: [TextSpan] = []
            i += 1
            var k = 0
            while true {
                space()
                if peek == UInt8(ascii: "]") { i += 1; return TelegramImporter.TGText(value: out, spans: spans) }
                if peek == UInt8(ascii: ",") { i += 1; space() }
                steps.append(.index(k))
                if peek == UInt8(ascii: "\"") {
                    out += try string()
                } else if peek == UInt8(ascii: "{") {
                    var type: String?, piece = "", href: String?, user: String?
                    try object { (d: inout TelegramMessageDecoder, key: Key) throws(Failure) in
                        switch key {
                        case "text": if d.peekAfterSpace == UInt8(ascii: "\"") { piece = try d.string() } else { d.skip() }
                        case "type": type = try d.optionalString()
                        case "href": href = try d.optionalString()
                        case "user_id": user = try d.flexible()?.value
                        default: d.skip()
                        }
                    }
                    let start = out.utf8.count
                    out += piece
                    if let type, let (style, url) = TelegramImporter.spanStyle(type, text: piece, href: href, user: user),
                       out.utf8.count > start {
                        spans.append(TextSpan(style, start..<out.utf8.count, url: url))
                    }
                } else {
                    skip()
                }
                steps.removeLast()
                k += 1
            }
        default:
            guard let n = try optionalNumber() else { return TelegramImporter.TGText(value: "") }
            return TelegramImporter.TGText(value: n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n))
        }
    }

    // MARK: Values

    /// A key's bytes, compared with string literals without making a String (a key with escapes,
    /// which Telegram never writes, is kept decoded).
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

    private var peek: UInt8 { i < b.count ? b[i] : 0 }
    private var peekAfterSpace: UInt8 {
        mutating get { space(); return peek }
    }

    private mutating func space() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    private func wrongType(_ expected: String) -> Failure { Failure(kind: .wrongType(expected: expected), path: path, offset: i) }

    /// An object's members, each handed to `member` with the decoder at its value (which it
    /// must read or skip).
    private mutating func object(_ member: (inout TelegramMessageDecoder, Key) throws(Failure) -> Void) throws(Failure) {
        space()
        guard peek == UInt8(ascii: "{") else { throw wrongType("an object") }
        i += 1
        while true {
            space()
            if peek == UInt8(ascii: "}") { i += 1; return }
            if peek == UInt8(ascii: ",") { i += 1; space() }
            // Keys are plain in Telegram's exports; one with escapes is read as a string.
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

    private mutating func optionalObject(_ member: (inout TelegramMessageDecoder, Key) throws(Failure) -> Void) throws(Failure) {
        if peekAfterSpace == UInt8(ascii: "n") { skip(); return }
        try object(member)
    }

    private mutating func optionalArray<T>(_ element: (inout TelegramMessageDecoder) throws(Failure) -> T) throws(Failure) -> [T]? {
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

    private mutating func optionalString() throws(Failure) -> String? {
        space()
        if peek == UInt8(ascii: "n") { skip(); return nil }
        guard peek == UInt8(ascii: "\"") else { throw wrongType("a string") }
        return try string()
    }

    /// true, false or null.
    private mutating func optionalBool() throws(Failure) -> Bool? {
        space()
        switch peek {
        case UInt8(ascii: "n"): skip(); return nil
        case UInt8(ascii: "t"): skip(); return true
        case UInt8(ascii: "f"): skip(); return false
        default: throw wrongType("true or false")
        }
    }

    /// A string or a whole number, as a string (ids older exports wrote either way).
    private mutating func flexible() throws(Failure) -> TelegramImporter.FlexibleString? {
        space()
        if peek == UInt8(ascii: "n") { skip(); return nil }
        if peek == UInt8(ascii: "\"") { return TelegramImporter.FlexibleString(value: try string()) }
        guard let n = try optionalNumber(), let whole = Int64(exactly: n) else { throw wrongType("a number") }
        return TelegramImporter.FlexibleString(value: String(whole))
    }

    private mutating func optionalNumber() throws(Failure) -> Double? {
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
                        || c == UInt8(ascii: "-") {
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
    private mutating func string() throws(Failure) -> String {
        space()
        guard peek == UInt8(ascii: "\"") else { throw wrongType("a string") }
        let start = i + 1
        var k = start
        while k < b.count, b[k] != UInt8(ascii: "\""), b[k] != UInt8(ascii: "\\") { k += 1 }
        if k < b.count, b[k] == UInt8(ascii: "\"") {
            i = k + 1
            let raw = UnsafeBufferPointer(rebasing: b[start..<k])
            guard let s = String(validating: raw, as: UTF8.self) else { throw invalidUTF8(in: raw, from: start) }
            return s
        }
        // With escapes: bytes copied, escapes replaced, then checked as UTF-8.
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

    private mutating func hex4() -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 where i < b.count {
            let c = b[i] | 0x20
            v = v << 4 | UInt32(c >= 0x61 ? c - 0x61 + 10 : c - 0x30)
            i += 1
        }
        return v
    }

    private func invalidUTF8(in raw: UnsafeBufferPointer<UInt8>, from start: Int) -> Failure {
        let bad = TelegramImporter.firstInvalidUTF8(raw) ?? 0
        return Failure(kind: .notUTF8, path: path, offset: start + bad)
    }

    /// Skips one value (the scanner checked the syntax: only brackets and strings matter).
    private mutating func skip() {
        space()
        var depth = 0
        repeat {
            guard i < b.count else { return }
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
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
