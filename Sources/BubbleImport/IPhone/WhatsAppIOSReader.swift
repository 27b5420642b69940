import BubbleCore
import BubbleMarkup
import Foundation
import GRDB

/// WhatsApp for iPhone's own database, `ChatStorage.sqlite` (Core Data): `ZWACHATSESSION` (a
/// chat: `ZCONTACTJID`, `ZPARTNERNAME`, `ZSESSIONTYPE` 1 for a group), `ZWAMESSAGE`
/// (`ZISFROMME`, `ZMESSAGEDATE` in seconds since 2001, `ZTEXT`, `ZMESSAGETYPE`, `ZGROUPMEMBER`,
/// `ZFROMJID`, `ZMEDIAITEM`), `ZWAGROUPMEMBER` (`ZMEMBERJID`, `ZCONTACTNAME`), `ZWAMEDIAITEM`
/// (`ZMEDIALOCALPATH` under the app's `Message/` folder, `ZTITLE`: a caption) and
/// `ZWAPROFILEPUSHNAME` (the name each person gave themselves).
///
/// Not read: quoted replies (iOS keeps them in a protobuf blob, `ZWAMEDIAITEM.ZMETADATA`, whose
/// layout is not documented), reactions and polls.
struct WhatsAppIOSReader {
    let path: String
    /// The folder `ZMEDIALOCALPATH` is relative to (the app's `Message/`), when its files are there.
    let mediaRoot: String?

    /// Whether `db` is WhatsApp for iPhone's database.
    static func isChatStorage(_ db: Database) -> Bool {
        (try? db.tableExists("ZWACHATSESSION")) == true && (try? db.tableExists("ZWAMESSAGE")) == true
    }

    private struct Chat {
        var id: Int64
        var jid: String
        var name: String
        var isGroup: Bool
        var label: String { name.isEmpty ? jid : name }
    }

