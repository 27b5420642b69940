import BubbleCore
import Foundation
import GRDB

/// macOS/iOS Messages `chat.db`, opened read-only with GRDB. Rows are read with a cursor (one row
/// in memory at a time); attachments of the chosen chat are loaded first, keyed by message.
///
/// Columns that older macOS versions lack (`attributedBody`, `associated_message_type`,
/// `item_type`…) are read as NULL, so one query serves every schema.
enum IMessageImporter {
    /// Seconds from 1970-01-01 to Apple's epoch, 2001-01-01.
    static let appleEpoch: TimeInterval = 978_307_200

    /// Apple-epoch time in seconds (older macOS) or nanoseconds (High Sierra on): no date in
    /// seconds reaches 1e11 (year 5170), every date in nanoseconds after 2001-01-01 00:01:40 does.
    static func date(appleTime t: Int64) -> Date {
        let seconds = abs(t) > 100_000_000_000 ? Double(t) / 1e9 : Double(t)
        return Date(timeIntervalSince1970: appleEpoch + seconds)
    }

    private struct ChatRow {
        var id: Int64
        var identifier: String
        var displayName: String?
        var messageCount: Int
        var label: String {
            if let displayName, !displayName.isEmpty { return "\(displayName) [\(identifier)]" }
            return identifier
        }
    }

