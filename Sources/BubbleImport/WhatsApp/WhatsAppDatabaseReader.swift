import BubbleCore
import BubbleMarkup
import BubblePeople
import Foundation
import GRDB

extension WhatsAppDatabaseImporter {
    /// Reads the chats of one open msgstore.db, in either schema.
    struct Reader {
        let db: Database
        let source: ImportSource
        let context: ImportContext
        let contacts: Contacts
        let media: MediaFolder
        let legacy: Bool
        let meName: String
        /// jid row id → raw jid (normalised schema).
        let jids: [Int64: String]

        init(db: Database, source: ImportSource, context: ImportContext, contacts: Contacts, media: MediaFolder) throws {
            self.db = db; self.source = source; self.context = context; self.contacts = contacts; self.media = media
            legacy = !(try db.tableExists("message") && db.tableExists("jid"))
            var push: String?
            if try db.tableExists("props") {
                push = try String.fetchOne(db, sql: "SELECT value FROM props WHERE key = 'user_push_name'")
            }
            meName = context.options.me ?? push.map(TextCleanup.cleanName).flatMap { $0.isEmpty ? nil : $0 } ?? "Me"
            var map: [Int64: String] = [:]
            if !legacy {
                let rows = try Row.fetchCursor(db, sql: "SELECT _id, raw_string, user, server FROM jid")
                while let row = try rows.next() {
                    guard let id: Int64 = row.lenient(at: 0) else { continue }
                    let raw: String? = row.lenient(at: 1)
                    let user: String = row.lenient(at: 2) ?? "", server: String = row.lenient(at: 3) ?? ""
                    map[id] = raw ?? "\(user)@\(server)"
                }
                // Newer versions name people by a LID ("…@lid"); jid_map ties it to their phone
                // number's jid, which wa.db names: one person, one id, in every chat.
                if try db.tableExists("jid_map"), try Set(db.columns(in: "jid_map").map(\.name)).isSuperset(of: ["lid_row_id", "jid_row_id"]) {
                    let rows = try Row.fetchCursor(db, sql: "SELECT lid_row_id, jid_row_id FROM jid_map")
                    while let row = try rows.next() {
                        if let lid = row.int64(at: 0), let phone = row.int64(at: 1), let jid = map[phone] { map[lid] = jid }
                    }
                }
            }
            jids = map
        }

        func run() throws -> ImportResult {
            let chats = try listChats()
            if context.everyChat {
                let wanted = context.wanted(chats, matches: matches)
                for chat in wanted {
                    try context.deliverConversation(try read(chat), key: "\(chat.title) [\(chat.jid)]", of: wanted.count, identity: chat.jid)
                }
                return ImportResult(conversation: Conversation(), format: .whatsappDatabase)
            }
            return try read(choose(chats))
        }

        private func matches(_ chat: Chat, _ wanted: String) -> Bool {
            chat.title.caseInsensitiveCompare(wanted) == .orderedSame || chat.jid == wanted
                || chat.subject?.caseInsensitiveCompare(wanted) == .orderedSame
                || (!chat.isGroup && TextCleanup.sameContact(String(chat.jid.prefix { $0 != "@" }), wanted))
        }

        private func choose(_ chats: [Chat]) throws -> Chat {
            let listing = TextCleanup.list(chats.map { "\($0.title) [\($0.jid)] (\(TextCleanup.count($0.count, "message")))" })
            guard !chats.isEmpty else { throw ImportError(path: source.displayPath, location: "table chat", reason: "has no chats with messages") }
            guard let wanted = context.options.chat else {
                if chats.count == 1 { return chats[0] }
                throw ImportError(
                    path: source.displayPath, location: "table chat",
                    reason: "holds \(chats.count) chats; pick one with `chat` (name, number or jid), or read them all with --all: \(listing)")
            }
            var hits = chats.filter { matches($0, wanted) }
            if hits.isEmpty {
                // "Family" for "Family 👪": a name's start, when only one chat has it.
                hits = chats.filter { $0.title.lowercased().hasPrefix(wanted.lowercased()) }
            }
            if hits.count == 1 { return hits[0] }
            if hits.isEmpty { throw ImportError(path: source.displayPath, location: "table chat", reason: "has no chat \"\(wanted)\"; chats: \(listing)") }
            throw ImportError(
                path: source.displayPath, location: "table chat",
                reason: "has \(hits.count) chats matching \"\(wanted)\"; pick one by jid: " + TextCleanup.list(hits.map { "\($0.title) [\($0.jid)]" }))
        }

