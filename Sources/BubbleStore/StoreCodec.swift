import BubbleCore
import Foundation

/// What a message keeps beyond its columns (only messages that have any of it).
struct MessageExtra: Codable {
    var images: [ImageAttachment]?
    var attachment: MediaAttachment?
    var reactions: [Reaction]?
    var reply: ReplyReference?
    /// Styled ranges of the text (bold, code, spoilers…).
    var spans: [TextSpan]?
    var forwardedFrom: String?
    var isEmpty: Bool { images == nil && attachment == nil && reactions == nil && reply == nil && spans == nil && forwardedFrom == nil }

    /// What `m` keeps beyond its columns, its files' paths as `stored` gives them (an import
    /// copies them into the store; a live change turns absolute paths back into store paths).
    init(_ m: Message, stored: (String) throws -> String?) rethrows {
        if !m.images.isEmpty {
            images = try m.images.map {
                var i = $0; i.path = try i.path.flatMap(stored); return i
            }
        }
        if var a = m.attachment {
            if let p = a.path { a.path = try stored(p) }
            if let p = a.poster { a.poster = try stored(p) }
            attachment = a
        }
        if !m.reactions.isEmpty { reactions = m.reactions }
        reply = m.reply
        if !m.spans.isEmpty { spans = m.spans }
        forwardedFrom = m.forwardedFrom
    }
}

/// What both backends share: how a message is kept (`extra`), identified and indexed.
enum StoreCodec {
    /// `parts` through `StableHash` (stable across runs and machines).
    static func stableHash(_ parts: [String]) -> Int64 {
        var h = StableHash()
        for part in parts { h.add(part: part) }
        return Int64(bitPattern: h.value)
    }

    /// The content part of a message's identity (for exports without ids): FNV-1a over the
    /// format, time, sender, side, kind, text and attachment names.
    static func contentKey(_ m: Message, format: String) -> Int64 {
        var h = StableHash()
        h.add(part: "c"); h.add(part: format)
        var bits = m.date.timeIntervalSince1970.bitPattern
        for _ in 0..<8 { h.add(UInt8(truncatingIfNeeded: bits)); bits >>= 8 }
        h.add(part: m.sender); h.add(m.direction == .outgoing ? 1 : 0); h.add(m.kind == .system ? 1 : 0)
        h.add(part: m.text); h.add(part: m.attachment?.fileName)
        for image in m.images { h.add(part: image.name) }
        return Int64(bitPattern: h.value)
    }

    /// The text the search index holds for a message: its text (a spoiler's words left out, so a
    /// search cannot reveal them) and its attachment's name and title.
    static func indexBody(text: String?, spans: [TextSpan], attachment: MediaAttachment?) -> String? {
        let shown = text.map { TextSpan.hidingSpoilers($0, spans: spans) }
        let body = [shown, attachment?.fileName, attachment?.title].compactMap { $0 }.joined(separator: " ")
        return body.isEmpty ? nil : SearchText.indexed(body)
    }

    /// `text` with the spoilers of the spans in `extra` (`message.extra`) masked; `text` itself
    /// when `extra` holds none (most rows: the JSON is not decoded unless it mentions one).
    static func hidingSpoilers(_ text: String, extra: String?) -> String {
        guard let extra, extra.contains("\"spoiler\""),
            let spans = try? JSONDecoder().decode(MessageExtra.self, from: Data(extra.utf8)).spans
        else { return text }
        return TextSpan.hidingSpoilers(text, spans: spans)
    }

    /// A message as a reply shows it: its first 100 characters (spoilers masked), else what it holds.
    static func snippet(_ m: Message) -> String {
        if let quoted = m.quotedText { return quoted }
        if let a = m.attachment { return a.displayText }
        return m.images.isEmpty ? "Message" : "Photo"
    }

    /// The encoder of `message.extra` (keys sorted).
    static func extraEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// `message.extra` as stored: nil when the message keeps nothing beyond its columns.
    static func encode(_ extra: MessageExtra, with encoder: JSONEncoder) throws -> String? {
        extra.isEmpty ? nil : String(decoding: try encoder.encode(extra), as: UTF8.self)
    }

    /// A message from its stored columns (both backends keep the same ones); `absolute` turns a
    /// store path (`media/…`) into a file path.
    static func message(_ r: MessageRow, decoder: JSONDecoder, absolute: (String) -> String) throws -> StoredMessage {
        let date = Date(timeIntervalSince1970: r.date)
        var m = Message(
            kind: r.system ? .system : .message, sender: r.sender, direction: r.outgoing ? .outgoing : .incoming,
            date: date, text: r.text)
        if let offset = r.utcOffset {
            m.wallTime = WallTime(Date(timeIntervalSince1970: (date.timeIntervalSince1970.rounded(.down)) + Double(offset)), in: .gmt)
        }
        m.status = r.status.flatMap(MessageStatus.init(rawValue:))
        m.id = r.sourceID
        // Set only when there is one (each is kept apart, with the message's rarer fields).
        if let statusDate = r.statusDate { m.statusDate = Date(timeIntervalSince1970: statusDate) }
        if let edited = r.edited { m.edited = Date(timeIntervalSince1970: edited) }
        if let json = r.extra {
            let extra = try decoder.decode(MessageExtra.self, from: Data(json.utf8))
            m.images = (extra.images ?? []).map {
                var i = $0; i.path = i.path.map(absolute); return i
            }
            if var a = extra.attachment {
                a.path = a.path.map(absolute)
                a.poster = a.poster.map(absolute)
                m.attachment = a
            }
            m.reactions = extra.reactions ?? []
            m.reply = extra.reply
            m.spans = extra.spans ?? []
            m.forwardedFrom = extra.forwardedFrom
        }
        return StoredMessage(seq: r.seq, message: m)
    }

