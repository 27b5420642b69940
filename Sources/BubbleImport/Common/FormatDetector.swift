import BubbleCore
import Foundation
import GRDB

/// An export to read: the file or folder and its format.
struct ImportSource {
    var path: String
    var format: ImportFormat
    /// The name errors and warnings use: the path as given.
    var displayPath: String

    init(path: String, format: ImportFormat, displayPath: String? = nil) {
        self.path = path
        self.format = format
        self.displayPath = displayPath ?? path
    }
}

/// Tells formats apart by content: names lie (every export is "result.json", "chat.txt" or
/// "backup.xml" after a user renames it), first bytes don't.
enum FormatDetector {
    static func detect(path: String) throws(ImportError) -> ImportSource {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ImportError(path: path, reason: "no such file or folder")
        }
        if isFolder.boolValue { return try detectFolder(path) }
        // Signal Desktop's database is encrypted from its first byte: known by where it sits.
        if SignalDesktopImporter.looksLikeProfile(path) { return ImportSource(path: path, format: .signal) }

        let head = try readHead(path, count: 64 << 10)
        if head.isEmpty { throw ImportError(path: path, reason: "is empty; expected a chat export") }
        if head.starts(with: Array("SQLite format 3\u{0}".utf8)) {
            return ImportSource(path: path, format: isWhatsAppDatabase(path) ? .whatsappDatabase : .imessage)
        }
        if WhatsAppBackup.header(Array(head.prefix(512))) != nil { return ImportSource(path: path, format: .whatsappDatabase) }
        // Named as a backup but not one from its first byte (cut short while copied, or damaged):
        // say that, not that its "line 1" starts no known export.
        if let m = path.lowercased().firstMatch(of: #/\.crypt(\d+)$/#), let n = Int(m.1), n < 14 {
            throw ImportError(path: path, reason: "is a WhatsApp .crypt\(n) backup; only crypt14 and crypt15 backups are read "
                                  + "(give the phone's msgstore.db, or make a newer backup)")
        }
        if path.range(of: #"\.crypt1[0-9]$"#, options: [.regularExpression, .caseInsensitive]) != nil {
            throw ImportError(path: path, location: "header", reason: "is not a whole WhatsApp crypt14/crypt15 backup header "
                                  + "(\(Plural.count(head.count, "byte")): a length byte, then the key type and IV); the file is cut short or damaged, "
                                  + "copy it from the phone again")
        }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            // A Meta download holds thread files; anything else is read as WhatsApp's (whose
            // importer checks for a .txt inside).
            if let zip = try? ZipExport(path: path, displayPath: path, limits: ImportLimits()) {
                let files = zip.filePaths
                if files.contains(where: { MetaImporter.fileNumber(($0 as NSString).lastPathComponent) != nil && $0.contains("messages/") }) {
                    return ImportSource(path: path, format: isInstagram(path, files: files) ? .instagram : .messenger)
                }
            }
            return ImportSource(path: path, format: .whatsapp)
        }
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) {
            return ImportSource(path: path, format: .whatsapp)  // UTF-16 text: only WhatsApp exports come so
        }
        var start = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[start]) { start += 1 }
        let text = String(decoding: head[start...], as: UTF8.self)
        if head[safe: start] == UInt8(ascii: "<") { return ImportSource(path: path, format: .smsBackup) }
        let firstLine = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first.map(String.init) ?? ""
        if SignalExportImporter.isJSONLine(firstLine) || (path.lowercased().hasSuffix(".md") && SignalExportImporter.isMarkdownLine(firstLine)) {
            return ImportSource(path: path, format: .signalExport)
        }
        if head[safe: start] == UInt8(ascii: "{") {
            if text.contains("\"bubblekit-conversation\"") { return ImportSource(path: path, format: .native) }
            if isDiscord(text) { return ImportSource(path: path, format: .discord) }
            if MetaImporter.looksLikeThread(text) {
                return ImportSource(path: path, format: isInstagram(path, files: []) ? .instagram : .messenger)
            }
            let telegramMarks = ["\"date_unixtime\"", "\"personal_information\"", "\"from_id\"",
                                 "\"personal_chat\"", "\"private_group\"", "\"private_supergroup\"",
                                 "\"public_supergroup\"", "\"saved_messages\"", "\"bot_chat\""]
            if telegramMarks.contains(where: text.contains) { return ImportSource(path: path, format: .telegram) }
            return ImportSource(path: path, format: .native)
        }
        if WhatsAppLine.parse(Array(firstLine.utf8)) != nil { return ImportSource(path: path, format: .whatsapp) }
        let shown = firstLine.count > 60 ? String(firstLine.prefix(60)) + "…" : firstLine
        throw ImportError(path: path, location: "line 1",
                          reason: "\"\(shown)\" is not the start of a known export; expected SMS Backup & Restore XML, "
                              + "a WhatsApp chat line (\"12/24/19, 11:23 - Name: text\" or \"[14/10/2021, 3:34:09 PM] Name: text\"), "
                              + "Telegram result.json, an iMessage chat.db, a Messenger or Instagram download, DiscordChatExporter JSON, "
                              + "a WhatsApp msgstore.db or .crypt14/.crypt15 backup, a Signal Desktop profile, signal-export's chat.md "
                              + "or BubbleKit JSON (or pass the format)")
    }

    static func detectFolder(_ path: String) throws(ImportError) -> ImportSource {
        if IPhoneBackup.isBackup(path) { return ImportSource(path: path, format: .iphoneBackup) }
        if WhatsAppImporter.chatFile(inFolder: path) != nil { return ImportSource(path: path, format: .whatsapp) }
        if SignalDesktopImporter.looksLikeProfile(path) { return ImportSource(path: path, format: .signal) }
        if FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("chat.md")) {
            return ImportSource(path: path, format: .signalExport)
        }
        let msgstore = (path as NSString).appendingPathComponent("msgstore.db")
        if FileManager.default.fileExists(atPath: msgstore) { return ImportSource(path: msgstore, format: .whatsappDatabase) }
        let telegram = (path as NSString).appendingPathComponent("result.json")
        if FileManager.default.fileExists(atPath: telegram) { return ImportSource(path: telegram, format: .telegram) }
        let imessage = (path as NSString).appendingPathComponent("chat.db")
        if FileManager.default.fileExists(atPath: imessage) { return ImportSource(path: imessage, format: .imessage) }
        let fm = FileManager.default
        let metaFolders = ["messages", "your_activity_across_facebook/messages", "your_facebook_activity/messages",
                           "your_instagram_activity/messages"]
        let names = (try? fm.contentsOfDirectory(atPath: path)) ?? []
        if metaFolders.contains(where: { fm.fileExists(atPath: (path as NSString).appendingPathComponent($0)) })
            || names.contains(where: { MetaImporter.fileNumber($0) != nil }) {
            let files = metaFolders.filter { fm.fileExists(atPath: (path as NSString).appendingPathComponent($0)) }
                + MetaImporter.instagramMarks.filter { fm.fileExists(atPath: (path as NSString).appendingPathComponent($0)) }
            return ImportSource(path: path, format: isInstagram(path, files: files) ? .instagram : .messenger)
        }
        // DiscordChatExporter's channel files, or Messenger's flat download of encrypted chats.
        for name in names.sorted().prefix(200) where name.lowercased().hasSuffix(".json") {
            let file = (path as NSString).appendingPathComponent(name)
            guard let head = try? readHead(file, count: 64 << 10) else { continue }
            let text = String(decoding: head, as: UTF8.self)
            if isDiscord(text) { return ImportSource(path: path, format: .discord) }
            if MetaImporter.looksLikeThread(text) { return ImportSource(path: path, format: .messenger) }
        }
        throw ImportError(path: path, reason: "is a folder without a chat export; expected _chat.txt or "
                              + "\"WhatsApp Chat with ….txt\" (WhatsApp), result.json (Telegram), chat.db (iMessage), messages/inbox/… "
                              + "(Messenger or Instagram download), DiscordChatExporter .json files, msgstore.db (WhatsApp), "
                              + "config.json with sql/db.sqlite (Signal Desktop) or chat.md (signal-export)")
    }

    /// `path` for a format the caller named: an export folder stands for the file inside it.
    static func source(path: String, format: ImportFormat) -> ImportSource {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            return ImportSource(path: path, format: format)
        }
        let inside: String? = switch format {
        case .telegram: "result.json"
        case .imessage: "chat.db"
        case .whatsappDatabase: "msgstore.db"
        default: nil
        }
        guard let inside else { return ImportSource(path: path, format: format) }
        return ImportSource(path: (path as NSString).appendingPathComponent(inside), format: format)
    }

    /// Whether an SQLite file has WhatsApp's tables (else it is read as an iMessage chat.db).
    static func isWhatsAppDatabase(_ path: String) -> Bool {
        var configuration = Configuration()
        configuration.readonly = true
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return false }
        defer { try? queue.close() }
        return (try? queue.read { try WhatsAppDatabaseImporter.isWhatsAppDatabase($0) }) ?? false
    }

    /// Whether a Meta download (its path, or its files' paths) is Instagram's: its activity
    /// folder, its `personal_information` file, or "instagram" in its name.
    static func isInstagram(_ path: String, files: [String]) -> Bool {
        path.lowercased().contains("instagram")
            || files.contains { f in f.contains("your_instagram_activity") || MetaImporter.instagramMarks.contains { f.hasSuffix($0) } }
    }

    /// Whether a JSON file's first bytes are DiscordChatExporter's: it writes `guild` as the
    /// first key, then `channel` (a chat that merely mentions the words is not one).
    static func isDiscord(_ head: String) -> Bool {
        var rest = head.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        guard rest.first == "{" else { return false }
        rest = rest.dropFirst().drop { $0.isWhitespace }
        return rest.hasPrefix("\"guild\"") && head.contains("\"channel\"")
    }

    /// Whether the file at `path` starts like a zip archive.
    static func isZip(_ path: String) -> Bool {
        guard let head = try? readHead(path, count: 4) else { return false }
        return head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06])
    }

    static func readHead(_ path: String, count: Int) throws(ImportError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ImportError(path: path, reason: "cannot be opened for reading")
        }
        defer { try? handle.close() }
        do {
            return try Array(handle.read(upToCount: count) ?? Data())
        } catch {
            throw ImportError(path: path, reason: "cannot be read: \(error.localizedDescription)")
        }
    }
}

