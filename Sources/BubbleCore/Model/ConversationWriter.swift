import Foundation

/// Writes BubbleKit's native JSON (`ConversationFile.currentVersion`, docs/FORMATS.md) one message at a time: the header
/// and participants first, then each message on a line of its own as it comes, through `flush`
/// every 64 KiB. Memory stays that of one buffer however long the conversation.
///
///     let writer = ConversationWriter(flush: { handle.write(Data($0)) })
///     try writer.begin(title: "Lunch", me: "me", participants: people)
///     for m in messages { try writer.write(m) }
///     try writer.finish()
///
/// The output is deterministic: fixed key order, no optional key that has no value, instants in
/// UTC (`2026-11-22T09:41:00Z`, fractions only when the instant has them), wall-clock times
/// without offset (`2026-11-22T09:41:00`). Reading it back and writing again gives the same bytes.
package final class ConversationWriter {
    private var buffer: [UInt8] = []
    private let flush: ([UInt8]) throws -> Void
    private var count = 0
    private let limit = 1 << 16

    package init(flush: @escaping ([UInt8]) throws -> Void) {
        self.flush = flush
        buffer.reserveCapacity(limit + 4096)
    }

    /// Messages written so far.
    package var messagesWritten: Int { count }

    package func begin(title: String?, me: String?, theme: String? = nil, participants: [Participant]) throws {
        var b: [UInt8] = []
        swap(&b, &buffer)
        defer { swap(&b, &buffer) }
        Self.put("{\n  \"format\": \"\(ConversationFile.formatName)\",\n  \"version\": \(ConversationFile.currentVersion),\n", &b)
        if let title { Self.put("  \"title\": ", &b); Self.string(title, &b); Self.put(",\n", &b) }
        if let me { Self.put("  \"me\": ", &b); Self.string(me, &b); Self.put(",\n", &b) }
        if let theme { Self.put("  \"theme\": ", &b); Self.string(theme, &b); Self.put(",\n", &b) }
        Self.put("  \"participants\": [", &b)
        for (i, p) in participants.enumerated() {
            Self.put(i == 0 ? "\n    {" : ",\n    {", &b)
            Self.put("\"id\": ", &b); Self.string(p.id, &b)
            Self.put(", \"name\": ", &b); Self.string(p.name, &b)
            if let avatar = p.avatar { Self.put(", \"avatar\": ", &b); Self.string(avatar, &b) }
            Self.put("}", &b)
        }
        Self.put(participants.isEmpty ? "],\n" : "\n  ],\n", &b)
        Self.put("  \"messages\": [", &b)
        try flushIfFull(&b)
    }

    package func write(_ m: Message) throws {
        // The bytes go to a local array while the message is written (no exclusivity checks on
        // a class property per byte).
        var b: [UInt8] = []
        swap(&b, &buffer)
        defer { swap(&b, &buffer) }
        Self.put(count == 0 ? "\n    {" : ",\n    {", &b)
        count += 1
        b.removeLast()
        Self.encode(m, into: &b)
        try flushIfFull(&b)
    }

    /// Writes a message already made by `encode` (e.g. kept on disk meanwhile).
    package func write(encoded: some Collection<UInt8>) throws {
        Self.put(count == 0 ? "\n    " : ",\n    ", &buffer)
        count += 1
        buffer.append(contentsOf: encoded)
        try flushIfFull(&buffer)
    }

    /// One message as its JSON object, on one line, as `write` writes it.
    package static func encode(_ m: Message, into b: inout [UInt8]) {
        b.append(UInt8(ascii: "{"))
        var first = true
        func key(_ name: StaticString) {
            Self.put(first ? "\"" : ", \"", &b)
            b.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            Self.put("\": ", &b)
            first = false
        }
        if m.kind == .system { key("type"); Self.put("\"system\"", &b) }
        if let from = m.sender { key("from"); Self.string(from, &b) }
        // Every message says its side (the file's `me` may be decided only after the messages
        // were written); system lines are always incoming.
        if m.kind == .message || m.direction != .incoming {
            key("direction"); Self.put(m.direction == .outgoing ? "\"outgoing\"" : "\"incoming\"", &b)
        }
        key("date"); b.append(UInt8(ascii: "\""))
        if let wall = m.wallTime { Self.put(wall.description, &b) } else { ConversationFile.appendInstant(m.date, to: &b) }
        b.append(UInt8(ascii: "\""))
        if let text = m.text { key("text"); Self.string(text, &b) }
        if !m.spans.isEmpty {
            key("spans"); Self.put("[", &b)
            for (i, s) in m.spans.enumerated() {
                Self.put(i == 0 ? "{\"style\": \"" : ", {\"style\": \"", &b); Self.put(s.style.rawValue, &b)
                Self.put("\", \"start\": \(s.range.lowerBound), \"end\": \(s.range.upperBound)", &b)
                if let url = s.url { Self.put(", \"url\": ", &b); Self.string(url, &b) }
                Self.put("}", &b)
            }
            Self.put("]", &b)
        }
        if let from = m.forwardedFrom { key("forwardedFrom"); Self.string(from, &b) }
        if let app = m.app { key("app"); Self.string(app, &b) }
        if let a = m.attachment { key("attachment"); Self.attachment(a, &b) }
        if m.images.count == 1 {
            key("image"); Self.image(m.images[0], &b)
        } else if m.images.count > 1 {
            key("images"); Self.put("[", &b)
            for (i, img) in m.images.enumerated() { if i > 0 { Self.put(", ", &b) }; Self.image(img, &b) }
            Self.put("]", &b)
        }
        if let id = m.id { key("id"); Self.string(id, &b) }
        if !m.reactions.isEmpty {
            key("reactions"); Self.put("[", &b)
            for (i, r) in m.reactions.enumerated() {
                Self.put(i == 0 ? "{\"emoji\": " : ", {\"emoji\": ", &b); Self.string(r.emoji, &b)
                Self.put(", \"count\": \(r.count)", &b)
                if !r.senders.isEmpty {
                    Self.put(", \"senders\": [", &b)
                    for (j, s) in r.senders.enumerated() { if j > 0 { Self.put(", ", &b) }; Self.string(s, &b) }
                    Self.put("]", &b)
                }
                Self.put("}", &b)
            }
            Self.put("]", &b)
        }
        if let reply = m.reply {
            key("reply"); Self.put("{", &b)
            var inner = true
            for (name, value) in [("id", reply.id), ("sender", reply.sender), ("text", reply.text)] {
                guard let value else { continue }
                Self.put(inner ? "\"\(name)\": " : ", \"\(name)\": ", &b); Self.string(value, &b); inner = false
            }
            Self.put("}", &b)
        }
        if let status = m.status { key("status"); Self.put("\"\(status.rawValue)\"", &b) }
        if let d = m.statusDate {
            key("statusDate"); b.append(UInt8(ascii: "\"")); ConversationFile.appendInstant(d, to: &b); b.append(UInt8(ascii: "\""))
        }
        if let d = m.edited {
            key("edited"); b.append(UInt8(ascii: "\"")); ConversationFile.appendInstant(d, to: &b); b.append(UInt8(ascii: "\""))
        }
        b.append(UInt8(ascii: "}"))
    }

    /// Ends the messages; `typing` lists the participants shown typing after them.
    package func finish(typing: [String] = []) throws {
        Self.put(count == 0 ? "]" : "\n  ]", &buffer)
        if !typing.isEmpty {
            Self.put(",\n  \"typing\": [", &buffer)
            for (i, id) in typing.enumerated() { if i > 0 { Self.put(", ", &buffer) }; Self.string(id, &buffer) }
            Self.put("]", &buffer)
        }
        Self.put("\n}\n", &buffer)
        try flush(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: Pieces

    private func flushIfFull(_ b: inout [UInt8]) throws {
        guard b.count >= limit else { return }
        try flush(b)
        b.removeAll(keepingCapacity: true)
    }

    private static func put(_ s: String, _ b: inout [UInt8]) { b.append(contentsOf: s.utf8) }

    private static func image(_ img: ImageAttachment, _ b: inout [UInt8]) {
        put("{", &b)
        var first = true
        if let path = img.path { put("\"path\": ", &b); string(path, &b); first = false }
        if img.width > 0 || img.height > 0 {
            put(first ? "\"width\": " : ", \"width\": ", &b); number(img.width, &b)
            put(", \"height\": ", &b); number(img.height, &b)
            first = false
        }
        if let name = img.name { put(first ? "\"name\": " : ", \"name\": ", &b); string(name, &b); first = false }
        if img.sticker { put(first ? "\"sticker\": true" : ", \"sticker\": true", &b) }
        put("}", &b)
    }

    /// An attachment object: `kind` first, then every field that has a value, in a fixed order.
    private static func attachment(_ a: MediaAttachment, _ b: inout [UInt8]) {
        put("{\"kind\": \"\(a.kind.rawValue)\"", &b)
        for (name, value) in [("label", a.label), ("fileName", a.fileName), ("path", a.path), ("mimeType", a.mimeType)] {
            if let value { put(", \"\(name)\": ", &b); string(value, &b) }
        }
        if let n = a.byteSize { put(", \"byteSize\": \(n)", &b) }
        for (name, value) in [("duration", a.duration), ("width", a.width), ("height", a.height)] {
            if let value, value.isFinite { put(", \"\(name)\": ", &b); number(value, &b) }
        }
        if let poster = a.poster { put(", \"poster\": ", &b); string(poster, &b) }
        if let n = a.pageCount { put(", \"pageCount\": \(n)", &b) }
        if let title = a.title { put(", \"title\": ", &b); string(title, &b) }
        for (name, value) in [("latitude", a.latitude), ("longitude", a.longitude)] {
            if let value, value.isFinite { put(", \"\(name)\": ", &b); number(value, &b) }
        }
        if let problem = a.problem { put(", \"problem\": ", &b); string(problem, &b) }
        if let answers = a.answers {
            put(", \"answers\": [", &b)
            for (i, x) in answers.enumerated() {
                put(i == 0 ? "{\"text\": " : ", {\"text\": ", &b); string(x.text, &b)
                put(", \"votes\": \(x.votes)", &b)
                if x.chosen { put(", \"chosen\": true", &b) }
                put("}", &b)
            }
            put("]", &b)
        }
        if let n = a.voters { put(", \"voters\": \(n)", &b) }
        put("}", &b)
    }

    private static func number(_ d: Double, _ b: inout [UInt8]) {
        if d == d.rounded(), abs(d) < 1e15 { put(String(Int(d)), &b) } else { put("\(d)", &b) }
    }

    /// A JSON string: `"` `\` and control characters escaped, everything else as UTF-8.
    private static func string(_ s: String, _ b: inout [UInt8]) {
        b.append(UInt8(ascii: "\""))
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            b.append(contentsOf: s.utf8)
            b.append(UInt8(ascii: "\""))
            return
        }
        for c in s.utf8 {
            switch c {
            case 0x22, 0x5C: b.append(0x5C); b.append(c)
            case 0x0A: b.append(0x5C); b.append(UInt8(ascii: "n"))
            case 0x0D: b.append(0x5C); b.append(UInt8(ascii: "r"))
            case 0x09: b.append(0x5C); b.append(UInt8(ascii: "t"))
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                put("\\u00", &b); b.append(hex[Int(c >> 4)]); b.append(hex[Int(c & 15)])
            default: b.append(c)
            }
        }
        b.append(UInt8(ascii: "\""))
    }
}

extension ConversationFile {
    /// `2026-11-22T09:41:00Z`; with `.123` or `.123456` when the instant has a fraction (the
    /// shortest of the two that reads back to the same instant, else nine digits).
    package static func formatInstant(_ d: Date) -> String {
        var bytes: [UInt8] = []
        appendInstant(d, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `formatInstant` into a byte buffer, with integer arithmetic only (no zone, no formatter):
    /// the writer calls it once per message.
    static func appendInstant(_ d: Date, to b: inout [UInt8]) {
        let t = d.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e14 else { b.append(contentsOf: "1970-01-01T00:00:00Z".utf8); return }
        let whole = t.rounded(.down)
        let seconds = Int(whole)
        let day = Int((Double(seconds) / 86_400).rounded(.down))
        let (y, mo, dd) = WallTime.civil(day)
        let rest = seconds - day * 86_400
        func digits(_ n: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var v = n
            while divisor > 0 { b.append(UInt8(48 + v / divisor % 10)); v %= divisor; divisor /= 10 }
        }
        if y < 0 { b.append(UInt8(ascii: "-")) }
        if abs(y) > 9999 { b.append(contentsOf: String(abs(y)).utf8) } else { digits(abs(y), 4) }
        b.append(UInt8(ascii: "-")); digits(mo, 2); b.append(UInt8(ascii: "-")); digits(dd, 2)
        b.append(UInt8(ascii: "T")); digits(rest / 3600, 2); b.append(UInt8(ascii: ":")); digits(rest / 60 % 60, 2)
        b.append(UInt8(ascii: ":")); digits(rest % 60, 2)
        if whole != t {
            // The parser reads `.fff` as (seconds × 10^k + units) ÷ 10^k: pick the first k whose
            // reading is this very instant.
            let fraction = t - whole
            var chosen = (9, min(999_999_999, Int((fraction * 1e9).rounded())))
            for places in [3, 6] {
                let scale = places == 3 ? 1000.0 : 1_000_000.0
                let units = min(Int(scale) - 1, Int((fraction * scale).rounded()))
                if (whole * scale + Double(units)) / scale == t { chosen = (places, units); break }
            }
            b.append(UInt8(ascii: ".")); digits(chosen.1, chosen.0)
        }
        b.append(UInt8(ascii: "Z"))
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// Reads `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`; nil for other forms (the caller
    /// then tries Foundation's ISO 8601 parser).
    static func parseInstant(_ s: String) -> Date? {
        let b = Array(s.utf8)
        guard b.count >= 20, let wall = WallTime(iso: String(decoding: b[0..<19], as: UTF8.self)) else { return nil }
        var i = 19
        var units = 0, scale = 1
        if b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if scale < 1_000_000_000 { units = units * 10 + Int(b[i] - 48); scale *= 10 }
                i += 1
            }
            guard scale > 1 else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == UInt8(ascii: "Z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            let rest = Array(b[(i + 1)...]).filter { $0 != UInt8(ascii: ":") }
            guard rest.count == 4, rest.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            let h = Int(rest[0] - 48) * 10 + Int(rest[1] - 48), m = Int(rest[2] - 48) * 10 + Int(rest[3] - 48)
            guard h < 24, m < 60 else { return nil }
            offset = sign * (h * 3600 + m * 60)
            i = b.count
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = wall.localSeconds - offset
        if scale == 1 { return Date(timeIntervalSince1970: Double(seconds)) }
        // One correctly rounded division, as an importer's `Double(ms) / 1000` is.
        let total = Double(seconds) * Double(scale) + Double(units)
        if abs(total) < 9e15 { return Date(timeIntervalSince1970: total / Double(scale)) }
        return Date(timeIntervalSince1970: Double(seconds) + Double(units) / Double(scale))
    }
}
