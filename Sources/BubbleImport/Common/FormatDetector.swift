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
/// "backup.xml" after a user renames it), first bytes don't. Each reader says whether a probe is
/// its format (`ExportReader.recognizes`); the first sure answer in `ExportReaders.all`'s order
/// wins, else the first likely one.
enum FormatDetector {
    static func detect(path: String) throws(ImportError) -> ImportSource {
        let probe = try ExportProbe(path: path)
        if !probe.isFolder && probe.head.isEmpty && !SignalDesktopImporter.looksLikeProfile(path) {
            throw ImportError(path: path, reason: "is empty; expected a chat export")
        }
        var likely: Recognition?
        for reader in ExportReaders.all {
            guard let found = try reader.recognizes(probe) else { continue }
            if found.certainty == .certain { return ImportSource(path: found.path ?? path, format: found.format, displayPath: found.path) }
            likely = likely ?? found
        }
        if let likely { return ImportSource(path: likely.path ?? path, format: likely.format, displayPath: likely.path) }
        if probe.isFolder {
            throw ImportError(
                path: path,
                reason: "is a folder without a chat export; expected _chat.txt or "
                    + "\"WhatsApp Chat with ….txt\" (WhatsApp), result.json (Telegram), chat.db (iMessage), messages/inbox/… "
                    + "(Messenger or Instagram download), DiscordChatExporter .json files, msgstore.db (WhatsApp), "
                    + "config.json with sql/db.sqlite (Signal Desktop), chat.md (signal-export) or an iPhone backup "
                    + "(Manifest.plist, Manifest.db)")
        }
        let line = probe.firstLine
        let shown = line.count > 60 ? String(line.prefix(60)) + "…" : line
        throw ImportError(
            path: path, location: "line 1",
            reason: "\"\(shown)\" is not the start of a known export; expected SMS Backup & Restore XML, "
                + "a WhatsApp chat line (\"12/24/19, 11:23 - Name: text\" or \"[14/10/2021, 3:34:09 PM] Name: text\"), "
                + "Telegram result.json, an iMessage chat.db, a Messenger or Instagram download, DiscordChatExporter JSON, "
                + "a WhatsApp msgstore.db or .crypt14/.crypt15 backup, a Signal Desktop profile, signal-export's chat.md "
                + "or BubbleKit JSON (or pass the format)")
    }

    /// `path` for a format the caller named: an export folder stands for the file inside it.
    static func source(path: String, format: ImportFormat) -> ImportSource {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue,
            let inside = ExportReaders.reader(of: format).fileInFolder
        else {
            return ImportSource(path: path, format: format)
        }
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
        return isZip(head: head)
    }

    /// Whether bytes start like a zip archive (a local file header, or an empty archive's end record).
    static func isZip(head: [UInt8]) -> Bool {
        head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06])
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
enum NativeImporter: ExportReader {
    static let formats: [ImportFormat] = [.native]

    /// JSON that names itself (`"format": "bubblekit-conversation"`); any other JSON object likely (a
    /// hand-written file), when no other reader knows it.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        guard probe.first == UInt8(ascii: "{") else { return nil }
        // The key itself, not the words in some message's text.
        let names = probe.text.firstMatch(of: #/"format"\s*:\s*"bubblekit-conversation"/#) != nil
        return names ? .certain(.native) : .likely(.native)
    }

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: source.path), options: .alwaysMapped)
        } catch {
            throw ImportError(path: source.displayPath, reason: "cannot be read: \(error.localizedDescription)")
        }
        let decoded: (Conversation, ConversationFile.Hints)
        do {
            decoded = try ConversationFile.decode(
                data, path: source.displayPath, me: context.options.me,
                timeZone: context.options.timeZone)
        } catch {
            throw ImportError(path: error.path, location: error.location, reason: error.reason)
        }
        // Keys nothing reads (`"sender"` for `"from"` draws messages as nobody's): a warning
        // naming the key and the one meant, or with --strict the error.
        for unknown in ConversationFile.unknownKeys(data) {
            if context.options.strict {
                throw ImportError(
                    path: source.displayPath, location: unknown.location ?? "top level",
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
