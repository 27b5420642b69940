import BubbleCore
import Foundation

/// Facebook Messenger and Instagram "Download your information" (JSON): the .zip, the folder it
/// was unpacked into, one thread's folder or one of its `message_N.json` files; and Messenger's
/// separate download of end-to-end encrypted chats (flat JSON files, one a thread).
///
/// A thread lives in `…/messages/<box>/<name>_<id>/message_1.json`, `message_2.json`, … (boxes:
/// `inbox`, `archived_threads`, `filtered_threads`, `message_requests`, `e2ee_cutover`; the
/// `messages` folder at the root in older downloads, under `your_activity_across_facebook/` or
/// `your_facebook_activity/` or `your_instagram_activity/` in newer ones). Each file lists its
/// messages newest first; the files are joined and the messages ordered by time. Every string is
/// mojibake (`MetaText.undoMojibake`). Each file is streamed (`JSONScanner`), one message at a
/// time, straight into the model; the thread is turned round and ordered by time once read.
enum MetaImporter {
    /// One conversation of the export: its files, newest first as Meta numbers them.
    struct Thread {
        /// The thread's folder relative to the export's root ("messages/inbox/annlee_1234"), or
        /// its file for the encrypted chats' flat download.
        var key: String
        /// Relative paths of its JSON files, in Meta's order (message_1.json first).
        var files: [String]
        /// Relative prefix of the export's root inside the tree ("" or "facebook-ann-2024/").
        var rootPrefix: String
    }

    /// Files only Instagram's download has (Facebook's has `profile_information`).
    static let instagramMarks = [
        "personal_information/personal_information.json",
        "personal_information/personal_information/personal_information.json"
    ]
    static let activityFolders: Set<String> = ["your_activity_across_facebook", "your_facebook_activity", "your_instagram_activity"]

    /// `message_12.json` → 12 (`message.json`, the oldest downloads' name, → 1); nil for others.
    static func fileNumber(_ name: String) -> Int? {
        if name == "message.json" { return 1 }
        guard name.hasPrefix("message_"), name.hasSuffix(".json") else { return nil }
        return Int(name.dropFirst("message_".count).dropLast(".json".count))
    }

    /// The threads among an export's files: every folder with `message_N.json` files (grouped,
    /// numbered order), else — the encrypted chats' download — every JSON file that reads as a
    /// thread (`looksLikeThread`).
    static func threads(in tree: ExportTree) -> [Thread] {
        var byFolder: [String: [(Int, String)]] = [:]
        for file in tree.files {
            let name = (file as NSString).lastPathComponent
            guard let n = fileNumber(name) else { continue }
            byFolder[(file as NSString).deletingLastPathComponent, default: []].append((n, file))
        }
        if !byFolder.isEmpty {
            return byFolder.keys.sorted().map { folder in
                Thread(key: folder, files: byFolder[folder]!.sorted { $0.0 < $1.0 }.map(\.1), rootPrefix: rootPrefix(of: folder))
            }
        }
        return tree.files.filter { $0.lowercased().hasSuffix(".json") && looksLikeThread(tree: tree, $0) }
            .map {
                Thread(
                    key: $0, files: [$0],
                    rootPrefix: ($0 as NSString).deletingLastPathComponent.isEmpty
                        ? ""
                        : ($0 as NSString).deletingLastPathComponent + "/")
            }
    }

    /// The export's root above a thread folder: the part of the path before its `messages`
    /// folder (and before `your_…_activity`, which the media paths include).
    static func rootPrefix(of folder: String) -> String {
        var parts = folder.split(separator: "/").map(String.init)
        guard let m = parts.lastIndex(of: "messages") else { return "" }
        parts.removeSubrange(m...)
        if let last = parts.last, activityFolders.contains(last) { parts.removeLast() }
        return parts.isEmpty ? "" : parts.joined(separator: "/") + "/"
    }

    /// Whether the JSON file at `relative` starts like a thread: `participants` and `messages`
    /// with a sender's name, in its first 64 KiB.
    static func looksLikeThread(tree: ExportTree, _ relative: String) -> Bool {
        guard case .folder(let root) = tree.storage,
            let head = try? FormatDetector.readHead((root as NSString).appendingPathComponent(relative), count: 64 << 10)
        else { return false }
        return looksLikeThread(String(decoding: head, as: UTF8.self))
    }

