import BubbleCore
import Foundation

/// One photo, video, GIF, sticker, voice note, audio file or document of a message, as a
/// gallery shows it: what it is, the picture that stands for it (the photo itself, a video's
/// poster), the file, its size, length, name and pages.
package struct MediaItem: Hashable, Sendable {
    package enum Kind: String, Hashable, Sendable, CaseIterable {
        case photo, video, gif, sticker, voice, audio, document

        /// The symbol bubbles show for this kind of attachment (`MediaAttachment.Kind`).
        package var symbol: String { MediaAttachment.Kind(rawValue: rawValue)?.symbolAndName.0 ?? "📎" }
    }
    package var kind: Kind
    /// What to show in a cell: the photo, sticker or GIF, a video's poster; nil for the others.
    package var picture: String?
    /// The file itself (nil: the export left it out).
    package var file: String?
    package var width: Double?
    package var height: Double?
    /// Seconds (videos, voice notes, audio).
    package var duration: Double?
    package var name: String?
    package var pages: Int?

    /// The media of `message`, in the order the message shows them (photos, then its file);
    /// none for system lines, deleted messages, locations, contacts and polls.
    package static func items(of message: Message) -> [MediaItem] {
        guard message.kind == .message else { return [] }
        var out = message.images.map { image in
            MediaItem(
                kind: image.sticker ? .sticker : image.videoFrame ? .video : .photo, picture: image.path, file: image.path,
                width: image.width, height: image.height, name: image.name)
        }
        if let a = message.attachment {
            let kinds: [MediaAttachment.Kind: Kind] = [
                .photo: .photo, .video: .video, .gif: .gif, .sticker: .sticker, .voice: .voice,
                .audio: .audio, .document: .document
            ]
            if let kind = kinds[a.kind] {
                let picture = a.poster ?? ([.photo, .gif, .sticker].contains(kind) ? a.path : nil)
                out.append(
                    MediaItem(
                        kind: kind, picture: picture, file: a.path, width: a.width, height: a.height, duration: a.duration,
                        name: a.fileName, pages: a.pageCount))
            }
        }
        return out
    }

    /// "0:42", "1:02:03".
    package static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }
}
