import BubbleCore
import BubbleMarkup
import BubbleStore
import Foundation
import Hummingbird

// The JSON API's answers as types (`ResponseEncodable`): docs/SERVER.md lists them. Fields a
// client may test for `null` are always written (`null` when absent); the others only when set.
// One answer keeps JSON written by hand: a viewer window (`/c/{id}/view`, `JSONBytes`), the
// measured hot path of a scrolling reader (JSONSerialization spent four times what writing its
// rows costs; see Pages.view).

/// A participant: `{"id", "name"}`.
struct PersonJSON: Codable, Sendable {
    var id: String
    var name: String
}

/// A conversation: `{"id", "title", "format", "messageCount", "participants", "first", "last"}`;
/// a new live one also `rev` and `owner`.
struct ConversationJSON: ResponseEncodable, Sendable {
    var id: Int64
    var title: String
    var format: String
    var messageCount: Int
    var participants: [PersonJSON]
    var first: String?
    var last: String?
    var rev: Int64?
    var owner: String?
    /// Messages the asking user has not read (added live, by others); nil where not asked.
    var unread: Int?

    init(_ c: StoredConversation) {
        id = c.id; title = c.title; format = c.sourceFormat; messageCount = c.messageCount
        participants = c.participants.map { PersonJSON(id: $0.id, name: $0.name) }
        first = c.first.map(API.iso); last = c.last.map(API.iso)
    }

    enum CodingKeys: String, CodingKey { case id, title, format, messageCount, participants, first, last, rev, owner, unread }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id); try c.encode(title, forKey: .title); try c.encode(format, forKey: .format)
        try c.encode(messageCount, forKey: .messageCount); try c.encode(participants, forKey: .participants)
        try c.encode(first, forKey: .first); try c.encode(last, forKey: .last)
        try c.encodeIfPresent(rev, forKey: .rev); try c.encodeIfPresent(owner, forKey: .owner); try c.encodeIfPresent(unread, forKey: .unread)
    }
}

/// A photo, sticker or file of a message; `id` and `url` when the store holds it.
struct AttachmentJSON: Encodable, Sendable {
    var kind: String
    var name: String?
    var width: Double?
    var height: Double?
    var label: String?
    var type: String?
    var size: Int?
    var id: String?
    var url: String?

    enum CodingKeys: String, CodingKey { case kind, name, width, height, label, type, size, id, url }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind); try c.encode(name, forKey: .name)
        try c.encodeIfPresent(width, forKey: .width); try c.encodeIfPresent(height, forKey: .height)
        try c.encodeIfPresent(label, forKey: .label); try c.encodeIfPresent(type, forKey: .type); try c.encodeIfPresent(size, forKey: .size)
        try c.encodeIfPresent(id, forKey: .id); try c.encodeIfPresent(url, forKey: .url)
    }
}

/// A styled range of a message's text, in UTF-8 bytes (docs/FORMATS.md).
struct SpanJSON: Encodable, Sendable {
    var style: String
    var start: Int
    var end: Int
    var url: String?
}

struct ReactionJSON: Encodable, Sendable {
    var emoji: String
    var count: Int
    var senders: [String]
}

/// The message a reply quotes: `{"id", "sender", "text"}`, each `null` when unknown.
struct ReplyJSON: Encodable, Sendable {
    var id: String?
    var sender: String?
    var text: String?
    enum CodingKeys: String, CodingKey { case id, sender, text }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id); try c.encode(sender, forKey: .sender); try c.encode(text, forKey: .text)
    }
}

/// A message as the API gives it; a live change's message also has `rev`, `clientId`, `edited`
/// and `deleted`.
struct MessageJSON: Encodable, Sendable {
    var seq: Int64
    var date: String
    /// `incoming`, `outgoing` or `system`.
    var side: String
    var text: String?
    var attachments: [AttachmentJSON]
    var sender: String?
    var senderName: String?
    /// The export's id, or the client's id of a live message.
    var id: String?
    var spans: [SpanJSON]?
    /// What to type to get the text again (the composer edits it), when it differs from `text`.
    var markup: String?
    var forwardedFrom: String?
    var status: String?
    var reactions: [ReactionJSON]?
    var reply: ReplyJSON?
    var rev: Int64?
    var clientId: String?
    var edited: String?
    var deleted: Bool?

