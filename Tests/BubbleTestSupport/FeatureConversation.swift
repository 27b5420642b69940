import BubbleCore
import Foundation

private let t0 = Date(timeIntervalSince1970: 1_700_000_000)  // 22:13:20 UTC
private let read = Date(timeIntervalSince1970: 1_699_954_860)  // 09:41 UTC

/// A group chat with every feature: names, avatars (initials and a picture), a reply, reactions,
/// a photo grid with a caption, a link and a phone number, emoji-only, failed and read status, typing.
public func featureConversation() -> Conversation {
    let photo = BundledSamples.folder.appendingPathComponent("demo-photo.png").path
    let p = ImageAttachment(path: photo, width: 0, height: 0)
    func m(
        _ s: String, _ text: String?, _ at: Double, images: [ImageAttachment] = [], reactions: [Reaction] = [],
        reply: ReplyReference? = nil, status: MessageStatus? = nil, statusDate: Date? = nil
    ) -> Message {
        Message(
            sender: s, direction: s == "me" ? .outgoing : .incoming, date: t0.addingTimeInterval(at), text: text,
            images: images, id: "m\(Int(at))", reactions: reactions, reply: reply, status: status, statusDate: statusDate)
    }
    return Conversation(
        title: "Features",
        participants: [
            Participant(id: "me", name: "Me"), Participant(id: "a", name: "Alice Liddell"), Participant(id: "b", name: "Bob", avatar: photo)
        ],
        messages: [
            m("a", "Look at these", 0, reactions: [Reaction(emoji: "❤️", count: 2)]),
            m("a", "Trip photos", 10, images: [p, p, p]),
            m("b", "🎉🎉", 400),
            m(
                "me", "See https://example.com or call +1 555 123 4567", 800, reply: ReplyReference(id: "m0", sender: "a", text: "Look at these"),
                status: .failed),
            m("me", "Sent again", 820, status: .read, statusDate: read)
        ], typing: ["a"])
}