    /// By the messages' shape: a `messages` array whose messages have Meta's sender and time
    /// keys (`sender_name` and `timestamp_ms`; `senderName` and `timestamp` in the encrypted
    /// chats' download). `participants` and the title are optional: tools that write Meta's
    /// format (chat-miner's tests) leave them out. A key inside a message's text is escaped
    /// (`\"sender_name\"`), so the text cannot fake one.
    static func looksLikeThread(_ head: String) -> Bool {
        guard head.contains("\"messages\"") else { return false }
        let sender = head.contains("\"sender_name\"") || head.contains("\"senderName\"")
        let time = head.contains("\"timestamp_ms\"") || head.contains("\"timestamp\"")
        return (sender && time) || (head.contains("\"participants\"") && (sender || head.contains("\"timestamp_ms\"")))
    }

    // MARK: Loading

    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let (tree, threads) = try open(source, context: context)
        let app = source.format == .instagram ? "Instagram" : "Messenger"
        let owner = profileOwner(tree)
        var present: [String: Int] = [:]  // participant → threads they are in (for the owner)

        if context.everyChat {
            // Titles first (one small read a thread: the files' heads), so `chats` can pick.
            var headed: [(Thread, MetaThreadHeader)] = []
            for thread in threads {
                let header = try readHeader(thread, tree: tree)
                headed.append((thread, header))
                for p in Set(header.participants) { present[p, default: 0] += 1 }
            }
            let chosen = context.wanted(headed) { pair, name in matches(name, thread: pair.0, header: pair.1) }
            let everywhere = threads.count > 1 ? present.filter { $0.value == threads.count }.map(\.key) : []
            for (thread, header) in chosen {
                let result = try read(
                    thread, header: header, tree: tree, format: source.format, owner: owner,
                    everywhere: everywhere, app: app, context: context)
                try context.deliverConversation(result, key: header.title.map { "\($0) (\(thread.key))" } ?? thread.key, of: chosen.count)
            }
            return ImportResult(conversation: Conversation(), format: source.format)
        }