    init(_ s: StoredMessage, names: [String: String], media: String) {
        let m = s.message
        // A file kept in the store: its id and URL (`/api/v1/attachments/{id}`).
        func stored(_ path: String?) -> (id: String?, url: String?) {
            guard let path, path.hasPrefix(media + "/") else { return (nil, nil) }
            let id = (path as NSString).lastPathComponent
            return (id, "/api/v1/attachments/" + id)
        }
        attachments = m.images.map { i in
            let (id, url) = stored(i.path)
            return AttachmentJSON(kind: i.sticker ? "sticker" : "photo", name: i.name, width: i.width, height: i.height, id: id, url: url)
        }
        if let a = m.attachment {
            let (id, url) = stored(a.path)
            attachments.append(
                AttachmentJSON(
                    kind: a.kind.rawValue, name: a.fileName, label: a.displayText, type: a.mimeType, size: a.byteSize,
                    id: id, url: url))
        }
        seq = s.seq
        date = API.iso(m.date)
        side = m.kind == .system ? "system" : m.direction.rawValue
        text = m.text
        sender = m.sender
        senderName = m.sender.flatMap { names[$0] }
        id = m.id
        if !m.spans.isEmpty {
            spans = m.spans.map { SpanJSON(style: $0.style.rawValue, start: $0.range.lowerBound, end: $0.range.upperBound, url: $0.url) }
            if let text = m.text {
                let typed = ChatMarkup.format(text, spans: m.spans)
                if typed != text { markup = typed }
            }
        }
        forwardedFrom = m.forwardedFrom
        status = m.status?.rawValue
        if !m.reactions.isEmpty { reactions = m.reactions.map { ReactionJSON(emoji: $0.emoji, count: $0.count, senders: $0.senders) } }
        reply = m.reply.map { ReplyJSON(id: $0.id, sender: $0.sender, text: $0.text) }
    }

    /// A message of a live change.
    init(_ change: StoredChange, names: [String: String], media: String) {
        self.init(change.message, names: names, media: media)
        rev = change.rev
        clientId = change.clientID
        edited = change.message.message.edited.map(API.iso)
        if change.message.message.attachment?.kind == .deleted { deleted = true }
    }

    enum CodingKeys: String, CodingKey {
        case seq, date, side, text, attachments, sender, senderName, id, spans, markup, forwardedFrom, status, reactions, reply, rev, clientId,
            edited, deleted
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(seq, forKey: .seq); try c.encode(date, forKey: .date); try c.encode(side, forKey: .side)
        try c.encode(text, forKey: .text); try c.encode(attachments, forKey: .attachments)
        try c.encode(sender, forKey: .sender); try c.encode(senderName, forKey: .senderName)
        try c.encodeIfPresent(id, forKey: .id); try c.encodeIfPresent(spans, forKey: .spans); try c.encodeIfPresent(markup, forKey: .markup)
        try c.encodeIfPresent(forwardedFrom, forKey: .forwardedFrom); try c.encodeIfPresent(status, forKey: .status)
        try c.encodeIfPresent(reactions, forKey: .reactions); try c.encodeIfPresent(reply, forKey: .reply)
        try c.encodeIfPresent(rev, forKey: .rev); try c.encodeIfPresent(clientId, forKey: .clientId)
        try c.encodeIfPresent(edited, forKey: .edited); try c.encodeIfPresent(deleted, forKey: .deleted)
    }
}

/// `GET …/messages`: `{"conversation", "messages"}`.
struct WindowJSON: ResponseEncodable, Sendable {
    var conversation: Int64
    var messages: [MessageJSON]
}

