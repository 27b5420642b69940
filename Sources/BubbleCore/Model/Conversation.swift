import Foundation

/// Whose side a message is on: incoming on the left, outgoing (yours) on the right.
public enum Direction: String, Hashable, Sendable, Codable {
    case incoming, outgoing
}

/// Someone in the conversation.
public struct Participant: Hashable, Sendable, Codable {
    public var id: String
    public var name: String
    public init(id: String, name: String) { self.id = id; self.name = name }
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

/// One entry of a conversation: a message in a bubble, or a system line (no bubble, centred).
public struct Message: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable { case message, system }
    public var kind: Kind
    /// `Participant.id` of the author; nil for system lines.
    public var sender: String?
    public var direction: Direction
    public var date: Date
    public var text: String?
    public var image: ImageAttachment?

    public init(kind: Kind = .message, sender: String?, direction: Direction, date: Date,
                text: String? = nil, image: ImageAttachment? = nil) {
        self.kind = kind; self.sender = sender; self.direction = direction; self.date = date
        self.text = text; self.image = image
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
    public init(title: String? = nil, participants: [Participant] = [], messages: [Message] = []) {
        self.title = title; self.participants = participants; self.messages = messages
    }
}
