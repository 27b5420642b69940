import Foundation

/// Whose side a message is on: incoming on the left, outgoing (yours) on the right.
public enum Direction: String, Hashable, Sendable, Codable {
    /// From someone else: on the left (on the right in a right-to-left layout).
    case incoming
    /// From the conversation's owner: on the right.
    case outgoing
}

/// Someone in the conversation.
public struct Participant: Hashable, Sendable, Codable {
    /// The id messages name as their `Message.sender` (a phone number, a user id, "me").
    public var id: String
    /// The name shown above bubbles and in titles.
    public var name: String
    /// Avatar picture, relative to the conversation file like photos; nil draws initials.
    public var avatar: String?
    /// A participant; `avatar` is a picture file, relative like photos.
    public init(id: String, name: String, avatar: String? = nil) { self.id = id; self.name = name; self.avatar = avatar }
}

/// A tapback / reaction on a message: the emoji, how many people chose it, and who (participant
/// ids) when the source says.
public struct Reaction: Hashable, Sendable, Codable {
    /// The emoji as text ("❤️", "👍").
    public var emoji: String
    /// How many people reacted with it.
    public var count: Int
    /// Who reacted (participant ids), when the export says.
    public var senders: [String]
    /// A reaction of `emoji` by `count` people.
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
    /// The replied-to message's `Message.id`, when the export gives it.
    public var id: String?
    /// The replied-to message's author (a participant id).
    public var sender: String?
    /// The replied-to text as the export quotes it.
    public var text: String?
    /// A reference; at least one of its parts is expected.
    public init(id: String? = nil, sender: String? = nil, text: String? = nil) {
        self.id = id; self.sender = sender; self.text = text
    }
}

/// What became of an outgoing message.
public enum MessageStatus: String, Hashable, Sendable, Codable {
    /// On its way (a live conversation's message not yet stored).
    case sending
    /// Sent from this phone.
    case sent
    /// Delivered to the other phone.
    case delivered
    /// Read by the other person (at `Message.statusDate`).
    case read
    /// Not sent: a red badge beside the bubble.
    case failed
}

/// A photo inside a bubble. `width`/`height` are its natural size in points (pixels ÷ scale);
/// `path` is where the renderer finds the pixels, relative to the conversation file.
public struct ImageAttachment: Hashable, Sendable, Codable {
    /// Where the renderer finds the pixels, relative to the conversation file; nil: a grey placeholder.
    public var path: String?
    /// Natural width in points.
    public var width: Double
    /// Natural height in points.
    public var height: Double
    /// The file's name inside the export ("IMG-20211014-WA0001.jpg" of chat.zip), when `path`
    /// is a copy taken out of it: what a warning about the file names.
    public var name: String?
    /// A sticker: drawn as the apps do, without a bubble, transparency kept, at sticker size.
    public var sticker: Bool
    /// A video's frame (its poster, or a dark frame when `path` is nil), drawn with a play
    /// symbol. Set by the renderers from a video attachment; not written to files.
    public var videoFrame: Bool = false
    /// A photo of `width` × `height` points at `path`.
    public init(path: String? = nil, width: Double, height: Double, name: String? = nil, sticker: Bool = false) {
        self.path = path; self.width = width; self.height = height; self.name = name; self.sticker = sticker
    }

    enum CodingKeys: String, CodingKey { case path, width, height, name, sticker }
    /// `width` and `height` may be left out (0): the renderer reads them from the file.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try c.decodeIfPresent(String.self, forKey: .path)
        width = try c.decodeIfPresent(Double.self, forKey: .width) ?? 0
        height = try c.decodeIfPresent(Double.self, forKey: .height) ?? 0
        name = try c.decodeIfPresent(String.self, forKey: .name)
        sticker = try c.decodeIfPresent(Bool.self, forKey: .sticker) ?? false
    }
}

