import Foundation

/// BubbleKit's native conversation file: versioned JSON, documented in docs/FORMATS.md.
///
///     {
///       "format": "bubblekit-conversation", "version": 2,
///       "title": "Seed 003", "me": "me",
///       "participants": [{"id": "me", "name": "Me"}, {"id": "miguel", "name": "Miguel"}],
///       "messages": [
///         {"from": "miguel", "date": "2011-11-12T13:01:00Z", "text": "Wow, you are very intense!"},
///         {"from": "me", "date": "2011-11-12T13:02:00Z", "image": {"path": "cat.png", "width": 320, "height": 240}},
///         {"type": "system", "date": "2011-11-12T13:03:00Z", "text": "Miguel left"}
///       ]
///     }
public enum ConversationFile {
    /// The `format` a native file names itself with.
    public static let formatName = "bubblekit-conversation"
    /// The version written (`readableVersions` are read).
    public static let currentVersion = 2
    /// Versions `decode` reads: 1 (no spans, edits or forwards) and 2.
    public static let readableVersions = 1...2

    struct FileV1: Codable {
        var format: String?
        var version: Int?
        var title: String?
        var me: String?
        var theme: String?
        var participants: [Participant]?
        var messages: [MessageV1]
        /// Participant ids shown as typing after the last message.
        var typing: [String]?
    }

    struct MessageV1: Codable {
        var type: Message.Kind?
        var from: String?
        var direction: Direction?
        var date: String
        var text: String?
        var attachment: MediaAttachment?
        var image: ImageAttachment?
        var images: [ImageAttachment]?
        var id: String?
        var reactions: [Reaction]?
        var reply: ReplyReference?
        var status: MessageStatus?
        var statusDate: String?
        var spans: [TextSpan]?
        var edited: String?
        var forwardedFrom: String?
        var app: String?
    }

    /// What a file says besides its messages.
    public struct Hints: Hashable, Sendable {
        /// Participant id whose messages are outgoing, if the file says.
        public var me: String?
        /// Theme the file asks for, if any.
        public var theme: String?
    }

