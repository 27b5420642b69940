import BubbleCore
import Foundation

/// How what an importer reads leaves it: one mode per import, chosen by `Importer` when the
/// import starts, instead of flags an importer checks and sets.
enum ImportDelivery {
    /// The messages are gathered into the result (`Importer.load` without a sink).
    case whole
    /// Each kept message is handed over as it is read (`Importer.load(…, messages:)`).
    case stream(MessageStream)
    /// Every wanted chat is handed over finished, one at a time (`Importer.loadEach`).
    case everyChat(ChatDelivery)
}

/// Kept messages handed to a sink as they are read. The first error the sink throws stops the
/// deliveries and ends the import (`error`).
final class MessageStream {
    private let sink: (Message) throws -> Void
    /// A streamed reply carries its original's id (`provisional`: the consumer quotes it with
    /// `StreamedFixup`); otherwise a streamed reply is not marked.
    let replyIDs: Bool
    private(set) var error: (any Error)?

    init(replyIDs: Bool = false, sink: @escaping (Message) throws -> Void) {
        self.replyIDs = replyIDs
        self.sink = sink
    }

    /// Hands `message` to the sink; false once the sink has failed.
    @discardableResult
    func deliver(_ message: Message) -> Bool {
        guard error == nil else { return false }
        do { try sink(message) } catch { self.error = error }
        return error == nil
    }
}

/// Finished chats handed to `each`, one at a time, and which of the chats asked for were found.
final class ChatDelivery {
    private let each: (ImportResult) throws -> Void
    /// The chats to keep (names or ids as `ImportOptions.chat` takes them); empty keeps all.
    var chats: [String]
    /// Conversations handed over, and the chats asked for that matched nothing.
    private(set) var delivered: [ChatSummary] = []
    var unmatched: [String] = []
    /// Where builders spool their messages (made on first use; removed by `remove()`).
    private var spoolFolder: String?

    init(chats: [String], each: @escaping (ImportResult) throws -> Void) {
        self.chats = chats
        unmatched = chats  // until a reader has looked
        self.each = each
    }

    /// Numbers `result` among the chats and hands it over.
    func deliver(_ result: ImportResult, key: String, of total: Int, path: String) throws(ImportError) {
        var r = result
        r.chatNumber = delivered.count + 1
        r.chatCount = max(total, r.chatNumber)
        r.chatKey = key
        delivered.append(ChatSummary(key: key, title: r.conversation.title ?? key, messageCount: r.conversation.messages.count))
        do { try each(r) } catch let error as ImportError { throw error } catch {
            throw ImportError(path: path, reason: "stopped: \(key) could not be passed on: \(error)")
        }
    }

    /// The chats of `all` that `chats` names (all of them when it names none); the names that
    /// matched none become `unmatched`.
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

    /// Whether a chat is wanted (`chats` empty, or one of them matches).
    func wants(_ matches: (String) -> Bool) -> Bool { chats.isEmpty || chats.contains(where: matches) }

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

    /// Removes the spool files.
    func remove() {
        if let spoolFolder { try? FileManager.default.removeItem(atPath: spoolFolder) }
    }
}
