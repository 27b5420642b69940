import BubbleCore
import Foundation

/// Telegram Desktop "Export chat history" (`result.json`, one chat) and "Export Telegram data"
/// (`result.json` with `chats.list[]`, the whole account), streamed.
///
/// `JSONScanner` reads the file 256 KiB at a time; each element of a `messages` array is taken on
/// its own (at most `ImportLimits.maxJSONValueBytes`), decoded into a `TGMessage` and turned into
/// a `Message` at once (`message(from:…)`), so memory holds one chunk, one message and the model.
/// Other chats of an account export are skipped (their syntax checked, their messages counted).
///
/// Picking a chat of an account export (`chat`): when a chat's `name`/`id` come before its
/// `messages` (as Telegram Desktop writes them) and match, its messages are read in the one pass.
/// Otherwise the pass remembers where each chat's `messages` array starts, and once the whole
/// list is known (and the choice is unambiguous) a second pass reads only that array.
enum TelegramImporter {
    // MARK: Schema (only the fields used)

    struct PersonalInformation: Decodable {
        var userID: Int64?
        enum CodingKeys: String, CodingKey { case userID = "user_id" }
    }

    /// A chat of an account export as the first pass saw it: its small fields, how many messages,
    /// and where its `messages` array starts.
    struct ChatInfo {
        var name: String?
        var type: String?
        var id: Int64?
        var messageCount = 0
        var messagesOffset: Int64?
        var messagesPath: [JSONScanner.PathComponent] = []

        var displayName: String {
            if let name, !name.isEmpty { return name }
            return type == "saved_messages" ? "Saved Messages" : "(unnamed chat \(id.map(String.init) ?? "?"))"
        }
    }

    static func matches(_ wanted: String, name: String?, id: Int64?) -> Bool {
        if let name, name.caseInsensitiveCompare(wanted) == .orderedSame { return true }
        if let id, String(id) == wanted { return true }
        return false
    }

    /// One element of `messages`, read leniently (older Telegram Desktop versions and other tools
    /// leave fields out): only what places a message on the page is needed.
    struct TGMessage {
        /// Missing in some exports, a string in others: the message's position stands in for a
        /// missing one (as a negative id, so it never meets a real one).
        var id: Int64? { rawID.flatMap { Int64($0.value) } }
        var rawID: FlexibleString?
        var type: String?
        var date: String?
        var dateUnixtime: FlexibleString?
        var from: String?
        var fromID: FlexibleString?
        var actor: String?
        var actorID: FlexibleString?
        var action: String?
        var title: String?
        var members: [String?]?
        var durationSeconds: Int?
        var discardReason: String?
        var text: TGText?
        var replyToMessageID: Int64?
        var reactions: [TGReaction]?
        var photo: String?
        var file: String?
        var fileName: String?
        var mimeType: String?
        var mediaType: String?
        var stickerEmoji: String?
        var thumbnail: String?
        var width: Double?
        var height: Double?
        var poll: Poll?
        var edited: String?
        var editedUnixtime: FlexibleString?
        /// `forwarded_from`: the original author's name; `.some(nil)` when the export hides it.
        var forwardedFrom: String??
        var locationInformation: Location?
        var contactInformation: Contact?
    }

    struct Poll { var question: String?; var totalVoters: Int?; var answers: [PollAnswer]? }
    /// `location_information` (`place_name` is the title).
    struct Location { var latitude: Double?, longitude: Double?, title: String?, address: String? }
    struct Contact { var firstName: String?, lastName: String?, phoneNumber: String? }

    /// A string that older exports wrote as a number (`id`, `from_id`, `date_unixtime`).
    struct FlexibleString { var value: String }

    /// `text`: a string, or an array of strings and `{type, text}` entities, read as the text it
    /// holds and the spans its entities make (`JSONElementReader.telegramText`).
    struct TGText { var value: String; var spans: [TextSpan] = [] }