/// What a message carries besides its text and photos: a video, a voice note, a document, a
/// contact card, a location, a sticker that cannot be drawn — or media the export left out
/// ("<Media omitted>", "image omitted" and their translations), or a message deleted before the
/// export. Every importer fills what its format says; the renderers draw it as a labelled bubble
/// (`displayText`), a video with its poster frame and a play symbol; `convert` keeps every field.
///
///     MediaAttachment(kind: .voice, fileName: "PTT-20211014-WA0004.opus", path: "PTT-20211014-WA0004.opus",
///                byteSize: 5_210, duration: 7.4)                       // → "🎤 Voice message · 0:07"
///     MediaAttachment(kind: .media, label: "<Medien ausgeschlossen>")       // → "📎 Media omitted"
public struct MediaAttachment: Hashable, Sendable, Codable {
    /// What an attachment is, which decides how its bubble looks.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// A picture the export did not hold (or not as a photo).
        case photo
        /// A video: its poster frame with a play symbol, or a labelled bubble.
        case video
        /// An animated GIF.
        case gif
        /// A sticker: drawn without a bubble.
        case sticker
        /// A music or sound file.
        case audio
        /// A voice note: a play symbol and its duration.
        case voice
        /// A file (PDF, document): its name, size and pages.
        case document
        /// A shared contact card: its name.
        case contact
        /// A shared location: its title and coordinates.
        case location
        /// A poll: its question and answers.
        case poll
        /// A photo or video to be viewed once, which exports leave out.
        case viewOnce = "view-once"
        /// Media of a kind the export does not say ("<Media omitted>").
        case media
        /// The message was deleted before the export ("This message was deleted").
        case deleted
    }

    /// The fields, kept behind one reference (copied on write): a message without an attachment
    /// pays one word for it, and copying a message copies no strings of it.
    struct Fields: Hashable, Codable {
        var kind: Kind
        var label: String?
        var fileName: String?
        var path: String?
        var mimeType: String?
        var byteSize: Int?
        var duration: Double?
        var width: Double?
        var height: Double?
        var poster: String?
        var pageCount: Int?
        var title: String?
        var latitude: Double?
        var longitude: Double?
        var problem: String?
        /// A poll's answers (`kind == .poll`; `title` is its question).
        var answers: [PollAnswer]?
        /// People who voted in a poll, when the export says.
        var voters: Int?
    }
    final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }
    private var storage: Storage

    private mutating func update(_ change: (inout Fields) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        change(&storage.fields)
    }

    /// The attachment's kind.
    public var kind: Kind {
        get { storage.fields.kind }
        set { update { $0.kind = newValue } }
    }
    /// The export's own words for media it left out ("<Media omitted>", "Bild weggelassen"); nil
    /// when the export names or holds the file.
    public var label: String? {
        get { storage.fields.label }
        set { update { $0.label = newValue } }
    }
    /// The file's name as the export gives it ("VID-20211014-WA0003.mp4", "Trip plan.pdf").
    public var fileName: String? {
        get { storage.fields.fileName }
        set { update { $0.fileName = newValue } }
    }
    /// Where the file is, relative to the conversation file like photos; nil when the export
    /// does not hold it.
    public var path: String? {
        get { storage.fields.path }
        set { update { $0.path = newValue } }
    }
    /// The file's MIME type, when the export says it.
    public var mimeType: String? {
        get { storage.fields.mimeType }
        set { update { $0.mimeType = newValue } }
    }
    /// The file's size in bytes, when known.
    public var byteSize: Int? {
        get { storage.fields.byteSize }
        set { update { $0.byteSize = newValue } }
    }
    /// Seconds (video, audio, voice notes).
    public var duration: Double? {
        get { storage.fields.duration }
        set { update { $0.duration = newValue } }
    }
    /// Natural size in points (video, sticker), when known.
    public var width: Double? {
        get { storage.fields.width }
        set { update { $0.width = newValue } }
    }
    /// Natural height in points (video, sticker), when known.
    public var height: Double? {
        get { storage.fields.height }
        set { update { $0.height = newValue } }
    }
    /// A poster frame of a video (a picture file, relative like `path`).
    public var poster: String? {
        get { storage.fields.poster }
        set { update { $0.poster = newValue } }
    }
    /// Pages of a document (PDF).
    public var pageCount: Int? {
        get { storage.fields.pageCount }
        set { update { $0.pageCount = newValue } }
    }
    /// A contact's name, a location's or a poll's title, a sticker's emoji.
    public var title: String? {
        get { storage.fields.title }
        set { update { $0.title = newValue } }
    }
    /// A location's latitude in degrees.
    public var latitude: Double? {
        get { storage.fields.latitude }
        set { update { $0.latitude = newValue } }
    }
    /// A location's longitude in degrees.
    public var longitude: Double? {
        get { storage.fields.longitude }
        set { update { $0.longitude = newValue } }
    }
    /// A poll's answers with their votes (`kind == .poll`, `title` its question).
    public var answers: [PollAnswer]? {
        get { storage.fields.answers }
        set { update { $0.answers = newValue } }
    }
    /// How many people voted in a poll, when the export says.
    public var voters: Int? {
        get { storage.fields.voters }
        set { update { $0.voters = newValue } }
    }
    /// Why the file could not be shown ("not an image the renderer reads"), when it could not.
    public var problem: String? {
        get { storage.fields.problem }
        set { update { $0.problem = newValue } }
    }

    /// An attachment of `kind`; every other parameter is the property of the same name.
    public init(
        kind: Kind, label: String? = nil, fileName: String? = nil, path: String? = nil,
        mimeType: String? = nil, byteSize: Int? = nil, duration: Double? = nil, width: Double? = nil,
        height: Double? = nil, poster: String? = nil, pageCount: Int? = nil, title: String? = nil,
        latitude: Double? = nil, longitude: Double? = nil, problem: String? = nil
    ) {
        storage = Storage(
            Fields(
                kind: kind, label: label, fileName: fileName, path: path, mimeType: mimeType,
                byteSize: byteSize, duration: duration, width: width, height: height, poster: poster,
                pageCount: pageCount, title: title, latitude: latitude, longitude: longitude,
                problem: problem))
    }

    public static func == (a: MediaAttachment, b: MediaAttachment) -> Bool { a.storage === b.storage || a.storage.fields == b.storage.fields }
    public func hash(into hasher: inout Hasher) { hasher.combine(storage.fields) }
    public init(from decoder: any Decoder) throws { storage = Storage(try Fields(from: decoder)) }
    public func encode(to encoder: any Encoder) throws { try storage.fields.encode(to: encoder) }

    /// The symbol and the kind's name shown in the bubble.
    public var symbolAndName: (String, String) { kind.symbolAndName }
}

