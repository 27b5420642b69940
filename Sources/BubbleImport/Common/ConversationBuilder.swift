import BubbleCore
import BubbleMedia
import Foundation

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
    mutating func append(
        _ message: Message, context: ImportContext, sourceID: Int64? = nil,
        replyTo target: Int64? = nil
    ) -> Bool {
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
        if let stream = context.stream {
            // Streaming: the message leaves now; only its author is remembered. A reply carries
            // its original's id; `StreamedFixup` quotes the original once it has seen it.
            if stream.replyIDs, let target, message.reply == nil { message.reply = ReplyReference(id: String(target)) }
            if let sender = message.sender { streamedSenders.insert(sender) }
            streamed += 1
            stream.deliver(message)
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
        return ImportResult(
            conversation: Conversation(title: title, participants: people, messages: messages),
            format: format, me: me, theme: nil, warnings: [], skipped: 0, excluded: excluded,
            attachmentsFolder: nil)
    }
}
