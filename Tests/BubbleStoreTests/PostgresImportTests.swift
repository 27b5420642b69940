import BubbleCore
import Foundation
import Testing
import BubbleTestSupport
@testable import BubbleStore

/// Messages `range` of a generated chat: a minute apart, each with ~100 characters of text (12,000
/// of them are ~2.4 MB of COPY rows: several pieces go to PostgreSQL while the export is read).
private func generated(_ range: Range<Int>, prefix: String = "message") -> [Message] {
    range.map { i in
        Message(
            sender: i % 3 == 0 ? "me" : "ana", direction: i % 3 == 0 ? .outgoing : .incoming,
            date: t0.addingTimeInterval(Double(i) * 60),
            text: "\(prefix) \(i): " + String(repeating: "word\(i % 97) ", count: 12))
    }
}

private let header = Conversation(
    title: "Ana", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")], messages: [])

private struct Broken: Error, CustomStringConvertible {
    var description: String { "export.xml: line 9002: a record without a date" }
}

/// `messages` imported as an SMS export of chat `key` (numbered by date); `failAt`: the reader
/// throws when it comes to that message.
private func importing(
    _ messages: [Message], key: String, into store: any ConversationStore, failAt: Int? = nil, dir: String
) async throws -> StoreImportSummary {
    try await store.importStream(sourceFormat: "sms", title: nil, mediaFolder: dir, sortByDate: true) { add in
        for (i, m) in messages.enumerated() {
            if i == failAt { throw Broken() }
            try add(m)
        }
        return (header, key)
    }
}

/// What a conversation holds, read through the store's API (its messages' numbers and fields).
private func held(_ store: any ConversationStore, _ id: Int64) async throws -> [String] {
    let loaded = try await store.load(id)
    return ["\(loaded.title ?? "") \(loaded.participants.map(\.id))"]
        + (try await store.messages(in: id, after: 0, limit: 100_000)).map { "\($0.seq) \($0.message)" }
}

/// The PostgreSQL store reads an export and writes it at once (straight into `message` while the
/// messages come in order); whatever path an import takes, it stores what the SQLite store does.
@Suite("BubbleStore: PostgreSQL imports while the export is read")
struct PostgresImportTests {
    @Test("in order: straight in; out of order after megabytes went in, a chat known only at its end, a newer export: the same rows as SQLite")
    func pathsAgreeWithSQLite() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pg = try Backend.postgres.make(dir)
        let lite = try Backend.sqlite.make(dir)
        let inOrder = generated(0..<12_000)
        // The last message dated before all others: found after ~2.4 MB of rows were sent.
        var late = generated(20_000..<32_000)
        late[late.count - 1].date = t0.addingTimeInterval(-60)
        // A chat whose stored part is its second half: its first message is new, its key is not.
        let halves = generated(40_000..<40_200)
        // What COPY's text format must escape, straight in as anywhere else.
        var escapes = generated(60_000..<60_009)
        for (i, text) in ["tab\there", "line\nnext", "cr\rlf", "back\\slash", "\\N", "\\.", "\\", "end\\", "\n\\.\n"].enumerated() {
            escapes[i].text = text
        }
        let cases: [(name: String, messages: [Message], key: String, added: Int, skipped: Int)] = [
            ("in order", inOrder, "+1", 12_000, 0),
            ("out of order", late, "+2", 12_000, 0),
            ("second half", Array(halves[100...]), "+3", 100, 0),
            ("whole, first half new", halves, "+3", 100, 100),
            ("newer export", inOrder + generated(50_000..<50_100), "+1", 100, 12_000),
            ("no messages", [], "+4", 0, 0),
            ("escapes", escapes, "+5", 9, 0)
        ]
        var ids: [String: Int64] = [:]
        for c in cases {
            let a = try await importing(c.messages, key: c.key, into: pg, dir: dir)
            let b = try await importing(c.messages, key: c.key, into: lite, dir: dir)
            #expect((a.messagesAdded, a.messagesSkipped) == (c.added, c.skipped), "\(c.name): \(a)")
            #expect((b.messagesAdded, b.messagesSkipped) == (c.added, c.skipped), "\(c.name): \(b)")
            ids[c.key] = ids[c.key] ?? a.conversationID
            #expect(a.conversationID == ids[c.key], "\(c.name)")
            #expect(try await held(pg, a.conversationID) == held(lite, b.conversationID), "\(c.name)")
        }
        // Numbered by date: the out-of-order message first.
        #expect(try await pg.messages(in: ids["+2"]!, after: 0, limit: 1).first?.message.date == t0.addingTimeInterval(-60))
        // The paths taken (a conversation made after a rollback takes the next number of the
        // sequence): the first chat went straight in (conversation 1), the second was rolled back
        // and staged (3, after its placeholder 2).
        #expect(ids["+1"] == 1 && ids["+2"] == 3, "\(ids)")
        #expect(try await pg.conversations().count == 5)
        #expect(try await pg.messages(in: ids["+5"]!, after: 0, limit: 9).map { $0.message.text } == escapes.map(\.text))
        // PostgreSQL's text holds no NUL: it becomes U+FFFD.
        var nul = generated(70_000..<70_001)
        nul[0].text = "a\u{0}b"
        let n = try await importing(nul, key: "+6", into: pg, dir: dir)
        #expect(try await pg.messages(in: n.conversationID, after: 0, limit: 1).first?.message.text == "a\u{FFFD}b")
    }

    @Test("a reader failing after megabytes went in leaves nothing: no conversation, no rows, no spool file")
    func failureLeavesNothing() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pg = try Backend.postgres.make(dir)
        // Its own texts: other tests' imports spool into the same folder meanwhile.
        let marker = "failing-\(UUID().uuidString.prefix(8))"
        let spooled = {
            try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { name in
                name.hasPrefix("bubbles-import-")
                    && (FileManager.default.contents(atPath: NSTemporaryDirectory() + "/" + name).map { String(decoding: $0, as: UTF8.self).contains(marker) }
                        ?? false)
            }
        }
        await #expect {
            _ = try await importing(generated(0..<12_000, prefix: marker), key: "+1", into: pg, failAt: 9_000, dir: dir)
        } throws: { "\($0)".contains("line 9002") }
        #expect(try await pg.conversations().isEmpty)
        #expect(try await pg.search(StoreSearch(marker, limit: 10)).isEmpty)
        #expect(try spooled().isEmpty)
        // The same export, whole: in.
        let ok = try await importing(generated(0..<12_000), key: "+1", into: pg, dir: dir)
        #expect(ok.messagesAdded == 12_000 && ok.conversationsAdded == 1)
        #expect(try await pg.count(of: ok.conversationID) == 12_000)
    }

    @Test("two imports of the same new chat at once: one conversation, each message once")
    func concurrentImportsOfOneChat() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pg = try Backend.postgres.make(dir)
        let messages = generated(0..<12_000)
        async let a = importing(messages, key: "+1", into: pg, dir: dir)
        async let b = importing(messages, key: "+1", into: pg, dir: dir)
        let (x, y) = try await (a, b)
        #expect(x.conversationID == y.conversationID)
        #expect(x.messagesAdded + y.messagesAdded == 12_000 && x.messagesSkipped + y.messagesSkipped == 12_000, "\(x) \(y)")
        #expect(x.conversationsAdded + y.conversationsAdded == 1)
        #expect(try await pg.conversations().count == 1)
        #expect(try await pg.count(of: x.conversationID) == 12_000)
        let seqs = try await pg.messages(in: x.conversationID, after: 0, limit: 100_000).map(\.seq)
        #expect(seqs == Array(1...12_000))
    }
}