    /// The seconds a message's wall time is ahead of UTC (nil: the export gave none).
    static func utcOffset(_ m: Message) -> Int? {
        m.wallTime.map { $0.localSeconds - Int(m.date.timeIntervalSince1970.rounded(.down)) }
    }

    // MARK: live changes, the same rules on every backend

    /// The message a client adds, before it has a sequence number: the owner's messages are
    /// outgoing; a reply quotes the message it answers.
    static func newMessage(_ new: NewMessage, owner: String?, answered: (seq: Int64, message: Message)?) -> Message {
        var m = Message(
            sender: new.sender, direction: new.sender == owner ? .outgoing : .incoming, date: new.date,
            text: new.text, id: new.clientID)
        if new.text != nil, TextSpan.problem(new.spans, text: new.text) == nil { m.spans = new.spans }
        if let photo = new.photo { m.images = [photo] }
        // Committed: "Sent" under the newest message of whoever sees it as theirs (the
        // renderers show a status on outgoing messages only).
        m.status = .sent
        if let (seq, a) = answered {
            m.reply = ReplyReference(id: a.id ?? "seq:\(seq)", sender: a.sender, text: snippet(a))
        }
        return m
    }

    static func badSender(_ sender: String, _ conversation: Int64, _ senders: Set<String>) -> LiveError {
        LiveError(.invalid, "sender \"\(sender)\" is not in conversation \(conversation); expected one of \(senders.sorted().joined(separator: ", "))")
    }

    /// Checks who may change message `seq` (its author; anyone in the conversation reacts).
    static func checkChange(_ m: Message, seq: Int64, author: String?, reactor: String?, conversation: Int64, senders: Set<String>) throws {
        if let author, m.sender != author {
            throw LiveError(
                .forbidden, "message \(seq) is \(m.sender.map { "\"\($0)\"'s" } ?? "a system line"), not \"\(author)\"'s; only its author may change it")
        }
        if let reactor, !senders.contains(reactor) { throw badSender(reactor, conversation, senders) }
    }

    static func edit(_ m: inout Message, seq: Int64, text: String, spans: [TextSpan]) throws {
        guard m.attachment?.kind != .deleted else { throw LiveError(.conflict, "message \(seq) is deleted; it cannot be edited") }
        m.text = text
        m.spans = TextSpan.problem(spans, text: text) == nil ? spans : []
        m.edited = Date()
    }

    /// What a reply that quoted a deleted message shows in its place: nothing of the deleted
    /// text is repeated anywhere.
    static let deletedQuote = "This message was deleted"

    /// The id replies quote message `seq` by (`newMessage`; imported replies use the export's id).
    static func quoteID(of m: Message, seq: Int64) -> String { m.id ?? "seq:\(seq)" }

    /// A reply's quote of a message that was deleted; false when it shows nothing of it already.
    static func forgetQuote(_ m: inout Message) -> Bool {
        guard var reply = m.reply, reply.text != deletedQuote else { return false }
        reply.text = deletedQuote
        m.reply = reply
        return true
    }

    static func delete(_ m: inout Message, seq: Int64) throws {
        guard m.attachment?.kind != .deleted else { throw LiveError(.conflict, "message \(seq) is deleted already") }
        m.text = nil
        m.images = []
        m.reply = nil
        m.reactions = []
        m.attachment = MediaAttachment(kind: .deleted)
    }

    /// Adds (`on`) or takes back `sender`'s `emoji`, counted up and down (an imported reaction
    /// may count people it does not name).
    static func react(_ m: inout Message, seq: Int64, emoji: String, sender: String, on: Bool) throws {
        guard m.attachment?.kind != .deleted else { throw LiveError(.conflict, "message \(seq) is deleted; it cannot be reacted to") }
        var reactions = m.reactions
        if let i = reactions.firstIndex(where: { $0.emoji == emoji }) {
            var r = reactions[i]
            if on, !r.senders.contains(sender) { r.senders.append(sender); r.count += 1 }
            if !on, r.senders.contains(sender) { r.senders.removeAll { $0 == sender }; r.count -= 1 }
            if r.count <= 0 { reactions.remove(at: i) } else { reactions[i] = r }
        } else if on {
            reactions.append(Reaction(emoji: emoji, count: 1, senders: [sender]))
        }
        m.reactions = reactions
    }
}

/// A message's stored columns, as both backends keep them.
struct MessageRow {
    var seq: Int64
    var date: Double
    var utcOffset: Int?
    var sender: String?
    var outgoing: Bool
    var system: Bool
    var text: String?
    var status: String?
    var statusDate: Double?
    var sourceID: String?
    var extra: String?
    var edited: Double?
}