    /// Decodes a conversation. `me` (a participant id or name) overrides everything: that
    /// participant's messages are outgoing. Without it, a message's own `direction` decides, then
    /// the file's `me`; messages with neither are incoming. Dates without an offset are wall-clock
    /// times (`Message.wallTime`), read in `timeZone`. Errors name the file, the line and column
    /// (malformed JSON) or the JSON path (wrong values).
    public static func decode(
        _ data: Data, path: String, me: String? = nil,
        timeZone: TimeZone = .current
    ) throws(ConversationFileError) -> (Conversation, Hints) {
        let file: FileV1
        do {
            file = try JSONDecoder().decode(FileV1.self, from: data)
        } catch let error as DecodingError {
            // Malformed JSON: where, and what could have come there (a file cut short included).
            if case .dataCorrupted(let ctx) = error, ctx.codingPath.isEmpty, let p = JSONSyntax.firstProblem(data) {
                throw ConversationFileError(path: path, location: p.location, reason: p.reason)
            }
            throw ConversationFileError(path: path, location: location(of: error, in: data), reason: reason(of: error))
        } catch {
            throw ConversationFileError(path: path, location: nil, reason: "\(error)")
        }
        // Strict JSON: what Foundation's decoder lets through (a trailing comma) is refused too,
        // with its line and column.
        if let p = JSONSyntax.firstProblem(data) {
            throw ConversationFileError(path: path, location: p.location, reason: p.reason)
        }
        if let format = file.format, format != formatName {
            throw ConversationFileError(path: path, location: "format", reason: "is \"\(format)\"; expected \"\(formatName)\"")
        }
        if let version = file.version, !readableVersions.contains(version) {
            throw ConversationFileError(
                path: path, location: "version",
                reason: "is \(version); this BubbleKit reads versions \(readableVersions.lowerBound) to \(readableVersions.upperBound)")
        }
        let participants = file.participants ?? []
        var ids = Set<String>()
        for (i, p) in participants.enumerated() where !ids.insert(p.id).inserted {
            throw ConversationFileError(path: path, location: "participants[\(i)].id", reason: "\"\(p.id)\" appears twice")
        }
        // `me` may be an id or a display name.
        func id(_ wanted: String) -> String { participants.first { $0.name == wanted && $0.id != wanted }?.id ?? wanted }
        let meID = (me ?? file.me).map(id)
        let overrideID = me.map(id)
        var messages: [Message] = []
        messages.reserveCapacity(file.messages.count)
        for (i, m) in file.messages.enumerated() {
            let wallTime = WallTime(iso: m.date)
            guard let date = wallTime.map({ $0.instant(in: timeZone) }) ?? parseDate(m.date) else {
                throw ConversationFileError(
                    path: path, location: "messages[\(i)].date",
                    reason: "\"\(m.date)\" is not a date; expected ISO 8601, e.g. 2026-11-22T09:41:00Z (an instant) or 2026-11-22T09:41:00 (a wall-clock time)")
            }
            let kind = m.type ?? .message
            let images = (m.image.map { [$0] } ?? []) + (m.images ?? [])
            if kind == .message && m.text == nil && images.isEmpty && m.attachment == nil {
                throw ConversationFileError(path: path, location: "messages[\(i)]", reason: "has neither text, image nor attachment")
            }
            for (j, image) in images.enumerated()
            where !(image.width.isFinite && image.height.isFinite) || image.width < 0 || image.height < 0 {
                let field = m.image != nil && j == 0 ? "image" : "images[\(m.image != nil ? j - 1 : j)]"
                throw ConversationFileError(
                    path: path, location: "messages[\(i)].\(field)",
                    reason: "size \(image.width)×\(image.height) is not usable; expected sizes ≥ 0 (0 = read from the file)")
            }
            for (j, r) in (m.reactions ?? []).enumerated() where r.emoji.isEmpty || r.count < 1 {
                throw ConversationFileError(
                    path: path, location: "messages[\(i)].reactions[\(j)]",
                    reason: "needs a non-empty emoji and a count ≥ 1")
            }
            // An optional instant: read, or an error naming the field.
            func instant(_ s: String?, _ field: String) throws(ConversationFileError) -> Date? {
                guard let s else { return nil }
                guard let d = parseDate(s) else {
                    throw ConversationFileError(
                        path: path, location: "messages[\(i)].\(field)",
                        reason: "\"\(s)\" is not a date; expected ISO 8601, e.g. 2026-11-22T09:41:00Z")
                }
                return d
            }
            let statusDate = try instant(m.statusDate, "statusDate")
            if let spans = m.spans, let (j, why) = TextSpan.problem(spans, text: m.text) {
                throw ConversationFileError(path: path, location: "messages[\(i)].spans[\(j)]", reason: why)
            }
            let edited = try instant(m.edited, "edited")
            if let from = m.from, !ids.isEmpty, !ids.contains(from) {
                throw ConversationFileError(
                    path: path, location: "messages[\(i)].from",
                    reason: "\"\(from)\" is not a participant id; expected one of \(ids.sorted().joined(separator: ", "))")
            }
            let direction: Direction =
                if let overrideID, let from = m.from { from == overrideID ? .outgoing : .incoming } else if let d = m.direction {
                    d
                } else if let meID, let from = m.from { from == meID ? .outgoing : .incoming } else { .incoming }
            messages.append(
                Message(
                    kind: kind, sender: kind == .system ? nil : m.from, direction: direction,
                    date: date, text: m.text, images: images, id: m.id,
                    reactions: m.reactions ?? [], reply: m.reply, status: m.status, statusDate: statusDate,
                    wallTime: wallTime, attachment: m.attachment,
                    spans: (m.spans ?? []).sorted { $0.range.lowerBound < $1.range.lowerBound },
                    forwardedFrom: m.forwardedFrom, edited: edited))
            messages[messages.count - 1].app = m.app
        }
        for (i, id) in (file.typing ?? []).enumerated() where !ids.isEmpty && !ids.contains(id) {
            throw ConversationFileError(
                path: path, location: "typing[\(i)]",
                reason: "\"\(id)\" is not a participant id; expected one of \(ids.sorted().joined(separator: ", "))")
        }
        return (
            Conversation(title: file.title, participants: participants, messages: messages, typing: file.typing ?? []),
            Hints(me: meID, theme: file.theme)
        )
    }

    /// A key a native file holds that BubbleKit does not read: where (`messages[3]`,
    /// `participants[0]`, or nil for the file's top level), the key, how many objects of that kind
    /// hold it, and the known key it was probably meant to be.
    public struct UnknownKey: Hashable, Sendable {
        /// The first object holding it (`messages[3]`), nil: the top level.
        public var location: String?
        /// The key as written.
        public var key: String
        /// How many objects of that kind hold it.
        public var count: Int
        /// The known key it was probably meant to be (nil: none is close).
        public var nearest: String?
        /// What a reader is told: `"sender" is not a key BubbleKit reads; did you mean "from"?`.
        public var reason: String {
            "\"\(key)\" is not a key BubbleKit reads" + (count > 1 ? " (in \(count) objects like this one)" : "")
                + (nearest.map { "; did you mean \"\($0)\"?" } ?? "; it is left out")
        }
    }

