import BubbleCore
import Foundation

/// One element of a Messenger or Instagram thread's `messages` array, as "Download your
/// information" writes it (snake_case), or as Messenger's separate download of end-to-end
/// encrypted chats writes it (camelCase: `senderName`, `timestamp`, `text`, `media`, `isUnsent`).
/// Strings are kept as written: `MetaText.undoMojibake` is applied by the importer.
struct MetaMessage {
    struct Media {
        var uri: String
    }

    var sender: String?
    /// Milliseconds since 1970.
    var timestampMS: Double?
    var content: String?
    var type: String?
    var photos: [Media] = []
    var videos: [Media] = []
    var audio: [Media] = []
    var files: [Media] = []
    var gifs: [Media] = []
    /// The encrypted chats' download: one `media` list of any kind, told apart by extension.
    var media: [Media] = []
    var sticker: Media?
    var shareLink: String?
    var shareText: String?
    var reactions: [(reaction: String, actor: String)] = []
    var isUnsent = false
    var callDuration: Double?
    var users: [String] = []
}

/// A thread file's own fields besides its messages.
struct MetaThreadHeader {
    var title: String?
    var participants: [String] = []
}

extension JSONElementReader {
    mutating func metaMessage() throws(Failure) -> MetaMessage {
        var m = MetaMessage()
        try object { (d: inout JSONElementReader, key: Key) throws(Failure) in
            switch key {
            case "sender_name", "senderName": m.sender = try d.optionalString()
            case "timestamp_ms", "timestamp": m.timestampMS = try d.optionalNumber()
            case "content", "text": m.content = try d.optionalString()
            case "type": m.type = try d.optionalString()
            case "photos": m.photos = try d.metaMedia()
            case "videos": m.videos = try d.metaMedia()
            case "audio_files": m.audio = try d.metaMedia()
            case "files": m.files = try d.metaMedia()
            case "gifs": m.gifs = try d.metaMedia()
            case "media": m.media = try d.metaMedia()
            case "sticker":
                if d.peekAfterSpace == UInt8(ascii: "n") { d.skip(); break }
                m.sticker = try d.metaMediaItem()
            case "share":
                try d.optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
                    switch key {
                    case "link": m.shareLink = try d.optionalString()
                    case "share_text": m.shareText = try d.optionalString()
                    default: d.skip()
                    }
                }
            case "reactions":
                m.reactions =
                    try d.optionalArray { (d: inout JSONElementReader) throws(Failure) -> (reaction: String, actor: String)? in
                        var reaction: String?, actor: String?
                        try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                            switch key {
                            case "reaction": reaction = try d.optionalString()
                            case "actor": actor = try d.optionalString()
                            default: d.skip()
                            }
                        }
                        guard let reaction, let actor else { return nil }
                        return (reaction, actor)
                    }?.compactMap { $0 } ?? []
            case "is_unsent", "isUnsent": m.isUnsent = try d.optionalBool() ?? false
            case "call_duration": m.callDuration = try d.optionalNumber()
            case "users":
                m.users =
                    try d.optionalArray { (d: inout JSONElementReader) throws(Failure) -> String? in
                        var name: String?
                        try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                            if key == "name" { name = try d.optionalString() } else { d.skip() }
                        }
                        return name
                    }?.compactMap { $0 } ?? []
            default: d.skip()
            }
        }
        return m
    }

    private mutating func metaMedia() throws(Failure) -> [MetaMessage.Media] {
        try optionalArray { (d: inout JSONElementReader) throws(Failure) in try d.metaMediaItem() }?.compactMap { $0 } ?? []
    }

    /// `{"uri": …}` (`creation_timestamp` and the rest skipped: the message's time is shown);
    /// nil without a `uri`.
    private mutating func metaMediaItem() throws(Failure) -> MetaMessage.Media? {
        var uri: String?
        try object { (d: inout JSONElementReader, key: Key) throws(Failure) in
            if key == "uri" { uri = try d.optionalString() } else { d.skip() }
        }
        return uri.map { MetaMessage.Media(uri: $0) }
    }

    /// `participants`: `[{"name": …}]`, or plain strings in the encrypted chats' download.
    mutating func metaParticipants() throws(Failure) -> [String] {
        try optionalArray { (d: inout JSONElementReader) throws(Failure) -> String? in
            if d.peekAfterSpace == UInt8(ascii: "\"") { return try d.string() }
            var name: String?
            try d.optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
                if key == "name" { name = try d.optionalString() } else { d.skip() }
            }
            return name
        }?.compactMap { $0 } ?? []
    }
}

/// Meta's text encoding and words.
enum MetaText {
    /// "Download your information" writes every UTF-8 byte of a string as its own `\u00XX`
    /// escape ("Caf\u00c3\u00a9" for "Café"). Undone exactly: only when every scalar is ≤ U+00FF
    /// and those bytes are valid UTF-8 — so a string that is already right ("Zoë", "Привет",
    /// "😀") stays as it is.
    static func undoMojibake(_ s: String) -> String {
        var s = s
        return s.withUTF8 { utf8 -> String? in
            // Each scalar ≤ U+00FF is one byte, or two (0xC2/0xC3 and a continuation byte).
            guard utf8.contains(where: { $0 >= 0x80 }) else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(utf8.count)
            var i = 0
            while i < utf8.count {
                let b = utf8[i]
                if b < 0x80 {
                    bytes.append(b)
                    i += 1
                } else if (b == 0xC2 || b == 0xC3), i + 1 < utf8.count {
                    bytes.append((b & 0x03) << 6 | (utf8[i + 1] & 0x3F))
                    i += 2
                } else {
                    return nil  // a scalar above U+00FF: not Meta's escaping
                }
            }
            return String(validating: bytes, as: UTF8.self)
        } ?? s
    }