        /// Chats with messages, status updates and broadcast lists left out.
        func listChats() throws -> [Chat] {
            var out: [Chat] = []
            if legacy {
                let subjects =
                    try db.tableExists("chat_list")
                    ? Dictionary(
                        try Row.fetchAll(db, sql: "SELECT key_remote_jid, subject FROM chat_list").compactMap { row -> (String, String)? in
                            guard let jid: String = row.lenient(at: 0), let s: String = row.lenient(at: 1), !s.isEmpty else { return nil }
                            return (jid, s)
                        }, uniquingKeysWith: { a, _ in a }) : [:]
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT key_remote_jid, COUNT(*), MIN(_id) FROM messages
                        WHERE key_remote_jid <> '-1' AND key_remote_jid NOT LIKE '%@broadcast' GROUP BY key_remote_jid ORDER BY MIN(_id)
                        """)
                for row in rows {
                    guard let jid: String = row.lenient(at: 0) else { continue }
                    let subject = subjects[jid]
                    out.append(
                        Chat(
                            id: 0, jid: jid, jidRow: 0, subject: subject, count: row.lenient(at: 1) ?? 0,
                            title: subject ?? contacts.name(jid)))
                }
                return out
            }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT chat._id, chat.jid_row_id, chat.subject, (SELECT COUNT(*) FROM message m WHERE m.chat_row_id = chat._id)
                    FROM chat ORDER BY chat._id
                    """)
            for row in rows {
                guard let id: Int64 = row.lenient(at: 0), let jidRow: Int64 = row.lenient(at: 1), let jid = jids[jidRow] else { continue }
                let count: Int = row.lenient(at: 3) ?? 0
                if count == 0 || jid.hasSuffix("@broadcast") || jid == "0@s.whatsapp.net" { continue }
                let subject: String? = (row.lenient(at: 2) as String?).flatMap { $0.isEmpty ? nil : $0 }
                out.append(
                    Chat(
                        id: id, jid: jid, jidRow: jidRow, subject: subject, count: count,
                        title: subject ?? contacts.name(jid)))
            }
            return out
        }

        // MARK: - One chat

        func read(_ chat: Chat) throws -> ImportResult {
            var builder = ConversationBuilder()
            if context.everyChat { builder.spool = try context.makeSpool() }
            builder.title = chat.title
            builder.participant(id: "me", name: meName)
            if !chat.isGroup { builder.participant(id: chat.jid, name: contacts.name(chat.jid)) }
            var calls = CallQueue(pending: try self.calls(chat)[...])
            if legacy {
                try readLegacy(chat, into: &builder, calls: &calls)
            } else {
                try readNormalised(chat, into: &builder, calls: &calls)
            }
            calls.flush(before: nil, into: &builder, context: context)
            return try builder.finish(format: .whatsappDatabase, me: "me", sortByDate: false, keep: "me")
        }