    private struct AttachmentRow {
        var filename: String?
        var mimeType: String?
        var transferName: String?
        var uti: String?
        var totalBytes: Int?
        var name: String {
            transferName ?? filename.map { ($0 as NSString).lastPathComponent } ?? "attachment"
        }
    }

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        var configuration = Configuration()
        configuration.readonly = true
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: source.path, configuration: configuration)
        } catch {
            throw ImportError(path: source.displayPath, reason: "cannot be opened as SQLite: \(describe(error))")
        }
        do {
            return try queue.read { db throws -> ImportResult in
                try read(db, source: source, context: context)
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError(path: source.displayPath, reason: "cannot be read as an iMessage chat.db: \(describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let db = error as? DatabaseError { return db.message ?? "\(db)" }
        return "\(error)"
    }

    private static func read(_ db: Database, source: ImportSource, context: ImportContext) throws -> ImportResult {
        for table in ["message", "handle", "chat", "chat_message_join"] {
            if try db.tableExists(table) { continue }
            throw ImportError(
                path: source.displayPath, location: "table \(table)",
                reason: "is missing; expected an iMessage chat.db (message, handle, chat, chat_message_join)")
        }
        let chats = try Row.fetchAll(
            db,
            sql: """
                SELECT chat.ROWID AS id, chat.chat_identifier AS identifier, chat.display_name AS name,
                       (SELECT COUNT(*) FROM chat_message_join j WHERE j.chat_id = chat.ROWID) AS n
                FROM chat ORDER BY chat.ROWID
                """
        ).compactMap { row -> ChatRow? in
            guard let id: Int64 = row.lenient("id") else { return nil }
            return ChatRow(
                id: id, identifier: row.lenient("identifier") ?? "?", displayName: row.lenient("name"),
                messageCount: row.lenient("n") ?? 0)
        }
        if context.everyChat {
            // Every chat (or those `chats` names); chats of one identifier (iMessage and SMS with
            // the same person) are one conversation, as with `chat`.
            var groups: [String: [ChatRow]] = [:]
            var order: [String] = []
            for c in chats {
                if groups[c.identifier] == nil { order.append(c.identifier) }
                groups[c.identifier, default: []].append(c)
            }
            let wantedIdentifiers = context.wanted(order) { identifier, wanted in
                groups[identifier]!.contains {
                    $0.displayName?.caseInsensitiveCompare(wanted) == .orderedSame || $0.identifier == wanted
                        || TextCleanup.sameContact($0.identifier, wanted)
                }
            }
            for identifier in wantedIdentifiers {
                let group = groups[identifier]!
                let result = try read(db, chats: group, source: source, context: context)
                try context.deliverConversation(result, key: group[0].label, of: wantedIdentifiers.count)
            }
            return ImportResult(conversation: Conversation(title: nil, participants: [], messages: []), format: .imessage)
        }
        let chosen = try choose(chats, wanted: context.options.chat, path: source.displayPath)
        return try read(db, chats: chosen, source: source, context: context)
    }

    /// The messages of `chosen` (one conversation).
    private static func read(_ db: Database, chats chosen: [ChatRow], source: ImportSource, context: ImportContext) throws -> ImportResult {
        let chatIDs = chosen.map(\.id)
        let idList = chatIDs.map(String.init).joined(separator: ",")

        let messageColumns = Set(try db.columns(in: "message").map { $0.name.lowercased() })
        func column(_ name: String) -> String { messageColumns.contains(name.lowercased()) ? "m.\(name)" : "NULL" }

        let attachments = try Self.attachments(db, chats: idList)

        var builder = ConversationBuilder()
        builder.title = chosen.first.map { ($0.displayName?.isEmpty == false ? $0.displayName : nil) ?? $0.identifier }
        let meName = context.options.me ?? "Me"
        builder.participant(id: "me", name: meName)
        /// guid → ROWID of the messages read so far (replies name their original by guid).
        var rowOfGUID: [String: Int64] = [:]
        let folder = (source.path as NSString).deletingLastPathComponent
        let home = context.options.homeFolder ?? Self.home(ofDatabaseIn: folder)
        let order = "ORDER BY CASE WHEN abs(date) > 100000000000 THEN date / 1000000000.0 ELSE date END, m.ROWID"

        // Tapbacks first (a small share of the rows), gathered by the guid of the message they
        // react to: a message then leaves with its reactions, also when the messages stream out
        // as they are read (`convert`, the store) and a tapback comes long after its message.
        var (reactionsOf, tapbacks) = try Self.tapbacks(db, chats: idList, columns: messageColumns, order: order)

        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT DISTINCT m.ROWID AS rowid, \(column("text")) AS text, \(column("attributedBody")) AS body,
                       \(column("date")) AS date, \(column("is_from_me")) AS fromMe, h.id AS handle,
                       \(column("item_type")) AS itemType, \(column("group_action_type")) AS action,
                       \(column("group_title")) AS groupTitle, \(column("associated_message_type")) AS associated,
                       oh.id AS otherHandle, \(column("guid")) AS guid, \(column("associated_message_guid")) AS associatedGUID,
                       \(column("thread_originator_guid")) AS threadGUID, \(column("is_delivered")) AS delivered,
                       \(column("is_read")) AS isRead, \(column("date_read")) AS dateRead, \(column("error")) AS error,
                       \(column("is_sent")) AS isSent, \(column("date_edited")) AS dateEdited
                FROM message m
                JOIN chat_message_join j ON j.message_id = m.ROWID AND j.chat_id IN (\(idList))
                LEFT JOIN handle h ON h.ROWID = m.handle_id
                LEFT JOIN handle oh ON oh.ROWID = \(column("other_handle"))
                \(order)
                """)
        while let row = try rows.next() {
            guard let rowID: Int64 = row.lenient("rowid") else {
                context.warn("table message", "a row", "has a ROWID that is not a number; skipped", skipped: true)
                continue
            }
            let location = "message ROWID \(rowID)"
            let date = Self.date(appleTime: row.lenient("date") ?? 0)
            let fromMe = (row.lenient("fromMe") as Int64? ?? 0) != 0
            let handle: String = row.lenient("handle") ?? "unknown"
            let sender = fromMe ? "me" : handle
            let actor = fromMe ? meName : handle
            let guid: String? = row.lenient("guid")
            if let guid { rowOfGUID[guid] = rowID }
            // A tapback: gathered above, a reaction, not a message.
            if let associated: Int64 = row.lenient("associated"), (2000...3999).contains(associated) { continue }
            let itemType: Int64 = row.lenient("itemType") ?? 0
            if itemType != 0 {
                let action: Int64 = row.lenient("action") ?? 0
                let other: String = row.lenient("otherHandle") ?? "someone"
                let line: String? =
                    switch itemType {
                    case 1: action == 0 ? "\(actor) added \(other) to the conversation" : "\(actor) removed \(other) from the conversation"
                    case 2: "\(actor) named the conversation “\(row.lenient("groupTitle") as String? ?? "")”"
                    case 3: action == 0 ? "\(actor) left the conversation" : "\(actor) changed the group photo"
                    default: nil
                    }
                if let line {
                    builder.append(.system(line, date: date), context: context)
                } else {
                    context.warn(location, "event of item_type \(itemType)", "not a message BubbleKit can show; skipped", skipped: true)
                }
                continue
            }

            if !fromMe { builder.participant(id: handle, name: handle) }
            guard
                var message = Self.message(
                    row, sender: sender, fromMe: fromMe, date: date, attachments: attachments[rowID] ?? [],
                    home: home, folder: folder, location: location, context: context)
            else { continue }
            if let guid, let reactions = reactionsOf.removeValue(forKey: guid) { message.reactions = reactions }
            let replyTo = (row.lenient("threadGUID") as String?).flatMap { rowOfGUID[$0] }
            builder.append(message, context: context, sourceID: rowID, replyTo: replyTo)
        }
        // Tapbacks on messages outside the conversation (or not shown), still standing.
        tapbacks += reactionsOf.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }
        if tapbacks > 0 {
            context.countSkipped(tapbacks)
            context.warn(nil, TextCleanup.count(tapbacks, "tapback reaction"), "reactions to messages outside the conversation are not shown")
        }
        return try builder.finish(format: .imessage, me: "me", sortByDate: false, keep: "me")
    }

    /// Each message's attachments (the chats' messages only), by message ROWID.
    private static func attachments(_ db: Database, chats idList: String) throws -> [Int64: [AttachmentRow]] {
        var attachments: [Int64: [AttachmentRow]] = [:]
        if try db.tableExists("attachment"), try db.tableExists("message_attachment_join") {
            let attachmentColumns = Set(try db.columns(in: "attachment").map { $0.name.lowercased() })
            func a(_ name: String) -> String { attachmentColumns.contains(name) ? "a.\(name)" : "NULL" }
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT j.message_id AS message, a.filename AS filename, a.mime_type AS mime, a.transfer_name AS name,
                           \(a("uti")) AS uti, \(a("total_bytes")) AS total
                    FROM message_attachment_join j JOIN attachment a ON a.ROWID = j.attachment_id
                    WHERE j.message_id IN (SELECT message_id FROM chat_message_join WHERE chat_id IN (\(idList)))
                    ORDER BY j.message_id, a.ROWID
                    """)
            while let row = try rows.next() {
                guard let message: Int64 = row.lenient("message") else { continue }
                attachments[message, default: []].append(
                    AttachmentRow(
                        filename: row.lenient("filename"), mimeType: row.lenient("mime"), transferName: row.lenient("name"),
                        uti: row.lenient("uti"), totalBytes: row.lenient("total")))
            }
        }
        return attachments
    }

    /// The chats' tapbacks (2000–2005) and their removals (3000–3005) by the guid of the message
    /// they react to, and how many are of kinds not shown.
    private static func tapbacks(_ db: Database, chats idList: String, columns: Set<String>, order: String) throws -> ([String: [Reaction]], Int) {
        var tapbacks = 0
        var reactionsOf: [String: [Reaction]] = [:]
        if columns.contains("associated_message_type"), columns.contains("associated_message_guid") {
            let taps = try Row.fetchCursor(
                db,
                sql: """
                    SELECT DISTINCT m.ROWID AS rowid, m.associated_message_type AS associated, m.associated_message_guid AS associatedGUID,
                           \(columns.contains("is_from_me") ? "m.is_from_me" : "NULL") AS fromMe, h.id AS handle
                    FROM message m
                    JOIN chat_message_join j ON j.message_id = m.ROWID AND j.chat_id IN (\(idList))
                    LEFT JOIN handle h ON h.ROWID = m.handle_id
                    WHERE m.associated_message_type BETWEEN 2000 AND 3999
                    \(order)
                    """)
            while let row = try taps.next() {
                // A tapback (2000–2005) or its removal (3000–3005) on the message named by
                // associated_message_guid ("p:0/GUID", "bp:GUID").
                guard let associated: Int64 = row.lenient("associated"), let emoji = Self.tapbackEmoji[Int(associated % 1000)],
                    let target = (row.lenient("associatedGUID") as String?).map(Self.targetGUID)
                else {
                    tapbacks += 1  // a kind we do not show
                    continue
                }
                let fromMe = (row.lenient("fromMe") as Int64? ?? 0) != 0
                reactionsOf[target, default: []].apply(
                    emoji: emoji, sender: fromMe ? "me" : (row.lenient("handle") ?? "unknown"),
                    remove: associated >= 3000)
            }
        }
        return (reactionsOf, tapbacks)
    }

    /// A row as a message: its text (or attributedBody's), photos as a grid with the text under
    /// the last, one typed attachment (others named in the text), formatting, edit time and
    /// delivery status; nil (with a warning) when nothing can be shown.
    private static func message(
        _ row: Row, sender: String, fromMe: Bool, date: Date, attachments: [AttachmentRow], home: String,
        folder: String, location: String, context: ImportContext
    ) -> Message? {
        var text: String? = row.lenient("text")
        if text == nil || text?.isEmpty == true, let blob: Data = row.lenient("body") {
            text = attributedBodyText(blob)
            if text == nil {
                context.warn(location, "attributedBody", "could not be decoded; the message's text is missing")
            }
        }
        // U+FFFC marks where attachments sit in the text.
        text = text.map { $0.replacingOccurrences(of: "\u{FFFC}", with: "").trimmingCharacters(in: .whitespacesAndNewlines) }
        if text?.isEmpty == true { text = nil }

        var parts: [(text: String?, image: ImageAttachment?)] = []
        var placeholders: [String] = []
        var fileAttachment: MediaAttachment?
        for a in attachments {
            let (image, other) = attachment(a, home: home, folder: folder, location: location, context: context)
            if let image { parts.append((nil, image)) }
            if let other {
                // One typed attachment a message; a further one is named in its text.
                if fileAttachment == nil { fileAttachment = other } else { placeholders.append(other.displayText) }
            }
        }
        let caption = (placeholders + [text].compactMap { $0 }).joined(separator: "\n")
        if parts.isEmpty {
            parts.append((caption.isEmpty ? nil : caption, nil))
        } else if !caption.isEmpty {
            parts[parts.count - 1].text = caption  // the text under the last photo
        }
        if parts.count == 1 && parts[0].text == nil && parts[0].image == nil && fileAttachment == nil {
            context.warn(location, "message", "has no text and no attachment; skipped", skipped: true)
            return nil
        }
        // Several photos make one grid message with the text as its caption.
        let images = parts.compactMap(\.image)
        var message = Message(
            sender: sender, direction: fromMe ? .outgoing : .incoming, date: date,
            text: parts.last?.text, images: images, attachment: fileAttachment)
        // Formatting (bold, italic, underline, strikethrough, links, mentions) from the archive;
        // the text ends the caption.
        if let text, let caption = message.text, caption.hasSuffix(text), let blob: Data = row.lenient("body") {
            let offset = caption.utf8.count - text.utf8.count
            message.spans = Self.attributedBodySpans([UInt8](blob), text: text).map {
                TextSpan($0.style, ($0.range.lowerBound + offset)..<($0.range.upperBound + offset), url: $0.url)
            }
        }
        if let edited: Int64 = row.lenient("dateEdited"), edited != 0 { message.edited = Self.date(appleTime: edited) }
        if fromMe { (message.status, message.statusDate) = Self.status(row) }
        return message
    }

    /// Tapback kinds (associated_message_type mod 1000) as emoji.
    static let tapbackEmoji: [Int: String] = [0: "❤️", 1: "👍", 2: "👎", 3: "😂", 4: "‼️", 5: "❓"]

    /// "p:0/GUID" or "bp:GUID" → "GUID".
    static func targetGUID(_ associated: String) -> String {
        if let slash = associated.firstIndex(of: "/") { return String(associated[associated.index(after: slash)...]) }
        if associated.hasPrefix("bp:") { return String(associated.dropFirst(3)) }
        return associated
    }

    /// An outgoing message's status: failed (error), read (date_read), delivered, sent.
    static func status(_ row: Row) -> (MessageStatus?, Date?) {
        if (row.lenient("error") as Int64? ?? 0) != 0 { return (.failed, nil) }
        let dateRead = row.lenient("dateRead") as Int64? ?? 0
        if dateRead > 0 || (row.lenient("isRead") as Int64? ?? 0) != 0 { return (.read, dateRead > 0 ? date(appleTime: dateRead) : nil) }
        if (row.lenient("delivered") as Int64? ?? 0) != 0 { return (.delivered, nil) }
        if (row.lenient("isSent") as Int64? ?? 0) != 0 { return (.sent, nil) }
        return (nil, nil)
    }

    /// The chats `wanted` picks (several when one person has an iMessage and an SMS chat with the
    /// same identifier), or an error listing the chats.
    private static func choose(_ chats: [ChatRow], wanted: String?, path: String) throws(ImportError) -> [ChatRow] {
        // Chats of one identifier (iMessage and SMS with one person) are one conversation: one
        // entry, so every entry is a `chat` that picks exactly it.
        var order: [String] = []
        var byIdentifier: [String: [ChatRow]] = [:]
        for c in chats {
            if byIdentifier[c.identifier] == nil { order.append(c.identifier) }
            byIdentifier[c.identifier, default: []].append(c)
        }
        let listing = TextCleanup.list(
            order.map { identifier in
                let group = byIdentifier[identifier]!
                let count = TextCleanup.count(group.reduce(0) { $0 + $1.messageCount }, "message")
                let label = group.first { $0.displayName?.isEmpty == false }?.label ?? identifier
                return group.count > 1 ? "\(label) (\(count) in \(group.count) chats: iMessage and SMS)" : "\(label) (\(count))"
            })
        guard !chats.isEmpty else { throw ImportError(path: path, location: "table chat", reason: "has no chats") }
        guard let wanted else {
            if Set(chats.map(\.identifier)).count == 1 { return chats }
            throw ImportError(
                path: path, location: "table chat",
                reason: "holds \(order.count < chats.count ? "\(order.count) conversations (\(chats.count) chats)" : "\(chats.count) chats"); "
                    + "pick one with `chat` (display name or chat identifier): \(listing)")
        }
        var hits = chats.filter { $0.displayName?.caseInsensitiveCompare(wanted) == .orderedSame }
        if hits.isEmpty { hits = chats.filter { $0.identifier == wanted } }
        if hits.isEmpty { hits = chats.filter { TextCleanup.sameContact($0.identifier, wanted) } }
        if hits.isEmpty {
            throw ImportError(path: path, location: "table chat", reason: "has no chat \"\(wanted)\"; chats: \(listing)")
        }
        if Set(hits.map(\.identifier)).count > 1 {
            throw ImportError(
                path: path, location: "table chat",
                reason: "has \(hits.count) chats matching \"\(wanted)\"; pick one by chat identifier: "
                    + TextCleanup.list(hits.map(\.label)))
        }
        return hits
    }

    /// The home folder `~` stands for: the one holding `Library/Messages/chat.db` when the database
    /// sits in such a tree (a copied home or backup), else this user's home.
    static func home(ofDatabaseIn folder: String) -> String {
        let parts = URL(fileURLWithPath: folder).standardizedFileURL.pathComponents
        if parts.count >= 3, parts.suffix(2) == ["Library", "Messages"] {
            return NSString.path(withComponents: Array(parts.dropLast(2)))
        }
        return NSHomeDirectory()
    }

    /// An attachment row: a photo as an image; anything else (video, voice memo, audio, contact
    /// card, document) as a typed attachment with what the database and the file's headers say.
    /// A file that is missing is a placeholder naming it, with a warning.
    private static func attachment(
        _ a: AttachmentRow, home: String, folder: String, location: String,
        context: ImportContext
    ) -> (ImageAttachment?, MediaAttachment?) {
        let kind = kind(of: a)
        let missing = MediaAttachment(kind: kind, fileName: a.name, mimeType: a.mimeType, byteSize: a.totalBytes)
        let what = kind == .photo ? "photo" : kind.rawValue
        guard let stored = a.filename, !stored.isEmpty else {
            context.warn(location, "\(what) \(a.name)", "has no file name in the database; shown as a placeholder", skipped: true, media: true)
            return (nil, missing)
        }
        var path: String
        if stored.hasPrefix("~/") {
            path = (home as NSString).appendingPathComponent(String(stored.dropFirst(2)))
            // A Messages folder copied on its own: chat.db beside Attachments/.
            let messagesPrefix = "~/Library/Messages/"
            if !FileManager.default.fileExists(atPath: path), stored.hasPrefix(messagesPrefix) {
                let beside = (folder as NSString).appendingPathComponent(String(stored.dropFirst(messagesPrefix.count)))
                if FileManager.default.fileExists(atPath: beside) { path = beside }
            }
        } else if stored.hasPrefix("/") {
            path = stored
        } else {
            path = (folder as NSString).appendingPathComponent(stored)
        }
        guard FileManager.default.fileExists(atPath: path) else {
            context.warn(location, "\(what) \(stored)", "no such file (\(path)); shown as a placeholder", skipped: true, media: true)
            return (nil, missing)
        }
        if kind == .photo { return (ImageAttachment(path: path, width: 0, height: 0, name: a.name), nil) }
        var described = MediaAttachment.described(kind: kind, fileName: a.name, path: path, mimeType: a.mimeType)
        described.byteSize = described.byteSize ?? a.totalBytes
        return (nil, described)
    }

    /// What an attachment row is, by its MIME type, UTI and file name.
    private static func kind(of a: AttachmentRow) -> MediaAttachment.Kind {
        let mime = a.mimeType?.lowercased() ?? "", uti = a.uti?.lowercased() ?? ""
        let ext = PathText.fileExtension(a.filename ?? a.name).lowercased()
        if mime.hasPrefix("image/") || uti.hasPrefix("public.jpeg") || uti.hasPrefix("public.png") || uti.hasPrefix("public.heic")
            || TextCleanup.photoExtensions.contains(ext)
        {
            return .photo
        }
        if mime.hasPrefix("video/") || uti.hasPrefix("com.apple.quicktime") || uti == "public.mpeg-4" { return .video }
        // Voice memos of Messages are Core Audio files.
        if uti == "com.apple.coreaudio-format" || ext == "caf" || ext == "amr" { return .voice }
        if mime.hasPrefix("audio/") { return .audio }
        if mime.contains("vcard") || uti == "public.vcard" || ext == "vcf" { return .contact }
        return .document
    }

    /// The plain text inside an `attributedBody` blob (an NSAttributedString in Apple's
    /// "typedstream" archive): after the "NSString" class name comes `+` (0x2B), a length, and
    /// the UTF-8 text. The length is one byte below 0x80, or 0x81 then 2 bytes, or 0x82 then 4
    /// bytes, little-endian.
    static func attributedBodyText(_ blob: Data) -> String? {
        let bytes = [UInt8](blob)
        let marker = Array("NSString".utf8)
        guard bytes.count > marker.count,
            let start = (0...(bytes.count - marker.count)).first(where: { bytes[$0..<($0 + marker.count)].elementsEqual(marker) })
        else { return nil }
        var i = start + marker.count
        let searchEnd = min(bytes.count, i + 16)
        while i < searchEnd, bytes[i] != 0x2B { i += 1 }
        guard i < searchEnd else { return nil }
        i += 1
        guard i < bytes.count else { return nil }
        var length: Int
        switch bytes[i] {
        case 0x81:
            guard i + 2 < bytes.count else { return nil }
            length = Int(bytes[i + 1]) | Int(bytes[i + 2]) << 8
            i += 3
        case 0x82:
            guard i + 4 < bytes.count else { return nil }
            length = Int(bytes[i + 1]) | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) << 16 | Int(bytes[i + 4]) << 24
            i += 5
        case let b where b < 0x80:
            length = Int(b)
            i += 1
        default:
            return nil
        }
        guard length >= 0, i + length <= bytes.count else { return nil }
        return String(validating: bytes[i..<(i + length)], as: UTF8.self)
    }
}

extension Row {
    /// The column's value, or nil when it is NULL or of a type it cannot be read as: a damaged or
    /// unusual database is read as far as it goes, never trapped on (GRDB's subscript stops the
    /// process on a value of the wrong type).
    func lenient<T: DatabaseValueConvertible>(_ column: String) -> T? {
        T.fromDatabaseValue(self[column] as DatabaseValue)
    }
}

extension IMessageImporter: ExportReader {
    static let formats: [ImportFormat] = [.imessage]
    static let holdsManyChats = true
    static let fileInFolder: String? = "chat.db"

    /// An SQLite file (WhatsApp's, asked before, has its own tables), or a folder with `chat.db`.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        if probe.isFolder { return probe.file("chat.db").map { .certain(.imessage, path: $0) } }
        return probe.isSQLite ? .certain(.imessage) : nil
    }
}