        var headers: [MetaThreadHeader] = []
        for thread in threads {
            let header = try readHeader(thread, tree: tree)
            headers.append(header)
            for p in Set(header.participants) { present[p, default: 0] += 1 }
        }
        let index: Int
        if let wanted = context.options.chat {
            let hits = threads.indices.filter { matches(wanted, thread: threads[$0], header: headers[$0]) }
            guard hits.count == 1 else {
                throw ImportError(
                    path: source.displayPath,
                    reason: (hits.isEmpty ? "has no thread \"\(wanted)\"" : "has \(hits.count) threads \"\(wanted)\"")
                        + "; its threads: " + listing(threads, headers))
            }
            index = hits[0]
        } else {
            guard threads.count == 1 else {
                throw ImportError(
                    path: source.displayPath,
                    reason: "holds \(threads.count) threads; choose one with --chat NAME "
                        + "(a title or a folder name), or --all for every one: " + listing(threads, headers))
            }
            index = 0
        }
        let everywhere = threads.count > 1 ? present.filter { $0.value == threads.count }.map(\.key) : []
        return try read(
            threads[index], header: headers[index], tree: tree, format: source.format, owner: owner,
            everywhere: everywhere, app: app, context: context)
    }

    private static func listing(_ threads: [Thread], _ headers: [MetaThreadHeader]) -> String {
        TextCleanup.list(
            zip(threads, headers).map { t, h in
                h.title.map { "\($0) (\((t.key as NSString).lastPathComponent))" } ?? t.key
            })
    }

    /// Whether `wanted` names the thread: its title, its folder's name, or its key.
    static func matches(_ wanted: String, thread: Thread, header: MetaThreadHeader) -> Bool {
        if let title = header.title, title.caseInsensitiveCompare(wanted) == .orderedSame { return true }
        let folder = (thread.key as NSString).lastPathComponent
        return folder.caseInsensitiveCompare(wanted) == .orderedSame || thread.key == wanted
            || (folder as NSString).deletingPathExtension.caseInsensitiveCompare(wanted) == .orderedSame
    }

    /// The tree and its threads for what was given: a zip or a folder (every thread in it), a
    /// thread's folder, or one JSON file (its thread: the `message_N.json` beside it too).
    static func open(_ source: ImportSource, context: ImportContext) throws(ImportError) -> (ExportTree, [Thread]) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isFolder) else {
            throw ImportError(path: source.displayPath, reason: "no such file or folder")
        }
        let expected = "a Facebook or Instagram \"Download your information\" zip (JSON) with messages/inbox/…/message_1.json inside"
        if isFolder.boolValue || FormatDetector.isZip(source.path) {
            let tree = try ExportTree(path: source.path, displayPath: source.displayPath, limits: context.options.limits, expected: expected)
            let found = threads(in: tree)
            guard !found.isEmpty else {
                throw ImportError(
                    path: source.displayPath,
                    reason: "has no Messenger or Instagram thread; expected \(expected), "
                        + "or the flat JSON files of Messenger's encrypted chats download")
            }
            return (tree, found)
        }
        // One file: the export's root is above its `messages` folder (media paths start there).
        let file = URL(fileURLWithPath: source.path).standardizedFileURL.path
        let folder = (file as NSString).deletingLastPathComponent
        let name = (file as NSString).lastPathComponent
        var parts = folder.split(separator: "/").map(String.init)
        var root = folder
        if fileNumber(name) != nil, let m = parts.lastIndex(of: "messages") {
            parts.removeSubrange(m...)
            if let last = parts.last, activityFolders.contains(last) { parts.removeLast() }
            root = "/" + parts.joined(separator: "/")
        }
        let tree = try ExportTree(
            path: root, displayPath: root == folder ? (source.displayPath as NSString).deletingLastPathComponent : root,
            limits: context.options.limits, expected: expected, listing: false)
        let relativeFolder = folder == root ? "" : String(folder.dropFirst(root.count + (root.hasSuffix("/") ? 0 : 1)))
        func relative(_ n: String) -> String { relativeFolder.isEmpty ? n : relativeFolder + "/" + n }
        if fileNumber(name) != nil {
            let siblings = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [name])
                .compactMap { n in fileNumber(n).map { ($0, n) } }.sorted { $0.0 < $1.0 }.map { relative($0.1) }
            return (tree, [Thread(key: relativeFolder.isEmpty ? name : relativeFolder, files: siblings, rootPrefix: "")])
        }
        return (tree, [Thread(key: relative(name), files: [relative(name)], rootPrefix: "")])
    }

    /// The person who downloaded the export, when it says: Facebook's `profile_information.json`
    /// (`profile_v2.name.full_name`, older `profile.name.full_name`), Instagram's
    /// `personal_information.json` (`profile_user[0].string_map_data.Name.value`).
    static func profileOwner(_ tree: ExportTree) -> String? {
        let names = ["profile_information.json", "personal_information.json"]
        var candidates = tree.files.filter { names.contains(($0 as NSString).lastPathComponent) }
        if tree.files.isEmpty {
            candidates = [
                "profile_information/profile_information.json", "personal_information/profile_information/profile_information.json",
                "personal_information/personal_information/personal_information.json",
                "personal_information/personal_information.json"
            ]
        }
        for relative in candidates {
            guard let local = try? tree.localFile(relative) else { continue }
            defer { tree.done(with: local) }
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: local),
                (attributes[.size] as? Int ?? 0) < 16 << 20,
                let data = FileManager.default.contents(atPath: local),
                let json = try? JSONSerialization.jsonObject(with: data)
            else { continue }
            if let name = ownerName(in: json) { return MetaText.undoMojibake(name) }
        }
        return nil
    }

    private static func ownerName(in json: Any) -> String? {
        guard let object = json as? [String: Any] else { return nil }
        for key in ["profile_v2", "profile"] {
            if let profile = object[key] as? [String: Any], let name = profile["name"] as? [String: Any],
                let full = name["full_name"] as? String, !full.isEmpty
            {
                return full
            }
        }
        if let users = object["profile_user"] as? [[String: Any]], let map = users.first?["string_map_data"] as? [String: Any] {
            for key in ["Name", "Username"] {
                if let field = map[key] as? [String: Any], let value = field["value"] as? String, !value.isEmpty { return value }
            }
        }
        return nil
    }

    // MARK: A thread

    /// A thread's title and participants, from its first file (read up to its `messages`
    /// only when they come first, as Meta writes them; else the whole file is walked).
    static func readHeader(_ thread: Thread, tree: ExportTree) throws(ImportError) -> MetaThreadHeader {
        guard let first = thread.files.first else { return MetaThreadHeader() }
        let local = try tree.localFile(first)
        defer { tree.done(with: local) }
        var header = MetaThreadHeader()
        try JSONScanner.reading(
            path: local, displayPath: tree.displayName(first), writer: "Meta's download",
            element: "one message of a Messenger or Instagram thread", export: "a Messenger or Instagram download"
        ) { scanner in
            try scanner.object { key in
                switch key {
                case "participants":
                    header.participants = try scanner.readElement(limit: 16 << 20) { (d: inout JSONElementReader) throws(JSONElementReader.Failure) in
                        try d.metaParticipants()
                    }.map(MetaText.undoMojibake)
                case "title", "threadName":
                    header.title = try scanner.readElement(limit: 1 << 20) { (d: inout JSONElementReader) throws(JSONElementReader.Failure) in
                        try d.optionalString()
                    }.map(MetaText.undoMojibake)
                default: try scanner.skipValue()
                }
            }
        }
        if header.title?.isEmpty == true { header.title = nil }
        return header
    }

    static func read(
        _ thread: Thread, header: MetaThreadHeader, tree: ExportTree, format: ImportFormat, owner: String?,
        everywhere: [String], app: String, context: ImportContext
    ) throws(ImportError) -> ImportResult {
        var builder = ConversationBuilder()
        builder.title = header.title
        for p in header.participants { builder.participant(id: p, name: p) }
        var authors: [String] = []
        var seen = Set<String>()
        // Reactions Instagram wrote as messages, waiting for the message they answer: read newest
        // first, that is the next one read (an older one) by someone else.
        var pending: [(emoji: String, reactor: String)] = []
        var senders: [String: String] = [:]  // as written → as shown
        var reactionsByText = 0
        let limit = context.options.limits.maxJSONValueBytes
        for relative in thread.files {
            let local = try tree.localFile(relative)
            defer { tree.done(with: local) }
            let file = tree.displayName(relative)
            try JSONScanner.reading(
                path: local, displayPath: file, writer: "Meta's download",
                element: "one message of a Messenger or Instagram thread", export: "a Messenger or Instagram download"
            ) { scanner in
                var sawMessages = false
                try scanner.object { key in
                    guard key == "messages" else { try scanner.skipValue(); return }
                    sawMessages = true
                    try scanner.elements(
                        limit: limit,
                        read: { (d: inout JSONElementReader) throws(JSONElementReader.Failure) in
                            try d.metaMessage()
                        }
                    ) { i, m in
                        let location = "messages[\(i)]"
                        guard let ms = m.timestampMS, ms.isFinite, abs(ms) < 1e15 else {
                            context.warn(location + ".timestamp_ms", "message", "has no readable time; skipped", skipped: true, file: file)
                            return
                        }
                        let date = Date(timeIntervalSince1970: ms / 1000)
                        let sender = m.sender.map { raw in
                            if let known = senders[raw] { return known }
                            let name = TextCleanup.cleanName(MetaText.undoMojibake(raw))
                            senders[raw] = name
                            return name
                        }
                        if let sender, !sender.isEmpty, seen.insert(sender).inserted {
                            authors.append(sender)
                            builder.participant(id: sender, name: sender)
                        }
                        let content = m.content.map(MetaText.undoMojibake)
                        // (Instagram's phrasings; Messenger keeps reactions in `reactions`, so only a text
                        // that is exactly such a phrase, with no media, counts.)
                        if m.type == nil || m.type == "Generic", let sender, let content, m.photos.isEmpty, m.media.isEmpty,
                            m.shareLink == nil, m.sticker == nil, let emoji = MetaText.reaction(in: content, sender: sender)
                        {
                            reactionsByText += 1
                            pending.append((emoji, sender))
                            return
                        }
                        guard
                            var message = convert(
                                m, content: content, sender: sender, date: date, thread: thread, tree: tree,
                                location: location, file: file, context: context)
                        else { return }
                        if !pending.isEmpty, message.kind == .message, let sender {
                            for p in pending.reversed() where p.reactor != sender { message.reactions.apply(emoji: p.emoji, sender: p.reactor, remove: false) }
                            pending.removeAll { $0.reactor != sender }
                        }
                        builder.append(message, context: context)
                    }
                }
                guard sawMessages else {
                    throw ImportError(path: file, location: "(top level)", reason: "has no \"messages\"; expected a Messenger or Instagram thread file")
                }
            }
        }
        if reactionsByText > 0 {
            context.note(
                "\(TextCleanup.count(reactionsByText, "reaction")) written as messages (\"Reacted ❤️ to your message\") "
                    + "shown on the message before them by someone else"
                    + (pending.isEmpty ? "" : "; \(pending.count) had none and were left out"))
            if !pending.isEmpty { context.countSkipped(pending.count) }
        }
        // Read newest first: turned round, then ordered by time (equal times keep that order).
        builder.reverseMessages()
        // The profile in the download; else the one participant present in every thread; else,
        // in a two-person thread named after one of them, the other.
        let people = header.participants + authors.filter { !header.participants.contains($0) }
        let owners = OwnerInference(
            authors: people.map { OwnerInference.Author(id: $0, names: [$0]) }, noun: "person", nouns: "people",
            unsaid: "no `me` given and the download does not say whose it is")
        let me = owners.resolve(
            me: context.options.me,
            clues: [
                .profile(id: nil, name: owner, how: "who downloaded this \(app) data (its profile)"),
                .everywhere(everywhere, how: "the one person in every thread of the download"),
                .namedAfter(header.title, how: "whom the thread is named after")
            ], context: context, file: thread.key)
        if let me { builder.updateMessages { if $0.sender == me { $0.direction = .outgoing } } }
        if builder.title == nil {
            let others = header.participants.filter { $0 != me }
            builder.title = others.isEmpty ? nil : others.joined(separator: ", ")
        }
        return try builder.finish(format: format, me: me, sortByDate: true, keep: me)
    }

    /// One message as BubbleKit shows it, or nil (skipped with a warning).
    private static func convert(
        _ m: MetaMessage, content: String?, sender: String?, date: Date, thread: Thread, tree: ExportTree,
        location: String, file: String, context: ImportContext
    ) -> Message? {
        let who = sender ?? "Someone"
        switch m.type {
        case "Call":
            let line = m.callDuration.map { $0 > 0 ? TextCleanup.callLine(seconds: $0) : "Missed call" } ?? content ?? "Call"
            return Message.system(line, date: date)
        case "Subscribe":
            return Message.system(content ?? (who + " added " + m.users.map(MetaText.undoMojibake).joined(separator: ", ")), date: date)
        case "Unsubscribe":
            return Message.system(
                content
                    ?? (m.users.isEmpty
                        ? who + " left the group"
                        : who + " removed " + m.users.map(MetaText.undoMojibake).joined(separator: ", ")),
                date: date)
        default: break
        }
        if m.isUnsent {
            return Message(sender: sender, direction: .incoming, date: date, attachment: MediaAttachment(kind: .deleted))
        }
        var images: [ImageAttachment] = []
        var attachment: MediaAttachment?
        func resolve(_ media: MetaMessage.Media, what: String) -> String? {
            // `uri` starts at the export's root; the flat download's may start beside its file.
            let uri = MetaText.undoMojibake(media.uri)
            var candidates = [thread.rootPrefix + uri]
            if !thread.rootPrefix.isEmpty { candidates.append(uri) }
            let parts = thread.key.split(separator: "/")
            if let k = parts.firstIndex(where: { activityFolders.contains(String($0)) }), !uri.hasPrefix(String(parts[k])) {
                candidates.append(parts[...k].joined(separator: "/") + "/" + uri)
            }
            let chosen = candidates.first(where: tree.contains) ?? candidates[0]
            return tree.media(chosen, what: what, location: location, file: file, context: context)
        }
        func attach(_ list: [MetaMessage.Media], kind: MediaAttachment.Kind, what: String) {
            for media in list {
                let name = (MetaText.undoMojibake(media.uri) as NSString).lastPathComponent
                let path = resolve(media, what: what)
                if kind == .photo, let path, TextCleanup.photoExtension(ofFileName: name) != nil || name.lowercased().hasSuffix(".jpg") {
                    images.append(ImageAttachment(path: path, width: 0, height: 0, name: name))
                } else if attachment == nil {
                    attachment = MediaAttachment.described(kind: kind, fileName: name, path: path)
                } else {
                    context.warn(location, "\(what) \(name)", "is one more attachment of a message that has one; left out", file: file)
                }
            }
        }
        attach(m.photos, kind: .photo, what: "photo")
        attach(m.gifs, kind: .gif, what: "GIF")
        attach(m.videos, kind: .video, what: "video")
        attach(m.audio, kind: .voice, what: "audio")
        attach(m.files, kind: .document, what: "file")
        for media in m.media {
            let ext = PathText.fileExtension(media.uri).lowercased()
            let kind: MediaAttachment.Kind =
                TextCleanup.photoExtensions.contains(ext)
                ? (ext == "gif" ? .gif : .photo)
                : ["mp4", "mov", "webm", "m4v"].contains(ext) ? .video : ["aac", "m4a", "mp3", "ogg", "opus", "wav"].contains(ext) ? .voice : .document
            attach([media], kind: kind, what: kind == .photo ? "photo" : kind.rawValue)
        }
        if let sticker = m.sticker {
            let name = (MetaText.undoMojibake(sticker.uri) as NSString).lastPathComponent
            let path = resolve(sticker, what: "sticker")
            if let path, TextCleanup.photoExtension(ofFileName: name) != nil {
                images.append(ImageAttachment(path: path, width: 0, height: 0, name: name, sticker: true))
            } else if attachment == nil {
                attachment = MediaAttachment.described(kind: .sticker, fileName: name, path: path)
            }
        }
        var text = content
        if let t = text, !images.isEmpty || attachment != nil, MetaText.isMediaCaption(t) { text = nil }
        var spans: [TextSpan] = []
        if let link = m.shareLink.map(MetaText.undoMojibake), !link.isEmpty {
            var body = text ?? ""
            if !body.contains(link) {
                if let shared = m.shareText.map(MetaText.undoMojibake), !shared.isEmpty, !body.contains(shared) {
                    body += (body.isEmpty ? "" : "\n") + shared
                }
                body += (body.isEmpty ? "" : "\n")
                spans.append(TextSpan(.link, body.utf8.count..<(body.utf8.count + link.utf8.count), url: link))
                body += link
            }
            text = body
        }
        if text?.isEmpty == true { text = nil }
        guard text != nil || !images.isEmpty || attachment != nil else {
            context.warn(location, "message", "has no text or media that can be shown; skipped", skipped: true, file: file)
            return nil
        }
        var message = Message(sender: sender, direction: .incoming, date: date, text: text, images: images, attachment: attachment, spans: spans)
        for r in m.reactions {
            message.reactions.apply(emoji: MetaText.undoMojibake(r.reaction), sender: TextCleanup.cleanName(MetaText.undoMojibake(r.actor)), remove: false)
        }
        return message
    }
}