        /// Calls with this chat's person (or, for a group, group calls) as system lines, oldest first.
        private func calls(_ chat: Chat) throws -> [Message] {
            guard !legacy, try db.tableExists("call_log") else { return [] }
            let columns = Set(try db.columns(in: "call_log").map(\.name))
            let hasGroup = columns.contains("group_jid_row_id")
            let filter =
                chat.isGroup
                ? (hasGroup ? "group_jid_row_id = \(chat.jidRow)" : "0")
                : "jid_row_id = \(chat.jidRow)" + (hasGroup ? " AND (group_jid_row_id IS NULL OR group_jid_row_id = 0)" : "")
            let rows = try Row.fetchCursor(
                db, sql: "SELECT timestamp, from_me, video_call, duration, call_result FROM call_log WHERE \(filter) ORDER BY timestamp, _id")
            var out: [Message] = []
            while let row = try rows.next() {
                let date = Self.date(row.lenient(at: 0) ?? 0)
                let video = (row.lenient(at: 2) as Int64? ?? 0) != 0
                let seconds = Double(row.lenient(at: 3) as Int64? ?? 0)
                let fromMe = (row.lenient(at: 1) as Int64? ?? 0) != 0
                let line: String
                if seconds > 0 {
                    line = (video ? "Video call" : "Voice call") + TextCleanup.callLine(seconds: seconds).dropFirst("Call".count)
                } else {
                    line = fromMe ? (video ? "Unanswered video call" : "Unanswered voice call") : (video ? "Missed video call" : "Missed voice call")
                }
                out.append(.system(line, date: date))
            }
            return out
        }

        static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

        /// Outgoing status: 13 read, 8 played (a voice note: read), 5 delivered, 4 sent.
        static func status(_ code: Int64?) -> MessageStatus? {
            switch code {
            case 13, 8: .read
            case 5: .delivered
            case 4: .sent
            default: nil
            }
        }

        private func columns(_ table: String) throws -> Set<String> {
            try db.tableExists(table) ? Set(db.columns(in: table).map(\.name)) : []
        }

        // MARK: Normalised schema

        private func readNormalised(_ chat: Chat, into builder: inout ConversationBuilder, calls: inout CallQueue) throws {
            let sql = try normalisedSQL(chat)
            let extras = try Extras(db: db, chat: chat, reader: self)
            let rows = try Row.fetchCursor(db, sql: sql)
            var lastSender = ""
            while let row = try rows.next() {
                guard let rowID = row.int64(at: 0) else { continue }
                let date = Self.date(row.int64(at: 4) ?? 0)
                calls.flush(before: date, into: &builder, context: context)
                let fromMe = (row.int64(at: 1) ?? 0) != 0
                let senderJid: String = fromMe ? "me" : (chat.isGroup ? row.int64(at: 2).flatMap { jids[$0] } ?? "unknown" : chat.jid)
                let type = row.int64(at: 5) ?? 0
                let text: String? = row.text(at: 6).flatMap { $0.isEmpty ? nil : $0 }
                var location: String { "message _id \(rowID)" }
                if !fromMe, senderJid != lastSender {
                    builder.participant(id: senderJid, name: contacts.name(senderJid))
                    lastSender = senderJid
                }
                var actor: String { fromMe ? meName : contacts.name(senderJid) }

                if type == 7 {
                    let action = row.int64(at: 22)
                    let targets = extras.participants[rowID, default: []].map { contacts.name($0) }
                    if let line = Self.systemLine(
                        action: action ?? -1, actor: actor, targets: targets,
                        oldValue: extras.oldValues[rowID], newValue: nil, subject: chat.subject)
                    {
                        builder.append(.system(line, date: date), context: context)
                    } else {
                        context.warn(
                            location, "system event of action_type \(action.map(String.init) ?? "none")",
                            "not an event BubbleKit can show; skipped", skipped: true)
                    }
                    continue
                }
                var caption = text
                var file = MediaRow()
                if !row.hasNull(atIndex: 7) || !row.hasNull(atIndex: 8) || !row.hasNull(atIndex: 15) {
                    file = MediaRow(
                        path: row.text(at: 7), mime: row.text(at: 8), name: row.text(at: 9),
                        duration: row.int64(at: 10), pages: row.int64(at: 11), width: row.int64(at: 12),
                        height: row.int64(at: 13), size: row.int64(at: 14))
                    caption = caption ?? row.text(at: 15).flatMap { $0.isEmpty ? nil : $0 }
                }
                var message = Message(sender: senderJid, direction: fromMe ? .outgoing : .incoming, date: date)
                let kind = MessageKind(
                    type: type, row: row, rowID: rowID, date: date, fromMe: fromMe, actor: actor, file: file, extras: extras, location: location)
                guard try fill(&message, kind, caption: &caption, into: &builder) else { continue }
                if let caption {
                    let (plain, spans) = ChatMarkup.parse(caption)
                    message.text = plain
                    message.spans = spans
                }
                if fromMe { message.status = Self.status(row.int64(at: 3)) }
                if let edited = row.int64(at: 21), edited > 0 { message.edited = Self.date(edited) }
                if let reactions = extras.reactions[rowID] { message.reactions = reactions }
                if !row.hasNull(atIndex: 16) { message.reply = quote(row, in: chat) }
                builder.append(message, context: context, sourceID: rowID)
            }
        }