    /// The span an entity `type` makes: bold, italic, underline, strikethrough, code, pre,
    /// spoiler, blockquote, links (`link`, `text_link` with its `href`, `email`, `phone`) and
    /// mentions (`mention`, `mention_name` with its `user_id`); nil for the rest (plain, hashtag,
    /// cashtag, bot_command, custom_emoji: shown as their text).
    static func spanStyle(_ type: String, text: String, href: String?, user: String?) -> (TextSpan.Style, String?)? {
        switch type {
        case "bold": return (.bold, nil)
        case "italic": return (.italic, nil)
        case "underline": return (.underline, nil)
        case "strikethrough": return (.strike, nil)
        case "code": return (.code, nil)
        case "pre": return (.pre, nil)
        case "spoiler": return (.spoiler, nil)
        case "blockquote": return (.quote, nil)
        case "link": return (.link, text.contains("://") ? text : "https://" + text)
        case "text_link": return (.link, href)
        case "email": return (.link, "mailto:" + text)
        case "phone": return (.link, "tel:" + text.filter { $0.isNumber || $0 == "+" })
        case "mention": return (.mention, nil)
        case "mention_name": return (.mention, user)
        default: return nil
        }
    }

    // MARK: Reading

    /// Messages of one chat as they are read: the builder, and the authors in order of appearance
    /// (who is "me" is decided once all are known; directions are set then).
    struct MessageSink {
        var builder = ConversationBuilder()
        var authors: [(id: String, name: String)] = []
        var seenAuthors = Set<String>()
        var clock: WallClock
        var count = 0
    }

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        try JSONScanner.reading(
            path: source.path, displayPath: source.displayPath, writer: "Telegram Desktop",
            element: "one message of a Telegram export", export: "a Telegram export"
        ) { scanner in
            try read(scanner, source: source, context: context)
        }
    }

    private static func read(_ scanner: JSONScanner, source: ImportSource, context: ImportContext) throws -> ImportResult {
        let folder = (source.path as NSString).deletingLastPathComponent
        let wanted = context.options.chat
        let decoder = JSONDecoder()
        var pass = try firstPass(scanner, folder: folder, decoder: decoder, context: context)

        if context.everyChat {
            // Every chat (or those `chats` names), one at a time: each read from its offset.
            if pass.sawChatList {
                let chosen = context.wanted(pass.chats) { chat, wanted in matches(wanted, name: chat.name, id: chat.id) }
                let total = chosen.count
                for chat in chosen {
                    var sink = MessageSink(clock: WallClock(timeZone: context.options.timeZone))
                    if let offset = chat.messagesOffset {
                        try scanner.seek(to: offset, path: chat.messagesPath)
                        try readMessages(scanner, into: &sink, folder: folder, decoder: decoder, context: context)
                    }
                    let result = try conclude(&sink, title: chat.displayName, chatType: chat.type, chatID: chat.id, ownerID: pass.ownerID, context: context)
                    try context.deliverConversation(result, key: chat.id.map { "\(chat.displayName) (\($0))" } ?? chat.displayName, of: total)
                }
            } else if var sink = pass.own.take(),
                !context.wanted([(pass.name, pass.id)], matches: { chat, wanted in matches(wanted, name: chat.0, id: chat.1) }).isEmpty
            {
                let result = try conclude(&sink, title: pass.name, chatType: pass.type, chatID: pass.id, ownerID: pass.ownerID, context: context)
                try context.deliverConversation(result, key: pass.name ?? "Telegram chat", of: 1)
            }
            return ImportResult(conversation: Conversation(title: nil, participants: [], messages: []), format: .telegram)
        }

        var sink: MessageSink
        let title: String?, chatType: String?, chatID: Int64?
        if pass.sawChatList, context.stream != nil, let streamed = pass.own?.count, streamed > 0 {
            // Streaming handed the top-level messages on already; they are not the chat chosen.
            throw ImportError(
                path: source.displayPath, location: "messages",
                reason: "holds \(streamed) messages beside chats.list; expected one or the other (a single-chat or a full export)")
        }
        if pass.sawChatList {
            let chosen = try choose(pass.chats, wanted: wanted, path: source.displayPath)
            let chat = pass.chats[chosen]
            // Taken, not copied: a second holder of the messages would make the first change to
            // them (the directions below) copy them all.
            if pass.early?.index == chosen, let taken = pass.early.take() {
                sink = taken.sink
            } else {
                // Second pass: only the chosen chat's messages.
                sink = MessageSink(clock: WallClock(timeZone: context.options.timeZone))
                if let offset = chat.messagesOffset {
                    try scanner.seek(to: offset, path: chat.messagesPath)
                    try readMessages(scanner, into: &sink, folder: folder, decoder: decoder, context: context)
                }
            }
            title = chat.displayName
            chatType = chat.type
            chatID = chat.id
        } else if let taken = pass.own.take() {
            if let wanted, !matches(wanted, name: pass.name, id: pass.id) {
                throw ImportError(
                    path: source.displayPath,
                    reason: "holds one chat, \"\(pass.name ?? "?")\" (id \(pass.id.map(String.init) ?? "?")), not \"\(wanted)\"")
            }
            sink = taken
            title = pass.name
            chatType = pass.type
            chatID = pass.id
        } else {
            throw ImportError(
                path: source.displayPath, location: "(top level)",
                reason: "has neither \"messages\" nor \"chats.list\"; expected a Telegram Desktop result.json")
        }

        return try conclude(&sink, title: title, chatType: chatType, chatID: chatID, ownerID: pass.ownerID, context: context)
    }

    /// What one pass over result.json finds: a single chat's name, type, id and messages, or a
    /// full export's chat list (each chat's messages skipped, their offset kept) and its owner.
    private struct FirstPass {
        var name: String?, type: String?, id: Int64?, ownerID: Int64?
        var own: MessageSink?
        var chats: [ChatInfo] = []
        var sawChatList = false
        /// A chat whose messages were read in the first pass because it matched `chat` early.
        var early: (index: Int, sink: MessageSink)?
    }

    private static func firstPass(_ scanner: JSONScanner, folder: String, decoder: JSONDecoder, context: ImportContext) throws -> FirstPass {
        let wanted = context.options.chat
        let maxValue = context.options.limits.maxJSONValueBytes
        var pass = FirstPass()

        func small<T: Decodable>(_ type: T.Type) throws -> T {
            try scanner.withCaptured(limit: maxValue) { bytes, start in
                try decodeValue(T.self, bytes, start: start, decoder: decoder, scanner: scanner)
            }
        }

        func readChat() throws {
            var info = ChatInfo()
            try scanner.object { key in
                switch key {
                case "name": info.name = try small(String?.self)
                case "type": info.type = try small(String?.self)
                case "id": info.id = try small(Int64?.self)
                case "messages":
                    info.messagesOffset = scanner.offset
                    info.messagesPath = scanner.path
                    if let wanted, pass.early == nil, matches(wanted, name: info.name, id: info.id) {
                        var sink = MessageSink(clock: WallClock(timeZone: context.options.timeZone))
                        try readMessages(scanner, into: &sink, folder: folder, decoder: decoder, context: context)
                        info.messageCount = sink.count
                        pass.early = (pass.chats.count, sink)
                    } else {
                        try scanner.array { _ in
                            try scanner.skipValue()
                            info.messageCount += 1
                        }
                    }
                default: try scanner.skipValue()
                }
            }
            pass.chats.append(info)
        }

        try scanner.object { key in
            switch key {
            case "name": pass.name = try small(String?.self)
            case "type": pass.type = try small(String?.self)
            case "id": pass.id = try small(Int64?.self)
            case "personal_information": pass.ownerID = try small(PersonalInformation?.self)?.userID
            case "messages":
                var sink = MessageSink(clock: WallClock(timeZone: context.options.timeZone))
                try readMessages(scanner, into: &sink, folder: folder, decoder: decoder, context: context)
                pass.own = sink
            case "chats", "left_chats":
                try scanner.object { key in
                    if key == "list" {
                        pass.sawChatList = true
                        try scanner.array { _ in try readChat() }
                    } else {
                        try scanner.skipValue()
                    }
                }
            default: try scanner.skipValue()
            }
        }
        guard try scanner.atEndOfDocument() else { throw scanner.failure(.syntax(expected: "the end of the file after the JSON")) }
        return pass
    }

    /// A chat's messages read: its "me", directions, title, the conversation.
    private static func conclude(
        _ sink: inout MessageSink, title: String?, chatType: String?, chatID: Int64?, ownerID: Int64?,
        context: ImportContext
    ) throws -> ImportResult {
        // The account owner of a full export; else, in a one-to-one chat (whose `id` and `name`
        // are the other person's), the one author who is not them.
        let owners = OwnerInference(
            authors: sink.authors.map { a in
                OwnerInference.Author(
                    id: a.id, also: a.id.hasPrefix("user") ? [String(a.id.dropFirst(4))] : [], names: [a.name],
                    listed: "\(a.name) (\(a.id))")
            }, unsaid: "no `me` given and the export does not say who its owner is")
        var clues: [OwnerInference.Clue] = [
            .profile(id: ownerID.map { "user\($0)" }, name: nil, how: "the account owner of this export (personal_information.user_id)")
        ]
        if chatType == "personal_chat" {
            clues += [.chatID(chatID.map { "user\($0)" }, how: "whose chat this is"), .namedAfter(title, how: "whom the chat is named after")]
        }
        let meID = owners.resolve(me: context.options.me, clues: clues, context: context)
        if let meID {
            sink.builder.updateMessages { m in
                if m.sender == meID { m.direction = .outgoing }
            }
        }
        sink.builder.title = title
        return try sink.builder.finish(format: .telegram, me: meID, sortByDate: false)
    }

    /// Reads the `messages` array that starts here into `sink`, one element at a time.
    private static func readMessages(
        _ scanner: JSONScanner, into sink: inout MessageSink, folder: String,
        decoder: JSONDecoder, context: ImportContext
    ) throws {
        let base = scanner.pathString
        let maxValue = context.options.limits.maxJSONValueBytes
        try scanner.elements(
            limit: maxValue,
            read: { (d: inout JSONElementReader) throws(JSONElementReader.Failure) in
                try d.telegramMessage()
            }
        ) { i, m in
            sink.count += 1
            if m.type ?? "message" == "message" {
                let author = sender(of: m)
                if sink.seenAuthors.insert(author).inserted { sink.authors.append((author, m.from ?? "Deleted Account")) }
            }
            guard
                let message = message(
                    from: m, location: "\(base)[\(i)]", folder: folder, clock: &sink.clock,
                    context: context)
            else { return }
            if let sender = message.sender { sink.builder.participant(id: sender, name: m.from ?? "Deleted Account") }
            sink.builder.append(message, context: context, sourceID: m.id ?? -Int64(i + 1), replyTo: m.replyToMessageID)
        }
    }

    /// One element of a `messages` array → the message it shows, or nil (skipped, with a warning).
    /// Every message is made incoming; the caller turns "me"'s outgoing once all authors are known.
    static func message(
        from m: TGMessage, location: @autoclosure () -> String, folder: String, clock: inout WallClock,
        context: ImportContext
    ) -> Message? {
        guard let date = date(of: m, clock: &clock) else {
            context.warn(location() + ".date", "message \(m.id.map(String.init) ?? "without id")", "has no readable date; skipped", skipped: true)
            return nil
        }
        // Without `date_unixtime`, `date` is the exporting computer's wall-clock time.
        let wall = m.dateUnixtime.flatMap({ Double($0.value) }) == nil ? m.date.flatMap { WallTime(iso: String($0.prefix(19))) } : nil
        switch m.type ?? "message" {
        case "service":
            var line = Message.system(serviceText(m), date: date)
            line.wallTime = wall
            return line
        case "message":
            let sender = sender(of: m)
            var image: ImageAttachment?
            var attachment: MediaAttachment?
            if let photo = m.photo ?? (m.mimeType?.hasPrefix("image/") == true && m.mediaType == nil ? m.file : nil) {
                (image, attachment) = attach(photo, kind: .photo, m, folder: folder, location: location() + ".photo", context: context)
            } else if let kind = mediaKind(m) {
                if let type = m.mediaType, !knownMediaTypes.contains(type) {
                    context.warn(location() + ".media_type", "\"\(type)\"", "is a media type this reader does not know; shown as a file")
                }
                if let file = m.file {
                    (image, attachment) = attach(file, kind: kind, m, folder: folder, location: location() + ".file", context: context)
                } else {
                    attachment = MediaAttachment(kind: kind)
                }
                if var a = attachment {
                    a.title = a.title ?? title(of: m, kind: kind)
                    if let l = m.locationInformation { a.latitude = l.latitude; a.longitude = l.longitude }
                    attachment = a
                }
            }
            let text = m.text.map(\.value).flatMap { $0.isEmpty ? nil : $0 }
            if text == nil && image == nil && attachment == nil {
                context.warn(
                    location(), "message \(m.id.map(String.init) ?? "without id")", "has no text or media that can be shown; skipped",
                    skipped: true)
                return nil
            }
            if var a = attachment, a.kind == .poll, let poll = m.poll {
                a.answers = poll.answers
                a.voters = poll.totalVoters
                attachment = a
            }
            var message = Message(
                sender: sender, direction: .incoming, date: date, text: text, image: image, wallTime: wall,
                attachment: attachment)
            if text != nil { message.spans = m.text?.spans ?? [] }
            if let forwarded = m.forwardedFrom { message.forwardedFrom = forwarded ?? "" }
            if let edited = m.editedUnixtime.flatMap({ Double($0.value) }) {
                message.edited = Date(timeIntervalSince1970: edited)
            } else if let edited = m.edited {
                message.edited =
                    WallTime(iso: String(edited.prefix(19))).flatMap {
                        clock.instant(year: $0.year, month: $0.month, day: $0.day, hour: $0.hour, minute: $0.minute, second: $0.second)
                    } ?? date
            }
            applyReactionsAndReply(m.reactions, to: &message)
            return message
        case let other:
            // A kind of message this reader does not know: kept as a labelled line, not dropped.
            context.warn(
                location() + ".type", "message \(m.id.map(String.init) ?? "without id")",
                "has type \"\(other)\", which this reader does not know; kept as a labelled line")
            var text = "Unsupported Telegram message (type “\(other)”)"
            if let from = m.from ?? m.actor { text = from + ": " + text }
            if let body = m.text?.value, !body.isEmpty { text += " — " + body }
            var line = Message.system(text, date: date)
            line.wallTime = wall
            return line
        }
    }

    /// The author's id: `from_id`, else `from`; a message with neither (a deleted account, some
    /// older exports) is the "Deleted Account"'s.
    static func sender(of m: TGMessage) -> String {
        m.fromID?.value ?? m.from ?? "deleted-account"
    }

    /// Decodes one captured value; a wrong type or a missing field names its JSON path below the
    /// scanner's current one.
    private static func decodeValue<T: Decodable>(
        _ type: T.Type, _ bytes: UnsafeBufferPointer<UInt8>, start: Int64,
        decoder: JSONDecoder, scanner: JSONScanner
    ) throws -> T {
        do {
            return try decoder.decode(T.self, from: Data(buffer: bytes))
        } catch let error as DecodingError {
            // The scanner checked the syntax; a string with bytes that are not UTF-8 fails here.
            if let bad = firstInvalidUTF8(bytes) {
                throw JSONScanner.Failure(kind: .notUTF8, offset: start + Int64(bad), path: scanner.pathString)
            }
            let here = scanner.path
            func at(_ codingPath: [any CodingKey]) -> String {
                JSONScanner.string(here + codingPath.map { $0.intValue.map(JSONScanner.PathComponent.index) ?? .key($0.stringValue) })
            }
            switch error {
            case .dataCorrupted(let ctx):
                throw ImportError(path: scanner.displayPath, location: at(ctx.codingPath), reason: ctx.debugDescription)
            case .typeMismatch(let type, let ctx):
                throw ImportError(
                    path: scanner.displayPath, location: at(ctx.codingPath),
                    reason: "has the wrong type; expected \(JSONLocation.typeName(type))")
            case .valueNotFound(let type, let ctx):
                throw ImportError(path: scanner.displayPath, location: at(ctx.codingPath), reason: "is null; expected \(JSONLocation.typeName(type))")
            case .keyNotFound(let key, let ctx):
                throw ImportError(path: scanner.displayPath, location: at(ctx.codingPath + [key]), reason: "is missing")
            @unknown default:
                throw ImportError(path: scanner.displayPath, location: at([]), reason: "\(error)")
            }
        }
    }

    /// Index of the first byte that starts no valid UTF-8 sequence.
    static func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let n = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0
            guard n > 0, i + n <= bytes.count,
                String(validating: UnsafeBufferPointer(rebasing: bytes[i..<(i + n)]), as: UTF8.self) != nil
            else { return i }
            i += n
        }
        return nil
    }

    /// The index of the chat `wanted` names, or an error listing the chats.
    private static func choose(_ chats: [ChatInfo], wanted: String?, path: String) throws(ImportError) -> Int {
        // A name two chats share is listed with each one's id, which picks it.
        var names: [String: Int] = [:]
        for c in chats { names[c.displayName, default: 0] += 1 }
        let listing = TextCleanup.list(
            chats.map { c in
                let id = names[c.displayName, default: 0] > 1 ? ", id \(c.id.map(String.init) ?? "?")" : ""
                return "\(c.displayName) (\(c.type ?? "chat")\(id), \(TextCleanup.count(c.messageCount, "message")))"
            })
        guard let wanted else {
            if chats.count == 1 { return 0 }
            throw ImportError(
                path: path, location: "chats.list",
                reason: "holds \(chats.count) chats; pick one with `chat` (name or id): \(listing)")
        }
        let hits = chats.indices.filter { matches(wanted, name: chats[$0].name, id: chats[$0].id) }
        if hits.count == 1 { return hits[0] }
        if hits.isEmpty {
            throw ImportError(path: path, location: "chats.list", reason: "has no chat named \"\(wanted)\"; chats: \(listing)")
        }
        let ids = hits.map { "\(chats[$0].displayName) (id \(chats[$0].id.map(String.init) ?? "?"))" }
        throw ImportError(
            path: path, location: "chats.list",
            reason: "has \(hits.count) chats named \"\(wanted)\"; pick one by id: \(TextCleanup.list(ids))")
    }

    private static func date(of m: TGMessage, clock: inout WallClock) -> Date? {
        if let unix = m.dateUnixtime.flatMap({ Double($0.value) }) {
            return unix.isFinite && abs(unix) < 1e12 ? Date(timeIntervalSince1970: unix) : nil
        }
        // "2021-03-05T14:22:11", local time of the exporting computer.
        guard let s = m.date, s.utf8.count >= 19 else { return nil }
        let f = s.split(whereSeparator: { "-T:".contains($0) }).compactMap { Int($0) }
        guard f.count >= 6 else { return nil }
        return clock.instant(year: f[0], month: f[1], day: f[2], hour: f[3], minute: f[4], second: f[5])
    }

    /// A file of the export: a photo (drawn), or a typed attachment with what the export and the
    /// file's headers say. One the export left out ("(File not included…)"), outside the export
    /// folder, or missing, is a placeholder, with a warning.
    private static func attach(
        _ relative: String, kind: MediaAttachment.Kind, _ m: TGMessage, folder: String, location: String,
        context: ImportContext
    ) -> (ImageAttachment?, MediaAttachment?) {
        let name = m.fileName ?? (relative.hasPrefix("(") ? nil : (relative as NSString).lastPathComponent)
        var missing = MediaAttachment(kind: kind, fileName: name, mimeType: m.mimeType)
        missing.duration = m.durationSeconds.map(Double.init)
        let what = kind == .photo ? "photo" : kind.rawValue
        if relative.hasPrefix("(File not included") || relative.hasPrefix("(File exceeds") {
            missing.label = relative
            missing.fileName = m.fileName
            context.warn(location, what, "not included in the export (\(relative)); shown as a placeholder", skipped: true, media: true)
            return (nil, missing)
        }
        guard let full = ExportTree.inside(folder, relative) else {
            context.warn(location, "\(what) \(relative)", "path leaves the export folder; shown as a placeholder", skipped: true, media: true)
            return (nil, missing)
        }
        guard FileManager.default.fileExists(atPath: full) else {
            context.warn(location, "\(what) \(relative)", "no such file in the export folder; shown as a placeholder", skipped: true, media: true)
            return (nil, missing)
        }
        if kind == .photo {
            return (ImageAttachment(path: full, width: 0, height: 0, name: name), nil)
        }
        var a = MediaAttachment.described(kind: kind, fileName: name, path: full, mimeType: m.mimeType)
        a.duration = m.durationSeconds.map(Double.init) ?? a.duration
        if let w = m.width, let h = m.height, w > 0, h > 0 { a.width = w; a.height = h }
        if let thumbnail = m.thumbnail, let poster = ExportTree.inside(folder, thumbnail), FileManager.default.fileExists(atPath: poster) {
            a.poster = poster
        }
        return (nil, a)
    }

    static let knownMediaTypes: Set<String> = ["sticker", "voice_message", "video_message", "video_file", "animation", "audio_file"]

    /// The kind of what a message carries besides a photo (stickers, voice, videos, files,
    /// polls, locations, contacts), or nil.
    private static func mediaKind(_ m: TGMessage) -> MediaAttachment.Kind? {
        if m.poll != nil { return .poll }
        if m.locationInformation != nil { return .location }
        if m.contactInformation != nil { return .contact }
        switch m.mediaType {
        case "sticker": return .sticker
        case "voice_message": return .voice
        case "video_message", "video_file": return .video
        case "animation": return .gif
        case "audio_file": return .audio
        case .some: return .document
        case nil:
            guard m.file != nil else { return nil }
            let mime = m.mimeType ?? ""
            return mime.hasPrefix("video/") ? .video : mime.hasPrefix("audio/") ? .audio : .document
        }
    }

    /// A poll's question, a contact's name (or number), a location's place name, a sticker's emoji.
    private static func title(of m: TGMessage, kind: MediaAttachment.Kind) -> String? {
        switch kind {
        case .poll: return m.poll?.question
        case .contact:
            guard let c = m.contactInformation else { return nil }
            let name = [c.firstName, c.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
            return [name, c.phoneNumber ?? ""].filter { !$0.isEmpty }.joined(separator: ", ")
        case .location: return m.locationInformation.flatMap { $0.title ?? $0.address }
        case .sticker: return m.stickerEmoji.flatMap { $0.isEmpty ? nil : $0 }
        default: return nil
        }
    }

    /// A service message as a sentence: "Ann created group «Trip»", "Ann added Ben, Cy".
    static func serviceText(_ m: TGMessage) -> String {
        let actor = m.actor ?? "Someone"
        let members = (m.members ?? []).map { $0 ?? "Deleted Account" }.joined(separator: ", ")
        var line: String
        switch m.action ?? "" {
        case "create_group", "create_channel": line = "\(actor) created group «\(m.title ?? "")»"
        case "invite_members": line = "\(actor) added \(members)"
        case "remove_members": line = members == actor ? "\(actor) left the group" : "\(actor) removed \(members)"
        case "join_group_by_link": line = "\(actor) joined the group via invite link"
        case "edit_group_title": line = "\(actor) changed the group name to «\(m.title ?? "")»"
        case "edit_group_photo": line = "\(actor) changed the group photo"
        case "delete_group_photo": line = "\(actor) removed the group photo"
        case "pin_message": line = "\(actor) pinned a message"
        case "migrate_to_supergroup", "migrate_from_group": line = "The group was upgraded to a supergroup"
        case "clear_history": line = "History was cleared"
        case "phone_call", "group_call":
            if m.discardReason == "missed" {
                line = "Missed call from \(actor)"
            } else if let d = m.durationSeconds {
                line = "\(actor) called (\(d / 60):\(String(format: "%02d", d % 60)))"
            } else {
                line = "\(actor) called"
            }
        case "": line = actor
        case let other: line = "\(actor): \(other.replacingOccurrences(of: "_", with: " "))"
        }
        if let text = m.text?.value, !text.isEmpty { line += " — " + text }
        return line
    }
}