extension MetaImporter: ExportReader {
    static let formats: [ImportFormat] = [.messenger, .instagram]
    static let holdsManyChats = true
    static let delivery = MessageTiming.atEnd

    /// A Meta download — zipped or unpacked, with `messages/…/message_1.json` files — or one
    /// thread's JSON; Instagram's by its activity folder, its `personal_information`, or its name.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        let path = probe.path
        if probe.isFolder {
            let folders = [
                "messages", "your_activity_across_facebook/messages", "your_facebook_activity/messages",
                "your_instagram_activity/messages"
            ].filter { probe.file($0) != nil }
            if !folders.isEmpty || probe.names.contains(where: { fileNumber($0) != nil }) {
                let marks = folders + instagramMarks.filter { probe.file($0) != nil }
                return .certain(FormatDetector.isInstagram(path, files: marks) ? .instagram : .messenger)
            }
            // Messenger's flat download of encrypted chats: thread files alone.
            return probe.jsonHeads.contains(where: looksLikeThread) ? .likely(.messenger) : nil
        }
        if let files = probe.zipFiles,
            files.contains(where: { fileNumber(($0 as NSString).lastPathComponent) != nil && $0.contains("messages/") })
        {
            return .certain(FormatDetector.isInstagram(path, files: files) ? .instagram : .messenger)
        }
        guard probe.first == UInt8(ascii: "{"), looksLikeThread(probe.text) else { return nil }
        return .certain(FormatDetector.isInstagram(path, files: []) ? .instagram : .messenger)
    }
}