    package static let fileKeys = ["format", "version", "title", "me", "theme", "participants", "messages", "typing"]
    package static let participantKeys = ["id", "name", "avatar"]
    package static let messageKeys = [
        "type", "from", "direction", "date", "text", "attachment", "image", "images", "id", "reactions", "reply",
        "status", "statusDate", "spans", "edited", "forwardedFrom", "app"
    ]
    /// What other formats call the keys of a message (a name one would write from habit).
    static let synonyms = [
        "sender": "from", "author": "from", "user": "from", "sender_name": "from", "name": "from",
        "body": "text", "message": "text", "content": "text", "timestamp": "date", "time": "date",
        "datetime": "date", "timestamp_ms": "date", "photo": "image", "picture": "image", "photos": "images",
        "file": "attachment", "kind": "type", "replyTo": "reply", "reply_to": "reply", "edited_at": "edited"
    ]

    /// The keys of the file's top level, its participants and its messages that BubbleKit does
    /// not read (nested objects are checked by their decoders), one entry per key and kind.
    public static func unknownKeys(_ data: Data) -> [UnknownKey] {
        guard let probe = try? JSONDecoder().decode(KeyProbe.self, from: data) else { return [] }
        var found: [UnknownKey] = []
        func check(_ objects: [[String]], kind: String?, known: [String]) {
            var seen: [String: Int] = [:]
            for (i, keys) in objects.enumerated() {
                for key in keys.sorted() where !known.contains(key) {
                    if let at = seen[key] { found[at].count += 1; continue }
                    seen[key] = found.count
                    found.append(
                        UnknownKey(
                            location: kind.map { "\($0)[\(i)]" }, key: key, count: 1,
                            nearest: nearest(key, in: known)))
                }
            }
        }
        check([probe.root], kind: nil, known: fileKeys)
        check(probe.participants, kind: "participants", known: participantKeys)
        check(probe.messages, kind: "messages", known: messageKeys)
        return found
    }

    /// The known key `key` was meant to be: a habit of another format (`sender` → `from`), a
    /// different case, or a typo (at most two letters off).
    package static func nearest(_ key: String, in known: [String]) -> String? {
        if let s = synonyms[key], known.contains(s) { return s }
        if let k = known.first(where: { $0.lowercased() == key.lowercased() }) { return k }
        let scored = known.map { ($0, editDistance(Array(key.lowercased()), Array($0.lowercased()))) }.min { $0.1 < $1.1 }
        // One slip in a short key, two in a longer one ("isMe" is not "name").
        return scored.flatMap { $0.1 <= (key.count <= 4 ? 1 : 2) ? $0.0 : nil }
    }

