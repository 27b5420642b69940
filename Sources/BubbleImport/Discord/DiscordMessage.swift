import BubbleCore
import Foundation

/// One element of a DiscordChatExporter `messages` array (only the fields BubbleKit shows).
struct DiscordMessage {
    struct Author {
        var id: String?
        var name: String?
        var nickname: String?
        var avatarURL: String?
        /// What the app shows: the server nickname, else the name.
        var shown: String? { nickname.flatMap { $0.isEmpty ? nil : $0 } ?? name }
    }
    struct Attachment { var url: String?; var fileName: String?; var size: Int? }
    struct Embed { var title: String?; var url: String?; var description: String? }
    struct Sticker { var name: String?; var sourceURL: String? }
    struct Reaction { var emoji: String; var count: Int; var users: [String] }

    /// `id` as a number (snowflakes are), else as written.
    var idNumber: Int64?
    var idText: String?
    var id: String? { idNumber.map(String.init) ?? idText }
    /// nil for Default and Reply (read as bytes, no string made), else the type as written.
    var type: String?
    var timestamp: Date?
    var timestampEdited: Date?
    var callEnded: Date?
    var content: String?
    var author = Author()
    var attachments: [Attachment] = []
    var embeds: [Embed] = []
    var stickers: [Sticker] = []
    var reactions: [Reaction] = []
    var mentions: [Author] = []
    var referenceID: String?
}

/// The file's own fields besides its messages.
struct DiscordChannel {
    var guildName: String?
    var id: String?
    var type: String?
    var name: String?
}

extension JSONElementReader {
    /// `known`: authors already met (by id); for them only the id is read, the rest skipped
    /// (DiscordChatExporter writes `id` first, and every message repeats its author whole).
    mutating func discordMessage(known: Set<String> = []) throws(Failure) -> DiscordMessage {
        var m = DiscordMessage()
        try object { (d: inout JSONElementReader, key: Key) throws(Failure) in
            switch key {
            case "id":
                if d.peekAfterSpace == UInt8(ascii: "\""), let n = try d.withStringBytes({ DiscordTime.integer($0) }), let n {
                    m.idNumber = n
                } else {
                    m.idText = try d.flexible()
                }
            case "type":
                let plain = try d.withStringBytes { bytes -> String? in
                    let key = Key(bytes)
                    return key == "Default" || key == "Reply" ? nil : String(decoding: bytes, as: UTF8.self)
                }
                m.type = plain ?? nil
            case "timestamp": m.timestamp = try d.withStringBytes { DiscordTime.parse(bytes: $0) } ?? nil
            case "timestampEdited": m.timestampEdited = try d.withStringBytes { DiscordTime.parse(bytes: $0) } ?? nil
            case "callEndedTimestamp": m.callEnded = try d.withStringBytes { DiscordTime.parse(bytes: $0) } ?? nil
            case "content": m.content = try d.optionalString()
            case "author": m.author = try d.discordAuthor(known: known)
            case "attachments":
                m.attachments =
                    try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in
                        var a = DiscordMessage.Attachment()
                        try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                            switch key {
                            case "url": a.url = try d.optionalString()
                            case "fileName": a.fileName = try d.optionalString()
                            case "fileSizeBytes": a.size = try d.optionalNumber().flatMap { Int(exactly: $0.rounded()) }
                            default: d.skip()
                            }
                        }
                        return a
                    } ?? []
            case "embeds":
                m.embeds =
                    try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in
                        var e = DiscordMessage.Embed()
                        try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                            switch key {
                            case "title": e.title = try d.optionalString()
                            case "url": e.url = try d.optionalString()
                            case "description": e.description = try d.optionalString()
                            default: d.skip()
                            }
                        }
                        return e
                    } ?? []
            case "stickers":
                m.stickers =
                    try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in
                        var s = DiscordMessage.Sticker()
                        try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                            switch key {
                            case "name": s.name = try d.optionalString()
                            case "sourceUrl": s.sourceURL = try d.optionalString()
                            default: d.skip()
                            }
                        }
                        return s
                    } ?? []
            case "reactions":
                m.reactions =
                    try d.optionalArray { (d: inout JSONElementReader) throws(Failure) -> DiscordMessage.Reaction? in
                        var emoji: String?, count = 1, users: [String] = []
                        try d.object { (d: inout JSONElementReader, key: Key) throws(Failure) in
                            switch key {
                            case "emoji":
                                try d.optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
                                    if key == "name" { emoji = try d.optionalString() } else { d.skip() }
                                }
                            case "count": count = try d.optionalNumber().flatMap { Int(exactly: $0.rounded()) } ?? 1
                            case "users":
                                users =
                                    try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in try d.discordAuthor() }?
                                    .compactMap { $0.id ?? $0.name } ?? []
                            default: d.skip()
                            }
                        }
                        return emoji.map { DiscordMessage.Reaction(emoji: $0, count: max(1, count), users: users) }
                    }?.compactMap { $0 } ?? []
            case "mentions":
                m.mentions = try d.optionalArray { (d: inout JSONElementReader) throws(Failure) in try d.discordAuthor() } ?? []
            case "reference":
                try d.optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
                    if key == "messageId" { m.referenceID = try d.flexible() } else { d.skip() }
                }
            default: d.skip()
            }
        }
        return m
    }

    mutating func discordAuthor(known: Set<String> = []) throws(Failure) -> DiscordMessage.Author {
        var a = DiscordMessage.Author()
        try optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
            switch key {
            case "id":
                a.id = try d.flexible()
                if let id = a.id, known.contains(id) { d.skipRestOfObject() }
            case "name": a.name = try d.optionalString()
            case "nickname": a.nickname = try d.optionalString()
            case "avatarUrl": a.avatarURL = try d.optionalString()
            default: d.skip()
            }
        }
        return a
    }

    /// `guild` or `channel`: their small fields.
    mutating func discordChannel(into c: inout DiscordChannel, guild: Bool) throws(Failure) {
        try optionalObject { (d: inout JSONElementReader, key: Key) throws(Failure) in
            switch key {
            case "id" where !guild: c.id = try d.flexible()
            case "name": if guild { c.guildName = try d.optionalString() } else { c.name = try d.optionalString() }
            case "type" where !guild: c.type = try d.optionalString()
            default: d.skip()
            }
        }
    }
}

