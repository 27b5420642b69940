import BubbleCore
import Foundation

/// Telegram Desktop "Export chat history" (`result.json`, one chat) and "Export Telegram data"
/// (`result.json` with `chats.list[]`, the whole account).
///
/// Memory, honestly: this is not streaming. The file is memory-mapped (file-backed pages the
/// kernel can drop, though they count in RSS once touched), then Foundation's JSONDecoder builds an
/// index of every value in the document before decoding into compact structs; only the selected
/// chat's messages are decoded, other chats are only counted. Measured: a 212 MB account export
/// (2 × 250,000 messages) peaks at 689 MB RSS, about 3.2 × the file, of which 212 MB is the
/// mapping. No tree of Foundation objects is built, and Data and a DOM are never held together.
/// A streaming JSON reader would bring this down to the model's size.
enum TelegramImporter {
    // MARK: Schema (only the fields used)

    /// Decides, while decoding, which chats of a full export get their messages decoded.
    final class Selection: Sendable {
        let wanted: String?
        init(wanted: String?) { self.wanted = wanted }

        func matches(name: String?, id: Int64?) -> Bool {
            guard let wanted else { return false }
            if let name, name.caseInsensitiveCompare(wanted) == .orderedSame { return true }
            if let id, String(id) == wanted { return true }
            return false
        }
    }

    static let selectionKey = CodingUserInfoKey(rawValue: "bubblekit.telegram.selection")!

    struct File: Decodable {
        var name: String?
        var type: String?
        var id: Int64?
        var messages: [TGMessage]?
        var personalInformation: PersonalInformation?
        var chats: ChatList?
        var leftChats: ChatList?

        enum CodingKeys: String, CodingKey {
            case name, type, id, messages, chats
            case personalInformation = "personal_information"
            case leftChats = "left_chats"
        }
    }

    struct PersonalInformation: Decodable {
        var userID: Int64?
        enum CodingKeys: String, CodingKey { case userID = "user_id" }
    }

    struct ChatList: Decodable { var list: [Chat] }

    struct Chat: Decodable {
        var name: String?
        var type: String?
        var id: Int64?
        var messageCount: Int
        /// Decoded only for the selected chat.
        var messages: [TGMessage]?

        enum CodingKeys: String, CodingKey { case name, type, id, messages }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decodeIfPresent(String.self, forKey: .name)
            type = try c.decodeIfPresent(String.self, forKey: .type)
            id = try c.decodeIfPresent(Int64.self, forKey: .id)
            if c.contains(.messages) {
                let selection = decoder.userInfo[TelegramImporter.selectionKey] as? Selection
                if selection?.matches(name: name, id: id) == true {
                    let decoded = try c.decode([TGMessage].self, forKey: .messages)
                    messages = decoded
                    messageCount = decoded.count
                } else {
                    messageCount = try c.nestedUnkeyedContainer(forKey: .messages).count ?? 0
                }
            } else {
                messageCount = 0
            }
        }

