import BubbleCore
import Foundation

/// Reads one element of a Telegram `messages` array — bytes the scanner has already checked to be
/// well-formed JSON — straight into a `TGMessage`, field by field (`JSONElementReader`): no
/// `JSONDecoder`, no `Data`, nothing kept of a field this reader does not use. About ten times
/// faster than the decoder, which made Telegram the slowest import by far. Lenient as `TGMessage`
/// is documented to be; a value of a shape no message can have is a failure naming its path below
/// the element.
extension JSONElementReader {
    // MARK: The message

    mutating func telegramMessage() throws(Failure) -> TelegramImporter.TGMessage {
        var m = TelegramImporter.TGMessage()
        try object { (d: inout JSONElementReader, key: Key) throws(Failure) in
            switch key {
            case "id": m.rawID = try d.flexible().map(TelegramImporter.FlexibleString.init(value:))
            case "type": m.type = try d.optionalString()
            case "date": m.date = try d.optionalString()
            case "date_unixtime": m.dateUnixtime = try d.flexible().map(TelegramImporter.FlexibleString.init(value:))
            case "from": m.from = try d.optionalString()
            case "from_id": m.fromID = try d.flexible().map(TelegramImporter.FlexibleString.init(value:))
            case "actor": m.actor = try d.optionalString()
            case "actor_id": m.actorID = try d.flexible().map(TelegramImporter.FlexibleString.init(value:))
            case "action": m.action = try d.optionalString()
            case "title": m.title = try d.optionalString()
            case "members": m.members = try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in try d.optionalString() }
            case "duration_seconds": m.durationSeconds = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) }
            case "discard_reason": m.discardReason = try d.optionalString()
            case "text": m.text = try d.telegramText()
            case "edited": m.edited = try d.optionalString()
            case "edited_unixtime": m.editedUnixtime = try d.flexible().map(TelegramImporter.FlexibleString.init(value:))
            case "forwarded_from": m.forwardedFrom = .some(try d.optionalString())
            case "reply_to_message_id": m.replyToMessageID = try d.optionalNumber().flatMap { Int64(exactly: $0.rounded()) }
            case "reactions": m.reactions = try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in try d.telegramReaction() }
            case "photo": m.photo = try d.optionalString()
            case "file": m.file = try d.optionalString()
            case "file_name": m.fileName = try d.optionalString()
            case "mime_type": m.mimeType = try d.optionalString()
            case "media_type": m.mediaType = try d.optionalString()
            case "sticker_emoji": m.stickerEmoji = try d.optionalString()
            case "thumbnail": m.thumbnail = try d.optionalString()
            case "width": m.width = try d.optionalNumber()
            case "height": m.height = try d.optionalNumber()
            case "poll":
                var poll = TelegramImporter.Poll()
                try d.optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
                    switch key {
                    case "question": poll.question = try d.optionalString()
                    case "total_voters": poll.totalVoters = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) }
                    case "answers":
                        poll.answers = try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in
                            var answer = PollAnswer(text: "")
                            try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                                switch key {
                                case "text": answer.text = try d.optionalString() ?? ""
                                case "voters": answer.votes = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) } ?? 0
                                case "chosen": answer.chosen = try d.optionalBool() ?? false
                                default: d.skip()
                                }
                            }
                            return answer
                        }
                    default: d.skip()
                    }
                }
                m.poll = poll
            case "location_information":
                var l = TelegramImporter.Location()
                try d.optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
                    switch key {
                    case "latitude": l.latitude = try d.optionalNumber()
                    case "longitude": l.longitude = try d.optionalNumber()
                    case "place_name": l.title = try d.optionalString()
                    case "address": l.address = try d.optionalString()
                    default: d.skip()
                    }
                }
                m.locationInformation = l
            case "contact_information":
                var c = TelegramImporter.Contact()
                try d.optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
                    switch key {
                    case "first_name": c.firstName = try d.optionalString()
                    case "last_name": c.lastName = try d.optionalString()
                    case "phone_number": c.phoneNumber = try d.optionalString()
                    default: d.skip()
                    }
                }
                m.contactInformation = c
            default:
                d.skip()
            }
        }
        return m
    }

    mutating func telegramReaction() throws(Failure) -> TGReaction {
        var r = TGReaction()
        try object { (d: inout JSONElementReader, key: Key) throws(Failure) in
            switch key {
            case "type": r.type = try d.optionalString()
            case "count": r.count = try d.optionalNumber().map { Int(clamping: Int64(exactly: $0.rounded()) ?? 0) }
            case "emoji": r.emoji = try d.optionalString()
            case "recent":
                r.recent = try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in
                    var recent = TGReaction.Recent()
                    try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                        if key == "from_id" { recent.fromID = try d.optionalString() } else { d.skip() }
                    }
                    return recent
                }
            default: d.skip()
            }
        }
        return r
    }

    /// `text`: a string, a number, null, or an array of strings and `{type, text}` entities (anything
    /// else in it skipped); an object reads as no text. Entities become spans of the text
    /// (`TelegramImporter.spanStyle`).
    mutating func telegramText() throws(Failure) -> TelegramImporter.TGText {
        space()
        switch peek {
        case UInt8(ascii: "\""): return TelegramImporter.TGText(value: try string())
        case UInt8(ascii: "n"): skip(); return TelegramImporter.TGText(value: "")
        case UInt8(ascii: "{"): skip(); return TelegramImporter.TGText(value: "")
        case UInt8(ascii: "["):
            var out = ""
            var spans: [TextSpan] = []
            i += 1
            var k = 0
            while true {
                space()
                if peek == UInt8(ascii: "]") { i += 1; return TelegramImporter.TGText(value: out, spans: spans) }
                if peek == UInt8(ascii: ",") { i += 1; space() }
                steps.append(.index(k))
                if peek == UInt8(ascii: "\"") {
                    out += try string()
                } else if peek == UInt8(ascii: "{") {
                    var type: String?, piece = "", href: String?, user: String?
                    try object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                        switch key {
                        case "text": if d.peekAfterSpace == UInt8(ascii: "\"") { piece = try d.string() } else { d.skip() }
                        case "type": type = try d.optionalString()
                        case "href": href = try d.optionalString()
                        case "user_id": user = try d.flexible().map(TelegramImporter.FlexibleString.init(value:))?.value
                        default: d.skip()
                        }
                    }
                    let start = out.utf8.count
                    out += piece
                    if let type, let (style, url) = TelegramImporter.spanStyle(type, text: piece, href: href, user: user),
                        out.utf8.count > start
                    {
                        spans.append(TextSpan(style, start..<out.utf8.count, url: url))
                    }
                } else {
                    skip()
                }
                steps.removeLast()
                k += 1
            }
        default:
            guard let n = try optionalNumber() else { return TelegramImporter.TGText(value: "") }
            return TelegramImporter.TGText(value: n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n))
        }
    }
}
