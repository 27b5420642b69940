import BubbleCore
import BubbleMarkup
import Foundation

/// WhatsApp "Export chat": the .txt alone, the folder it was unpacked into, or the .zip itself.
///
/// One pass reads the lines (a line without a date prefix continues the message before it) and
/// resolves attached photos; dates are made afterwards, once the whole file has shown whether its
/// dates are day-first or month-first. Memory: one chunk of the file plus the messages kept.
enum WhatsAppImporter {
    /// Where a message's attached files are.
    private enum Media {
        case folder(String)
        case zip(ZipExport)
    }

    /// A message as read, before its date can be made.
    private struct Entry {
        var line: Int
        var stamp: WhatsAppLine
        var author: String?
        var text: String?
        var image: ImageAttachment?
        var attachment: MediaAttachment?
    }

    /// A line's date and time in 8 bytes, as written (day/month order still open): kept beside
    /// each message until the whole file has been read.
    struct PackedStamp {
        var bits: UInt64
        init(_ s: WhatsAppLine) {
            bits =
                UInt64(s.fields.0) | UInt64(s.fields.1) << 16 | UInt64(s.fields.2) << 24 | UInt64(s.hour24) << 40
                | UInt64(s.minute) << 48 | UInt64(s.second) << 56 | (s.isoOrder ? 1 << 63 : 0)
        }
        private func field(_ shift: UInt64, _ width: UInt64) -> Int { Int((bits >> shift) & ((1 << width) - 1)) }
        var hour: Int { field(40, 8) }
        var minute: Int { field(48, 8) }
        var second: Int { field(56, 6) }
        var isoOrder: Bool { bits >> 63 == 1 }
        var fields: (Int, Int, Int) { (field(0, 16), field(16, 8), field(24, 16)) }
        func date(dayFirst: Bool) -> (year: Int, month: Int, day: Int) {
            let f = fields
            if isoOrder { return (Self.year(f.0), f.1, f.2) }
            let year = Self.year(f.2)
            return dayFirst ? (year, f.1, f.0) : (year, f.0, f.1)
        }

        /// The Gregorian year of a written one. Thai phones write Buddhist-era years (2563 =
        /// 2020): a 4-digit year from 2400 on is one, and so is a 2-digit year that would
        /// otherwise lie more than a year ahead (63 = 2563 = 2020; WhatsApp is younger than 2009).
        static func year(_ y: Int) -> Int {
            if y >= 2400 { return y - 543 }
            guard y < 100 else { return y }
            return 2000 + y > latestYear ? 2500 + y - 543 : 2000 + y
        }
        private static let latestYear = Calendar(identifier: .gregorian).component(.year, from: Date()) + 1
    }