extension Array {
    subscript(safe i: Int) -> Element? { indices.contains(i) ? self[i] : nil }
}

/// BubbleKit's own JSON, read by BubbleCore.
enum NativeImporter {
    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: source.path), options: .alwaysMapped)
        } catch {
            throw ImportError(path: source.displayPath, reason: "cannot be read: \(error.localizedDescription)")
        }
        let decoded: (Conversation, ConversationFile.Hints)
        do {
            decoded = try ConversationFile.decode(data, path: source.displayPath, me: context.options.me,
                                                  timeZone: context.options.timeZone)
        } catch {
            throw ImportError(path: error.path, location: error.location, reason: error.reason)
        }
        // Keys nothing reads (`"sender"` for `"from"` draws messages as nobody's): a warning
        // naming the key and the one meant, or with --strict the error.
        for unknown in ConversationFile.unknownKeys(data) {
            if context.options.strict {
                throw ImportError(path: source.displayPath, location: unknown.location ?? "top level",
                                  reason: unknown.reason + " (--strict refuses keys it does not read)")
            }
            context.warn(unknown.location ?? "top level", "unknown key \"\(unknown.key)\"", unknown.reason)
        }
        var builder = ConversationBuilder()
        builder.title = decoded.0.title
        for p in decoded.0.participants { builder.participant(id: p.id, name: p.name) }
        for var m in decoded.0.messages {
            // Photos embedded as data: URLs (`bubbles convert --assets embed`) become files.
            if m.images.contains(where: { $0.path?.hasPrefix("data:") == true }) {
                m.images = try EmbeddedPhotos.extract(m.images, context: context)
            }
            builder.append(m, context: context)
        }
        var result = try builder.finish(format: .native, me: decoded.1.me, sortByDate: false, keep: decoded.1.me)
        // Native files list their participants on purpose: keep them all.
        result.conversation.participants = decoded.0.participants
        result.conversation.typing = decoded.0.typing
        result.theme = decoded.1.theme
        return result
    }
}

