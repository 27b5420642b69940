import BubbleCore
import Foundation

/// signal-export's output (`sigexport`): one folder per chat with `chat.md` and, by default,
/// `data.json` (one JSON object per line: `date` in the exporter's local time without an offset,
/// `sender`, `body`, `quote`, `sticker`, `reactions` as [name, emoji] pairs, `attachments`
/// [{name, path}], `deleted`, `call`, `missed`). The JSON is read when it is there; else the
/// Markdown: `[2024-03-01 10:00:00] Ann: text`, continuation lines, a quote as `> text` between
/// blank lines, reactions as `(- Ann: ❤️, Ben: 👍 -)`, a sticker as `(( 😀 ))`, files as
/// `![name](./path)` or `[name](./path)`. The owner's messages are signed "Me" (`ImportOptions.me`
/// names another author).
enum SignalExportImporter {
    /// chat.md / data.json for a path that is the folder or either file.
    static func files(_ path: String) -> (folder: String, markdown: String?, json: String?) {
        var isDir: ObjCBool = false
        let fm = FileManager.default
        let folder = fm.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue ? path : (path as NSString).deletingLastPathComponent
        let md = (folder as NSString).appendingPathComponent("chat.md"), js = (folder as NSString).appendingPathComponent("data.json")
        let given = isDir.boolValue ? nil : path
        return (
            folder, given.map { $0.hasSuffix(".md") ? $0 : nil } ?? (fm.fileExists(atPath: md) ? md : nil),
            given.map { $0.hasSuffix(".json") ? $0 : nil } ?? (fm.fileExists(atPath: js) ? js : nil)
        )
    }

    /// Whether a line starts like signal-export's Markdown: "[YYYY-MM-DD HH:MM:SS] Name: ".
    static func isMarkdownLine(_ line: String) -> Bool { parseHeader(line) != nil }

