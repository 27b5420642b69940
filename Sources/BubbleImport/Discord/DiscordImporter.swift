import BubbleCore
import Foundation

/// DiscordChatExporter's JSON: one channel a file (direct messages, group DMs, server channels
/// and threads), written as `Guild - Channel [id].json`, with `[part 2]`, `[part 3]`, … files when
/// the export was split; a folder of such files. Each file is streamed (`JSONScanner`), one
/// message at a time; the parts of a channel are joined in order.
enum DiscordImporter {
    /// One channel: its files in part order.
    struct Channel {
        var files: [String]
        var header = DiscordChannel()

        var title: String {
            let name = header.name.flatMap { $0.isEmpty ? nil : $0 } ?? "channel \(header.id ?? "?")"
            switch header.type ?? "" {
            case "DirectTextChat", "DirectGroupTextChat": return name
            default:
                let guild = header.guildName.flatMap { $0.isEmpty ? nil : $0 }
                return "#" + name + (guild.map { " · " + $0 } ?? "")
            }
        }

        var key: String { header.id.map { "\(title) (\($0))" } ?? title }
    }

    static let writer = "DiscordChatExporter"
    static let element = "one message of a DiscordChatExporter export"
    static let export = "a DiscordChatExporter export"

    /// "Guild - general [123] [part 2].json" → ("Guild - general [123]", 2); other names → (stem, 1).
    static func part(of name: String) -> (stem: String, number: Int) {
        let stem = (name as NSString).deletingPathExtension
        guard stem.hasSuffix("]"), let open = stem.range(of: " [part ", options: .backwards),
            let n = Int(stem[open.upperBound...].dropLast()), n >= 1
        else { return (stem, 1) }
        return (String(stem[..<open.lowerBound]), n)
    }

