import BubbleCore
import Foundation

/// One row per message, RFC 4180: CRLF line ends, every field that holds a comma, a quote, CR or
/// LF in double quotes with its quotes doubled (multi-line messages stay in one field).
///
///     timestamp,author,direction,message,media,attachments,kind
///     2026-11-22T09:40:00+01:00,Ann,incoming,Are we still on for lunch?,,,message
///     2026-11-22T09:41:00+01:00,Ben,outgoing,,media,,message
///
/// `timestamp` is ISO 8601 with the offset of `timeZone` at that moment (a wall-clock time is
/// written as it was, with the offset that zone has then); `media` is the kind of a placeholder
/// (`photo`, `video`, `media`, `deleted`…: media the export left out, a file that is not a photo);
/// `attachments` are the photo paths, then an attachment's path (where the export or `convert`
/// put its file; its name when there is no file), separated by `;`; system
/// lines have no author or direction. A spoiler's text is masked (`░`) unless `revealSpoilers`:
/// a spreadsheet has no way to keep it hidden.
final class ConversationCSVWriter {
    static let header = ["timestamp", "author", "direction", "message", "media", "attachments", "kind"]

    private let names: [String: String]
    private let timeZone: TimeZone
    private let revealSpoilers: Bool
    private let flush: ([UInt8]) throws -> Void
    private var buffer: [UInt8] = []

    init(conversation: Conversation, timeZone: TimeZone, revealSpoilers: Bool = false, flush: @escaping ([UInt8]) throws -> Void) {
        var names: [String: String] = [:]
        for p in conversation.participants { names[p.id] = p.name }
        self.names = names
        self.timeZone = timeZone
        self.revealSpoilers = revealSpoilers
        self.flush = flush
    }

    func writeHeader() throws { row(Self.header) }

    func write(_ m: Message) throws {
        let isSystem = m.kind == .system
        row([
            Self.timestamp(m, in: timeZone),
            isSystem ? "" : m.sender.map { names[$0] ?? $0 } ?? "",
            isSystem ? "" : m.direction.rawValue,
            m.text.map { revealSpoilers ? $0 : TextSpan.hidingSpoilers($0, spans: m.spans) } ?? "",
            m.attachment?.kind.rawValue ?? "",
            (m.images.compactMap(\.path) + [m.attachment.flatMap { $0.path ?? $0.fileName }].compactMap { $0 }).joined(separator: ";"),
            m.kind.rawValue
        ])
        if buffer.count >= 1 << 16 {
            try flush(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    func finish() throws {
        try flush(buffer)
        buffer.removeAll()
    }

    private func row(_ fields: [String]) {
        for (i, field) in fields.enumerated() {
            if i > 0 { buffer.append(UInt8(ascii: ",")) }
            Self.append(field, to: &buffer)
        }
        buffer.append(0x0D)
        buffer.append(0x0A)
    }

    static func append(_ field: String, to buffer: inout [UInt8]) {
        let needsQuotes = field.utf8.contains { (b: UInt8) -> Bool in b == 0x2C || b == 0x22 || b == 0x0A || b == 0x0D }
        guard needsQuotes else { buffer.append(contentsOf: field.utf8); return }
        buffer.append(UInt8(ascii: "\""))
        for b in field.utf8 {
            buffer.append(b)
            if b == UInt8(ascii: "\"") { buffer.append(b) }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// `2026-11-22T09:41:00+01:00` (`.250` before the offset when the instant has milliseconds).
    static func timestamp(_ m: Message, in zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: m.date)
        var text: String
        if let wall = m.wallTime {
            text = wall.description
        } else {
            text = WallTime(m.date, in: zone).description
            let t = m.date.timeIntervalSince1970
            let ms = Int(((t - t.rounded(.down)) * 1000).rounded())
            if ms > 0, ms < 1000 { text += "." + String(String(ms + 1000).dropFirst()) }
        }
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return text + sign + two(minutes / 60) + ":" + two(minutes % 60)
    }
}
