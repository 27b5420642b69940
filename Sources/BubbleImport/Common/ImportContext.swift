import BubbleCore
import BubbleMedia
import Foundation

/// What every importer shares while it reads one export: the options, the warnings so far, the
/// skipped count, and the attachments folder (made on first use).
final class ImportContext {
    let path: String
    /// The options (an importer that reads others' files — an iPhone backup — adds to them).
    var options: ImportOptions
    private(set) var skipped = 0
    private var warnings: [ImportWarning] = []
    private var unlistedWarnings = 0
    private(set) var createdAttachmentsFolder: String?
    /// Set by `Importer.load(…, messages:)`: each kept message goes there instead of into the
    /// model, as it is read. The first error it throws stops the deliveries and ends the import.
    var sink: ((Message) throws -> Void)?
    /// A streamed reply carries its original's id (`Importer.load(…, provisional: true)`: the
    /// consumer quotes it with `StreamedFixup`); otherwise a streamed reply is not marked.
    var streamsReplyIDs = false
    private(set) var sinkError: (any Error)?

    /// Hands `message` to the sink; false once the sink has failed.
    @discardableResult
    func deliver(_ message: Message) -> Bool {
        guard sinkError == nil, let sink else { return false }
        do { try sink(message) } catch { sinkError = error }
        return sinkError == nil
    }

    init(path: String, options: ImportOptions) {
        self.path = path
        self.options = options
    }

    /// Set by `Importer.loadEach`: the importer reads every conversation (the ones `chats`
    /// names, when it is not empty) and hands each, finished, to `each`, one at a time.
    var each: ((ImportResult) throws -> Void)?
    var everyChat: Bool { each != nil }
    /// With `everyChat`: the chats to keep (names or ids as `chat` takes them); empty keeps all.
    var chats: [String] = []
    /// Conversations handed to `each`, and the chats that matched nothing.
    private(set) var delivered: [ChatSummary] = []
    var unmatched: [String] = []

    /// Hands a finished conversation to `each` (with this context's warnings so far).
    func deliverConversation(_ result: ImportResult, key: String, of total: Int, owner: Int = -1,
                             identity: String? = nil) throws(ImportError) {
        var r = result
        r.chatIdentity = identity
        // Missing media are counted per conversation.
        finish(&r, owner: owner)
        r.chatNumber = delivered.count + 1
        r.chatCount = max(total, r.chatNumber)
        r.chatKey = key
        delivered.append(ChatSummary(key: key, title: r.conversation.title ?? key, messageCount: r.conversation.messages.count))
        do { try each?(r) } catch let error as ImportError { throw error } catch {
            throw ImportError(path: path, reason: "stopped: \(key) could not be passed on: \(error)")
        }
    }

    /// With `everyChat`: the chats of `all` that `chats` names (all of them when it names none);
    /// the names that matched none go to `unmatched`.
    func wanted<Chat>(_ all: [Chat], matches: (Chat, String) -> Bool) -> [Chat] {
        var matched = Set<String>()
        let kept = all.filter { chat in
            let hits = chats.filter { matches(chat, $0) }
            matched.formUnion(hits)
            return chats.isEmpty || !hits.isEmpty
        }
        unmatched = chats.filter { !matched.contains($0) }
        return kept
    }

    /// Whether a chat is wanted with `everyChat` (`chats` empty, or one of them matches).
    func wants(_ matches: (String) -> Bool) -> Bool { chats.isEmpty || chats.contains(where: matches) }