        /// A message row's kind and what deciding it needs.
        private struct MessageKind {
            let type: Int64
            let row: Row
            let rowID: Int64
            let date: Date
            let fromMe: Bool
            let actor: String
            let file: MediaRow
            let extras: Extras
            let location: String
        }

        /// Fills `message` by its kind (media, a contact, a place, a poll…); false when the row
        /// became a system line or was skipped (warned) instead.
        private func fill(_ message: inout Message, _ kind: MessageKind, caption: inout String?, into builder: inout ConversationBuilder) throws -> Bool {
            switch kind.type {
            case 0, 11:
                guard caption != nil else {
                    context.warn(kind.location, "message", "has no text; skipped", skipped: true)
                    return false
                }
            case 1, 20, 13, 3, 2, 9, 42, 43:
                media(type: kind.type, file: kind.file, caption: &caption, into: &message, location: kind.location)
            case 4:
                var a = MediaAttachment(kind: .contact, mimeType: "text/vcard")
                a.title = caption ?? kind.extras.vcards[kind.rowID].flatMap(VCardText.name(ofCard:))
                message.attachment = a
                caption = nil
            case 5, 16:
                var a = MediaAttachment(kind: .location)
                a.latitude = kind.row.lenient(at: 23); a.longitude = kind.row.lenient(at: 24)
                a.title = [kind.row.lenient(at: 25) as String?, kind.row.lenient(at: 26) as String?].compactMap { $0 }.filter { !$0.isEmpty }.joined(
                    separator: ", ")
                if a.title?.isEmpty == true { a.title = kind.type == 16 ? "Live location" : nil }
                message.attachment = a
                caption = nil
            case 15:
                message.attachment = MediaAttachment(kind: .deleted)
                caption = nil
            case 64, 66:
                var a = MediaAttachment(kind: .poll)
                a.title = caption
                a.answers = kind.extras.polls[kind.rowID] ?? []
                message.attachment = a
                caption = nil
            case 10:
                builder.append(.system(kind.fromMe ? "Unanswered voice call" : "Missed voice call", date: kind.date), context: context)
                return false
            case 90:
                builder.append(.system("Video call", date: kind.date), context: context)
                return false
            case 36:
                builder.append(.system("\(kind.actor) changed the disappearing messages setting", date: kind.date), context: context)
                return false
            default:
                guard caption != nil else {
                    context.warn(kind.location, "message of message_type \(kind.type)", "not a kind BubbleKit can show; skipped", skipped: true)
                    return false
                }
            }
            return true
        }

        /// The quote as WhatsApp keeps it (so a streamed message carries it whole), and the
        /// original's id when it is still in the chat.
        private func quote(_ row: Row, in chat: Chat) -> ReplyReference {
            let quotedFromMe = (row.int64(at: 18) ?? 0) != 0
            let quotedSender = quotedFromMe ? "me" : (chat.isGroup ? row.int64(at: 19).flatMap { jids[$0] } ?? "unknown" : chat.jid)
            let quotedText: String? = row.text(at: 17).map { ChatMarkup.parse($0).text }
            return ReplyReference(id: row.int64(at: 20).map(String.init), sender: quotedSender, text: quotedText ?? Self.quotedKind(row.int64(at: 27)))
        }

