import Foundation

/// Writes BubbleKit's native JSON (version 1, docs/FORMATS.md) one message at a time: the header
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
public final class ConversationWriter {
    private var buffer: [UInt8] = []
    private let flush: ([UInt8]) throws -> Void
    private var me: String?
    private var count = 0
    private let limit = 1 << 16

    public init(flush: @escaping ([UInt8]) throws -> Void) {
        self.flush = flush
        buffer.reserveCapacity(limit + 4096)
    }

    /// Messages written so far.
    public var messagesWritten: Int { count }

    public func begin(title: String?, me: String?, theme: String? = nil, participants: [Participant]) throws {
        self.me = me
        put("{\n  \"format\": \"\(ConversationFile.formatName)\",\n  \"version\": \(ConversationFile.currentVersion),\n")
        if let title { put("  \"title\": "); string(title); put(",\n") }
        if let me { put("  \"me\": "); string(me); put(",\n") }
        if let theme { put("  \"theme\": "); string(theme); put(",\n") }
        put("  \"participants\": [")
        for (i, p) in participants.enumerated() {
            put(i == 0 ? "\n    {" : ",\n    {")
            put("\"id\": "); string(p.id)
            put(", \"name\": "); string(p.name)
            if let avatar = p.avatar { put(", \"avatar\": "); string(avatar) }
            put("}")
        }
        put(participants.isEmpty ? "],\n" : "\n  ],\n")
        put("  \"messages\": [")
        try flushIfFull()
    }

    public func write(_ m: Message) throws {
        put(count == 0 ? "\n    {" : ",\n    {")
        count += 1
        var first = true
        func key(_ name: String) {
            put(first ? "\"" : ", \"")
            put(name)
            put("\": ")
            first = false
        }
        if m.kind == .system { key("type"); put("\"system\"") }
        if let from = m.sender { key("from"); string(from) }
        // The direction only when `me` does not already say it (system lines: incoming).
        let implied: Direction = if let me, let from = m.sender { from == me ? .outgoing : .incoming } else { .incoming }
        if m.direction != implied || (me == nil && m.kind == .message) { key("direction"); put("\"\(m.direction.rawValue)\"") }
        key("date"); put("\""); date(m.date, wall: m.wallTime); put("\"")
        if let text = m.text { key("text"); string(text) }
        if m.images.count == 1 {
            key("image"); image(m.images[0])
        } else if m.images.count > 1 {
            key("images"); put("[")
            for (i, img) in m.images.enumerated() { if i > 0 { put(", ") }; image(img) }
            put("]")
        }
        if let id = m.id { key("id"); string(id) }
        if !m.reactions.isEmpty {
            key("reactions"); put("[")
            for (i, r) in m.reactions.enumerated() {
                put(i == 0 ? "{\"emoji\": " : ", {\"emoji\": "); string(r.emoji)
                put(", \"count\": \(r.count)")
                if !r.senders.isEmpty {
                    put(", \"senders\": [")
                    for (j, s) in r.senders.enumerated() { if j > 0 { put(", ") }; string(s) }
                    put("]")
                }
                put("}")
            }
            put("]")
        }
        if let reply = m.reply {
            key("reply"); put("{")
            var inner = true
            func field(_ name: String, _ value: String?) {
                guard let value else { return }
                put(inner ? "\"\(name)\": " : ", \"\(name)\": "); string(value); inner = false
            }
            field("id", reply.id); field("sender", reply.sender); field("text", reply.text)
            put("}")
        }
        if let status = m.status { key("status"); put("\"\(status.rawValue)\"") }
        if let d = m.statusDate { key("statusDate"); put("\""); date(d, wall: nil); put("\"") }
        put("}")
        try flushIfFull()
    }

    public func finish() throws {
        put(count == 0 ? "]\n}\n" : "\n  ]\n}\n")
        try flush(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: Pieces

    private func flushIfFull() throws {
        guard buffer.count >= limit else { return }
        try flush(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func put(_ s: String) { buffer.append(contentsOf: s.utf8) }

    private func image(_ img: ImageAttachment) {
        put("{")
        var first = true
        if let path = img.path { put("\"path\": "); string(path); first = false }
        if img.width > 0 || img.height > 0 {
            put(first ? "\"width\": " : ", \"width\": "); number(img.width)
            put(", \"height\": "); number(img.height)
        }
        put("}")
    }

    private func number(_ d: Double) {
        if d == d.rounded(), abs(d) < 1e15 { put(String(Int(d))) } else { put("\(d)") }
    }

    /// A JSON string: `"` `\` and control characters escaped, everything else as UTF-8.
    private func string(_ s: String) {
        buffer.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\\")); buffer.append(b)
            case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\")); buffer.append(b)
            case 0x0A: put("\\n")
            case 0x0D: put("\\r")
            case 0x09: put("\\t")
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                put("\\u00"); buffer.append(hex[Int(b >> 4)]); buffer.append(hex[Int(b & 15)])
            default: buffer.append(b)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private func date(_ d: Date, wall: WallTime?) {
        if let wall { put(wall.description); return }
        put(ConversationFile.formatInstant(d))
    }
}

extension ConversationFile {
    /// `2026-11-22T09:41:00Z`; with `.123` or `.123456` when the instant has a fraction (the
    /// shortest of the two that reads back to the same instant, else nine digits).
    public static func formatInstant(_ d: Date) -> String {
        let t = d.timeIntervalSince1970
        let whole = t.rounded(.down)
        var text = WallTime(Date(timeIntervalSince1970: whole), in: utc).description
        if whole != t {
            let fraction = t - whole
            var digits = ""
            for places in [3, 6, 9] {
                let scale = pow(10.0, Double(places))
                var n = Int((fraction * scale).rounded())
                if n >= Int(scale) { n = Int(scale) - 1 }
                var s = String(n)
                s = String(repeating: "0", count: places - s.count) + s
                digits = s
                if places == 9 || parseInstant(text + "." + s + "Z") == d { break }
            }
            text += "." + digits
        }
        return text + "Z"
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