    /// Where builders spool their messages with `everyChat` (made on first use, removed by `Importer.loadEach`).
    private(set) var spoolFolder: String?
    func makeSpool() throws(ImportError) -> MessageSpool {
        if spoolFolder == nil {
            let folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-spool-" + UUID().uuidString)
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw ImportError(path: folder, reason: "cannot create a folder for the conversations being read: \(error.localizedDescription)")
            }
            spoolFolder = folder
        }
        return try MessageSpool(path: (spoolFolder! as NSString).appendingPathComponent(UUID().uuidString))
    }

    /// Records what was skipped or changed; `skipped: true` also counts it in `ImportResult.skipped`;
    /// `media: true` marks a picture or file the export names but does not hold (`missingMedia`).
    func warn(_ location: String?, _ what: String, _ why: String, skipped: Bool = false, file: String? = nil, media: Bool = false) {
        if skipped { self.skipped += 1 }
        let warning = ImportWarning(path: file ?? path, location: location, what: what, why: why)
        if media {
            missing[mediaOwner, default: (0, nil)].count += 1
            if missing[mediaOwner]?.first == nil { missing[mediaOwner]?.first = warning }
        }
        if warnings.count < options.limits.maxWarnings {
            warnings.append(warning)
        } else {
            unlistedWarnings += 1
        }
    }

    /// Warns that no message of the conversation being read is outgoing because its owner is not
    /// known (`me` not given and not inferable, or naming nobody here); the conversation's result
    /// says so in `unknownOwner`.
    func warnUnknownOwner(_ what: String, _ why: String, file: String? = nil) {
        warn(nil, what, why, file: file)
        unknownOwner = "\(what): \(why)"
    }
    private var unknownOwner: String?

    /// Missing media by the conversation they belong to: an importer that reads several at once
    /// (an SMS backup's messages are interleaved) says whose message it reads (`mediaOwner`);
    /// the others read one conversation after another and leave it at -1.
    var mediaOwner = -1
    private var missing: [Int: (count: Int, first: ImportWarning?)] = [:]

    /// What the import gathered besides the messages, into `result`: with `owner`, that
    /// conversation's missing media (and those of no owner), which are then forgotten.
    func finish(_ result: inout ImportResult, owner: Int? = nil) {
        if let contacts = options.contacts {
            for note in contacts.name(&result.conversation, app: result.format.rawValue, me: result.me) { self.note(note) }
        }
        result.warnings = finishedWarnings()
        result.notes = notes
        result.unknownOwner = unknownOwner
        unknownOwner = nil
        result.skipped = skipped
        result.attachmentsFolder = createdAttachmentsFolder
        // Contact pictures written into the attachments folder: it goes with the result too
        // (a converter copies what is in it before it is removed).
        if result.attachmentsFolder == nil, let folder = options.attachmentsFolder,
           result.conversation.participants.contains(where: { $0.avatar?.hasPrefix(folder + "/") == true }) {
            result.attachmentsFolder = folder
        }
        let owners = owner.map { Array(Set([$0, -1])) } ?? Array(missing.keys)
        let taken = owners.compactMap { missing.removeValue(forKey: $0) }
        result.missingMedia = taken.reduce(0) { $0 + $1.count }
        result.firstMissingMedia = taken.compactMap(\.first).first
    }

    /// What the importer inferred that the export did not say outright ("me: Ben, …").
    private(set) var notes: [String] = []
    func note(_ text: String) { notes.append(text) }

    /// Counts a skipped item whose warning is given once for all of them (e.g. tapbacks).
    func countSkipped(_ n: Int = 1) { skipped += n }

    func finishedWarnings() -> [ImportWarning] {
        guard unlistedWarnings > 0 else { return warnings }
        return warnings + [ImportWarning(path: path, location: nil, what: "\(unlistedWarnings) more warnings",
                                         why: "not listed (limit \(options.limits.maxWarnings))")]
    }

    /// The folder photos are written to: `options.attachmentsFolder`, or a fresh temporary one.
    func attachmentsFolder() throws(ImportError) -> String {
        if let created = createdAttachmentsFolder { return created }
        guard let given = options.attachmentsFolder else {
            // A private folder of this process's (swept by the next import if this one is killed).
            let made = try ScratchSpace.makeFolder("import")
            createdAttachmentsFolder = made
            return made
        }
        let folder = URL(fileURLWithPath: given).standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ImportError(path: folder, reason: "cannot create the attachments folder: \(error.localizedDescription)")
        }
        createdAttachmentsFolder = folder
        return folder
    }

    /// A file name in the attachments folder that this import has not used yet: `stem.ext`,
    /// else `stem-2.ext`, `stem-3.ext`… (re-running an import overwrites its own earlier files).
    private var usedNames = Set<String>()
    func uniqueAttachmentName(stem: String, ext: String) -> String {
        var name = stem + (ext.isEmpty ? "" : "." + ext)
        var n = 2
        while !usedNames.insert(name).inserted {
            name = "\(stem)-\(n)" + (ext.isEmpty ? "" : "." + ext)
            n += 1
        }
        return name
    }

    /// Keeps `since ≤ date < until`.
    func isWanted(_ date: Date) -> Bool {
        if let since = options.since, date < since { return false }
        if let until = options.until, date >= until { return false }
        return true
    }
}