        /// The query of a chat's messages in the normalised schema, with the columns and tables
        /// this database has (older ones lack some).
        private func normalisedSQL(_ chat: Chat) throws -> String {
            let mediaColumns = try columns("message_media")
            let quoted = try columns("message_quoted")
            func mm(_ c: String) -> String { mediaColumns.contains(c) ? "mm.\(c)" : "NULL" }
            let hasEdit = try db.tableExists("message_edit_info"), hasSystem = try db.tableExists("message_system")
            let hasLocation = try db.tableExists("message_location")
            let quoteJoin =
                quoted.contains("key_id")
                ? """
                LEFT JOIN message_quoted q ON q.message_row_id = m._id
                LEFT JOIN message o ON o.chat_row_id = m.chat_row_id AND o.key_id = q.key_id AND o.from_me = q.from_me
                """ : ""
            return """
                SELECT m._id, m.from_me, m.sender_jid_row_id, m.status, m.timestamp, m.message_type, m.text_data,
                       \(mm("file_path")), \(mm("mime_type")), \(mm("media_name")), \(mm("media_duration")), \(mm("page_count")),
                       \(mm("width")), \(mm("height")), \(mm("file_size")), \(mm("media_caption")),
                       \(quoteJoin.isEmpty ? "NULL, NULL, NULL, NULL" : "q.key_id, q.text_data, q.from_me, q.sender_jid_row_id"),
                       \(quoteJoin.isEmpty ? "NULL" : "o._id"),
                       \(hasEdit ? "(SELECT edited_timestamp FROM message_edit_info e WHERE e.message_row_id = m._id)" : "NULL"),
                       \(hasSystem ? "(SELECT action_type FROM message_system s WHERE s.message_row_id = m._id)" : "NULL"),
                       \(hasLocation ? "l.latitude, l.longitude, l.place_name, l.place_address" : "NULL, NULL, NULL, NULL"),
                       \(quoteJoin.isEmpty ? "NULL" : "q.message_type")
                FROM message m
                \(mediaColumns.isEmpty ? "" : "LEFT JOIN message_media mm ON mm.message_row_id = m._id")
                \(quoteJoin)
                \(hasLocation ? "LEFT JOIN message_location l ON l.message_row_id = m._id" : "")
                WHERE m.chat_row_id = \(chat.id)
                ORDER BY \(try columns("message").contains("sort_id") ? "m.sort_id" : "m.timestamp"), m._id
                """
        }

        /// What a quote without text stands for ("Photo", "Voice message").
        static func quotedKind(_ type: Int64?) -> String? {
            switch type {
            case 1: "Photo"
            case 2: "Audio"
            case 3: "Video"
            case 9: "Document"
            case 13: "GIF"
            case 20: "Sticker"
            default: nil
            }
        }

        struct MediaRow {
            var path: String? = nil, mime: String? = nil, name: String? = nil
            var duration: Int64? = nil, pages: Int64? = nil, width: Int64? = nil, height: Int64? = nil, size: Int64? = nil
        }