extension MediaAttachment.Kind {
    /// The symbol and the name of the kind, as bubbles and galleries show them.
    public var symbolAndName: (String, String) {
        switch self {
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
    }
}

extension MediaAttachment {
    /// What a bubble shows: a symbol, the kind or the file's name, and what is known of it.
    ///
    ///     📎 Media omitted
    ///     🎬 Video · 0:12                       (a video: its frame is drawn above)
    ///     🎤 Voice message · 0:07
    ///     📄 Trip plan.pdf\nPDF · 2 pages · 14 KB
    ///     👤 Ann Lee
    ///     📍 Eiffel Tower\n48.85837, 2.29448
    ///     📷 Photo: IMG-….jpg (could not be read)
    public var displayText: String {
        let (symbol, name) = symbolAndName
        if kind == .deleted { return symbol + " " + name }
        if label != nil, path == nil, fileName == nil { return symbol + " " + name + " omitted" }
        var details: [String] = []
        if let duration, duration.isFinite, duration >= 0 { details.append(Self.clock(duration)) }
        if let pageCount { details.append(Plural.count(pageCount, "page")) }
        if let byteSize, kind == .document || kind == .audio { details.append(Self.bytes(byteSize)) }
        if problem != nil || (path == nil && fileName != nil) {
            let why = problem != nil ? "could not be read" : "not in the export"
            return symbol + " " + name + ": " + (fileName ?? "") + " (" + why + ")"
        }
        switch kind {
        case .document, .audio:
            let type = fileName.flatMap(Self.typeName) ?? name
            return symbol + " " + (fileName ?? name) + "\n" + ([type] + details).joined(separator: " · ")
        case .poll:
            return pollText(symbol: symbol, name: name)
        case .contact:
            return symbol + " " + (title ?? fileName ?? name)
        case .location:
            var lines = [symbol + " " + (title ?? name)]
            if let latitude, let longitude { lines.append(Self.coordinate(latitude) + ", " + Self.coordinate(longitude)) }
            return lines.joined(separator: "\n")
        case .sticker:
            return symbol + " " + name + (title.map { " " + $0 } ?? "")
        default:
            return ([symbol + " " + name] + details).joined(separator: " · ")
        }
    }