/// Collects messages as an importer reads them and turns them into a `Conversation` (replies
/// resolved to `ReplyReference`s with the original's author and a snippet). Messages outside `since`/`until` are dropped as they arrive (not kept, then filtered),
/// so memory holds only what ends up in the model.
struct ConversationBuilder {
    var title: String?
    private var participants: [Participant] = []
    private var participantIndex: [String: Int] = [:]
    private(set) var messages: [Message] = []
    /// With a spool, appended messages go to disk (one conversation of many being read at once);
    /// `finish` reads them back.
    var spool: MessageSpool?
    /// Source message id (Telegram `id`) → index in `messages`.
    /// Each message's source id (`Int64.min` for none), 8 bytes a message: looked up by binary
    /// search while the ids ascend, as exports write them; a dictionary is made only for an export
    /// whose ids do not (a dictionary for every message grew the import's memory with the file).
    private var sourceIDs = SourceIDColumn()
    private var idsAscend = true
    private var lookup: [Int64: Int]?

    private mutating func index(ofSourceID id: Int64) -> Int? {
        if idsAscend {
            var lo = 0, hi = sourceIDs.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if sourceIDs[mid] < id { lo = mid + 1 } else { hi = mid }
            }
            return lo < sourceIDs.count && sourceIDs[lo] == id ? lo : nil
        }
        if lookup == nil {
            var map: [Int64: Int] = [:]
            for (i, s) in sourceIDs.enumerated() where s != .min { map[s] = i }
            lookup = map
        }
        return lookup![id]
    }
    /// Index in `messages` → source id it replies to.
    private var replyTo: [Int: Int64] = [:]
    private(set) var excluded = 0
    /// Messages handed to the context's sink (streamed, not kept), and their authors.
    private(set) var streamed = 0
    private var streamedSenders = Set<String>()

    /// Adds `id` if new; a later, better name (not just the id again) replaces the first one.
    mutating func participant(id: String, name: String) {
        if let i = participantIndex[id] {
            if participants[i].name == id && name != id { participants[i].name = name }
            return
        }
        participantIndex[id] = participants.count
        participants.append(Participant(id: id, name: name))
    }

    func participantName(_ id: String) -> String? { participantIndex[id].map { participants[$0].name } }

    /// Takes a whole message array at once (already filtered by `since`/`until`, `excluded` of them
    /// left out), without copying it.
    mutating func adopt(_ messages: consuming [Message], excluded: Int) {
        precondition(self.messages.isEmpty, "adopt replaces the messages; nothing may be appended before")
        self.messages = messages
        self.excluded += excluded
    }

    /// Changes the messages kept so far in place (e.g. directions, once who is "me" is known).
    mutating func updateMessages(_ body: (inout Message) -> Void) {
        for i in messages.indices { body(&messages[i]) }
    }


    /// Turns the kept messages round (an export that lists them newest first). Only for messages
    /// without source ids (nothing looks them up by position yet).
    mutating func reverseMessages() {
        precondition(sourceIDs.isEmpty && replyTo.isEmpty && spool == nil, "reverseMessages: messages with source ids or a spool")
        messages.reverse()
    }

    /// Counts a message left out by `since`/`until` that an importer dropped before `append`.
    mutating func countExcluded() { excluded += 1 }

    /// Appends `message` unless it falls outside `since`/`until`; returns whether it was kept.
    @discardableResult
    mutating func append(_ message: Message, context: ImportContext, sourceID: Int64? = nil,
                         replyTo target: Int64? = nil) -> Bool {
        guard context.isWanted(message.date) else {
            excluded += 1
            return false
        }
        var message = message
        if let sourceID, message.id == nil { message.id = String(sourceID) }
        if let spool {
            // One of many conversations read at once: kept on disk until `finish`.
            spool.append(message, sourceID: sourceID, replyTo: target)
            return true
        }
        if context.sink != nil {
            // Streaming: the message leaves now; only its author is remembered. A reply carries
            // its original's id; `StreamedFixup` quotes the original once it has seen it.
            if context.streamsReplyIDs, let target, message.reply == nil { message.reply = ReplyReference(id: String(target)) }
            if let sender = message.sender { streamedSenders.insert(sender) }
            streamed += 1
            context.deliver(message)
            return true
        }
        appendKept(message, sourceID: sourceID, replyTo: target)
        return true
    }

    /// Keeps a wanted message in `messages`, with its source id and reply target.
    private mutating func appendKept(_ message: Message, sourceID: Int64?, replyTo target: Int64?) {
        let index = messages.count
        messages.append(message)
        // Only formats with source ids (Telegram, iMessage) keep them: one Int64 a message.
        if sourceID != nil || !sourceIDs.isEmpty {
            if sourceIDs.isEmpty { sourceIDs.appendNone(count: index) }
            let id = sourceID ?? .min
            // Ascending: each id above the one before (messages without one only before the first).
            if idsAscend, let last = sourceIDs.last, !(id > last || (id == .min && last == .min)) { idsAscend = false }
            sourceIDs.append(id)
        }
        if lookup != nil, let sourceID { lookup![sourceID] = index }
        if let target {
            // An original already read (the usual case: exports list replies after what they
            // answer) is resolved now; only replies to later or missing messages wait for `finish`.
            if let to = self.index(ofSourceID: target), to < index {
                messages[index].reply = Self.reference(to: target, original: messages[to])
            } else {
                replyTo[index] = target
            }
        }
    }

    /// A reply's reference: the original's id, and its author and a snippet when it was read.
    static func reference(to target: Int64, original: Message?) -> ReplyReference {
        var ref = ReplyReference(id: String(target))
        if let original {
            ref.sender = original.sender
            ref.text = snippet(original)
        }
        return ref
    }

    /// The first 100 characters of a message's text (spoilers masked), or "Photo".
    static func snippet(_ m: Message) -> String? {
        m.quotedText ?? (m.images.isEmpty ? nil : "Photo")
    }

    /// The conversation. `sortByDate` orders messages by date, keeping file order for equal dates
    /// (SMS backups list all `sms` before all `mms`). Participants without a message are dropped,
    /// except `keep` (the owner).
    mutating func finish(format: ImportFormat, me: String?, sortByDate: Bool, keep: String? = nil) throws(ImportError) -> ImportResult {
        if let spool {
            // Back from disk; replies within the conversation resolved as when they are read.
            self.spool = nil
            for s in try spool.readAll() { appendKept(s.message, sourceID: s.sourceID, replyTo: s.replyTo) }
        }
        // Sorted in place (a permutation applied by swaps), so memory never holds two copies of the
        // messages; index maps only when something moves.
        var map: [Int]? = nil
        if sortByDate, messages.indices.dropFirst().contains(where: { messages[$0 - 1].date > messages[$0].date }) {
            var order = Array(messages.indices)
            order.sort { a, b in
                let (da, db) = (messages[a].date, messages[b].date)
                return da != db ? da < db : a < b
            }
            var target = [Int](repeating: 0, count: messages.count)
            for (new, old) in order.enumerated() { target[old] = new }
            order = []
            map = target
            for i in target.indices {
                while target[i] != i {
                    let j = target[i]
                    messages.swapAt(i, j)
                    target.swapAt(i, j)
                }
            }
        }
        let newIndex: (Int) -> Int = { i in map.map { $0[i] } ?? i }

        // Replies: the original's id, author and a snippet (a photo without text: "Photo").
        // An original outside the export (or outside since/until) keeps only its id.
        for (from, target) in replyTo {
            messages[newIndex(from)].reply = Self.reference(to: target, original: index(ofSourceID: target).map { messages[newIndex($0)] })
        }

        var used = streamedSenders
        for m in messages { if let s = m.sender { used.insert(s) } }
        if let keep { used.insert(keep) }
        let people = participants.filter { used.contains($0.id) }
        return ImportResult(conversation: Conversation(title: title, participants: people, messages: messages),
                            format: format, me: me, theme: nil, warnings: [], skipped: 0, excluded: excluded,
                            attachmentsFolder: nil)
    }
}