        var displayName: String {
            if let name, !name.isEmpty { return name }
            return type == "saved_messages" ? "Saved Messages" : "(unnamed chat \(id.map(String.init) ?? "?"))"
        }
    }

    struct TGMessage: Decodable {
        var id: Int64
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
        var poll: Poll?
        var locationInformation: Location?
        var contactInformation: Contact?

        enum CodingKeys: String, CodingKey {
            case id, type, date, from, actor, action, title, members, text, photo, file, poll, reactions
            case dateUnixtime = "date_unixtime", fromID = "from_id", actorID = "actor_id"
            case durationSeconds = "duration_seconds", discardReason = "discard_reason"
            case replyToMessageID = "reply_to_message_id", fileName = "file_name", mimeType = "mime_type"
            case mediaType = "media_type", stickerEmoji = "sticker_emoji"
            case locationInformation = "location_information", contactInformation = "contact_information"
        }
    }

    struct Poll: Decodable { var question: String? }
    struct Location: Decodable { var latitude: Double?; var longitude: Double? }
    struct Contact: Decodable {
        var firstName: String?, lastName: String?, phoneNumber: String?
        enum CodingKeys: String, CodingKey {
            case firstName = "first_name", lastName = "last_name", phoneNumber = "phone_number"
        }
    }

    /// A string that older exports wrote as a number (`from_id`, `date_unixtime`).
    struct FlexibleString: Decodable {
        var value: String
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let s = try? c.decode(String.self) { value = s } else { value = String(try c.decode(Int64.self)) }
        }
    }

    /// `text`: a string, or an array of strings and `{type, text}` entities; joined into one string.
    struct TGText: Decodable {
        var value: String
        private struct Entity: Decodable { var text: String? }
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let s = try? c.decode(String.self) { value = s; return }
            var parts = try decoder.unkeyedContainer()
            var out = ""
            while !parts.isAtEnd {
                if let s = try? parts.decode(String.self) {
                    out += s
                } else {
                    out += try parts.decode(Entity.self).text ?? ""
                }
            }
            value = out
        }
    }

    // MARK: Reading

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: source.path), options: .alwaysMapped)
        } catch {
            throw ImportError(path: source.displayPath, reason: "cannot be read: \(error.localizedDescription)")
        }
        let file = try decode(data, path: source.displayPath, selection: Selection(wanted: context.options.chat))
        let folder = (source.path as NSString).deletingLastPathComponent

        let title: String?, type: String?, chatID: Int64?, messages: [TGMessage], basePath: String
        if let list = file.chats?.list {
            let all = list + (file.leftChats?.list ?? [])
            let chosen = try choose(all, wanted: context.options.chat, path: source.displayPath)
            var chat = all[chosen]
            if chat.messages == nil && chat.messageCount > 0 {
                // Picked without `chat` (the only chat): decode again, this time with its messages.
                let again = try decode(data, path: source.displayPath, selection: Selection(wanted: String(chat.id ?? -1)))
                chat = (again.chats?.list ?? []).first { $0.id == chat.id } ?? chat
            }
            title = chat.displayName
            type = chat.type
            chatID = chat.id
            messages = chat.messages ?? []
            let inList = chosen < list.count
            basePath = "\(inList ? "chats" : "left_chats").list[\(inList ? chosen : chosen - list.count)].messages"
        } else if let own = file.messages {
            if let wanted = context.options.chat,
               !Selection(wanted: wanted).matches(name: file.name, id: file.id) {
                throw ImportError(path: source.displayPath,
                                  reason: "holds one chat, \"\(file.name ?? "?")\" (id \(file.id.map(String.init) ?? "?")), not \"\(wanted)\"")
            }
            title = file.name
            type = file.type
            chatID = file.id
            messages = own
            basePath = "messages"
        } else {
            throw ImportError(path: source.displayPath, location: "(top level)",
                              reason: "has neither \"messages\" nor \"chats.list\"; expected a Telegram Desktop result.json")
        }

        let meID = resolveMe(context.options.me, messages: messages, ownerID: file.personalInformation?.userID,
                             chatType: type, chatID: chatID, context: context)
        var builder = ConversationBuilder()
        builder.title = title
        var clock = WallClock(timeZone: context.options.timeZone)
        for (i, m) in messages.enumerated() {
            let location = "\(basePath)[\(i)]"
            guard let date = date(of: m, clock: &clock) else {
                context.warn(location + ".date", "message \(m.id)", "has no readable date; skipped", skipped: true)
                continue
            }
            switch m.type ?? "message" {
            case "service":
                builder.append(.system(serviceText(m), date: date), context: context, sourceID: m.id)
            case "message":
                let sender = m.fromID?.value ?? m.from ?? "unknown"
                builder.participant(id: sender, name: m.from ?? "Deleted Account")
                var lines: [String] = []
                var image: ImageAttachment?
                if let photo = m.photo ?? (m.mimeType?.hasPrefix("image/") == true && m.mediaType == nil ? m.file : nil) {
                    image = attach(photo, folder: folder, location: location, context: context, placeholder: &lines)
                } else if let placeholder = mediaPlaceholder(m) {
                    lines.append(placeholder)
                }
                if let text = m.text?.value, !text.isEmpty { lines.append(text) }
                let text = lines.isEmpty ? nil : lines.joined(separator: "\n")
                if text == nil && image == nil {
                    context.warn(location, "message \(m.id)", "has no text or media that can be shown; skipped", skipped: true)
                    continue
                }
                var message = Message(sender: sender, direction: sender == meID ? .outgoing : .incoming, date: date,
                                      text: text, image: image)
                Self.applyReactionsAndReply(m.reactions, to: &message)
                builder.append(message, context: context, sourceID: m.id, replyTo: m.replyToMessageID)
            case let other:
                context.warn(location, "message \(m.id)", "has type \"\(other)\"; expected message or service; skipped", skipped: true)
            }
        }
        return builder.finish(format: .telegram, me: meID, sortByDate: false)
    }

    static func decode(_ data: Data, path: String, selection: Selection) throws(ImportError) -> File {
        let decoder = JSONDecoder()
        decoder.userInfo[selectionKey] = selection
        do {
            return try decoder.decode(File.self, from: data)
        } catch let error as DecodingError {
            throw JSONLocation.error(error, data: data, path: path)
        } catch {
            throw ImportError(path: path, reason: "\(error)")
        }
    }

    /// The index of the chat `wanted` names, or an error listing the chats.
    private static func choose(_ chats: [Chat], wanted: String?, path: String) throws(ImportError) -> Int {
        let listing = TextCleanup.list(chats.map { "\($0.displayName) (\($0.type ?? "chat"), \($0.messageCount) messages)" })
        guard let wanted else {
            if chats.count == 1 { return 0 }
            throw ImportError(path: path, location: "chats.list",
                              reason: "holds \(chats.count) chats; pick one with `chat` (name or id): \(listing)")
        }
        let selection = Selection(wanted: wanted)
        let hits = chats.indices.filter { selection.matches(name: chats[$0].name, id: chats[$0].id) }
        if hits.count == 1 { return hits[0] }
        if hits.isEmpty {
            throw ImportError(path: path, location: "chats.list", reason: "has no chat named \"\(wanted)\"; chats: \(listing)")
        }
        let ids = hits.map { "\(chats[$0].displayName) (id \(chats[$0].id.map(String.init) ?? "?"))" }
        throw ImportError(path: path, location: "chats.list",
                          reason: "has \(hits.count) chats named \"\(wanted)\"; pick one by id: \(TextCleanup.list(ids))")
    }

    private static func date(of m: TGMessage, clock: inout WallClock) -> Date? {
        if let unix = m.dateUnixtime.flatMap({ Double($0.value) }) { return Date(timeIntervalSince1970: unix) }
        // "2021-03-05T14:22:11", local time of the exporting computer.
        guard let s = m.date, s.utf8.count >= 19 else { return nil }
        let f = s.split(whereSeparator: { "-T:".contains($0) }).compactMap { Int($0) }
        guard f.count >= 6 else { return nil }
        return clock.instant(year: f[0], month: f[1], day: f[2], hour: f[3], minute: f[4], second: f[5])
    }

    /// A photo in the export folder; a missing or unsafe one becomes a placeholder line.
    private static func attach(_ relative: String, folder: String, location: String, context: ImportContext,
                               placeholder: inout [String]) -> ImageAttachment? {
        if relative.hasPrefix("(File not included") || relative.hasPrefix("(File exceeds") {
            placeholder.append("[Photo]")
            context.warn(location + ".photo", "photo", "not included in the export (\(relative)); shown as [Photo]", skipped: true)
            return nil
        }
        let full = URL(fileURLWithPath: folder).appendingPathComponent(relative).standardizedFileURL.path
        let base = URL(fileURLWithPath: folder).standardizedFileURL.path
        guard !relative.hasPrefix("/"), full.hasPrefix(base.hasSuffix("/") ? base : base + "/") else {
            placeholder.append("[Photo]")
            context.warn(location + ".photo", "photo \(relative)", "path leaves the export folder; shown as [Photo]", skipped: true)
            return nil
        }
        guard TextCleanup.photoExtension(ofFileName: relative) != nil else {
            placeholder.append("[Photo: \((relative as NSString).lastPathComponent)]")
            context.warn(location + ".photo", "photo \(relative)", "is not a format the renderer reads; shown as a placeholder", skipped: true)
            return nil
        }
        guard FileManager.default.fileExists(atPath: full) else {
            placeholder.append("[Photo]")
            context.warn(location + ".photo", "photo \(relative)", "no such file in the export folder; shown as [Photo]", skipped: true)
            return nil
        }
        return ImageAttachment(path: full, width: 0, height: 0)
    }

    /// Text standing in for media a bubble cannot show (stickers, voice, files, polls…).
    private static func mediaPlaceholder(_ m: TGMessage) -> String? {
        if let poll = m.poll { return "[Poll: \(poll.question ?? "")]" }
        if let l = m.locationInformation {
            return "[Location: \(l.latitude.map { String($0) } ?? "?"), \(l.longitude.map { String($0) } ?? "?")]"
        }
        if let c = m.contactInformation {
            let name = [c.firstName, c.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
            return "[Contact: \([name, c.phoneNumber ?? ""].filter { !$0.isEmpty }.joined(separator: ", "))]"
        }
        let name = m.fileName ?? m.file.map { ($0 as NSString).lastPathComponent }
        switch m.mediaType {
        case "sticker": return m.stickerEmoji.map { $0.isEmpty ? "[Sticker]" : $0 } ?? "[Sticker]"
        case "voice_message": return "[Voice message]"
        case "video_message": return "[Video message]"
        case "video_file": return "[Video]"
        case "animation": return "[GIF]"
        case "audio_file": return "[Audio" + (name.map { ": \($0)" } ?? "") + "]"
        case .some(let other): return "[\(other.replacingOccurrences(of: "_", with: " "))]"
        case nil: return m.file != nil ? "[File" + (name.map { ": \($0)" } ?? "") + "]" : nil
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
            if m.discardReason == "missed" { line = "Missed call from \(actor)" } else if let d = m.durationSeconds {
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

    /// Whose messages are outgoing: `me` (a name or `from_id`), else the account owner of a full
    /// export, else in a one-to-one chat (whose `id` is the other person's) whoever is not the other.
    private static func resolveMe(_ me: String?, messages: [TGMessage], ownerID: Int64?, chatType: String?,
                                  chatID: Int64?, context: ImportContext) -> String? {
        var authors: [(id: String, name: String)] = []
        var seen = Set<String>()
        for m in messages where m.type ?? "message" == "message" {
            let id = m.fromID?.value ?? m.from ?? "unknown"
            if seen.insert(id).inserted { authors.append((id, m.from ?? "Deleted Account")) }
        }
        if let me {
            if let hit = authors.first(where: { $0.id == me || $0.id == "user" + me || TextCleanup.sameContact($0.name, me) }) {
                return hit.id
            }
            context.warn(nil, "me \"\(me)\"", "is not an author here; authors: "
                             + TextCleanup.list(authors.map { "\($0.name) (\($0.id))" }))
        }
        if let ownerID { return "user\(ownerID)" }
        if chatType == "personal_chat", let chatID, let other = authors.first(where: { $0.id != "user\(chatID)" }) {
            return other.id
        }
        if me == nil && !authors.isEmpty {
            context.warn(nil, "directions", "the export does not say who its owner is, so every message is incoming; pass `me`: "
                             + TextCleanup.list(authors.map { "\($0.name) (\($0.id))" }))
        }
        return nil
    }
}

// MARK: reactions (kept apart from the parser so it can change without touching this)

/// One entry of a Telegram message's `reactions`: `{"type": "emoji", "count": 2, "emoji": "❤",
/// "recent": [{"from": "Ann", "from_id": "user1", "date": "…"}]}` (custom emoji have
/// `"type": "custom_emoji"` and a `document_id` instead of `emoji`).
struct TGReaction: Decodable {
    var type: String?
    var count: Int?
    var emoji: String?
    var recent: [Recent]?
    struct Recent: Decodable {
        var fromID: String?
        enum CodingKeys: String, CodingKey { case fromID = "from_id" }
    }
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