    /// A poll as a small card of lines: the question, each answer with its votes (✓ marks the
    /// one chosen), the number of voters.
    ///
    ///     📊 Poll: Dinner?
    ///     ✓ Pizza · 3
    ///     ○ Sushi · 1
    ///     4 votes
    func pollText(symbol: String, name: String) -> String {
        var lines = [symbol + " " + name + (title.map { ": " + $0 } ?? "")]
        let answers = answers ?? []
        for a in answers { lines.append((a.chosen ? "✓ " : "○ ") + a.text + " · \(a.votes)") }
        let total = voters ?? (answers.isEmpty ? nil : answers.reduce(0) { $0 + $1.votes })
        if let total { lines.append(Plural.count(total, "vote")) }
        return lines.joined(separator: "\n")
    }

    /// "0:07", "3:25", "1:02:03".
    public static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.down))
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return s >= 3600 ? "\(s / 3600):" + two(s / 60 % 60) + ":" + two(s % 60) : "\(s / 60):" + two(s % 60)
    }

    /// "820 B", "14 KB", "2.4 MB".
    public static func bytes(_ n: Int) -> String {
        if n < 1000 { return "\(n) B" }
        if n < 1_000_000 { return "\(Int((Double(n) / 1000).rounded())) KB" }
        let mb = Double(n) / 1_000_000
        return mb < 10 ? String(format: "%.1f MB", mb) : "\(Int(mb.rounded())) MB"
    }

    static func coordinate(_ v: Double) -> String { String(format: "%.5f", v) }

    /// "PDF", "DOCX", … from a file name's extension.
    static func typeName(_ fileName: String) -> String? {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return nil }
        let ext = fileName[fileName.index(after: dot)...]
        return ext.isEmpty || ext.count > 5 ? nil : ext.uppercased()
    }
}