// MARK: reactions (kept apart from the parser so it can change without touching this)

/// One entry of a Telegram message's `reactions`: `{"type": "emoji", "count": 2, "emoji": "❤",
/// "recent": [{"from": "Ann", "from_id": "user1", "date": "…"}]}` (custom emoji have
/// `"type": "custom_emoji"` and a `document_id` instead of `emoji`).
struct TGReaction {
    var type: String?
    var count: Int?
    var emoji: String?
    var recent: [Recent]?
    struct Recent { var fromID: String? }
}

extension TelegramImporter {
    /// Maps a message's `reactions` to the model's reactions (custom emoji without a character
    /// show as ⭐). The reply (`reply_to_message_id`) is resolved by the builder, which knows
    /// every message: `ReplyReference(id, sender, text)` with the original's author and snippet.
    static func applyReactionsAndReply(_ reactions: [TGReaction]?, to message: inout Message) {
        message.reactions = (reactions ?? []).compactMap { r in
            let emoji = r.emoji.flatMap { $0.isEmpty ? nil : $0 } ?? (r.type == "custom_emoji" ? "⭐" : nil)
            guard let emoji else { return nil }
            let senders = (r.recent ?? []).compactMap(\.fromID)
            return Reaction(emoji: emoji, count: max(1, r.count ?? senders.count), senders: senders)
        }
    }
}

extension TelegramImporter: ExportReader {
    static let formats: [ImportFormat] = [.telegram]
    static let holdsManyChats = true
    static let delivery = MessageTiming.provisionally
    static let fileInFolder: String? = "result.json"

    private static let marks = [
        "\"date_unixtime\"", "\"personal_information\"", "\"from_id\"", "\"personal_chat\"", "\"private_group\"",
        "\"private_supergroup\"", "\"public_supergroup\"", "\"saved_messages\"", "\"bot_chat\""
    ]

    /// Telegram Desktop's `result.json` (keys only it writes), or a folder holding it.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        if probe.isFolder { return probe.file("result.json").map { .certain(.telegram, path: $0) } }
        return probe.first == UInt8(ascii: "{") && marks.contains(where: probe.text.contains) ? .certain(.telegram) : nil
    }
}