    /// Whether a JSON line is one of data.json's messages.
    static func isJSONLine(_ line: String) -> Bool {
        line.hasPrefix("{\"date\": ") && line.contains("\"sender\": ") && line.contains("\"body\": ")
    }

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let (folder, markdown, json) = files(source.path)
        var builder = ConversationBuilder()
        builder.title = (folder as NSString).lastPathComponent
        let me = context.options.me ?? "Me"
        var entries: [Entry] = []
        if let json {
            entries = try readJSON(json, context: context)
        } else if let markdown {
            entries = try readMarkdown(markdown, context: context)
        } else {
            throw ImportError(path: source.displayPath, reason: "has no chat.md or data.json; expected a chat folder written by signal-export")
        }
        var clock = WallClock(timeZone: context.options.timeZone)
        for e in entries {
            guard let date = clock.instant(year: e.wall.0, month: e.wall.1, day: e.wall.2, hour: e.wall.3, minute: e.wall.4, second: e.wall.5) else { continue }
            let outgoing = e.sender == me
            let sender = outgoing ? "me" : e.sender
            if !outgoing { builder.participant(id: sender, name: sender) }
            if e.call {
                builder.append(.system(e.missed ? "Missed call" : "Call", date: date), context: context)
                continue
            }
            var message = Message(sender: sender, direction: outgoing ? .outgoing : .incoming, date: date)
            if e.deleted {
                message.attachment = MediaAttachment(kind: .deleted)
            } else {
                if !e.body.isEmpty { message.text = e.body }
                for (name, path) in e.attachments {
                    let full = (folder as NSString).appendingPathComponent(path)
                    let inside = !path.split(separator: "/").contains("..")
                    let exists = inside && FileManager.default.fileExists(atPath: full)
                    if TextCleanup.photoExtension(ofFileName: path) != nil, exists {
                        message.images.append(ImageAttachment(path: full, width: 0, height: 0, name: name))
                    } else if message.attachment == nil {
                        let ext = PathText.fileExtension(path).lowercased()
                        let kind: MediaAttachment.Kind =
                            TextCleanup.photoExtension(ofFileName: path) != nil
                            ? .photo
                            : ["mp4", "mov", "mkv", "webm"].contains(ext)
                                ? .video
                                : ["m4a", "aac", "mp3", "ogg", "opus", "wav", "flac"].contains(ext) ? .audio : .document
                        message.attachment =
                            exists
                            ? .described(kind: kind, fileName: name, path: full)
                            : MediaAttachment(kind: kind, fileName: name)
                        if !exists {
                            context.warn(e.location, "attachment \(path)", "no such file beside chat.md; shown as a placeholder", media: true)
                        }
                    }
                }
                if let sticker = e.sticker, message.images.isEmpty, message.attachment == nil {
                    var a = MediaAttachment(kind: .sticker)
                    a.title = sticker
                    message.attachment = a
                }
            }
            if message.text == nil, message.images.isEmpty, message.attachment == nil {
                context.warn(e.location, "message", "has no text and no attachment; skipped", skipped: true)
                continue
            }
            for (name, emoji) in e.reactions {
                let from = name == me ? "me" : name
                if from != "me" { builder.participant(id: from, name: name) }
                message.reactions.apply(emoji: emoji, sender: from, remove: false)
            }
            if let quote = e.quote, !quote.isEmpty { message.reply = ReplyReference(text: quote) }
            builder.append(message, context: context)
        }
        return try builder.finish(format: .signalExport, me: "me", sortByDate: false, keep: "me")
    }

    struct Entry {
        var location: String
        var wall: (Int, Int, Int, Int, Int, Int)
        var sender: String
        var body: String
        var quote: String?
        var sticker: String?
        var reactions: [(String, String)] = []
        var attachments: [(String, String)] = []
        var deleted = false
        var call = false
        var missed = false
    }

    /// "[2024-03-01 10:00:00] Ann: rest" → wall time, sender, rest.
    static func parseHeader(_ line: String) -> ((Int, Int, Int, Int, Int, Int), String, String)? {
        guard let m = line.wholeMatch(of: #/\[(\d{4})-(\d{2})-(\d{2}),? (\d{2}):(\d{2})(?::(\d{2}))?\] (.*?): ?(.*)/#.dotMatchesNewlines()) else { return nil }
        return ((Int(m.1)!, Int(m.2)!, Int(m.3)!, Int(m.4)!, Int(m.5)!, m.6.map { Int($0)! } ?? 0), String(m.7), String(m.8))
    }

    static func readLines(_ path: String) throws(ImportError) -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw ImportError(path: path, reason: "cannot be read") }
        return String(decoding: data, as: UTF8.self).components(separatedBy: "\n")
    }

    private static func readJSON(_ path: String, context: ImportContext) throws(ImportError) -> [Entry] {
        var out: [Entry] = []
        for (i, line) in try readLines(path).enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let location = "line \(i + 1)"
            guard let o = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                let date = o["date"] as? String, let sender = o["sender"] as? String,
                let wall = parseHeader("[\(date.prefix(19).replacingOccurrences(of: "T", with: " "))] x: ")?.0
            else {
                throw ImportError(path: path, location: location, reason: "is not a signal-export message (a JSON object with date, sender and body)")
            }
            var e = Entry(location: location, wall: wall, sender: sender, body: o["body"] as? String ?? "")
            let quote = (o["quote"] as? String ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            e.quote = quote.hasPrefix(">") ? String(quote.dropFirst()).trimmingCharacters(in: .whitespaces) : (quote.isEmpty ? nil : quote)
            e.sticker = (o["sticker"] as? [String: Any])?["emoji"] as? String
            e.reactions = (o["reactions"] as? [Any] ?? []).compactMap { r in
                if let pair = r as? [String], pair.count == 2 { return (pair[0], pair[1]) }
                if let d = r as? [String: String], let n = d["name"], let em = d["emoji"] { return (n, em) }
                return nil
            }
            e.attachments = (o["attachments"] as? [[String: Any]] ?? []).compactMap { a in
                guard let p = a["path"] as? String, a["missing_kind"] as? String == nil else { return nil }
                return (a["name"] as? String ?? p, p.hasPrefix("./") ? String(p.dropFirst(2)) : p)
            }
            e.deleted = o["deleted"] as? Bool ?? false
            e.call = o["call"] as? Bool ?? false
            e.missed = o["missed"] as? Bool ?? false
            out.append(e)
        }
        return out
    }

    private static func readMarkdown(_ path: String, context: ImportContext) throws(ImportError) -> [Entry] {
        var out: [Entry] = []
        var lines: [(Int, String)] = []
        func finish() {
            guard let (n, first) = lines.first, let (wall, sender, rest) = parseHeader(first) else { return }
            var body = ([rest] + lines.dropFirst().map(\.1)).joined(separator: "\n")
            var e = Entry(location: "line \(n)", wall: wall, sender: sender, body: "")
            if body.trimmingCharacters(in: .whitespaces) == "(This message was deleted)" { e.deleted = true; out.append(e); return }
            if let m = body.firstMatch(of: #/\n\(- (.*) -\)/#) {
                e.reactions = m.1.components(separatedBy: ", ").compactMap { r in
                    guard let colon = r.range(of: ": ", options: .backwards) else { return nil }
                    return (String(r[..<colon.lowerBound]), String(r[colon.upperBound...]))
                }
                body.removeSubrange(m.range)
            }
            if let m = body.firstMatch(of: #/\n\(\( (.*) \)\)/#) { e.sticker = String(m.1); body.removeSubrange(m.range) }
            if let m = body.firstMatch(of: #/^\n\n> (.*?)\n\n/#.dotMatchesNewlines()) {
                e.quote = m.1.replacingOccurrences(of: "\n> ", with: "\n")
                body.removeSubrange(m.range)
            }
            for m in body.matches(of: #/!?\[(.*?)\]\(\.?/?(.*?)\)\s*/#) {
                e.attachments.append((String(m.1), String(m.2)))
            }
            body = body.replacing(#/!?\[(.*?)\]\(\.?/?(.*?)\)\s*/#, with: "")
            e.body = body.trimmingCharacters(in: .whitespacesAndNewlines)
            out.append(e)
        }
        for (i, line) in try readLines(path).enumerated() {
            if parseHeader(line) != nil {
                finish()
                lines = [(i + 1, line)]
            } else if !lines.isEmpty {
                lines.append((i + 1, line))
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ImportError(path: path, location: "line \(i + 1)", reason: "expected a message line \"[YYYY-MM-DD HH:MM:SS] Name: text\"")
            }
        }
        finish()
        return out
    }
}

extension SignalExportImporter: ExportReader {
    static let formats: [ImportFormat] = [.signalExport]
    static let delivery = MessageTiming.atEnd

    /// signal-export's `data.json` line or `chat.md` header line, or a folder with `chat.md`.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        if probe.isFolder { return probe.file("chat.md") != nil ? .certain(.signalExport) : nil }
        let markdown = probe.path.lowercased().hasSuffix(".md") && isMarkdownLine(probe.firstLine)
        return isJSONLine(probe.firstLine) || markdown ? .certain(.signalExport) : nil
    }
}