/// One entry of a conversation: a message in a bubble, or a system line (no bubble, centred).
public struct Message: Hashable, Sendable, Codable {
    /// A message in a bubble, or a system line (no bubble, centred).
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A message in a bubble.
        case message
        /// A system line: "Ann joined", "Messages are end-to-end encrypted".
        case system
    }
    /// A message in a bubble or a system line.
    public var kind: Kind
    /// `Participant.id` of the author; nil for system lines.
    public var sender: String?
    /// Incoming (left) or outgoing (right).
    public var direction: Direction
    /// The instant. For a message whose source gives only a wall-clock time (`wallTime` set), it
    /// is that time read in the zone the conversation was imported in (`--tz`).
    public var date: Date
    /// The wall-clock time the source gave, when it gave no instant (WhatsApp lines, Telegram
    /// `date` without `date_unixtime`): written back as such, without an offset. nil: `date` is
    /// the source's own instant.
    public var wallTime: WallTime? {
        get { rare?.fields.wallTime }
        set { setRare { $0.wallTime = newValue } }
    }
    /// The message's text (a photo's caption when there are `images`); nil without text.
    public var text: String?
    /// A file that is not a photo, media the export left out, or a deletion: drawn as a labelled
    /// bubble, above `text` (its caption) when there is text too.
    public var attachment: MediaAttachment?
    /// Photos of the message, in order (several make a grid); `text` is their caption.
    public var images: [ImageAttachment]
    /// The source's own id of this message (for replies), when it has one.
    public var id: String?
    /// The reactions to it, drawn as a pill on the bubble's top edge.
    public var reactions: [Reaction]
    /// The message this one replies to, drawn as a snippet above the bubble.
    public var reply: ReplyReference? {
        get { rare?.fields.reply }
        set { setRare { $0.reply = newValue } }
    }
    /// Outgoing messages: sent, delivered, read (at `statusDate`), failed.
    public var status: MessageStatus?
    /// When the `status` was reached ("Read 09:41").
    public var statusDate: Date? {
        get { rare?.fields.statusDate }
        set { setRare { $0.statusDate = newValue } }
    }
    /// When its text was last edited (a live conversation's edit, an export's "edited"; "edited"
    /// beside its time). Equal to `date` when the source says it was edited but not when
    /// (WhatsApp's "<This message was edited>").
    public var edited: Date? {
        get { rare?.fields.edited }
        set { setRare { $0.edited = newValue } }
    }
    /// Styled ranges of `text` (bold, italic, code, spoiler, links…), sorted by start.
    public var spans: [TextSpan] = []
    /// Who a forwarded message came from ("Forwarded from Ann" above the text); "" when the
    /// source says only that it was forwarded.
    public var forwardedFrom: String? {
        get { rare?.fields.forwardedFrom }
        set { setRare { $0.forwardedFrom = newValue } }
    }
    /// The app a message came from ("SMS", "iMessage", "WhatsApp"), in a timeline that merges
    /// several (`bubbles render --person`); nil in a conversation of one app.
    public var app: String? {
        get { rare?.fields.app }
        set { setRare { $0.app = newValue } }
    }

    /// The fields most messages leave empty, kept out of line: a message's record is 120 bytes
    /// instead of 264 (a million-message conversation in memory holds ~140 MB less). Shared
    /// between copies; a change makes a new one.
    private var rare: MessageRarities?

    private mutating func setRare(_ change: (inout MessageRarities.Fields) -> Void) {
        var fields = rare?.fields ?? MessageRarities.Fields()
        change(&fields)
        rare = fields == MessageRarities.Fields() ? nil : MessageRarities(fields)
    }

    /// A sticker alone: drawn without a bubble (`ImageAttachment.sticker`).
    public var isSticker: Bool {
        images.count == 1 && images[0].sticker && (text ?? "").isEmpty && attachment == nil && reply == nil
    }

    /// The first photo; setting it replaces all photos.
    public var image: ImageAttachment? {
        get { images.first }
        set { images = newValue.map { [$0] } ?? [] }
    }

    /// What a reply quoting this message shows of its text: the first 100 characters, each
    /// spoiler masked (`TextSpan.hidingSpoilers`), "…" when cut; nil when it has no text. Every
    /// quote (an import's replies, a live reply) is made here.
    public var quotedText: String? {
        guard let text, !text.isEmpty else { return nil }
        let t = TextSpan.hidingSpoilers(text, spans: spans)
        return t.count > 100 ? String(t.prefix(100)) + "…" : t
    }

    /// The text a bubble shows: "Forwarded from X" (a forwarded message), the attachment's
    /// label, then the message's own text, a line each.
    public var shownText: String? {
        let header = forwardedHeader
        guard attachment != nil || header != nil else { return text }
        var parts: [String] = []
        if let header { parts.append(header) }
        if let attachment { parts.append(attachment.displayText) }
        if let text, !text.isEmpty { parts.append(text) }
        return parts.joined(separator: "\n")
    }

    /// "Forwarded from Ann" ("Forwarded" when the source names nobody); nil when not forwarded.
    public var forwardedHeader: String? {
        guard let forwardedFrom else { return nil }
        return forwardedFrom.isEmpty ? "Forwarded" : "Forwarded from " + forwardedFrom
    }

    /// Where `text` starts in `shownText` (UTF-8 bytes): after the forwarded line and the
    /// attachment's label, each with its newline; 0 without them. `spans` shift by it.
    public var textOffsetInShownText: Int {
        var offset = 0
        if let header = forwardedHeader { offset += header.utf8.count + 1 }
        if let attachment { offset += attachment.displayText.utf8.count + 1 }
        return offset
    }

    /// `spans` as they fall on `shownText`, with the forwarded line in italic.
    public var shownSpans: [TextSpan] {
        // Most messages: nothing styled, nothing forwarded (no label to build for the offset).
        guard !spans.isEmpty || forwardedFrom != nil else { return [] }
        let offset = textOffsetInShownText
        guard offset > 0 else { return spans }
        var out: [TextSpan] = []
        if let header = forwardedHeader { out.append(TextSpan(.italic, 0..<header.utf8.count)) }
        guard let text, !text.isEmpty else { return out }
        for s in spans { out.append(TextSpan(s.style, (s.range.lowerBound + offset)..<(s.range.upperBound + offset), url: s.url)) }
        return out
    }

    /// A message; every parameter is the property of the same name.
    public init(
        kind: Kind = .message, sender: String?, direction: Direction, date: Date,
        text: String? = nil, image: ImageAttachment? = nil, images: [ImageAttachment] = [],
        id: String? = nil, reactions: [Reaction] = [], reply: ReplyReference? = nil,
        status: MessageStatus? = nil, statusDate: Date? = nil, wallTime: WallTime? = nil,
        attachment: MediaAttachment? = nil, spans: [TextSpan] = [], forwardedFrom: String? = nil,
        edited: Date? = nil
    ) {
        self.kind = kind; self.sender = sender; self.direction = direction; self.date = date
        self.spans = spans; self.attachment = attachment
        self.text = text; self.images = image.map { [$0] + images } ?? images
        self.id = id; self.reactions = reactions; self.status = status
        let fields = MessageRarities.Fields(wallTime: wallTime, reply: reply, statusDate: statusDate, edited: edited, forwardedFrom: forwardedFrom)
        rare = fields == MessageRarities.Fields() ? nil : MessageRarities(fields)
    }

    /// A system line (no bubble, centred) saying `text` at `date`.
    public static func system(_ text: String, date: Date) -> Message {
        Message(kind: .system, sender: nil, direction: .incoming, date: date, text: text)
    }
}