        /// A media message: a photo or sticker drawn when the file is there; the rest as attachments
        /// with what the file's headers say. A missing file is a placeholder with a warning.
        private func media(type: Int64, file: MediaRow, caption: inout String?, into message: inout Message, location: String) {
            if type == 42 || type == 43 {
                message.attachment = MediaAttachment(kind: .viewOnce)
                return
            }
            let mime = file.mime?.lowercased()
            let kind: MediaAttachment.Kind
            switch type {
            case 1: kind = .photo
            case 20: kind = .sticker
            case 13: kind = .gif
            case 3: kind = .video
            case 2:
                let voice =
                    file.path?.contains("Voice Notes") == true || mime?.contains("opus") == true
                    || (file.path.map { ($0 as NSString).lastPathComponent.hasPrefix("PTT-") } ?? false)
                kind = voice ? .voice : .audio
            default: kind = .document
            }
            let name = file.name ?? file.path.map { ($0 as NSString).lastPathComponent }
            // A document's caption that is only its own name adds nothing.
            if kind == .document, caption == name || caption.map({ name?.hasPrefix($0 + ".") == true }) == true { caption = nil }
            let found = media.resolve(path: file.path, name: file.name)
            let what = kind == .photo ? "photo" : kind.rawValue
            guard let found else {
                var a = MediaAttachment(kind: kind, fileName: name, mimeType: file.mime, byteSize: file.size.map(Int.init).flatMap { $0 > 0 ? $0 : nil })
                if let d = file.duration, d > 0 { a.duration = Double(d) }
                if let p = file.pages, p > 0 { a.pageCount = Int(p) }
                message.attachment = a
                let why =
                    media.root == nil
                    ? "no WhatsApp Media folder beside the database (give it with --media); shown as a placeholder"
                    : "not in the Media folder \(media.shown ?? ""); shown as a placeholder"
                context.warn(location, "\(what) \(file.path ?? name ?? "without a file name")", why, skipped: false, media: true)
                return
            }
            if kind == .photo || kind == .sticker {
                message.images = [
                    ImageAttachment(
                        path: found, width: Double(file.width ?? 0), height: Double(file.height ?? 0),
                        name: name, sticker: kind == .sticker)
                ]
                return
            }
            var a = MediaAttachment.described(kind: kind, fileName: name, path: found, mimeType: file.mime)
            if a.duration == nil, let d = file.duration, d > 0 { a.duration = Double(d) }
            if a.pageCount == nil, let p = file.pages, p > 0 { a.pageCount = Int(p) }
            message.attachment = a
        }

        /// A group or chat event as a sentence; nil for one BubbleKit does not know.
        static func systemLine(action: Int64, actor: String, targets: [String], oldValue: String?, newValue: String?, subject: String?) -> String? {
            let who = targets.isEmpty ? nil : ListFormat.and(targets)
            switch action {
            case 1:
                if let newValue { return "\(actor) changed the group name to “\(newValue)”" }
                if let oldValue { return "\(actor) changed the group name from “\(oldValue)”" }
                return "\(actor) changed the group name"
            case 4, 12: return who.map { "\(actor) added \($0)" } ?? "\(actor) joined"
            case 5: return "\(actor) left"
            case 6: return "\(actor) changed the group icon"
            case 7, 14: return who.map { "\(actor) removed \($0)" } ?? "\(actor) removed someone"
            case 11: return "\(actor) created group “\(newValue ?? subject ?? "")”"
            case 15: return who.map { "\(actor) made \($0) an admin" }
            case 20: return "\(actor) joined using an invite link"
            case 27: return "\(actor) changed the group description"
            case 28: return "\(actor) changed their phone number"
            case 58: return "You blocked or unblocked this contact"
            case 19, 67: return "Messages and calls are end-to-end encrypted"
            default: return nil
            }
        }

        // MARK: Legacy schema