    /// Letters to add, drop, change or swap with a neighbour to make `a` into `b`.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    /// Only the keys of the top level, of each participant and of each message.
    struct KeyProbe: Decodable {
        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { return nil }
        }
        var root: [String] = []
        var participants: [[String]] = []
        var messages: [[String]] = []

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            root = c.allKeys.map(\.stringValue)
            func keys(_ name: String) throws -> [[String]] {
                let key = AnyKey(stringValue: name)
                guard c.contains(key), var list = try? c.nestedUnkeyedContainer(forKey: key) else { return [] }
                var out: [[String]] = []
                while !list.isAtEnd {
                    guard let object = try? list.nestedContainer(keyedBy: AnyKey.self) else { _ = try? list.decode(Skip.self); out.append([]); continue }
                    out.append(object.allKeys.map(\.stringValue))
                }
                return out
            }
            participants = try keys("participants")
            messages = try keys("messages")
        }

        /// Anything, read past.
        struct Skip: Decodable { init(from decoder: any Decoder) throws {} }
    }

    /// One message object as `ConversationWriter.encode` writes it (a line of a native file),
    /// read back: wall-clock dates in `timeZone`. For BubbleKit's own lines (a spill file); a
    /// malformed line is an error without a location.
    public static func decodeMessage(_ line: Data, timeZone: TimeZone) throws(ConversationFileError) -> Message {
        let m: MessageV1
        do { m = try JSONDecoder().decode(MessageV1.self, from: line) } catch {
            throw ConversationFileError(path: "(message)", location: nil, reason: "\(error)")
        }
        let wallTime = WallTime(iso: m.date)
        guard let date = wallTime.map({ $0.instant(in: timeZone) }) ?? parseDate(m.date) else {
            throw ConversationFileError(path: "(message)", location: "date", reason: "\"\(m.date)\" is not a date")
        }
        let kind = m.type ?? .message
        var message = Message(
            kind: kind, sender: kind == .system ? nil : m.from, direction: m.direction ?? .incoming, date: date,
            text: m.text, images: (m.image.map { [$0] } ?? []) + (m.images ?? []), id: m.id,
            reactions: m.reactions ?? [], reply: m.reply, status: m.status,
            statusDate: m.statusDate.flatMap(parseDate), wallTime: wallTime, attachment: m.attachment,
            spans: m.spans ?? [], forwardedFrom: m.forwardedFrom, edited: m.edited.flatMap(parseDate))
        message.app = m.app
        return message
    }

    /// Encodes a conversation as the current version (the same schema `decode` reads), with
    /// `ConversationWriter`: decoding it and encoding again gives the same bytes.
    public static func encode(_ conversation: Conversation, me: String? = nil, theme: String? = nil) throws -> Data {
        var out = Data()
        let writer = ConversationWriter(flush: { out.append(contentsOf: $0) })
        try writer.begin(title: conversation.title, me: me, theme: theme, participants: conversation.participants)
        for m in conversation.messages { try writer.write(m) }
        try writer.finish(typing: conversation.typing)
        return out
    }

    static func parseDate(_ s: String) -> Date? {
        if let d = parseInstant(s) { return d }
        let plain = ISO8601DateFormatter()
        if let d = plain.date(from: s) { return d }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: s)
    }

    /// "line 3, column 14" for malformed JSON, a JSON path ("messages[2].date") for wrong values.
    static func location(of error: DecodingError, in data: Data) -> String? {
        switch error {
        case .dataCorrupted(let ctx) where ctx.codingPath.isEmpty:
            return syntaxLocation(in: data)
        case .dataCorrupted(let ctx), .typeMismatch(_, let ctx), .valueNotFound(_, let ctx):
            return jsonPath(ctx.codingPath)
        case .keyNotFound(let key, let ctx):
            return jsonPath(ctx.codingPath + [key])
        @unknown default:
            return nil
        }
    }

    static func reason(of error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let ctx) where ctx.codingPath.isEmpty:
            return "is not valid JSON"
        case .dataCorrupted(let ctx):
            // An enum's unknown value: say which values are allowed.
            let marker = " from invalid String value "
            if ctx.debugDescription.hasPrefix("Cannot initialize "), let r = ctx.debugDescription.range(of: marker),
                let allowed = allowedValues[ctx.codingPath.last?.stringValue ?? ""]
            {
                return "is \"\(ctx.debugDescription[r.upperBound...])\"; expected one of \(allowed)"
            }
            return ctx.debugDescription
        case .typeMismatch(let type, _): return "has the wrong type; expected \(typeName(type))"
        case .valueNotFound(let type, _): return "is null; expected \(typeName(type))"
        case .keyNotFound: return "is missing"
        @unknown default: return "\(error)"
        }
    }

    /// The values of the format's enumerated keys, for errors.
    static let allowedValues: [String: String] = [
        "type": "message, system",
        "direction": "incoming, outgoing",
        "status": "sending, sent, delivered, read, failed",
        "kind": MediaAttachment.Kind.allCases.map(\.rawValue).joined(separator: ", "),
        "style": TextSpan.Style.allCases.map(\.rawValue).joined(separator: ", "),
        // Theme files (docs/THEMES.md).
        "timestamps": "none, aboveGroup, inside, daySeparator, beside",
        "widthMode": "fit, balanced",
        "mode": "stretch, tile, repeat, round, space",
        "senderNames": "never, groups, always",
        "avatars": "never, groups, always"
    ]

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Double.Type, is Int.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = String(describing: type)
            return name.hasPrefix("Array") ? "an array" : name.hasPrefix("Dictionary") ? "an object" : name
        }
    }

    static func jsonPath(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let i = key.intValue { out += "[\(i)]" } else { out += (out.isEmpty ? "" : ".") + key.stringValue }
        }
        return out.isEmpty ? "(top level)" : out
    }

    /// Foundation's parser says "around character N"; turn N into a line and a column.
    static func syntaxLocation(in data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
            guard let range = text.range(of: "character "),
                let offset = Int(text[range.upperBound...].prefix { $0.isNumber })
            else { return nil }
            var line = 1, column = 1, seen = 0
            // Foundation counts UTF-8 bytes.
            for byte in data {
                if seen == offset { break }
                seen += 1
                if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
            }
            return "line \(line), column \(column)"
        }
    }
}

/// A conversation file that could not be read: the file, where in it, and what was expected.
public struct ConversationFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file that could not be read.
    public var path: String
    /// Where in it: a JSON path or a line; nil for the whole file.
    public var location: String?
    /// What was wrong and what was expected.
    public var reason: String
    public var description: String {
        "\(path)" + (location.map { ": \($0)" } ?? "") + ": \(reason)"
    }
}