    /// Every chat `context` wants, each handed over finished (`context.everyChat`), or the one
    /// `options.chat` names.
    func read(context: ImportContext) throws(ImportError) {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.read { db in
                guard Self.isChatStorage(db) else {
                    throw ImportError(path: path, reason: "has no ZWACHATSESSION and ZWAMESSAGE tables; expected WhatsApp for iPhone's ChatStorage.sqlite")
                }
                let pushNames = Dictionary(
                    try Row.fetchAll(
                        db,
                        sql: """
                            SELECT ZJID, ZPUSHNAME FROM ZWAPROFILEPUSHNAME WHERE ZJID IS NOT NULL AND ZPUSHNAME IS NOT NULL
                            """
                    ).map { ($0[0] as String, $0[1] as String) }
                ) { a, _ in a }
                // Status updates and broadcast lists are not conversations.
                let chats = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT Z_PK, ZCONTACTJID, ZPARTNERNAME, ZSESSIONTYPE FROM ZWACHATSESSION
                        WHERE ZCONTACTJID IS NOT NULL AND ZCONTACTJID NOT LIKE '%@status' AND ZCONTACTJID NOT LIKE '%@broadcast'
                        ORDER BY Z_PK
                        """
                ).map { row -> Chat in
                    let jid: String = row[1]
                    return Chat(id: row[0], jid: jid, name: row[2] ?? "", isGroup: (row[3] as Int64? ?? 0) == 1 || jid.hasSuffix("@g.us"))
                }
                let wanted = context.wanted(chats) { chat, name in
                    chat.name.caseInsensitiveCompare(name) == .orderedSame || chat.jid == name || TextCleanup.sameContact(Self.number(chat.jid), name)
                }
                for chat in wanted {
                    let result = try conversation(db, chat, pushNames: pushNames, context: context)
                    try context.deliverConversation(result, key: "whatsapp:" + chat.jid, of: wanted.count)
                }
            }
        } catch let e as ImportError { throw e } catch {
            throw ImportError(path: path, reason: "cannot be read as WhatsApp's ChatStorage.sqlite: \(error)")
        }
    }

    /// `4477009001@s.whatsapp.net` → `+4477009001`.
    static func number(_ jid: String) -> String {
        let user = jid.split(separator: "@").first.map(String.init) ?? jid
        return jid.hasSuffix("@s.whatsapp.net") && user.allSatisfy(\.isNumber) ? "+" + user : user
    }

    private func conversation(_ db: Database, _ chat: Chat, pushNames: [String: String], context: ImportContext) throws -> ImportResult {
        var builder = ConversationBuilder()
        builder.title = chat.label
        builder.participant(id: "me", name: context.options.me ?? "Me")
        var members: [Int64: String] = [:]
        if chat.isGroup {
            for row in try Row.fetchAll(db, sql: "SELECT Z_PK, ZMEMBERJID, ZCONTACTNAME FROM ZWAGROUPMEMBER WHERE ZCHATSESSION = ?", arguments: [chat.id]) {
                guard let jid: String = row[1] else { continue }
                let id = Self.number(jid)
                members[row[0]] = id
                builder.participant(id: id, name: pushNames[jid] ?? (row[2] as String?).flatMap { $0.isEmpty ? nil : $0 } ?? id)
            }
        } else {
            let id = Self.number(chat.jid)
            builder.participant(id: id, name: chat.name.isEmpty ? pushNames[chat.jid] ?? id : chat.name)
        }
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT m.Z_PK, m.ZISFROMME, m.ZMESSAGEDATE, m.ZTEXT, m.ZMESSAGETYPE, m.ZGROUPMEMBER, m.ZFROMJID,
                       i.ZMEDIALOCALPATH, i.ZTITLE, i.ZMOVIEDURATION, i.ZFILESIZE, i.ZLATITUDE, i.ZLONGITUDE, i.ZVCARDNAME
                FROM ZWAMESSAGE m LEFT JOIN ZWAMEDIAITEM i ON i.Z_PK = m.ZMEDIAITEM
                WHERE m.ZCHATSESSION = ? ORDER BY m.ZMESSAGEDATE, m.Z_PK
                """, arguments: [chat.id])
        let other = Self.number(chat.jid)
        while let row = try rows.next() {
            let pk: Int64 = row[0]
            let fromMe = (row[1] as Int64? ?? 0) != 0
            let date = Date(timeIntervalSinceReferenceDate: row[2] as Double? ?? 0)
            var text: String? = (row[3] as String?).flatMap { $0.isEmpty ? nil : $0 }
            let type: Int64 = row[4] ?? 0
            let location = "ZWAMESSAGE Z_PK \(pk)"
            let sender =
                fromMe ? "me" : chat.isGroup ? ((row[5] as Int64?).flatMap { members[$0] } ?? (row[6] as String?).map(Self.number) ?? "unknown") : other
            var message = Message(sender: sender, direction: fromMe ? .outgoing : .incoming, date: date)
            let caption = (row[8] as String?).flatMap { $0.isEmpty ? nil : $0 }
            switch type {
            case 0, 7:
                guard text != nil else { context.warn(location, "message", "has no text; skipped", skipped: true); continue }
            case 6:
                // A group event ("Ann added Ben"): kept as a line when it has words.
                if let line = text { builder.append(.system(line, date: date), context: context) }
                continue
            case 1, 2, 3, 8, 11, 15:
                let kind: MediaAttachment.Kind = [1: .photo, 2: .video, 3: .voice, 8: .document, 11: .gif, 15: .sticker][type] ?? .document
                text = text ?? (kind == .document ? nil : caption)
                attach(kind, path: row[7], title: caption, duration: row[9], size: row[10], to: &message, location: location, context: context)
            case 4:
                var a = MediaAttachment(kind: .contact, mimeType: "text/vcard")
                a.title = (row[13] as String?) ?? text
                message.attachment = a
                text = nil
            case 5:
                var a = MediaAttachment(kind: .location)
                a.latitude = row[11]; a.longitude = row[12]
                a.title = caption
                message.attachment = a
                text = nil
            case 14:
                message.attachment = MediaAttachment(kind: .deleted)
                text = nil
            default:
                guard text != nil else {
                    context.warn(location, "message of ZMESSAGETYPE \(type)", "not a kind BubbleKit can show; skipped", skipped: true)
                    continue
                }
            }
            if let text {
                let (plain, spans) = ChatMarkup.parse(text)
                message.text = plain
                message.spans = spans
            }
            builder.append(message, context: context, sourceID: pk)
        }
        return try builder.finish(format: .whatsappDatabase, me: "me", sortByDate: false)
    }

    /// A photo (or sticker) as an image, anything else as an attachment; a file the backup does
    /// not hold is a placeholder with a warning.
    private func attach(
        _ kind: MediaAttachment.Kind, path local: String?, title: String?, duration: Double?, size: Int64?,
        to message: inout Message, location: String, context: ImportContext
    ) {
        let name = local.map { ($0 as NSString).lastPathComponent }
        var found: String?
        if let local, let root = mediaRoot, !local.split(separator: "/").contains(".."), !local.hasPrefix("/") {
            let candidate = root + "/" + local
            if FileManager.default.fileExists(atPath: candidate) { found = candidate }
        }
        guard let found else {
            var a = MediaAttachment(kind: kind, fileName: name, byteSize: size.map(Int.init).flatMap { $0 > 0 ? $0 : nil })
            if let duration, duration > 0 { a.duration = duration }
            message.attachment = a
            context.warn(
                location, "\(kind == .photo ? "photo" : kind.rawValue) \(local ?? "without a file")",
                "not in the backup; shown as a placeholder", skipped: false, media: true)
            return
        }
        if kind == .photo || kind == .sticker {
            message.images = [ImageAttachment(path: found, width: 0, height: 0, name: name, sticker: kind == .sticker)]
            return
        }
        var a = MediaAttachment.described(kind: kind, fileName: name, path: found, mimeType: nil)
        if a.duration == nil, let duration, duration > 0 { a.duration = duration }
        if kind == .document { a.title = title }
        message.attachment = a
    }
}
