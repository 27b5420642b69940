import BubbleCore
import Foundation
import GRDB

/// Reads the conversations of a decrypted Signal Desktop database.
struct SignalReader {
    let db: Database
    let source: ImportSource
    let shownPath: String
    let context: ImportContext
    let attachments: String?
    let stickers: String?

    struct Person {
        var id: String
        var name: String
        var type: String
        var serviceId: String?
        var e164: String?
    }

    struct Chat {
        var id: String
        var title: String
        var count: Int
        var isGroup: Bool
    }

    /// Conversation id → person or group; service id (ACI) and number → conversation id.
    private var people: [String: Person] = [:]
    private var byServiceID: [String: String] = [:]
    private var byNumber: [String: String] = [:]
    private var myConversation: String?
    private var meName = "Me"
    private var calls: [String: (type: String, direction: String, status: String)] = [:]

    init(db: Database, source: ImportSource, shownPath: String, context: ImportContext, attachments: String?, stickers: String?) throws {
        self.db = db; self.source = source; self.shownPath = shownPath; self.context = context; self.attachments = attachments
        self.stickers = stickers
        let rows = try Row.fetchCursor(db, sql: "SELECT id, json FROM conversations")
        while let row = try rows.next() {
            guard let id: String = row.lenient(at: 0) else { continue }
            let json = (row.lenient(at: 1) as String?).flatMap(Self.object) ?? [:]
            let profileFull = [json["profileName"] as? String, json["profileFamilyName"] as? String].compactMap { $0 }.filter { !$0.isEmpty }.joined(
                separator: " ")
            let serviceId = (json["serviceId"] as? String) ?? (json["uuid"] as? String)
            let e164 = json["e164"] as? String
            let name =
                [json["name"] as? String, json["profileFullName"] as? String, profileFull, e164, json["username"] as? String, serviceId]
                .compactMap { $0 }.map(TextCleanup.cleanName).first { !$0.isEmpty } ?? "Unknown"
            people[id] = Person(id: id, name: name, type: json["type"] as? String ?? "private", serviceId: serviceId, e164: e164)
            if let serviceId { byServiceID[serviceId] = id }
            if let e164 { byNumber[e164] = id }
        }
        if try db.tableExists("items"), let json = try String.fetchOne(db, sql: "SELECT json FROM items WHERE id = 'uuid_id'").flatMap(Self.object),
            let value = json["value"] as? String
        {
            let aci = String(value.prefix { $0 != "." })
            myConversation = byServiceID[aci]
        }
        if let me = context.options.me { meName = me } else if let mine = myConversation.flatMap({ people[$0] }) { meName = mine.name }
        if try db.tableExists("callsHistory") {
            for row in try Row.fetchAll(db, sql: "SELECT callId, type, direction, status FROM callsHistory") {
                if let id: String = row.lenient(at: 0) {
                    calls[id] = (row.lenient(at: 1) ?? "Audio", row.lenient(at: 2) ?? "Incoming", row.lenient(at: 3) ?? "")
                }
            }
        }
    }

