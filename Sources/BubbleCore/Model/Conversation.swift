import Foundation

/// Whose side a message is on: incoming on the left, outgoing (yours) on the right.
public enum Direction: String, Hashable, Sendable, Codable {
    case incoming, outgoing
}

/// Someone in the conversation.
public struct Participant: Hashable, Sendable, Codable {
    public var id: String
    public var name: String
    /// Avatar picture, relative to the conversation file like photos; nil draws initials.
    public var avatar: String?
    public init(id: String, name: String, avatar: String? = nil) { self.id = id; self.name = name; self.avatar = avatar }
}

/// A tapback / reaction on a message: the emoji, how many people chose it, and who (participant
/// ids) when the source says.
public struct Reaction: Hashable, Sendable, Codable {
    public var emoji: String
    public var count: Int
    public var senders: [String]
    public init(emoji: String, count: Int = 1, senders: [String] = []) {
        self.emoji = emoji; self.count = count; self.senders = senders
    }

    enum CodingKeys: String, CodingKey { case emoji, count, senders }
    /// `count` defaults to the number of senders (at least 1), `senders` to none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        emoji = try c.decode(String.self, forKey: .emoji)
        senders = try c.decodeIfPresent([String].self, forKey: .senders) ?? []
        count = try c.decodeIfPresent(Int.self, forKey: .count) ?? max(1, senders.count)
    }
}

/// The message a reply answers: its source id, its author (participant id) and a snippet of its
/// text (or a placeholder such as "Photo"), resolved when the conversation is read.
public struct ReplyReference: Hashable, Sendable, Codable {
    public var id: String?
    public var sender: String?
    public var text: String?
    public init(id: String? = nil, sender: String? = nil, text: String? = nil) {
        self.id = id; self.sender = sender; self.text = text
    }
}

/// What became of an outgoing message.
public enum MessageStatus: String, Hashable, Sendable, Codable {
    case sending, sent, delivered, read, failed
}

/// A photo inside a bubble. `width`/`height` are its natural size in points (pixels ÷ scale);
/// `path` is where the renderer finds the pixels, relative to the conversation file.
public struct ImageAttachment: Hashable, Sendable, Codable {
    public var path: String?
    public var width: Double
    public var height: Double
    public init(path: String? = nil, width: Double, height: Double) {
        self.path = path; self.width = width; self.height = height
    }

    enum CodingKeys: String, CodingKey { case path, width, height }
    /// `width` and `height` may be left out (0): the renderer reads them from the file.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try c.decodeIfPresent(String.self, forKey: .path)
        width = try c.decodeIfPresent(Double.self, forKey: .width) ?? 0
        height = try c.decodeIfPresent(Double.self, forKey: .height) ?? 0
    }
}

/// What stands in a bubble for content the export does not hold: media it left out
/// ("<Media omitted>", "image omitted" and their translations), a file it names but that is not
/// a photo, or a message deleted before the export. Drawn by every renderer as a small labelled
/// bubble (`displayText`); `convert` keeps the kind.
///
///     MediaPlaceholder(kind: .photo, label: "<Medien ausgeschlossen>")   // → "📷 Photo omitted"
public struct MediaPlaceholder: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        case photo, video, gif, sticker, audio, voice, document, contact, location, poll, viewOnce = "view-once"
        /// Media of a kind the export does not say ("<Media omitted>").
        case media
        /// The message was deleted before the export ("This message was deleted").
        case deleted
    }
    public var kind: Kind
    /// The export's own words, as written ("<Media omitted>", "Bild weggelassen").
    public var label: String
    /// The file the export names, when it names one ("VID-20211014-WA0003.mp4").
    public var fileName: String?

    public init(kind: Kind, label: String, fileName: String? = nil) {
        self.kind = kind; self.label = label; self.fileName = fileName
    }

    /// What a bubble shows: a symbol and the kind, with the file name when there is one
    /// ("🎬 Video: VID-20211014-WA0003.mp4", "📷 Photo omitted", "🚫 This message was deleted").
    public var displayText: String {
        let (symbol, name): (String, String) = switch kind {
        case .photo: ("📷", "Photo")
        case .video: ("🎬", "Video")
        case .gif: ("🎞", "GIF")
        case .sticker: ("💟", "Sticker")
        case .audio: ("🎵", "Audio")
        case .voice: ("🎤", "Voice message")
        case .document: ("📄", "Document")
        case .contact: ("👤", "Contact card")
        case .location: ("📍", "Location")
        case .poll: ("📊", "Poll")
        case .viewOnce: ("1️⃣", "View-once media")
        case .media: ("📎", "Media")
        case .deleted: ("🚫", "This message was deleted")
        }
        if kind == .deleted { return symbol + " " + name }
        if let fileName, !fileName.isEmpty { return symbol + " " + name + ": " + fileName }
        return symbol + " " + name + " omitted"
    }
}