    /// What Instagram writes as a message when someone reacts ("Reacted ❤️ to your message",
    /// "Liked a message" and translations): the reaction's emoji, or nil for any other text.
    /// The words around the emoji must be one of the known phrasings exactly (case and spaces
    /// aside), so a message that merely mentions a reaction stays a message.
    static func reaction(in content: String, sender: String?) -> String? {
        // Cheap test first (this runs for every message): the last word of one of the phrasings.
        guard content.utf8.count <= 240, let last = lastWordHash(content), phraseEndings.contains(last) else { return nil }
        var text = content
        // Some versions start with the reactor's name: "Ann reacted ❤️ to your message".
        if let sender, text.hasPrefix(sender + " ") { text.removeFirst(sender.count + 1) }
        var emoji = ""
        var words = ""
        for c in text {
            if c.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation || ($0.properties.isEmoji && $0.value > 0xFF) })
                || c.unicodeScalars.first?.value == 0x2764
            {
                emoji.append(c)
                words.append(" ")
            } else {
                words.append(c)
            }
        }
        let phrase = words.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            .trimmingCharacters(in: CharacterSet(charactersIn: ".!"))
        if emoji.isEmpty { return likedPhrases.contains(phrase) ? "❤️" : nil }
        return reactedPhrases.contains(phrase) ? emoji : nil
    }

    /// A hash of the last word of `text` (spaces and final punctuation aside, ASCII letters
    /// lower-cased), computed on its bytes without making a string; nil when it is long.
    static func lastWordHash(_ text: String) -> UInt64? {
        var text = text
        return text.withUTF8 { b -> UInt64? in
            var end = b.count
            while end > 0, [0x20, 0x2E, 0x21, 0x3A, 0x0A].contains(b[end - 1]) { end -= 1 }
            var start = end
            while start > 0, b[start - 1] != 0x20 { start -= 1 }
            guard (3...16).contains(end - start) else { return nil }
            var h: UInt64 = 0xcbf29ce484222325
            for k in start..<end {
                let c = b[k] >= 0x41 && b[k] <= 0x5A ? b[k] | 0x20 : b[k]
                h = (h ^ UInt64(c)) &* 0x100000001b3
            }
            return h
        }
    }

    static let phraseEndings: Set<UInt64> = Set(reactedPhrases.union(likedPhrases).compactMap { lastWordHash($0) })

    /// "Reacted ❤️ to your message" with the emoji taken out, in the languages Instagram's
    /// downloads were seen in (English, Spanish, Portuguese, French, German, Italian, Dutch,
    /// Polish, Turkish, Indonesian).
    static let reactedPhrases: Set<String> = [
        "reacted to your message", "reacted to a message", "reacted to their message",
        "reaccionó a tu mensaje", "reaccionó con a tu mensaje", "ha reaccionado a tu mensaje", "ha reaccionado con a tu mensaje",
        "reagiu à sua mensagem", "reagiu com à sua mensagem", "reagiu a sua mensagem",
        "a réagi à votre message", "a réagi par à votre message", "a réagi avec à votre message",
        "hat auf deine nachricht reagiert", "hat mit auf deine nachricht reagiert",
        "ha reagito al tuo messaggio", "ha reagito con al tuo messaggio",
        "heeft gereageerd op je bericht", "heeft met gereageerd op je bericht",
        "zareagował(a) na twoją wiadomość", "zareagował(a) na twoją wiadomość:",
        "mesajına tepki verdi", "bereaksi terhadap pesan anda", "memberikan reaksi ke pesan anda"
    ]

    static let likedPhrases: Set<String> = [
        "liked a message", "liked your message", "le gustó un mensaje", "le gustó tu mensaje",
        "curtiu uma mensagem", "curtiu sua mensagem", "a aimé un message", "a aimé votre message",
        "gefällt eine nachricht", "gefällt deine nachricht", "ha messo \"mi piace\" a un messaggio",
        "vindt een bericht leuk", "polubił(a) wiadomość", "bir mesajı beğendi", "menyukai pesan"
    ]

    /// English system texts Messenger puts in `content` beside media ("Ann sent a photo.",
    /// "You sent an attachment."): said again by the media themselves, so left out.
    static func isMediaCaption(_ content: String) -> Bool {
        guard content.count < 200, content.hasSuffix(".") else { return false }
        for tail in [
            " sent a photo.", " sent an attachment.", " sent a video.", " sent a GIF.", " sent a sticker.",
            " sent a voice message.", " sent an audio clip.", " sent a file.", " sent a link."
        ] where content.hasSuffix(tail) {
            return true
        }
        if let range = content.range(of: " sent "), content.hasSuffix(" photos.") {
            return Int(content[range.upperBound...].dropLast(" photos.".count)) != nil
        }
        return false
    }
}