    static func object(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    func run() throws -> ImportResult {
        let storyFilter = try db.columns(in: "messages").contains { $0.name == "isStory" } ? "WHERE isStory IS NOT 1" : ""
        var chats: [Chat] = []
        for row in try Row.fetchAll(db, sql: "SELECT conversationId, COUNT(*) FROM messages \(storyFilter) GROUP BY conversationId ORDER BY MIN(rowid)") {
            guard let id: String = row.lenient(at: 0), let person = people[id] else { continue }
            chats.append(
                Chat(
                    id: id, title: id == myConversation ? "Note to Self" : person.name, count: row.lenient(at: 1) ?? 0,
                    isGroup: person.type == "group"))
        }
        if context.everyChat {
            let wanted = context.wanted(chats, matches: matches)
            for chat in wanted {
                try context.deliverConversation(try read(chat), key: chat.title, of: wanted.count, identity: chat.id)
            }
            return ImportResult(conversation: Conversation(), format: .signal)
        }
        let listing = TextCleanup.list(chats.map { "\($0.title) (\(TextCleanup.count($0.count, "message")))" })
        guard !chats.isEmpty else { throw ImportError(path: shownPath, location: "table messages", reason: "has no messages") }
        guard let wanted = context.options.chat else {
            if chats.count == 1 { return try read(chats[0]) }
            throw ImportError(
                path: shownPath, reason: "holds \(chats.count) conversations; pick one with `chat` (name or number), or read them all with --all: \(listing)")
        }
        let hits = chats.filter { matches($0, wanted) }
        guard hits.count == 1 else {
            throw ImportError(
                path: shownPath,
                reason: hits.isEmpty
                    ? "has no conversation \"\(wanted)\"; conversations: \(listing)"
                    : "has \(hits.count) conversations matching \"\(wanted)\": " + TextCleanup.list(hits.map(\.title)))
        }
        return try read(hits[0])
    }

    private func matches(_ chat: Chat, _ wanted: String) -> Bool {
        if chat.title.caseInsensitiveCompare(wanted) == .orderedSame || chat.id == wanted { return true }
        guard let p = people[chat.id] else { return false }
        return p.e164.map { TextCleanup.sameContact($0, wanted) } == true || p.serviceId == wanted
    }

    /// The participant id of a conversation id (the owner's is "me").
    private func participant(_ conversation: String?) -> String {
        guard let conversation else { return "unknown" }
        return conversation == myConversation ? "me" : conversation
    }

    private func name(_ id: String) -> String { id == "me" ? meName : people[id]?.name ?? id }

    /// The name a mention of a service id (ACI) shows.
    private func mentionName(_ aci: String) -> String? { byServiceID[aci].map { name(participant($0)) } }

    // MARK: - One conversation

    private struct AttachmentRow {
        var type: String
        var contentType: String?
        var path: String?
        var localKey: String?
        var size: Int?
        var fileName: String?
        var width: Double?
        var height: Double?
        var flags: Int
        var version: Int?
    }

    private func read(_ chat: Chat) throws -> ImportResult {
        var builder = ConversationBuilder()
        if context.everyChat { builder.spool = try context.makeSpool() }
        builder.title = chat.title
        builder.participant(id: "me", name: meName)
        if !chat.isGroup, chat.id != myConversation { builder.participant(id: chat.id, name: name(chat.id)) }
        let table = try attachmentTable(of: chat)
        var rowOfSentAt: [Int64: Int64] = [:]
        var skippedKinds: [String: Int] = [:]
        let rows = try Row.fetchCursor(
            db, sql: "SELECT rowid, json FROM messages WHERE conversationId = ? ORDER BY COALESCE(sent_at, received_at), rowid",
            arguments: [chat.id])
        while let row = try rows.next() {
            guard let rowID: Int64 = row.lenient(at: 0) else { continue }
            let location = "messages rowid \(rowID)"
            guard let json = (row.lenient(at: 1) as String?).flatMap(Self.object) else {
                context.warn(location, "message", "its json column is not JSON; skipped", skipped: true)
                continue
            }
            if (json["isStory"] as? Bool) == true { continue }
            let sentAt = Self.int(json["sent_at"]) ?? Self.int(json["received_at"]) ?? 0
            let date = Date(timeIntervalSince1970: Double(sentAt) / 1000)
            let type = json["type"] as? String ?? ""
            let messageID = json["id"] as? String ?? ""
            switch type {
            case "incoming", "outgoing":
                break
            case "call-history":
                builder.append(.system(callLine(json), date: date), context: context)
                continue
            case "timer-notification":
                let update = json["expirationTimerUpdate"] as? [String: Any] ?? [:]
                let who =
                    (update["sourceServiceId"] as? String).flatMap { byServiceID[$0] }.map { name(participant($0)) }
                    ?? (update["fromSync"] as? Bool == true ? meName : name(chat.isGroup ? "unknown" : chat.id))
                let seconds = Self.int(update["expireTimer"]) ?? 0
                builder.append(
                    .system(
                        seconds > 0
                            ? "\(who) set disappearing messages to \(Self.duration(seconds))"
                            : "\(who) turned off disappearing messages", date: date), context: context)
                continue
            case "group-v2-change":
                if let line = groupChangeLine(json) { builder.append(.system(line, date: date), context: context) }
                continue
            default:
                skippedKinds[type.isEmpty ? "(no type)" : type, default: 0] += 1
                continue
            }
            let outgoing = type == "outgoing"
            var sender = "me"
            if !outgoing {
                if let aci = (json["sourceServiceId"] as? String) ?? (json["sourceUuid"] as? String), let conv = byServiceID[aci] {
                    sender = participant(conv)
                } else if let number = json["source"] as? String, let conv = byNumber[number] {
                    sender = participant(conv)
                } else {
                    sender = chat.isGroup ? "unknown" : chat.id
                }
                builder.participant(id: sender, name: name(sender))
            }
            var message = Message(sender: sender, direction: outgoing ? .outgoing : .incoming, date: date, id: messageID)
            if (json["deletedForEveryone"] as? Bool) == true || (json["isErased"] as? Bool) == true {
                message.attachment = MediaAttachment(kind: .deleted)
                builder.append(message, context: context, sourceID: rowID)
                rowOfSentAt[sentAt] = rowID
                continue
            }
            fill(&message, json: json, files: table[messageID] ?? [], location: location)
            if message.text == nil, message.images.isEmpty, message.attachment == nil {
                context.warn(location, "message", "has no text and no attachment; skipped", skipped: true)
                continue
            }
            annotate(&message, json: json, date: date, outgoing: outgoing, builder: &builder, rowOfSentAt: rowOfSentAt)
            builder.append(message, context: context, sourceID: rowID)
            rowOfSentAt[sentAt] = rowID
        }
        if !skippedKinds.isEmpty {
            let total = skippedKinds.values.reduce(0, +)
            context.countSkipped(total)
            context.warn(
                nil, TextCleanup.count(total, "notice"),
                "safety-number, profile and other notices are not shown ("
                    + skippedKinds.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")",
                file: shownPath)
        }
        return try builder.finish(format: .signal, me: "me", sortByDate: false, keep: "me")
    }

    /// A chat's files in `message_attachments` (current Signal), by message id, their last edit's.
    private func attachmentTable(of chat: Chat) throws -> [String: [AttachmentRow]] {
        var table: [String: [AttachmentRow]] = [:]
        if try db.tableExists("message_attachments") {
            let cols = Set(try db.columns(in: "message_attachments").map(\.name))
            func c(_ n: String) -> String { cols.contains(n) ? n : "NULL" }
            let edit = cols.contains("editHistoryIndex") ? "AND (editHistoryIndex IS NULL OR editHistoryIndex = -1)" : ""
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT messageId, attachmentType, contentType, path, localKey, size, fileName, width, height, \(c("flags")), \(c("version"))
                    FROM message_attachments WHERE conversationId = ? \(edit) ORDER BY messageId, orderInMessage
                    """, arguments: [chat.id])
            while let row = try rows.next() {
                guard let id: String = row.lenient(at: 0) else { continue }
                table[id, default: []].append(
                    AttachmentRow(
                        type: row.lenient(at: 1) ?? "attachment", contentType: row.lenient(at: 2), path: row.lenient(at: 3),
                        localKey: row.lenient(at: 4), size: row.lenient(at: 5), fileName: row.lenient(at: 6),
                        width: row.lenient(at: 7), height: row.lenient(at: 8), flags: row.lenient(at: 9) ?? 0,
                        version: row.lenient(at: 10)))
            }
        }
        return table
    }

    /// A message's text (a long one from its file), formatting, files and sticker.
    private func fill(_ message: inout Message, json: [String: Any], files: [AttachmentRow], location: String) {
        var body = json["body"] as? String ?? ""
        let ranges = json["bodyRanges"] as? [[String: Any]] ?? []
        // Files: the table (current Signal) or the JSON (older profiles).
        var files = files
        if files.isEmpty, let list = json["attachments"] as? [[String: Any]] {
            files = list.map { a in
                AttachmentRow(
                    type: "attachment", contentType: a["contentType"] as? String, path: a["path"] as? String,
                    localKey: a["localKey"] as? String, size: Self.int(a["size"]).map(Int.init), fileName: a["fileName"] as? String,
                    width: (Self.int(a["width"])).map(Double.init), height: (Self.int(a["height"])).map(Double.init),
                    flags: Int(Self.int(a["flags"]) ?? 0), version: Self.int(a["version"]).map(Int.init))
            }
        }
        // A long text comes whole as a "long-message" file; the body holds its start.
        if let long = files.first(where: { $0.type == "long-message" }), let data = fileBytes(long, location: location) {
            body = String(decoding: data, as: UTF8.self)
        }
        if (json["isViewOnce"] as? Bool) == true {
            message.attachment = MediaAttachment(kind: .viewOnce)
            files = []
        }
        for file in files where file.type == "attachment" {
            attach(file, to: &message, location: location)
        }
        if let sticker = json["sticker"] as? [String: Any] {
            let data = sticker["data"] as? [String: Any] ?? [:]
            let row = AttachmentRow(
                type: "sticker", contentType: data["contentType"] as? String ?? "image/webp", path: data["path"] as? String,
                localKey: data["localKey"] as? String, size: Self.int(data["size"]).map(Int.init), fileName: nil,
                width: nil, height: nil, flags: 0, version: Self.int(data["version"]).map(Int.init))
            if let path = materialise(row, location: location) {
                message.images = [ImageAttachment(path: path, width: 0, height: 0, sticker: true)]
            } else {
                var a = MediaAttachment(kind: .sticker)
                a.title = sticker["emoji"] as? String
                message.attachment = a
            }
        }
        if !body.isEmpty {
            let (text, spans) = Self.applyRanges(body, ranges: ranges, name: mentionName)
            message.text = text
            message.spans = spans
        }
    }

    /// What happened to a message: its edit time, delivery status, reactions and the quote it
    /// replies with (the original's row when it is here).
    private func annotate(
        _ message: inout Message, json: [String: Any], date: Date, outgoing: Bool, builder: inout ConversationBuilder,
        rowOfSentAt: [Int64: Int64]
    ) {
        if let history = json["editHistory"] as? [[String: Any]], history.count > 1 {
            let edited = Self.int(json["editMessageTimestamp"]) ?? Self.int(history.first?["timestamp"])
            message.edited = edited.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? date
        }
        if outgoing { message.status = Self.status(json) }
        if let reactions = json["reactions"] as? [[String: Any]] {
            var list: [Reaction] = []
            for r in reactions {
                guard let emoji = r["emoji"] as? String, !emoji.isEmpty else { continue }
                let from = participant(r["fromId"] as? String)
                if from != "me" { builder.participant(id: from, name: name(from)) }
                list.apply(emoji: emoji, sender: from, remove: false)
            }
            message.reactions = list
        }
        if let quote = json["quote"] as? [String: Any] {
            // The quote as Signal keeps it (spoilers hidden), and the original's id when it is here.
            let author =
                ((quote["authorAci"] as? String) ?? (quote["authorUuid"] as? String)).flatMap { byServiceID[$0] }
                ?? (quote["author"] as? String).flatMap { byNumber[$0] }
            let text = (quote["text"] as? String).map { t in
                let (plain, spans) = Self.applyRanges(t, ranges: quote["bodyRanges"] as? [[String: Any]] ?? [], name: mentionName)
                return TextSpan.hidingSpoilers(plain, spans: spans)
            }
            message.reply = ReplyReference(
                id: Self.int(quote["id"]).flatMap { rowOfSentAt[$0] }.map(String.init),
                sender: author.map(participant), text: text ?? "Attachment")
        }
    }

    static func int(_ value: Any?) -> Int64? {
        switch value {
        case let n as NSNumber: n.int64Value
        case let s as String: Int64(s)
        default: nil
        }
    }

    /// "1 hour", "5 minutes", "1 week".
    static func duration(_ seconds: Int64) -> String {
        let units: [(Int64, String)] = [(604_800, "week"), (86_400, "day"), (3600, "hour"), (60, "minute"), (1, "second")]
        for (size, unit) in units where seconds % size == 0 {
            return TextCleanup.count(Int(seconds / size), unit)
        }
        return TextCleanup.count(Int(seconds), "second")
    }

    /// An outgoing message's state: the best of its recipients' (sendStateByConversationId).
    static func status(_ json: [String: Any]) -> MessageStatus? {
        guard let states = json["sendStateByConversationId"] as? [String: Any] else { return nil }
        let names = states.values.compactMap { ($0 as? [String: Any])?["status"] as? String }
        if names.contains(where: { $0 == "Read" || $0 == "Viewed" }) { return .read }
        if names.contains("Delivered") { return .delivered }
        if names.contains("Sent") { return .sent }
        if names.contains("Failed") { return .failed }
        if names.contains("Pending") { return .sending }
        return nil
    }

    private func callLine(_ json: [String: Any]) -> String {
        guard let id = json["callId"] as? String, let call = calls[id] else {
            // Older profiles: callHistoryDetails in the message.
            let details = json["callHistoryDetails"] as? [String: Any] ?? [:]
            let video = (details["wasVideoCall"] as? Bool) == true
            let declined = (details["wasDeclined"] as? Bool) == true || details["acceptedTime"] == nil
            return declined ? (video ? "Missed video call" : "Missed voice call") : (video ? "Video call" : "Voice call")
        }
        let kind = call.type == "Video" ? "video call" : call.type == "Group" ? "group call" : "voice call"
        switch call.status {
        case "Missed", "MissedNotificationProfile": return "Missed " + kind
        case "Declined": return (call.direction == "Incoming" ? "Declined " : "Unanswered ") + kind
        default: return (call.direction == "Incoming" ? "Incoming " : "Outgoing ") + kind
        }
    }

    /// A group change as a sentence (creation, title, members); nil for other changes.
    private func groupChangeLine(_ json: [String: Any]) -> String? {
        guard let change = json["groupV2Change"] as? [String: Any] else { return nil }
        let actor = (change["from"] as? String).flatMap { byServiceID[$0] }.map { name(participant($0)) } ?? "Someone"
        let details = change["details"] as? [[String: Any]] ?? []
        let lines = details.compactMap { d -> String? in
            let who = ((d["aci"] as? String) ?? (d["uuid"] as? String)).flatMap { byServiceID[$0] }.map { name(participant($0)) } ?? "someone"
            switch d["type"] as? String {
            case "create": return "\(actor) created the group"
            case "title": return (d["newTitle"] as? String).map { "\(actor) changed the group name to “\($0)”" } ?? "\(actor) removed the group name"
            case "member-add": return "\(actor) added \(who)"
            case "member-remove": return who == actor ? "\(actor) left the group" : "\(actor) removed \(who)"
            case "avatar": return "\(actor) changed the group avatar"
            case "description": return "\(actor) changed the group description"
            default: return nil
            }
        }
        return lines.isEmpty ? "\(actor) updated the group" : lines.joined(separator: "\n")
    }

    // MARK: - Attachments

    /// A photo drawn in the bubble; anything else as a typed attachment.
    private func attach(_ file: AttachmentRow, to message: inout Message, location: String) {
        let mime = file.contentType?.lowercased() ?? ""
        let kind: MediaAttachment.Kind =
            mime.hasPrefix("image/gif")
            ? .gif
            : mime.hasPrefix("image/")
                ? .photo
                : mime.hasPrefix("video/")
                    ? .video
                    : mime.hasPrefix("audio/")
                        ? (file.flags & 1 != 0 ? .voice : .audio)
                        : mime.contains("vcard") ? .contact : .document
        guard let path = materialise(file, location: location) else {
            let a = MediaAttachment(kind: kind, fileName: file.fileName, mimeType: file.contentType, byteSize: file.size)
            if message.attachment == nil { message.attachment = a }
            return
        }
        if kind == .photo {
            message.images.append(ImageAttachment(path: path, width: file.width ?? 0, height: file.height ?? 0, name: file.fileName))
            return
        }
        var a = MediaAttachment.described(kind: kind, fileName: file.fileName ?? (path as NSString).lastPathComponent, path: path, mimeType: file.contentType)
        a.byteSize = a.byteSize ?? file.size
        if message.attachment == nil { message.attachment = a } else { message.text = [message.text, a.displayText].compactMap { $0 }.joined(separator: "\n") }
    }

    /// Where an attachment's file is: a sticker pack's in stickers.noindex, the rest in
    /// attachments.noindex; nil without a path, without that folder, or for a path leaving it.
    private func storedPath(_ file: AttachmentRow) -> String? {
        guard let relative = file.path, !relative.isEmpty, !relative.split(separator: "/").contains(".."),
            let root = file.type == "sticker" ? stickers : attachments
        else { return nil }
        return (root as NSString).appendingPathComponent(relative)
    }

    /// The attachment's plain bytes (decrypted when it is "version 2"), or nil with a warning.
    private func fileBytes(_ file: AttachmentRow, location: String) -> [UInt8]? {
        guard let full = storedPath(file) else {
            let relative = file.path ?? ""
            if !relative.isEmpty, relative.split(separator: "/").contains("..") {
                context.warn(location, "attachment \(relative)", "path leaves the attachments folder; shown as a placeholder", media: true)
            } else {
                context.warn(
                    location, "attachment \(file.fileName ?? file.contentType ?? "")",
                    relative.isEmpty
                        ? "has no file; shown as a placeholder"
                        : "no \(file.type == "sticker" ? "stickers.noindex" : "attachments.noindex") folder beside the database; shown as a placeholder",
                    media: true)
            }
            return nil
        }
        let relative = file.path ?? ""
        guard let data = FileManager.default.contents(atPath: full) else {
            context.warn(location, "attachment \(relative)", "no such file (\(full)); shown as a placeholder", media: true)
            return nil
        }
        guard let key = file.localKey, let keyBytes = Data(base64Encoded: key) else { return [UInt8](data) }
        guard let plain = SignalAttachmentCipher.decrypt([UInt8](data), localKey: [UInt8](keyBytes), size: file.size) else {
            context.warn(location, "attachment \(relative)", "cannot be decrypted with its localKey (damaged?); shown as a placeholder", media: true)
            return nil
        }
        return plain
    }

    /// A file the renderer can read: the plain file itself, or the decrypted copy in the
    /// attachments folder (removed with it).
    private func materialise(_ file: AttachmentRow, location: String) -> String? {
        if file.localKey == nil, let full = storedPath(file), FileManager.default.fileExists(atPath: full) { return full }
        guard let bytes = fileBytes(file, location: location) else { return nil }
        do {
            let folder = try context.attachmentsFolder()
            let ext =
                file.contentType.flatMap(TextCleanup.photoExtension(ofMIMEType:))
                ?? file.fileName.map { PathText.fileExtension($0).lowercased() } ?? "bin"
            let stem = file.fileName.map { ($0 as NSString).deletingPathExtension } ?? (file.path.map { ($0 as NSString).lastPathComponent } ?? "attachment")
            let target = (folder as NSString).appendingPathComponent(context.uniqueAttachmentName(stem: String(stem.prefix(60)), ext: ext))
            let handle = try ScratchSpace.createPrivateFile(target)
            try handle.write(contentsOf: bytes)
            try handle.close()
            return target
        } catch {
            context.warn(location, "attachment \(file.path ?? "")", "cannot be written out (\(error)); shown as a placeholder", media: true)
            return nil
        }
    }

    // MARK: - Body ranges

    /// Signal's body and ranges (offsets in UTF-16 units; styles 1 bold, 2 italic, 3 spoiler,
    /// 4 strikethrough, 5 monospace; a mention replaces its U+FFFC with "@name") → text and spans
    /// in UTF-8 bytes.
    static func applyRanges(_ body: String, ranges: [[String: Any]], name: (String) -> String?) -> (String, [TextSpan]) {
        let utf16 = Array(body.utf16)
        // Mentions first: each U+FFFC becomes "@name"; later offsets shift.
        struct Replacement { var start: Int; var length: Int; var text: String; var id: String? }
        var replacements: [Replacement] = []
        var styles: [(Int, Int, TextSpan.Style)] = []
        for r in ranges {
            guard let start = int(r["start"]).map(Int.init), let length = int(r["length"]).map(Int.init),
                start >= 0, length >= 0, start + length <= utf16.count
            else { continue }
            if let aci = (r["mentionAci"] as? String) ?? (r["mentionUuid"] as? String) {
                let shown = name(aci) ?? (r["replacementText"] as? String) ?? "someone"
                replacements.append(Replacement(start: start, length: length, text: "@" + shown, id: aci))
            } else if let style = int(r["style"]) {
                let s: TextSpan.Style? =
                    switch style {
                    case 1: .bold
                    case 2: .italic
                    case 3: .spoiler
                    case 4: .strike
                    case 5: .code
                    default: nil
                    }
                if let s { styles.append((start, length, s)) }
            }
        }
        replacements.sort { $0.start < $1.start }
        // Build the new text in UTF-16, and a map from old UTF-16 offsets to new ones.
        var out: [UInt16] = []
        var map = [Int](repeating: 0, count: utf16.count + 1)
        var mentionSpans: [(Int, Int, String?)] = []
        var i = 0, k = 0
        while i <= utf16.count {
            map[i] = out.count
            if i == utf16.count { break }
            if k < replacements.count, replacements[k].start == i, replacements[k].length > 0 {
                let r = replacements[k]
                let start = out.count
                out += Array(r.text.utf16)
                mentionSpans.append((start, out.count, r.id))
                for j in i..<(i + r.length) { map[j] = start }
                i += r.length
                k += 1
                continue
            }
            while k < replacements.count, replacements[k].start <= i { k += 1 }
            out.append(utf16[i])
            i += 1
        }
        let text = String(decoding: out, as: UTF16.self)
        // UTF-16 offsets of the new text → UTF-8 byte offsets.
        var utf8At = [Int](repeating: 0, count: out.count + 1)
        var bytes = 0, u = 0
        for scalar in text.unicodeScalars {
            let n16 = scalar.utf16.count
            for j in 0..<n16 where u + j <= out.count { utf8At[u + j] = bytes }
            u += n16
            bytes += scalar.utf8.count
        }
        if u <= out.count { utf8At[u] = bytes }
        var spans: [TextSpan] = []
        for (start, length, style) in styles {
            let a = utf8At[map[start]], b = utf8At[map[start + length]]
            if b > a { spans.append(TextSpan(style, a..<b)) }
        }
        for (a, b, id) in mentionSpans { spans.append(TextSpan(.mention, utf8At[a]..<utf8At[b], url: id)) }
        spans.sort { $0.range.lowerBound < $1.range.lowerBound }
        return (text, spans)
    }
}
