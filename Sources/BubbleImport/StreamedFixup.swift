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
public struct StreamedFixup: Sendable {
    /// The ids of the messages some reply quotes.
    private var targets: Set<String> = []
    private var quotes: [String: ReplyReference] = [:]

    public init() {}

    /// Notes a message as it streams (a reply's original to quote later).
    public mutating func note(_ m: Message) {
        if let r = m.reply, r.sender == nil, r.text == nil, let id = r.id { targets.insert(id) }
    }

    /// Whether some reply waits for its quote (then every message goes past `remember` first).
    public var needsQuotes: Bool { !targets.isEmpty }

    /// Keeps `m`'s quote when a reply needs it (its author and first 100 characters, spoilers
    /// masked, as an import that held the conversation would quote it).
    public mutating func remember(_ m: Message) {
        guard let id = m.id, targets.contains(id), quotes[id] == nil else { return }
        quotes[id] = ReplyReference(id: id, sender: m.sender, text: ConversationBuilder.snippet(m))
    }

    /// Whether `settle` changes anything for `result` (else the streamed messages are final).
    public func changes(_ result: ImportResult) -> Bool {
        needsQuotes || (Importer.streamsProvisionally(result.format) && result.me != nil)
    }

    /// `m` as the import would have made it: outgoing when its author is `result.me` (formats
    /// that stream provisionally), its reply quoted when the original was in the export.
    public func settle(_ m: inout Message, result: ImportResult) {
        if Importer.streamsProvisionally(result.format), let me = result.me, m.sender == me { m.direction = .outgoing }
        if let r = m.reply, r.sender == nil, r.text == nil, let id = r.id, let quote = quotes[id] { m.reply = quote }
    }
}