/// One entry of a conversation: a message in a bubble, or a system line (no bubble, centred).
public struct Message: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable { case message, system }
    public var kind: Kind
    /// `Participant.id` of the author; nil for system lines.
    public var sender: String?
    public var direction: Direction
    /// The instant. For a message whose source gives only a wall-clock time (`wallTime` set), it
    /// is that time read in the zone the conversation was imported in (`--tz`).
    public var date: Date
    /// The wall-clock time the source gave, when it gave no instant (WhatsApp lines, Telegram
    /// `date` without `date_unixtime`): written back as such, without an offset. nil: `date` is
    /// the source's own instant.
    public var wallTime: WallTime?
    public var text: String?
    /// Content the export does not hold (omitted media, a deleted message): drawn as a labelled
    /// bubble, above `text` when there is text too.
    public var placeholder: MediaPlaceholder?
    /// Photos of the message, in order (several make a grid); `text` is their caption.
    public var images: [ImageAttachment]
    /// The source's own id of this message (for replies), when it has one.
    public var id: String?
    public var reactions: [Reaction]
    public var reply: ReplyReference?
    /// Outgoing messages: sent, delivered, read (at `statusDate`), failed.
    public var status: MessageStatus?
    public var statusDate: Date?

    /// The first photo; setting it replaces all photos.
    public var image: ImageAttachment? {
        get { images.first }
        set { images = newValue.map { [$0] } ?? [] }
    }

    /// The text a bubble shows: the placeholder's label, then the message's own text.
    public var shownText: String? {
        guard let placeholder else { return text }
        guard let text, !text.isEmpty else { return placeholder.displayText }
        return placeholder.displayText + "\n" + text
    }

    public init(kind: Kind = .message, sender: String?, direction: Direction, date: Date,
                text: String? = nil, image: ImageAttachment? = nil, images: [ImageAttachment] = [],
                id: String? = nil, reactions: [Reaction] = [], reply: ReplyReference? = nil,
                status: MessageStatus? = nil, statusDate: Date? = nil, wallTime: WallTime? = nil,
                placeholder: MediaPlaceholder? = nil) {
        self.kind = kind; self.sender = sender; self.direction = direction; self.date = date
        self.wallTime = wallTime; self.placeholder = placeholder
        self.text = text; self.images = (image.map { [$0] } ?? []) + images
        self.id = id; self.reactions = reactions; self.reply = reply
        self.status = status; self.statusDate = statusDate
    }

    public static func system(_ text: String, date: Date) -> Message {
        Message(kind: .system, sender: nil, direction: .incoming, date: date, text: text)
    }
}

/// A whole conversation: plain values, no rendering state.
public struct Conversation: Hashable, Sendable, Codable {
    public var title: String?
    public var participants: [Participant]
    public var messages: [Message]
    /// Participant ids shown as typing after the last message (a three-dot bubble each).
    public var typing: [String]
    public init(title: String? = nil, participants: [Participant] = [], messages: [Message] = [], typing: [String] = []) {
        self.title = title; self.participants = participants; self.messages = messages; self.typing = typing
    }

    enum CodingKeys: String, CodingKey { case title, participants, messages, typing }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        title = try c.decodeIfPresent(String.self, forKey: .title)
        participants = try c.decodeIfPresent([Participant].self, forKey: .participants) ?? []
        messages = try c.decodeIfPresent([Message].self, forKey: .messages) ?? []
        typing = try c.decodeIfPresent([String].self, forKey: .typing) ?? []
    }

    /// A group chat: more than two people (sender names and avatars show in group chats).
    public var isGroup: Bool { participants.count > 2 }

    public func participant(_ id: String?) -> Participant? {
        guard let id else { return nil }
        return participants.first { $0.id == id }
    }
}