/// One conversation's messages on disk while a whole export is read (`Importer.loadEach`):
/// records written through a buffer, read back once and removed. A record holds the common
/// fields in binary (date, sender, side, kind, text, status, id, wall time, source ids) and the
/// rare ones (photos, attachment, reactions, reply) as JSON only when the message has them.
final class MessageSpool {
    let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private(set) var count = 0
    private var failure: String?
    private let encoder = JSONEncoder()

    init(path: String) throws(ImportError) {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            throw ImportError(path: path, reason: "cannot be created (a conversation being read is kept there)")
        }
        handle = h
        buffer.reserveCapacity(256 << 10)
    }

    deinit {
        try? handle.close()
        unlink(path)
    }

    /// The fields no binary slot holds.
    private struct Rare: Codable {
        var images: [ImageAttachment]?
        var attachment: MediaAttachment?
        var reactions: [Reaction]?
        var reply: ReplyReference?
        var edited: Date?
        var spans: [TextSpan]?
        var forwardedFrom: String?
        var app: String?
    }

    private static let statuses: [MessageStatus] = [.sending, .sent, .delivered, .read, .failed]

    private func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { buffer.append(contentsOf: $0) } }
    private func put(_ s: String) {
        var s = s
        s.withUTF8 { put(UInt32($0.count)); buffer.append(contentsOf: $0) }
    }

    func append(_ m: Message, sourceID: Int64?, replyTo: Int64?) {
        guard failure == nil else { return }
        var flags: UInt16 = 0
        if m.sender != nil { flags |= 1 }
        if m.direction == .outgoing { flags |= 2 }
        if m.kind == .system { flags |= 4 }
        if m.text != nil { flags |= 8 }
        if m.status != nil { flags |= 16 }
        if m.statusDate != nil { flags |= 32 }
        if m.id != nil { flags |= 64 }
        if m.wallTime != nil { flags |= 128 }
        if sourceID != nil { flags |= 256 }
        if replyTo != nil { flags |= 512 }
        let rare = Rare(images: m.images.isEmpty ? nil : m.images, attachment: m.attachment,
                        reactions: m.reactions.isEmpty ? nil : m.reactions, reply: m.reply, edited: m.edited,
                        spans: m.spans.isEmpty ? nil : m.spans, forwardedFrom: m.forwardedFrom, app: m.app)
        let hasRare = rare.images != nil || rare.attachment != nil || rare.reactions != nil || rare.reply != nil
            || rare.edited != nil || rare.spans != nil || rare.forwardedFrom != nil || rare.app != nil
        if hasRare { flags |= 1024 }
        put(flags)
        put(m.date.timeIntervalSince1970.bitPattern)
        if let v = m.sender { put(v) }
        if let v = m.text { put(v) }
        if let v = m.status { put(UInt8(Self.statuses.firstIndex(of: v)!)) }
        if let v = m.statusDate { put(v.timeIntervalSince1970.bitPattern) }
        if let v = m.id { put(v) }
        if let v = m.wallTime { put(Int64(v.localSeconds)) }
        if let v = sourceID { put(v) }
        if let v = replyTo { put(v) }
        if hasRare {
            do {
                let json = try encoder.encode(rare)
                put(UInt32(json.count))
                buffer.append(contentsOf: json)
            } catch {
                failure = "\(error)"
            }
        }
        count += 1
        if buffer.count >= 256 << 10 {
            do { try flush() } catch { failure = "\(error)" }
        }
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func readAll() throws(ImportError) -> [SpooledMessage] {
        do {
            try flush()
            try handle.close()
        } catch {
            failure = failure ?? "\(error)"
        }
        if let failure { throw ImportError(path: path, reason: "cannot keep a conversation being read: \(failure)") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ImportError(path: path, reason: "cannot be read back")
        }
        unlink(path)
        let decoder = JSONDecoder()
        let utc = TimeZone(secondsFromGMT: 0)!
        var out: [SpooledMessage] = []
        out.reserveCapacity(count)
        let parsed: Bool = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            var at = 0
            func take<T: FixedWidthInteger>(_: T.Type) -> T? {
                guard at + MemoryLayout<T>.size <= raw.count else { return nil }
                var v: T = 0
                withUnsafeMutableBytes(of: &v) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[at..<(at + MemoryLayout<T>.size)])) }
                at += MemoryLayout<T>.size
                return T(littleEndian: v)
            }
            func string() -> String? {
                guard let n = take(UInt32.self), at + Int(n) <= raw.count else { return nil }
                defer { at += Int(n) }
                return String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<(at + Int(n))]), as: UTF8.self)
            }
            while at < raw.count {
                guard let flags = take(UInt16.self), let bits = take(UInt64.self) else { return false }
                var m = Message(kind: flags & 4 != 0 ? .system : .message, sender: nil,
                                direction: flags & 2 != 0 ? .outgoing : .incoming,
                                date: Date(timeIntervalSince1970: Double(bitPattern: bits)), text: nil)
                if flags & 1 != 0 { guard let v = string() else { return false }; m.sender = v }
                if flags & 8 != 0 { guard let v = string() else { return false }; m.text = v }
                if flags & 16 != 0 {
                    guard let v = take(UInt8.self), Int(v) < Self.statuses.count else { return false }
                    m.status = Self.statuses[Int(v)]
                }
                if flags & 32 != 0 { guard let v = take(UInt64.self) else { return false }; m.statusDate = Date(timeIntervalSince1970: Double(bitPattern: v)) }
                if flags & 64 != 0 { guard let v = string() else { return false }; m.id = v }
                if flags & 128 != 0 {
                    guard let v = take(Int64.self) else { return false }
                    m.wallTime = WallTime(Date(timeIntervalSince1970: Double(v)), in: utc)
                }
                var sourceID: Int64?, replyTo: Int64?
                if flags & 256 != 0 { guard let v = take(Int64.self) else { return false }; sourceID = v }
                if flags & 512 != 0 { guard let v = take(Int64.self) else { return false }; replyTo = v }
                if flags & 1024 != 0 {
                    guard let n = take(UInt32.self), at + Int(n) <= raw.count,
                          let rare = try? decoder.decode(Rare.self, from: Data(raw[at..<(at + Int(n))])) else { return false }
                    at += Int(n)
                    m.images = rare.images ?? []
                    m.attachment = rare.attachment
                    m.reactions = rare.reactions ?? []
                    m.reply = rare.reply
                    m.edited = rare.edited
                    m.spans = rare.spans ?? []
                    m.forwardedFrom = rare.forwardedFrom
                    m.app = rare.app
                }
                out.append(SpooledMessage(message: m, sourceID: sourceID, replyTo: replyTo))
            }
            return true
        }
        guard parsed else { throw ImportError(path: path, reason: "cannot be read back (damaged)") }
        return out
    }
}