        private func readLegacy(_ chat: Chat, into builder: inout ConversationBuilder, calls: inout CallQueue) throws {
            let cols = try columns("messages")
            func c(_ name: String) -> String { cols.contains(name) ? "m.\(name)" : "NULL" }
            let quotes = try db.tableExists("messages_quotes") && cols.contains("quoted_row_id")
            let sql = """
                SELECT m._id, m.key_from_me, \(c("remote_resource")), \(c("status")), m.timestamp, \(c("media_wa_type")), \(c("data")),
                       \(c("media_mime_type")), \(c("media_name")), \(c("media_caption")), \(c("media_duration")), \(c("latitude")),
                       \(c("longitude")), \(c("media_size")),
                       \(quotes ? "q.key_id, q.data, q.key_from_me, q.remote_resource, o._id" : "NULL, NULL, NULL, NULL, NULL")
                FROM messages m
                \(quotes ? "LEFT JOIN messages_quotes q ON q._id = m.quoted_row_id LEFT JOIN messages o ON o.key_remote_jid = m.key_remote_jid AND o.key_id = q.key_id" : "")
                WHERE m.key_remote_jid = ?
                ORDER BY m.timestamp, m._id
                """
            let rows = try Row.fetchCursor(db, sql: sql, arguments: [chat.jid])
            while let row = try rows.next() {
                guard let rowID: Int64 = row.lenient(at: 0) else { continue }
                let date = Self.date(row.lenient(at: 4) ?? 0)
                calls.flush(before: date, into: &builder, context: context)
                let fromMe = (row.lenient(at: 1) as Int64? ?? 0) != 0
                let remote: String? = (row.lenient(at: 2) as String?).flatMap { $0.isEmpty ? nil : $0 }
                let senderJid = fromMe ? "me" : (chat.isGroup ? remote ?? "unknown" : chat.jid)
                let location = "messages _id \(rowID)"
                let status: Int64 = row.lenient(at: 3) ?? 0
                let typeText: String = row.lenient(at: 5) ?? "0"
                let type = Int64(typeText) ?? 0
                let data: String? = (row.lenient(at: 6) as String?).flatMap { $0.isEmpty ? nil : $0 }
                let actor = fromMe ? meName : contacts.name(senderJid)
                if status == 6 {
                    // A group event: media_size holds its kind; data the new subject, remote_resource the person.
                    let action: Int64 = row.lenient(at: 13) ?? -1
                    if let line = Self.systemLine(
                        action: action, actor: chat.isGroup && remote != nil && !fromMe ? contacts.name(remote!) : actor,
                        targets: [], oldValue: nil, newValue: data, subject: chat.subject)
                    {
                        builder.append(.system(line, date: date), context: context)
                    } else {
                        context.warn(location, "system event of kind \(action)", "not an event BubbleKit can show; skipped", skipped: true)
                    }
                    continue
                }
                if !fromMe { builder.participant(id: senderJid, name: contacts.name(senderJid)) }
                var message = Message(sender: senderJid, direction: fromMe ? .outgoing : .incoming, date: date)
                var caption = data
                switch type {
                case 0:
                    guard caption != nil else {
                        context.warn(location, "message", "has no text; skipped", skipped: true)
                        continue
                    }
                case 1, 2, 3, 9, 13, 20, 42, 43:
                    caption = (row.lenient(at: 9) as String?).flatMap { $0.isEmpty ? nil : $0 }
                    let file = MediaRow(
                        path: nil, mime: row.lenient(at: 7), name: row.lenient(at: 8), duration: row.lenient(at: 10),
                        pages: nil, width: nil, height: nil, size: row.lenient(at: 13))
                    media(type: type, file: file, caption: &caption, into: &message, location: location)
                case 4:
                    var a = MediaAttachment(kind: .contact, mimeType: "text/vcard")
                    a.title = (row.lenient(at: 8) as String?) ?? data.flatMap(VCardText.name(ofCard:))
                    message.attachment = a
                    caption = nil
                case 5, 16:
                    var a = MediaAttachment(kind: .location)
                    a.latitude = row.lenient(at: 11); a.longitude = row.lenient(at: 12)
                    a.title = row.lenient(at: 8)
                    message.attachment = a
                    caption = nil
                case 15:
                    message.attachment = MediaAttachment(kind: .deleted)
                    caption = nil
                default:
                    guard caption != nil else {
                        context.warn(location, "message of media_wa_type \(typeText)", "not a kind BubbleKit can show; skipped", skipped: true)
                        continue
                    }
                }
                if let caption {
                    let (plain, spans) = ChatMarkup.parse(caption)
                    message.text = plain
                    message.spans = spans
                }
                if fromMe { message.status = Self.status(status) }
                if let _: String = row.lenient(at: 14) {
                    let quotedFromMe = (row.lenient(at: 16) as Int64? ?? 0) != 0
                    let quotedRemote: String? = row.lenient(at: 17)
                    message.reply = ReplyReference(
                        id: (row.lenient(at: 18) as Int64?).map(String.init),
                        sender: quotedFromMe ? "me" : (chat.isGroup ? quotedRemote ?? "unknown" : chat.jid),
                        text: (row.lenient(at: 15) as String?).map { ChatMarkup.parse($0).text })
                }
                builder.append(message, context: context, sourceID: rowID)
            }
        }
    }