    /// The chat text in an export folder: iOS `_chat.txt`, Android "WhatsApp Chat with ….txt".
    static func chatFile(inFolder folder: String) -> String? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        if names.contains("_chat.txt") { return (folder as NSString).appendingPathComponent("_chat.txt") }
        let chat = names.sorted().first { isChatFileName($0) }
        return chat.map { (folder as NSString).appendingPathComponent($0) }
    }

    static func isChatFileName(_ name: String) -> Bool {
        name == "_chat.txt" || (name.hasPrefix("WhatsApp Chat") && name.lowercased().hasSuffix(".txt"))
    }

    /// "WhatsApp Chat with Ann.txt", "WhatsApp Chat - Ann.zip", "WhatsApp-Chat mit Ann" → "Ann": the
    /// other person of a one-to-one chat, or a group's name.
    static func title(fromFileName name: String) -> String? {
        var stem = (name as NSString).lastPathComponent
        for ext in [".zip", ".txt"] where stem.lowercased().hasSuffix(ext) { stem = String(stem.dropLast(ext.count)) }
        stem = TextCleanup.stripBidi(stem)
        for prefix in titlePrefixes where stem.hasPrefix(prefix) {
            // A copy's suffix: "WhatsApp Chat with Ann (1)".
            var rest = String(stem.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
            if rest.hasSuffix(")"), let open = rest.lastIndex(of: "("), rest[rest.index(after: open)..<rest.index(before: rest.endIndex)].allSatisfy(\.isNumber)
            {
                rest = String(rest[..<open]).trimmingCharacters(in: .whitespaces)
            }
            return rest.isEmpty ? nil : rest
        }
        return nil
    }

    /// What WhatsApp names an export in the phone's language, before the chat's name.
    static let titlePrefixes = [
        "WhatsApp Chat with ", "WhatsApp Chat - ", "WhatsApp-Chat mit ", "WhatsApp Chat mit ", "Chat de WhatsApp con ",
        "Discussion WhatsApp avec ", "Conversa do WhatsApp com ", "Conversa no WhatsApp com ", "Chat WhatsApp con ",
        "WhatsApp-chat met ", "WhatsApp Chat met ", "Чат WhatsApp с ", "WhatsApp-чат с ", "Czat WhatsApp z ",
        "WhatsApp Sohbeti: ", "Chat WhatsApp dengan ", "WhatsApp-chatt med ", "WhatsApp-chat med ", "WhatsApp-keskustelu: ",
        "Συνομιλία WhatsApp με ", "WhatsApp-beszélgetés: ", "Chat WhatsApp cu ", "WhatsApp Chat avec "
    ]

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let file = try open(source, context: context)
        defer { if let scratch = file.scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        let reader = try LineReader(path: file.path, displayPath: file.name, maxLineBytes: context.options.limits.maxLineBytes)
        var chat = try read(reader, textName: file.name, media: file.media, context: context)
        if chat.messages.isEmpty && reader.lineNumber == 0 {
            throw ImportError(path: file.name, reason: "is empty; expected WhatsApp chat lines")
        }
        let dayFirst = dayFirst(chat, context: context, textName: file.name)
        var builder = ConversationBuilder()
        builder.title = file.title
        // The owner: the one author of "You deleted this message" (any language, groups too), else
        // the author the export is not named after ("WhatsApp Chat with Ann": Ann is the other).
        let owners = OwnerInference(authors: chat.authors.map { OwnerInference.Author(id: $0, names: [$0]) })
        let meID = owners.resolve(
            me: context.options.me,
            clues: [
                .soleAuthor(of: chat.deletedByMe, how: "the author of \"You deleted this message\""),
                .namedAfter(file.title, how: "whom the export is named after")
            ], context: context, file: file.name)
        for author in chat.authors { builder.participant(id: author, name: author) }
        let excluded = settleDates(&chat, dayFirst: dayFirst, me: meID, context: context, textName: file.name)
        builder.adopt(chat.messages, excluded: excluded)
        return try builder.finish(format: .whatsapp, me: meID, sortByDate: false)
    }

    /// The chat's text file and where its media are: a folder's `.txt`, a zip's (unpacked into
    /// `scratch`, removed by the caller), or the file itself.
    private struct ChatFile {
        var path: String
        var name: String
        var media: Media
        var title: String?
        var scratch: String? = nil
    }

    private static func open(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ChatFile {
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder)
        if isFolder.boolValue {
            guard let chat = chatFile(inFolder: source.path) else {
                throw ImportError(path: source.displayPath, reason: "has no _chat.txt or \"WhatsApp Chat with ….txt\"; expected a WhatsApp export folder")
            }
            return ChatFile(
                path: chat, name: (source.displayPath as NSString).appendingPathComponent((chat as NSString).lastPathComponent),
                media: .folder(source.path), title: title(fromFileName: chat) ?? title(fromFileName: source.path))
        } else if FormatDetector.isZip(source.path) {
            let zip = try ZipExport(path: source.path, displayPath: source.displayPath, limits: context.options.limits)
            let texts = zip.filePaths.filter { $0.lowercased().hasSuffix(".txt") }
            guard let entryPath = texts.first(where: { isChatFileName(($0 as NSString).lastPathComponent) }) ?? texts.first,
                let entry = zip.entry(path: entryPath)
            else {
                throw ImportError(
                    path: source.displayPath,
                    reason: "is a zip that holds no chat export; expected WhatsApp's \"Export chat\" .zip "
                        + "(_chat.txt or \"WhatsApp Chat with ….txt\" plus media) or a Messenger or Instagram download "
                        + "(messages/inbox/…/message_1.json); other exports are read unzipped: Telegram's result.json, "
                        + "DiscordChatExporter's .json, SMS Backup & Restore's .xml, signal-export's chat.md")
            }
            let folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-whatsapp-" + UUID().uuidString)
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw ImportError(path: folder, reason: "cannot create a scratch folder: \(error.localizedDescription)")
            }
            let textPath = (folder as NSString).appendingPathComponent("chat.txt")
            let textName = source.displayPath + "/" + entryPath
            do {
                try zip.extract(entry, to: textPath)
            } catch {
                try? FileManager.default.removeItem(atPath: folder)
                throw ImportError(path: textName, reason: "refused: \(error.reason)")
            }
            return ChatFile(
                path: textPath, name: textName, media: .zip(zip), title: title(fromFileName: entryPath) ?? title(fromFileName: source.path),
                scratch: folder)
        }
        return ChatFile(
            path: source.path, name: source.displayPath, media: .folder((source.path as NSString).deletingLastPathComponent),
            title: title(fromFileName: source.path))
    }

    /// What the lines hold, message by message (dates filled in once the day/month order is
    /// known): the only per-message memory besides the model itself.
    private struct ChatLines {
        var messages: [Message] = []
        var stamps: [PackedStamp] = []
        var lineNumbers: [Int32] = []
        var authors: [String] = []
        var seenAuthors = Set<String>()
        /// Authors of "You deleted this message" (in any language): the phone's owner.
        var deletedByMe = Set<String>()
        var maxFirst = 0, maxSecond = 0

        /// One message's header and lines, finished: its attachment, markup and edit mark read.
        mutating func flush(_ read: (Entry, [String])?, textName: String, media: Media, context: ImportContext) throws(ImportError) {
            guard var (entry, lines) = read else { return }
            if entry.author != nil, let first = lines.first {
                if let name = WhatsAppImporter.attachmentName(in: first) {
                    // A photo or sticker in the export is drawn; any other file is a typed
                    // attachment (what its headers say read now); one the export lacks is a
                    // placeholder naming it.
                    let kind = WhatsAppMarkers.kind(ofFileName: name)
                    let path = try WhatsAppImporter.locate(name, line: entry.line, file: textName, media: media, context: context)
                    if let path, kind == .photo || kind == .sticker, TextCleanup.photoExtension(ofFileName: name) != nil {
                        entry.image = ImageAttachment(path: path, width: 0, height: 0, name: name, sticker: kind == .sticker)
                    } else {
                        entry.attachment = MediaAttachment.described(kind: kind, fileName: name, path: path)
                    }
                    lines.removeFirst()
                } else if lines.count == 1, let placeholder = WhatsAppMarkers.placeholder(for: first) {
                    entry.attachment = placeholder
                    lines.removeFirst()
                }
            }
            var text = lines.count == 1 ? lines[0] : lines.joined(separator: "\n")
            // "<This message was edited>" at the end; then *bold*, _italic_, `code`… as spans.
            var edited = false, spans: [TextSpan] = []
            if entry.author != nil {
                (text, edited) = WhatsAppMarkup.editedMarker(text)
                (text, spans) = ChatMarkup.parse(text)
            }
            entry.text = text.isEmpty ? nil : text
            if entry.text == nil && entry.image == nil && entry.attachment == nil {
                context.warn("line \(entry.line)", "empty message", "has no text; skipped", skipped: true, file: textName)
                return
            }
            if let author = entry.author {
                if seenAuthors.insert(author).inserted { authors.append(author) }
                if let a = entry.attachment, a.kind == .deleted, let label = a.label, WhatsAppMarkers.isDeletedByOwner(label) {
                    deletedByMe.insert(author)
                }
                // Edited: the time is unknown, so it is the message's own (`Message.edited`).
                messages.append(
                    Message(
                        sender: author, direction: .incoming, date: .distantPast, text: entry.text, image: entry.image,
                        attachment: entry.attachment, spans: entry.text == nil ? [] : spans,
                        edited: edited ? .distantPast : nil))
            } else {
                messages.append(.system(entry.text ?? "", date: .distantPast))
            }
            stamps.append(PackedStamp(entry.stamp))
            lineNumbers.append(Int32(clamping: entry.line))
        }
    }

    /// Every line of the chat into messages; a line that does not start a message continues the
    /// one before (or, shaped like a header it cannot read, stands alone and is reported).
    private static func read(_ reader: LineReader, textName: String, media: Media, context: ImportContext) throws(ImportError) -> ChatLines {
        var chat = ChatLines()
        var current: (Entry, [String])?
        var nonUTF8Lines = 0, firstNonUTF8Line = 0
        while let bytes = try reader.nextLine() {
            // The whole line as a String only when it is needed (continuation lines, errors).
            let isUTF8 = TextDecoding.isUTF8(bytes)
            let decoded: String? = isUTF8 ? nil : TextDecoding.decode(bytes).0
            if !isUTF8 {
                if nonUTF8Lines == 0 { firstNonUTF8Line = reader.lineNumber }
                nonUTF8Lines += 1
            }
            let utf8 = decoded.map { Array($0.utf8) } ?? bytes
            guard let stamp = WhatsAppLine.parse(utf8) else {
                let line = decoded ?? String(decoding: bytes, as: UTF8.self)
                let shown = line.count > 60 ? String(line.prefix(60)) + "…" : line
                guard let previous = current else {
                    if TextCleanup.cleanName(line).isEmpty { continue }
                    if reader.lastLineUnterminated, WhatsAppLine.looksLikeHeader(utf8, cutShort: true) {
                        throw ImportError(
                            path: textName, location: "line \(reader.lineNumber)",
                            reason: "unexpected end of file (cut short?) inside the first message's date and time")
                    }
                    throw ImportError(
                        path: textName, location: "line \(reader.lineNumber)",
                        reason: "not a WhatsApp export: \"\(shown)\" does not start with a date and time; expected "
                            + "\"12/24/19, 11:23 - Name: text\" (Android) or \"[14/10/2021, 3:34:09 PM] Name: text\" (iOS)")
                }
                // A line shaped like a header whose date or time cannot be read is never glued
                // onto the message before it: it stays a line of its own, and is reported.
                if WhatsAppLine.looksLikeHeader(utf8, cutShort: reader.lastLineUnterminated) {
                    let why =
                        reader.lastLineUnterminated
                        ? "unexpected end of file (cut short?) inside a message's date and time"
                        : "looks like the start of a message but its date and time cannot be read"
                    if context.options.strict {
                        throw ImportError(
                            path: textName, location: "line \(reader.lineNumber)",
                            reason: "\"\(shown)\" \(why) (--strict); expected a header such as \"12/24/19, 11:23 - Name: text\"")
                    }
                    context.warn(
                        "line \(reader.lineNumber)", "\"\(shown)\"",
                        why + "; kept as a line of its own at the time of the "
                            + "message before it, not added to that message", file: textName)
                    try chat.flush(current.take(), textName: textName, media: media, context: context)
                    current = (Entry(line: reader.lineNumber, stamp: previous.0.stamp, author: nil), [TextCleanup.stripBidi(line)])
                    continue
                }
                current?.1.append(line)
                continue
            }
            try chat.flush(current.take(), textName: textName, media: media, context: context)
            if !stamp.isoOrder {
                chat.maxFirst = max(chat.maxFirst, stamp.fields.0)
                chat.maxSecond = max(chat.maxSecond, stamp.fields.1)
            }
            let (author, body) = split(utf8, from: stamp.restStart, style: stamp.style)
            current = (Entry(line: reader.lineNumber, stamp: stamp, author: author), [body])
        }
        try chat.flush(current.take(), textName: textName, media: media, context: context)

        if reader.encoding != .utf8 && reader.invalidUTF16Units > 0 {
            context.warn(nil, "\(reader.invalidUTF16Units) invalid UTF-16 code units", "replaced by U+FFFD", file: textName)
        }
        if nonUTF8Lines > 0 {
            context.warn(
                "line \(firstNonUTF8Line)", "\(nonUTF8Lines) lines that are not UTF-8",
                "read as Windows-1252 (Latin-1); check accented letters", file: textName)
        }
        return chat
    }

    private static func dayFirst(_ chat: ChatLines, context: ImportContext, textName: String) -> Bool {
        // Day/month order from the whole file: a first field over 12 can only be a day, a second
        // field over 12 only a day too (so the first is the month).
        if chat.maxFirst > 12 {
            if chat.maxSecond > 12 {
                context.warn(
                    nil, "dates", "some have a first field over 12 and others a second field over 12; read as day/month",
                    file: textName)
            }
            return true
        } else if chat.maxSecond > 12 {
            return false
        } else if chat.stamps.contains(where: { !$0.isoOrder && $0.fields.0 != $0.fields.1 }) {
            context.warn(
                nil, "dates",
                "no day is over 12, so day/month order cannot be told; read as day/month "
                    + "(e.g. 03/04 = 3 April)", file: textName)
        }
        return true
    }

    /// Dates and directions in place; messages outside since/until or with impossible dates are
    /// compacted out as they go. Returns how many were left out on purpose (since/until).
    private static func settleDates(_ chat: inout ChatLines, dayFirst: Bool, me meID: String?, context: ImportContext, textName: String) -> Int {
        var clock = WallClock(timeZone: context.options.timeZone)
        var kept = 0, excluded = 0
        for i in chat.messages.indices {
            let stamp = chat.stamps[i]
            let ymd = stamp.date(dayFirst: dayFirst)
            guard
                let date = clock.instant(
                    year: ymd.year, month: ymd.month, day: ymd.day, hour: stamp.hour,
                    minute: stamp.minute, second: stamp.second)
            else {
                context.warn(
                    "line \(chat.lineNumbers[i])", "message",
                    "\(ymd.year)-\(ymd.month)-\(ymd.day) is not a date "
                        + "(read \(dayFirst ? "day" : "month") first); skipped", skipped: true, file: textName)
                continue
            }
            guard context.isWanted(date) else {
                excluded += 1
                continue
            }
            // In place: a message is not copied out and back (each copy retains all it holds).
            chat.messages[i].date = date
            if chat.messages[i].edited != nil { chat.messages[i].edited = date }
            chat.messages[i].wallTime = WallTime(
                year: ymd.year, month: ymd.month, day: ymd.day, hour: stamp.hour,
                minute: stamp.minute, second: stamp.second)
            if let meID, chat.messages[i].sender == meID { chat.messages[i].direction = .outgoing }
            if kept != i { chat.messages.swapAt(kept, i) }
            kept += 1
        }
        chat.messages.removeLast(chat.messages.count - kept)
        chat.stamps = []
        chat.lineNumbers = []
        return excluded
    }

    // MARK: Lines

    /// "Ann: hi" → ("Ann", "hi"); a system line → (nil, line). iOS marks system and media lines
    /// with U+200E after the author ("Ann: ‎Ann added Ben", "Ann: ‎image omitted"). Works on the
    /// line's bytes: this runs once per message.
    static func split(_ b: [UInt8], from start: Int, style: WhatsAppLine.Style) -> (author: String?, body: String) {
        var colon = start
        while colon + 1 < b.count, !(b[colon] == UInt8(ascii: ":") && b[colon + 1] == 0x20) { colon += 1 }
        func wholeLine() -> (String?, String) { (nil, TextCleanup.stripBidi(String(decoding: b[start...], as: UTF8.self))) }
        guard colon + 1 < b.count else { return wholeLine() }
        let authorBytes = b[start..<colon]
        // Android system lines have no author, but can hold ": " ("Ann changed the subject from "A: b"…).
        if systemVerbs.contains(where: { contains(b, start..<colon, $0) }) { return wholeLine() }
        let author = TextCleanup.cleanName(String(decoding: authorBytes, as: UTF8.self))
        if author.isEmpty { return wholeLine() }
        var bodyStart = colon + 2
        let marked = bodyStart + 2 < b.count && b[bodyStart] == 0xE2 && b[bodyStart + 1] == 0x80 && b[bodyStart + 2] == 0x8E
        if marked { bodyStart += 3 }
        let body = String(decoding: b[bodyStart...], as: UTF8.self)
        // iOS marks media, deleted and system lines so; what is neither media nor a deletion is a
        // system line in whatever language the phone wrote it.
        if style == .ios && marked && attachmentName(in: body) == nil
            && (isSystemText(body) || WhatsAppMarkers.placeholder(for: body) == nil)
        {
            return (nil, body)
        }
        return (author, body)
    }

    /// Whether `b[range]` holds `needle` (a plain byte loop: generic `firstRange(of:)` costs more than
    /// the whole line's parse).
    @inline(__always)
    static func contains(_ b: [UInt8], _ range: Range<Int>, _ needle: [UInt8]) -> Bool {
        let n = needle.count
        guard n > 0, range.count >= n else { return n == 0 }
        return b.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { nd in
                let first = nd[0]
                var i = range.lowerBound
                let last = range.upperBound - n
                while i <= last {
                    if hay[i] == first {
                        var k = 1
                        while k < n && hay[i + k] == nd[k] { k += 1 }
                        if k == n { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    private static let systemVerbs = [
        " changed the subject", " changed the group", " changed this group", " added ",
        " removed ", " created group", " joined using"
    ].map { Array($0.utf8) }

    private static let systemPhrases = [
        "end-to-end encrypted", "created group", " added ", " removed ", " left",
        "joined using", "changed the subject", "changed this group", "changed the group",
        "security code", "changed their phone number", "now an admin",
        "deleted this group", "Disappearing messages", "business account",
        "created this group", "changed to "
    ]

    static func isSystemText(_ text: String) -> Bool {
        systemPhrases.contains(where: text.contains)
    }

    /// The file a media line names: "IMG-20191224-WA0001.jpg (file attached)" (Android) or
    /// "<attached: 00000012-PHOTO-2021-10-14-15-34-09.jpg>" (iOS), in a few languages.
    static func attachmentName(in line: String) -> String? {
        // Cheap test first: this runs for every message.
        guard line.utf8.contains(where: { $0 == UInt8(ascii: ")") || $0 == UInt8(ascii: ">") }) else { return nil }
        let trimmed = TextCleanup.cleanName(line)
        for suffix in [
            " (file attached)", " (Datei angehängt)", " (archivo adjunto)", " (fichier joint)",
            " (arquivo anexado)", " (file allegato)", " (bestand bijgevoegd)"
        ] where trimmed.hasSuffix(suffix) {
            let name = String(trimmed.dropLast(suffix.count))
            return name.isEmpty ? nil : name
        }
        for prefix in ["<attached: ", "<Anhang: ", "<adjunto: ", "<anexo: ", "<allegato: ", "<pièce jointe : ", "<bijlage: "]
        where trimmed.hasPrefix(prefix) && trimmed.hasSuffix(">") {
            let name = String(trimmed.dropFirst(prefix.count).dropLast())
            return name.isEmpty ? nil : name
        }
        return nil
    }

    // MARK: Attachments

    /// Where the file `name` of the export is (in its folder, or taken out of the zip into the
    /// attachments folder), or nil — not there, unsafe, refused — with a warning.
    private static func locate(
        _ name: String, line: Int, file: String, media: Media,
        context: ImportContext
    ) throws(ImportError) -> String? {
        let location = "line \(line)"
        // Only a bare file name: WhatsApp never writes folders here, and "../../etc/passwd" or
        // "/etc/passwd" would read outside the export.
        if name.contains("/") || name.contains("\\") || name == "." || name == ".." || name.contains("\u{0}") {
            context.warn(location, "attachment \(name)", "path leaves the export folder; shown as a placeholder", skipped: true, file: file, media: true)
            return nil
        }
        let ext = PathText.fileExtension(name).lowercased()
        switch media {
        case .folder(let folder):
            let path = (folder as NSString).appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: path) else {
                context.warn(
                    location, "attachment \(name)", "not in the export folder (exported without media?); shown as a placeholder",
                    skipped: true, file: file, media: true)
                return nil
            }
            // A symlink inside the export must not lead outside it.
            guard ExportTree.isInside(path, folder) else {
                context.warn(
                    location, "attachment \(name)", "is a link leading out of the export folder; shown as a placeholder",
                    skipped: true, file: file, media: true)
                return nil
            }
            return URL(fileURLWithPath: path).standardizedFileURL.path
        case .zip(let zip):
            guard let entry = zip.entry(named: name) else {
                context.warn(
                    location, "attachment \(name)", "not in the zip (exported without media?); shown as a placeholder",
                    skipped: true, file: file, media: true)
                return nil
            }
            let folder = try context.attachmentsFolder()
            let stem = (name as NSString).deletingPathExtension
            let destination = (folder as NSString).appendingPathComponent(context.uniqueAttachmentName(stem: stem, ext: ext))
            do {
                try zip.extract(entry, to: destination)
            } catch {
                context.warn(location, "attachment \(name)", "refused: \(error.reason); shown as a placeholder", skipped: true, file: file, media: true)
                return nil
            }
            return destination
        }
    }

}

extension WhatsAppImporter: ExportReader {
    static let formats: [ImportFormat] = [.whatsapp]
    static let delivery = MessageTiming.atEnd

    /// A chat line ("12/24/19, 11:23 - Name: text"), UTF-16 text (only WhatsApp exports come so),
    /// a folder with the chat's `.txt`; any other zip likely (its importer looks for the `.txt`).
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        if probe.isFolder { return chatFile(inFolder: probe.path) != nil ? .certain(.whatsapp) : nil }
        if probe.isZip { return .likely(.whatsapp) }
        if probe.head.starts(with: [0xFF, 0xFE]) || probe.head.starts(with: [0xFE, 0xFF]) { return .certain(.whatsapp) }
        return WhatsAppLine.parse(Array(probe.firstLine.utf8)) != nil ? .certain(.whatsapp) : nil
    }
}
