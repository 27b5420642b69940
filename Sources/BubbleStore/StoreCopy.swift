import Crypto
import BubbleCore
import Foundation
import NIOPosix

/// A conversation as `bubbles db copy` moves it: everything but its messages.
package struct CopiedConversation: Sendable, Hashable {
    package var title: String
    package var sourceFormat: String
    /// With `sourceFormat`, which conversation it is in any store (a newer export finds it).
    package var chatKey: String
    package var added: Double
    package var owner: String?
    package var lastRev: Int64
    package var participants: [CopiedParticipant]
}

package struct CopiedParticipant: Sendable, Hashable {
    package var id: String
    package var name: String
    /// A store path (`media/…`), as stored.
    package var avatar: String?
}

/// A message's stored row, as it is (store paths, identity, live revision and client id).
package struct CopiedMessage: Sendable, Hashable {
    package var seq: Int64
    package var sourceKey: Int64
    package var date: Double
    package var utcOffset: Int64?
    package var sender: String?
    package var outgoing: Bool
    package var system: Bool
    package var text: String?
    package var status: String?
    package var statusDate: Double?
    package var sourceID: String?
    package var extra: String?
    package var edited: Double?
    package var clientID: String?
    package var rev: Int64?
    package var change: String?

    /// What the search index holds for it.
    var indexBody: String? {
        let decoded = extra.flatMap { try? JSONDecoder().decode(MessageExtra.self, from: Data($0.utf8)) }
        return StoreCodec.indexBody(text: text, spans: decoded?.spans ?? [], attachment: decoded?.attachment)
    }

    /// Adds every field to `hash` (the copy's checksum).
    func hash(into hash: inout SHA256) {
        var h = StableHash()
        for part in [
            String(seq), String(sourceKey), String(date.bitPattern), utcOffset.map(String.init), sender, outgoing ? "1" : "0",
            system ? "1" : "0", text, status, statusDate.map { String($0.bitPattern) }, sourceID, extra,
            edited.map { String($0.bitPattern) }, clientID, rev.map(String.init), change
        ] {
            h.add(part: part)
        }
        withUnsafeBytes(of: h.value.littleEndian) { hash.update(bufferPointer: $0) }
    }
}

/// What a backend does for `bubbles db copy`: rows out as they are stored, rows in as they were.
package protocol CopyableStore: ConversationStore {
    func copyConversations() async throws -> [(id: Int64, conversation: CopiedConversation)]
    /// Up to `limit` rows after `seq`, in order.
    func copyMessages(of conversation: Int64, after seq: Int64, limit: Int) async throws -> [CopiedMessage]
    /// The conversation with the same format and chat key (made, with its participants, when
    /// missing): its id and the highest sequence number it holds.
    func copyTarget(_ c: CopiedConversation) async throws -> (id: Int64, lastSeq: Int64)
    /// Appends `rows` (sequence numbers kept) in one transaction and moves the conversation's
    /// counters (last sequence number, last revision) up to what `c` says.
    func copyAppend(_ rows: [CopiedMessage], to conversation: Int64, from c: CopiedConversation) async throws
}

/// `bubbles db copy`: a whole store into another (SQLite → PostgreSQL or back), conversation by
/// conversation, 10,000 messages a transaction. Resumable: a conversation already in the target
/// (same format and chat key) continues after the highest sequence number it holds, so a copy
/// that was stopped is run again and goes on. At the end every conversation is verified: the
/// same count and the same SHA-256 over every field of every row, on both sides.
package struct StoreCopier {
    package struct Report: Sendable {
        package var conversations = 0
        package var messagesCopied = 0
        package var messagesAlreadyThere = 0
        package var mediaCopied = 0
        /// Per conversation: (title, count, checksum) as verified on both sides.
        package var verified: [(title: String, count: Int, checksum: String)] = []
    }

    package let from: any CopyableStore
    package let to: any CopyableStore
    package var batch = 10_000

    package init(from: any CopyableStore, to: any CopyableStore) { self.from = from; self.to = to }

    package func run(progress: (String) -> Void = { _ in }) async throws -> Report {
        var report = Report()
        report.mediaCopied = try await copyMedia()
        for (id, c) in try await from.copyConversations() {
            let (target, lastSeq) = try await to.copyTarget(c)
            var after = lastSeq
            report.messagesAlreadyThere += try await to.count(of: target)
            while true {
                let rows = try await from.copyMessages(of: id, after: after, limit: batch)
                // The counters move with the last batch (an empty one for a conversation without
                // new messages, so a live conversation's revision still comes across).
                try await to.copyAppend(rows, to: target, from: c)
                report.messagesCopied += rows.count
                guard let last = rows.last?.seq, rows.count == batch else { break }
                after = last
                progress("\(c.title): \(after) messages")
            }
            let a = try await summary(from, id), b = try await summary(to, target)
            guard a == b else {
                throw StoreError(
                    path: to.path,
                    reason:
                        "conversation \"\(c.title)\" differs after the copy: \(a.count) messages (SHA-256 \(a.checksum.prefix(16))) in \(from.path), \(b.count) (SHA-256 \(b.checksum.prefix(16))) here; was it changed while copying, or did it hold other messages already?"
                )
            }
            report.verified.append((c.title, a.count, a.checksum))
            report.conversations += 1
        }
        return report
    }

    /// Count and SHA-256 of every row of a conversation, read in order.
    func summary(_ store: any CopyableStore, _ id: Int64) async throws -> (count: Int, checksum: String) {
        var hash = SHA256()
        var count = 0
        var after: Int64 = 0
        while true {
            let rows = try await store.copyMessages(of: id, after: after, limit: batch)
            for r in rows { r.hash(into: &hash) }
            count += rows.count
            guard let last = rows.last?.seq, rows.count == batch else { break }
            after = last
        }
        return (count, hash.hex())
    }

    /// Pictures and files the target does not have yet (by name: names are SHA-256s).
    func copyMedia() async throws -> Int {
        // Copying files blocks: off Swift's cooperative threads.
        try await NIOThreadPool.singleton.runIfActive { [from = from.mediaFolder, to = to.mediaFolder] in try Self.copyMedia(from: from, to: to) }
    }

    static func copyMedia(from source: String, to target: String) throws -> Int {
        let fm = FileManager.default
        // A media folder reached through a link (a backup being restored) is walked where it is.
        let source = URL(fileURLWithPath: source).resolvingSymlinksInPath().path
        guard source != target, let files = fm.enumerator(atPath: source) else { return 0 }
        var copied = 0
        for case let name as String in files {
            let from = source + "/" + name
            var isFolder: ObjCBool = false
            guard fm.fileExists(atPath: from, isDirectory: &isFolder), !isFolder.boolValue,
                !(name as NSString).lastPathComponent.hasPrefix(".tmp-")
            else { continue }
            let to = target + "/" + name
            if fm.fileExists(atPath: to) { continue }
            try MediaCopier.copy(from, to: to)
            copied += 1
        }
        return copied
    }
}