/// A whole conversation: plain values, no rendering state.
public struct Conversation: Hashable, Sendable, Codable {
    /// The conversation's name (a group's, or the other person's); nil when the export has none.
    public var title: String?
    /// Everyone who writes in it; the owner is one of them.
    public var participants: [Participant]
    /// The messages and system lines, in time order.
    public var messages: [Message]
    /// Participant ids shown as typing after the last message (a three-dot bubble each).
    public var typing: [String]
    /// A conversation; `typing` lists the participants shown typing after the last message.
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

    /// The participant with `id`; nil for nil or an id no participant has.
    public func participant(_ id: String?) -> Participant? {
        guard let id else { return nil }
        return participants.first { $0.id == id }
    }
}

/// `Message`'s rarely set fields, out of line and immutable (copy on write).
final class MessageRarities: Hashable, Sendable {
    struct Fields: Hashable, Sendable {
        var wallTime: WallTime?
        var reply: ReplyReference?
        var statusDate: Date?
        var edited: Date?
        var forwardedFrom: String?
        var app: String?
    }
    let fields: Fields
    init(_ fields: Fields) { self.fields = fields }
    static func == (a: MessageRarities, b: MessageRarities) -> Bool { a === b || a.fields == b.fields }
    func hash(into hasher: inout Hasher) { hasher.combine(fields) }
}

extension Message {
    enum CodingKeys: String, CodingKey {
        case kind, sender, direction, date, wallTime, text, attachment, images, id, reactions, reply, status, statusDate, edited, spans, forwardedFrom, app
    }

    /// The keys in the order of the fields (as the file format has always had them).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encodeIfPresent(sender, forKey: .sender)
        try c.encode(direction, forKey: .direction)
        try c.encode(date, forKey: .date)
        try c.encodeIfPresent(wallTime, forKey: .wallTime)
        try c.encodeIfPresent(text, forKey: .text)
        try c.encodeIfPresent(attachment, forKey: .attachment)
        try c.encode(images, forKey: .images)
        try c.encodeIfPresent(id, forKey: .id)
        try c.encode(reactions, forKey: .reactions)
        try c.encodeIfPresent(reply, forKey: .reply)
        try c.encodeIfPresent(status, forKey: .status)
        try c.encodeIfPresent(statusDate, forKey: .statusDate)
        try c.encodeIfPresent(edited, forKey: .edited)
        try c.encode(spans, forKey: .spans)
        try c.encodeIfPresent(forwardedFrom, forKey: .forwardedFrom)
        try c.encodeIfPresent(app, forKey: .app)
    }

    /// Every key but `date` and `direction` may be missing (files written before spans, edits
    /// and forwards existed decode as before).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            kind: try c.decodeIfPresent(Kind.self, forKey: .kind) ?? .message,
            sender: try c.decodeIfPresent(String.self, forKey: .sender),
            direction: try c.decode(Direction.self, forKey: .direction),
            date: try c.decode(Date.self, forKey: .date),
            text: try c.decodeIfPresent(String.self, forKey: .text),
            images: try c.decodeIfPresent([ImageAttachment].self, forKey: .images) ?? [],
            id: try c.decodeIfPresent(String.self, forKey: .id),
            reactions: try c.decodeIfPresent([Reaction].self, forKey: .reactions) ?? [],
            reply: try c.decodeIfPresent(ReplyReference.self, forKey: .reply),
            status: try c.decodeIfPresent(MessageStatus.self, forKey: .status),
            statusDate: try c.decodeIfPresent(Date.self, forKey: .statusDate),
            wallTime: try c.decodeIfPresent(WallTime.self, forKey: .wallTime),
            attachment: try c.decodeIfPresent(MediaAttachment.self, forKey: .attachment),
            spans: try c.decodeIfPresent([TextSpan].self, forKey: .spans) ?? [],
            forwardedFrom: try c.decodeIfPresent(String.self, forKey: .forwardedFrom),
            edited: try c.decodeIfPresent(Date.self, forKey: .edited))
        app = try c.decodeIfPresent(String.self, forKey: .app)
    }
}
