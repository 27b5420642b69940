import BubbleCore

/// Settles messages that `Importer.load(…, messages:, provisional: true)` streamed before the
/// import knew everything: their side (Telegram decides who "me" is from all the authors, so
/// every message streams as incoming) and a reply's quote (a streamed reply carries only its
/// original's id). A consumer that puts the streamed messages aside (a spill file) uses it in
/// three steps, holding only the quotes replies need, never the conversation:
///
///     var fixup = StreamedFixup()
///     let result = try Importer.load(path: p, messages: { m in fixup.note(m); spill(m) }, provisional: true)
///     if fixup.needsQuotes { for m in spilled { fixup.remember(m) } }   // a first pass
///     for var m in spilled { fixup.settle(&m, result: result); write(m) }  // the second
///
/// Memory grows with the number of messages some reply quotes (about 80 bytes each: the id, the
/// author's index and the quote's UTF-8 bytes in one buffer), not with the conversation.
package struct StreamedFixup: Sendable {
    /// The source ids of the messages some reply quotes (ids are the importers' numbers).
    private var targets: Set<Int64> = []
    /// Each quoted message's author (an index into `senders`) and its quote's bytes in `text`.
    private var quotes: [Int64: (sender: Int32, start: Int32, count: Int32)] = [:]
    private var text: [UInt8] = []
    private var senders: [String] = []
    private var senderIndex: [String: Int32] = [:]

    package init() {}

    /// Notes a message as it streams (a reply's original to quote later).
    package mutating func note(_ m: Message) {
        if let r = m.reply, r.sender == nil, r.text == nil, let id = r.id.flatMap({ Int64($0) }) { targets.insert(id) }
    }

    /// Whether some reply waits for its quote (then every message goes past `remember` first).
    package var needsQuotes: Bool { !targets.isEmpty }

    /// Keeps `m`'s quote when a reply needs it (its author and first 100 characters, spoilers
    /// masked, as an import that held the conversation would quote it).
    package mutating func remember(_ m: Message) {
        guard let id = m.id.flatMap({ Int64($0) }), targets.contains(id), quotes[id] == nil else { return }
        var sender: Int32 = -1
        if let s = m.sender {
            if let k = senderIndex[s] {
                sender = k
            } else {
                sender = Int32(senders.count)
                senders.append(s)
                senderIndex[s] = sender
            }
        }
        let start = Int32(text.count)
        let snippet = ConversationBuilder.snippet(m)
        if let snippet { text.append(contentsOf: snippet.utf8) }
        // count -1: the original has no text to quote (nil, as a whole import leaves it).
        quotes[id] = (sender, start, snippet == nil ? -1 : Int32(text.count) - start)
    }

    /// Whether `settle` changes anything for `result` (else the streamed messages are final).
    package func changes(_ result: ImportResult) -> Bool {
        needsQuotes || (Importer.streamsProvisionally(result.format) && result.me != nil)
    }

    /// `m` as the import would have made it: outgoing when its author is `result.me` (formats
    /// that stream provisionally), its reply quoted when the original was in the export.
    package func settle(_ m: inout Message, result: ImportResult) {
        if Importer.streamsProvisionally(result.format), let me = result.me, m.sender == me { m.direction = .outgoing }
        guard let r = m.reply, r.sender == nil, r.text == nil, let id = r.id.flatMap({ Int64($0) }), let q = quotes[id] else { return }
        let quote = q.count < 0 ? nil : String(decoding: text[Int(q.start)..<Int(q.start + q.count)], as: UTF8.self)
        m.reply = ReplyReference(id: r.id, sender: q.sender < 0 ? nil : senders[Int(q.sender)], text: quote)
    }
}