/// `GET …/days`: `{"conversation", "timeZone", "days": [{"date", "count"}]}`.
struct DaysJSON: ResponseEncodable, Sendable {
    struct Day: Codable, Sendable { var date: String; var count: Int }
    var conversation: Int64
    var timeZone: String
    var days: [Day]
}

/// `GET /api/v1/search`: `{"hits": [{"conversation", "seq", "date", "sender", "senderID", "text", "snippet"}]}`.
struct SearchJSON: ResponseEncodable, Sendable {
    struct Hit: Encodable, Sendable {
        var conversation: Int64
        var seq: Int64
        var date: String
        var sender: String?
        var senderID: String?
        var text: String
        var snippet: String
        /// The snippet as [before, match, after] (brackets in the text stay text).
        var parts: [String] = []
        enum CodingKeys: String, CodingKey { case conversation, seq, date, sender, senderID, text, snippet, parts }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(conversation, forKey: .conversation); try c.encode(seq, forKey: .seq); try c.encode(date, forKey: .date)
            try c.encode(sender, forKey: .sender); try c.encode(senderID, forKey: .senderID)
            try c.encode(text, forKey: .text); try c.encode(snippet, forKey: .snippet); try c.encode(parts, forKey: .parts)
        }
    }
    var hits: [Hit]
    /// Every match's count (not only the hits given), and per conversation, most first.
    var total: Int = 0
    var conversations: [Count] = []
    struct Count: Encodable, Sendable { var id: Int64; var count: Int }
}

/// A live change: `{"kind", "rev", "message"}`; on the socket also `"type": "change"` and
/// `conversation`.
struct ChangeJSON: Encodable, Sendable {
    var type: String?
    var kind: String
    var rev: Int64
    var conversation: Int64?
    var message: MessageJSON

    init(_ change: StoredChange, names: [String: String], media: String, frame: Bool) {
        type = frame ? "change" : nil
        kind = change.kind.rawValue
        rev = change.rev
        conversation = frame ? change.conversation : nil
        message = MessageJSON(change, names: names, media: media)
    }

    /// The socket's frame, as text.
    static func frame(_ change: StoredChange, names: [String: String], media: String) -> String {
        let data = (try? BubbleRequestContext.encoder.encode(ChangeJSON(change, names: names, media: media, frame: true))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

/// `GET …/changes`: `{"conversation", "rev", "changes"}`.
struct ChangesJSON: ResponseEncodable, Sendable {
    var conversation: Int64
    var rev: Int64
    var changes: [ChangeJSON]
}

/// A message of a live write, as the JSON API answers it (201 new, 200 sent before).
struct MessageResponse: ResponseEncodable, Sendable {
    var message: MessageJSON
    func encode(to encoder: any Encoder) throws { try message.encode(to: encoder) }
}

/// `POST …/photos`: `{"photo": id, "width", "height"}`.
struct PhotoJSON: ResponseEncodable, Sendable {
    var photo: String
    var width: Int
    var height: Int
}

/// `POST /api/v1/imports`: what went where — the first conversation's fields at the top (an
/// export of one chat), every conversation in `conversations`, those that failed in `failed`,
/// and `summary` in words.
struct ImportJSON: ResponseEncodable, Sendable {
    struct One: Codable, Sendable {
        var id: Int64
        var title: String
        var added: Int
        var skipped: Int
        var attachments: Int
        var new: Bool
    }
    struct Failed: Codable, Sendable {
        var name: String
        var reason: String
    }
    /// At least one.
    var conversations: [One]
    var failed: [Failed]
    var summary: String

    private enum Keys: String, CodingKey { case conversations, failed, summary }

    /// The first conversation's fields, then the lists, in one object.
    func encode(to encoder: any Encoder) throws {
        try conversations.first?.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(conversations, forKey: .conversations)
        try c.encode(failed, forKey: .failed)
        try c.encode(summary, forKey: .summary)
    }
}

/// `GET /healthz`.
struct HealthJSON: ResponseEncodable, Sendable {
    var status: String
}