/// DiscordChatExporter's times: ISO 8601 with an offset and fractions of a second
/// ("2020-09-13T21:20:31.49+02:00", "…Z"), read without Foundation's formatters.
enum DiscordTime {
    static func parse(_ s: String) -> Date? {
        var s = s
        return s.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Date? {
        guard b.count >= 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var v = 0
            for k in r { guard b[k] >= 0x30, b[k] <= 0x39 else { return nil }; v = v * 10 + Int(b[k] - 0x30) }
            return v
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19),
            let wall = WallTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        var i = 19
        var fraction = 0.0, scale = 0.1
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { fraction += Double(b[i] - 0x30) * scale; scale /= 10; i += 1 }
        }
        var offset = 0
        if i < b.count {
            if b[i] == UInt8(ascii: "Z") {
                i += 1
            } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), i + 6 <= b.count, b[i + 3] == UInt8(ascii: ":"),
                let h = number((i + 1)..<(i + 3)), let m = number((i + 4)..<(i + 6))
            {
                offset = (h * 3600 + m * 60) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
                i += 6
            } else {
                return nil
            }
        }
        guard i == b.count else { return nil }
        let seconds = Double(wall.localSeconds - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// An ASCII whole number (a snowflake id), or nil.
    static func integer(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !b.isEmpty, b.count <= 18 else { return nil }
        var v: Int64 = 0
        for c in b {
            guard c >= 0x30, c <= 0x39 else { return nil }
            v = v * 10 + Int64(c - 0x30)
        }
        return v
    }

    /// `<t:1600000000:f>` as text: the instant in `zone`, "2020-09-13 14:26" ("… UTC" in UTC).
    static func shown(_ seconds: Double, in zone: TimeZone) -> String {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return "(a date)" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: seconds))
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
            + (zone.secondsFromGMT() == 0 && ["UTC", "GMT", "Etc/UTC"].contains(zone.identifier) ? " UTC" : "")
    }
}