    /// The channels in what was given: a file (with its other parts beside it) or a folder.
    static func channels(_ source: ImportSource) throws(ImportError) -> [Channel] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder) else {
            throw ImportError(path: source.displayPath, reason: "no such file or folder")
        }
        let folder = isFolder.boolValue ? source.path : (source.path as NSString).deletingLastPathComponent
        var names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? [])
            .filter { $0.lowercased().hasSuffix(".json") }
        if !isFolder.boolValue {
            let stem = part(of: (source.path as NSString).lastPathComponent).stem
            names = names.filter { part(of: $0).stem == stem }
            if names.isEmpty { names = [(source.path as NSString).lastPathComponent] }
        } else {
            names = names.filter { name in
                guard let head = try? FormatDetector.readHead((folder as NSString).appendingPathComponent(name), count: 64 << 10) else { return false }
                return FormatDetector.isDiscord(String(decoding: head, as: UTF8.self))
            }
        }
        var groups: [String: [(Int, String)]] = [:]
        for name in names {
            let (stem, n) = part(of: name)
            groups[stem, default: []].append((n, (folder as NSString).appendingPathComponent(name)))
        }
        let found = groups.keys.sorted().map { Channel(files: groups[$0]!.sorted { $0.0 < $1.0 }.map(\.1)) }
        guard !found.isEmpty else {
            throw ImportError(path: source.displayPath, reason: "holds no DiscordChatExporter JSON file (with \"guild\", \"channel\" and \"messages\")")
        }
        return found
    }

    /// How an error names a file: as the user gave it.
    private static func display(_ file: String, source: ImportSource) -> String {
        file == source.path
            ? source.displayPath
            : (source.path.hasSuffix(".json")
                ? ((source.displayPath as NSString).deletingLastPathComponent as NSString)
                    .appendingPathComponent((file as NSString).lastPathComponent)
                : (source.displayPath as NSString).appendingPathComponent((file as NSString).lastPathComponent))
    }

    private struct HeaderRead: Error {}

    /// The channel's `guild` and `channel`, read from its first file up to its `messages`.
    static func readHeader(_ channel: inout Channel, source: ImportSource) throws(ImportError) {
        guard let first = channel.files.first else { return }
        let scanner = try JSONScanner(path: first, displayPath: display(first, source: source))
        var header = DiscordChannel()
        do {
            if try FormatDetector.readHead(first, count: 3).starts(with: [0xEF, 0xBB, 0xBF]) { try scanner.seek(to: 3, path: []) }
            try scanner.object { key in
                switch key {
                case "guild", "channel":
                    try scanner.readElement(limit: 1 << 20) { (d: inout JSONElementReader) throws(JSONElementReader.Failure) in
                        try d.discordChannel(into: &header, guild: key == "guild")
                    }
                case "messages": throw HeaderRead()
                default: try scanner.skipValue()
                }
            }
        } catch is HeaderRead {
        } catch let error as ImportError {
            throw error
        } catch let failure as JSONScanner.Failure {
            throw scanner.describe(failure, writer: writer, element: element, export: export)
        } catch {
            throw ImportError(path: scanner.displayPath, reason: "\(error)")
        }
        channel.header = header
    }

    static func matches(_ wanted: String, _ channel: Channel) -> Bool {
        let bare = wanted.hasPrefix("#") ? String(wanted.dropFirst()) : wanted
        return channel.header.id == wanted || channel.title.caseInsensitiveCompare(wanted) == .orderedSame
            || (channel.header.name.map { $0.caseInsensitiveCompare(bare) == .orderedSame } ?? false)
    }

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        var all = try channels(source)
        for k in all.indices { try readHeader(&all[k], source: source) }
        if context.everyChat {
            let chosen = context.wanted(all) { channel, name in matches(name, channel) }
            for channel in chosen {
                try context.deliverConversation(try read(channel, source: source, context: context), key: channel.key, of: chosen.count)
            }
            return ImportResult(conversation: Conversation(), format: .discord)
        }
        let listing = { TextCleanup.list(all.map(\.key)) }
        if let wanted = context.options.chat {
            let hits = all.filter { matches(wanted, $0) }
            guard hits.count == 1 else {
                throw ImportError(
                    path: source.displayPath,
                    reason: (hits.isEmpty ? "has no channel \"\(wanted)\"" : "has \(hits.count) channels \"\(wanted)\"")
                        + "; its channels: " + listing())
            }
            return try read(hits[0], source: source, context: context)
        }
        guard all.count == 1 else {
            throw ImportError(
                path: source.displayPath,
                reason: "holds \(all.count) channels; choose one with --chat NAME (a channel's name or id), "
                    + "or --all for every one: " + listing())
        }
        return try read(all[0], source: source, context: context)
    }

    /// Authors as met: id → shown name, and their avatars.
    struct Authors {
        var order: [String] = []
        var names: [String: String] = [:]
        var handles: [String: String] = [:]
        var avatars: [String: String] = [:]
    }

    /// Ids whose names are read: later messages skip their author's other fields.
    private final class KnownAuthors { var ids = Set<String>() }

    static func read(_ channel: Channel, source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        var builder = ConversationBuilder()
        var authors = Authors()
        let known = KnownAuthors()
        var total = 0
        let limit = context.options.limits.maxJSONValueBytes
        for file in channel.files {
            let folder = (file as NSString).deletingLastPathComponent
            let shown = display(file, source: source)
            try JSONScanner.reading(path: file, displayPath: shown, writer: writer, element: element, export: export) { scanner in
                var sawMessages = false
                try scanner.object { key in
                    guard key == "messages" else { try scanner.skipValue(); return }
                    sawMessages = true
                    try scanner.elements(
                        limit: limit,
                        read: { (d: inout JSONElementReader) throws(JSONElementReader.Failure) in
                            try d.discordMessage(known: known.ids)
                        }
                    ) { i, m in
                        total += 1
                        let location = "messages[\(i)]"
                        let sender = m.author.id ?? m.author.name ?? "unknown"
                        if authors.names[sender] == nil {
                            authors.order.append(sender)
                            if let id = m.author.id { known.ids.insert(id) }
                            authors.names[sender] = m.author.shown ?? sender
                            authors.handles[sender] = m.author.name
                            if let avatar = m.author.avatarURL, let path = localFile(avatar, in: folder) { authors.avatars[sender] = path }
                        }
                        guard
                            let message = message(
                                from: m, sender: sender, name: authors.names[sender] ?? sender, location: location,
                                folder: folder, file: shown, context: context)
                        else { return }
                        if message.kind == .message { builder.participant(id: sender, name: authors.names[sender] ?? sender) }
                        builder.append(message, context: context, sourceID: m.idNumber, replyTo: m.referenceID.flatMap { Int64($0) })
                    }
                }
                guard sawMessages else {
                    throw ImportError(path: shown, location: "(top level)", reason: "has no \"messages\"; expected a DiscordChatExporter JSON export")
                }
            }
        }
        if channel.files.count > 1 { context.note("\(channel.files.count) parts of the channel's export joined (\(TextCleanup.count(total, "message")))") }
        // In a direct message named after one of its two authors, the other one.
        let owners = OwnerInference(
            authors: authors.order.map { id in
                let name = authors.names[id] ?? id
                let listed = authors.handles[id].map { $0 == name ? name : "\(name) (\($0))" } ?? name
                return OwnerInference.Author(id: id, names: [name] + (authors.handles[id].map { [$0] } ?? []), listed: listed)
            }, unsaid: "no `me` given and the export does not say whose it is")
        let direct = channel.header.type == "DirectTextChat" ? channel.header.name : nil
        let me = owners.resolve(
            me: context.options.me, clues: [.namedAfter(direct, how: "whom the direct messages are named after")],
            context: context, file: source.displayPath)
        if let me { builder.updateMessages { if $0.sender == me { $0.direction = .outgoing } } }
        builder.title = channel.title
        var result = try builder.finish(format: .discord, me: me, sortByDate: false, keep: me)
        for k in result.conversation.participants.indices {
            result.conversation.participants[k].avatar = authors.avatars[result.conversation.participants[k].id]
        }
        return result
    }

    static let messageTypes: Set<String> = ["Default", "Reply", "ChatInputCommand", "ContextMenuCommand", "ThreadStarterMessage"]

    /// One message as BubbleKit shows it (incoming; `me`'s are turned at the end), or nil.
    /// `name`: its author's shown name (the message's own `author` may hold only the id).
    static func message(
        from m: DiscordMessage, sender: String, name who: String, location: @autoclosure () -> String, folder: String,
        file: String, context: ImportContext
    ) -> Message? {
        guard let date = m.timestamp else {
            context.warn(
                location() + ".timestamp", "message \(m.id ?? "without id")",
                "has no readable time (expected ISO 8601, "
                    + "\"2020-09-13T21:20:31.49+02:00\"); skipped", skipped: true, file: file)
            return nil
        }
        let type = m.type ?? "Default"
        guard messageTypes.contains(type) else {
            let other = m.mentions.first?.shown
            let content = m.content.flatMap { $0.isEmpty ? nil : $0 }
            let line: String
            switch type {
            case "RecipientAdd": line = who + " added " + (other ?? "someone") + " to the group"
            case "RecipientRemove": line = other == nil || other == who ? who + " left the group" : who + " removed " + other! + " from the group"
            case "Call":
                if let end = m.callEnded, end > date {
                    line = TextCleanup.callLine(seconds: end.timeIntervalSince(date)) + " (started by \(who))"
                } else {
                    line = who + " started a call"
                }
            case "ChannelNameChange": line = who + " changed the channel name" + (content.map { ": " + $0 } ?? "")
            case "ChannelIconChange": line = who + " changed the channel icon"
            case "ChannelPinnedMessage": line = who + " pinned a message"
            case "GuildMemberJoin": line = who + " joined the server"
            case "ThreadCreated": line = who + " started a thread" + (content.map { ": " + $0 } ?? "")
            case "GuildBoost", "GuildBoostTier1", "GuildBoostTier2", "GuildBoostTier3": line = who + " boosted the server"
            default:
                line = who + ": " + type + (content.map { " — " + $0 } ?? "")
                context.warn(
                    location() + ".type", "message \(m.id ?? "without id")", "has type \"\(type)\", which this reader does not know; kept as a line",
                    file: file)
            }
            var message = Message.system(line, date: date)
            message.id = m.id
            return message
        }

        var mentions: [String: String] = [:]
        for a in m.mentions { if let id = a.id { mentions[id] = a.shown ?? id } }
        var (text, spans) = DiscordMarkdown.parse(m.content ?? "", mentions: mentions, timeZone: context.options.timeZone)
        var images: [ImageAttachment] = []
        var attachment: MediaAttachment?
        var extra: [String] = []
        for a in m.attachments {
            let name = a.fileName ?? a.url.map { (($0 as NSString).lastPathComponent as NSString).removingPercentEncoding ?? "" } ?? "file"
            let kind = kind(ofFileName: name)
            var path: String?
            if let url = a.url {
                if url.contains("://") {
                    context.warn(
                        location() + ".attachments", "\(name)", "is a web address (exported without media; never fetched); shown as a placeholder",
                        skipped: true, file: file, media: true)
                } else if let local = localFile(url, in: folder) {
                    path = local
                } else {
                    context.warn(
                        location() + ".attachments", "\(name)", "is not in the export folder (or leaves it); shown as a placeholder",
                        skipped: true, file: file, media: true)
                }
            }
            if kind == .photo, let path {
                images.append(ImageAttachment(path: path, width: 0, height: 0, name: name))
            } else if attachment == nil {
                var placed = MediaAttachment.described(kind: kind, fileName: name, path: path)
                if placed.byteSize == nil { placed.byteSize = a.size }
                attachment = placed
            } else {
                extra.append("📎 " + name)
            }
        }
        for s in m.stickers where attachment == nil {
            let local = s.sourceURL.flatMap { localFile($0, in: folder) }
            if let local, TextCleanup.photoExtension(ofFileName: local) != nil {
                images.append(ImageAttachment(path: local, width: 0, height: 0, name: s.name, sticker: true))
            } else {
                attachment = MediaAttachment(kind: .sticker, fileName: s.name, path: local, title: s.name)
            }
        }
        // Embeds (link previews): their title as a link, and their description, below the text.
        for e in m.embeds {
            let title = e.title.flatMap { $0.isEmpty ? nil : $0 }
            let description = e.description.flatMap { $0.isEmpty ? nil : $0 }
            guard title != nil || description != nil else { continue }
            if !text.isEmpty { text += "\n" }
            if let title {
                let start = text.utf8.count
                text += title
                spans.append(TextSpan(e.url.map { _ in .link } ?? .bold, start..<text.utf8.count, url: e.url))
                if description != nil { text += "\n" }
            }
            if let description {
                let short = description.count > 300 ? String(description.prefix(300)) + "…" : description
                let (body, bodySpans) = DiscordMarkdown.parse(short, mentions: mentions, timeZone: context.options.timeZone)
                let start = text.utf8.count
                text += body
                spans += bodySpans.map { TextSpan($0.style, ($0.range.lowerBound + start)..<($0.range.upperBound + start), url: $0.url) }
            }
        }
        if !extra.isEmpty { text += (text.isEmpty ? "" : "\n") + extra.joined(separator: "\n") }
        guard !text.isEmpty || !images.isEmpty || attachment != nil else {
            context.warn(
                location(), "message \(m.id ?? "without id")", "has no text, attachment, sticker or embed that can be shown; skipped",
                skipped: true, file: file)
            return nil
        }
        var message = Message(
            sender: sender, direction: .incoming, date: date, text: text.isEmpty ? nil : text, images: images,
            attachment: attachment, spans: text.isEmpty ? [] : spans.sorted { $0.range.lowerBound < $1.range.lowerBound })
        if let edited = m.timestampEdited { message.edited = edited }
        for r in m.reactions {
            message.reactions.append(Reaction(emoji: r.emoji, count: max(r.count, r.users.count), senders: r.users))
        }
        return message
    }

    /// The file a DiscordChatExporter `url` names in the export (relative to the JSON file's
    /// folder, as written or percent-decoded), when it is there and inside; nil for a web address.
    static func localFile(_ url: String, in folder: String) -> String? {
        guard !url.contains("://") else { return nil }
        for candidate in [url, url.removingPercentEncoding].compactMap({ $0 }) {
            if let path = ExportTree.inside(folder, candidate), FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    static func kind(ofFileName name: String) -> MediaAttachment.Kind {
        let ext = PathText.fileExtension(name).lowercased()
        if ext == "gif" { return .gif }
        if TextCleanup.photoExtensions.contains(ext) { return .photo }
        if ["mp4", "mov", "webm", "m4v", "mkv"].contains(ext) { return .video }
        if name.lowercased() == "voice-message.ogg" { return .voice }
        if ["mp3", "ogg", "opus", "wav", "m4a", "flac", "aac"].contains(ext) { return .audio }
        return .document
    }
}

extension DiscordImporter: ExportReader {
    static let formats: [ImportFormat] = [.discord]
    static let holdsManyChats = true
    static let delivery = MessageTiming.atEnd

    /// DiscordChatExporter's JSON (`guild` first, then `channel`), or a folder of such files.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        if probe.isFolder { return probe.jsonHeads.contains(where: FormatDetector.isDiscord) ? .likely(.discord) : nil }
        return probe.first == UInt8(ascii: "{") && FormatDetector.isDiscord(probe.text) ? .certain(.discord) : nil
    }
}