    /// Calls (system lines, oldest first) merged into the messages as their times come.
    struct CallQueue {
        var pending: ArraySlice<Message>
        mutating func flush(before date: Date?, into builder: inout ConversationBuilder, context: ImportContext) {
            while let call = pending.first, date.map({ call.date <= $0 }) ?? true {
                builder.append(call, context: context)
                pending = pending.dropFirst()
            }
        }
    }

    /// What one chat's messages carry in tables of their own, loaded once per chat.
    struct Extras {
        var reactions: [Int64: [Reaction]] = [:]
        var polls: [Int64: [PollAnswer]] = [:]
        var vcards: [Int64: String] = [:]
        var participants: [Int64: [String]] = [:]
        var oldValues: [Int64: String] = [:]

        init(db: Database, chat: Chat, reader: Reader) throws {
            let where_ = "IN (SELECT _id FROM message WHERE chat_row_id = \(chat.id))"
            if try db.tableExists("message_add_on"), try db.tableExists("message_add_on_reaction") {
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT a.parent_message_row_id, a.from_me, a.sender_jid_row_id, r.reaction
                        FROM message_add_on a JOIN message_add_on_reaction r ON r.message_add_on_row_id = a._id
                        WHERE a.chat_row_id = \(chat.id) ORDER BY a.timestamp, a._id
                        """)
                // The newest reaction of each person counts; an empty one takes theirs back.
                var current: [Int64: [(sender: String, emoji: String)]] = [:]
                while let row = try rows.next() {
                    guard let parent: Int64 = row.lenient(at: 0) else { continue }
                    let fromMe = (row.lenient(at: 1) as Int64? ?? 0) != 0
                    let sender = fromMe ? "me" : (chat.isGroup ? (row.lenient(at: 2) as Int64?).flatMap { reader.jids[$0] } ?? "unknown" : chat.jid)
                    let emoji: String = row.lenient(at: 3) ?? ""
                    current[parent, default: []].removeAll { $0.sender == sender }
                    if !emoji.isEmpty { current[parent, default: []].append((sender, emoji)) }
                }
                for (parent, list) in current where !list.isEmpty {
                    var reactions: [Reaction] = []
                    for r in list { reactions.apply(emoji: r.emoji, sender: r.sender, remove: false) }
                    self.reactions[parent] = reactions
                }
            }
            if try db.tableExists("message_poll_option") {
                for row in try Row.fetchAll(
                    db, sql: "SELECT message_row_id, option_name, vote_total FROM message_poll_option WHERE message_row_id \(where_) ORDER BY _id")
                {
                    guard let id: Int64 = row.lenient(at: 0) else { continue }
                    polls[id, default: []].append(PollAnswer(text: row.lenient(at: 1) ?? "", votes: row.lenient(at: 2) ?? 0))
                }
            }
            if try db.tableExists("message_vcard") {
                for row in try Row.fetchAll(db, sql: "SELECT message_row_id, vcard FROM message_vcard WHERE message_row_id \(where_)") {
                    if let id: Int64 = row.lenient(at: 0), let card: String = row.lenient(at: 1) { vcards[id] = card }
                }
            }
            if try db.tableExists("message_system_chat_participant") {
                for row in try Row.fetchAll(
                    db, sql: "SELECT message_row_id, user_jid_row_id FROM message_system_chat_participant WHERE message_row_id \(where_)")
                {
                    if let id: Int64 = row.lenient(at: 0), let j: Int64 = row.lenient(at: 1), let jid = reader.jids[j] {
                        participants[id, default: []].append(jid)
                    }
                }
            }
            if try db.tableExists("message_system_value_change") {
                for row in try Row.fetchAll(db, sql: "SELECT message_row_id, old_data FROM message_system_value_change WHERE message_row_id \(where_)") {
                    if let id: Int64 = row.lenient(at: 0), let v: String = row.lenient(at: 1) { oldValues[id] = v }
                }
            }
        }
    }
}

/// "Ann", "Ann and Ben", "Ann, Ben and Cy".
enum ListFormat {
    static func and(_ items: [String]) -> String {
        switch items.count {
        case 0: ""
        case 1: items[0]
        default: items.dropLast().joined(separator: ", ") + " and " + items.last!
        }
    }
}