/// A message back from the spool, with its source id and the source id it replies to.
struct SpooledMessage {
    var message: Message
    var sourceID: Int64?
    var replyTo: Int64?
}

/// A conversation `Importer.loadEach` handed over: how the export names it, and its size.
public struct ChatSummary: Hashable, Sendable {
    /// How the export tells this conversation from the others (stable from one export to the next).
    public var key: String
    /// The conversation's title as the export gives it.
    public var title: String
    /// How many messages the conversation holds.
    public var messageCount: Int
}

/// Each message's source id (`Int64.min` for none), as compact as the ids allow: 4 bytes a
/// message while every id is within 4 billion above the first one (Telegram's and iMessage's
/// ids are), 8 bytes otherwise.
struct SourceIDColumn {
    private var base: Int64?
    private var offsets: [UInt32] = []
    private var wide: [Int64]?
    private static let none = UInt32.max

    var count: Int { wide?.count ?? offsets.count }
    var isEmpty: Bool { count == 0 }
    var last: Int64? { isEmpty ? nil : self[count - 1] }

    subscript(i: Int) -> Int64 {
        if let wide { return wide[i] }
        let o = offsets[i]
        return o == Self.none ? .min : base! + Int64(o)
    }

    mutating func appendNone(count: Int) {
        if wide != nil { wide!.append(contentsOf: repeatElement(.min, count: count)) } else {
            offsets.append(contentsOf: repeatElement(Self.none, count: count))
        }
    }

    mutating func append(_ id: Int64) {
        if wide != nil { wide!.append(id); return }
        if id == .min { offsets.append(Self.none); return }
        if base == nil { base = id }
        let delta = id.subtractingReportingOverflow(base!)
        if !delta.overflow, delta.partialValue >= 0, delta.partialValue < Int64(Self.none) {
            offsets.append(UInt32(delta.partialValue))
        } else {
            wide = (0..<offsets.count).map { self[$0] } + [id]
            offsets = []
        }
    }

    func enumerated() -> [(offset: Int, element: Int64)] { (0..<count).map { ($0, self[$0]) } }
}

/// Text helpers shared by the importers.
enum TextCleanup {
    /// "1 message", "2 messages": `n` and the noun in the number it takes.
    static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? singular : plural ?? singular + "s")
    }

    /// Bidirectional marks WhatsApp and Telegram wrap names and phone numbers in.
    static func isBidiControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }

    static func stripBidi(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isBidiControl) else { return s }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: s.unicodeScalars.filter { !isBidiControl($0) })
        return String(out)
    }

    /// Strips bidi marks, then spaces (without Foundation: this runs once per message).
    static func cleanName(_ s: String) -> String {
        // Fast path: plain ASCII without spaces at either end is already clean.
        let u = s.utf8
        if let f = u.first, let l = u.last, f > 0x20, l > 0x20, !u.contains(where: { $0 >= 0x80 }) { return s }
        let scalars = stripBidi(s).unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{00A0}" || $0 == "\u{202F}" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
              let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(scalars[first...last])
    }

    /// Digits of a phone number ("+1 (555) 010-2000" → "15550102000"); nil when it has letters or
    /// fewer than 5 digits (then it is a name or a short code, compared as text).
    static func phoneDigits(_ s: String) -> String? {
        var digits = ""
        for c in s.unicodeScalars {
            switch c {
            case "0"..."9": digits.unicodeScalars.append(c)
            case "+", " ", "-", "(", ")", ".", "\u{00A0}", "\u{2011}", "\u{202A}", "\u{202C}", "\u{200E}": continue
            default: return nil
            }
        }
        return digits.count >= 5 ? digits : nil
    }

    /// Same person? Names compare case-insensitively; phone numbers by digits, allowing one to
    /// lack the country code ("+1 555 010 2000" and "5550102000").
    static func sameContact(_ a: String, _ b: String) -> Bool {
        if a.caseInsensitiveCompare(b) == .orderedSame { return true }
        if cleanName(a).caseInsensitiveCompare(cleanName(b)) == .orderedSame { return true }
        guard let da = phoneDigits(a), let db = phoneDigits(b) else { return false }
        if da == db { return true }
        let (short, long) = da.count < db.count ? (da, db) : (db, da)
        return short.count >= 7 && long.hasSuffix(short)
    }

    /// "Call · 2:05", "Call · 1:02:03": a call's system line.
    static func callLine(seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        let clock = h > 0 ? "\(h):" + String(format: "%02d:%02d", m, s) : "\(m):" + String(format: "%02d", s)
        return "Call · " + clock
    }

    /// "Ann, Ben, Cy and 4 more" for error messages.
    static func list(_ names: [String], limit: Int = 30) -> String {
        let shown = names.prefix(limit).joined(separator: "; ")
        return names.count > limit ? shown + "; and \(names.count - limit) more" : shown
    }

    /// Lowercased file extension when it is a photo format the renderer (gdk-pixbuf) reads.
    static func photoExtension(ofFileName name: String) -> String? {
        let ext = PathText.fileExtension(name).lowercased()
        return photoExtensions.contains(ext) ? ext : nil
    }

    static let photoExtensions: Set<String> = ["jpg", "jpeg", "png", "gif", "webp", "bmp", "heic", "heif", "tif", "tiff"]

    /// File extension for an image MIME type the renderer reads; nil for others (HEIC, TIFF…).
    static func photoExtension(ofMIMEType mime: String) -> String? {
        switch mime.lowercased() {
        case "image/jpeg", "image/jpg", "image/pjpeg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/bmp", "image/x-ms-bmp": "bmp"
        case "image/heic", "image/heif": "heic"
        case "image/tiff": "tiff"
        default: nil
        }
    }
}

extension MediaAttachment {
    /// An attachment of `kind` named `fileName`, at `path` when the export holds it, with what
    /// the file's own headers say (size, duration, pages, a video's size, a contact's name).
    static func described(kind: Kind, fileName: String?, path: String?, mimeType: String? = nil) -> MediaAttachment {
        var a = MediaAttachment(kind: kind, fileName: fileName, path: path, mimeType: mimeType)
        if let path { a.fill(from: MediaProbe.probe(path: path)) }
        return a
    }
}

extension [Reaction] {
    /// Adds `sender`'s `emoji` (once per sender), or with `remove` takes it back.
    mutating func apply(emoji: String, sender: String, remove: Bool) {
        if let k = firstIndex(where: { $0.emoji == emoji }) {
            if remove {
                self[k].count -= 1
                self[k].senders.removeAll { $0 == sender }
                if self[k].count < 1 { self.remove(at: k) }
            } else if !self[k].senders.contains(sender) {
                self[k].count += 1
                self[k].senders.append(sender)
            }
        } else if !remove {
            append(Reaction(emoji: emoji, count: 1, senders: [sender]))
        }
    }
}
