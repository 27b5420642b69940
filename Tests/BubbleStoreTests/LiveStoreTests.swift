import BubbleCore
import BubbleTestSupport
import Foundation
import Testing
@testable import BubbleStore

/// Collects what a store's feed hands over.
final class FeedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [StoredChange] = []
    init(_ feed: ChangeFeed) { feed.listen { [weak self] c in self?.append(c) } }
    private func append(_ c: StoredChange) { lock.lock(); changes.append(c); lock.unlock() }
    var all: [StoredChange] { lock.lock(); defer { lock.unlock() }; return changes }

    /// Waits up to `seconds` for `condition` on what was handed over (suspending, never holding
    /// one of the few threads the store's tasks run on).
    func wait(_ seconds: Double = 10, until condition: ([StoredChange]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(all)
    }
}

@Suite("BubbleStore: live changes, the same on every backend")
struct LiveStoreTests {
    @Test(
        "add once per client id, replies, edits by the author only, tombstones, reactions up and down, changes by revision, the feed in order",
        arguments: Backend.allCases)
    func liveChanges(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let log = FeedLog(store.feed)
        let c = try await store.createConversation(title: "Team", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")])
        #expect(c.title == "Team" && c.participants.map(\.id) == ["me", "ana"] && c.messageCount == 0)
        #expect(try await store.lastRev(of: c.id) == 0)
        let first = try await store.add(NewMessage(clientID: "u1", text: "Hello *there*", sender: "me", spans: [TextSpan(.bold, 6..<13)]), to: c.id)
        #expect(!first.existed && first.change.message.seq == 1 && first.change.rev == 1)
        #expect(first.change.message.message.direction == .outgoing && first.change.message.message.status == .sent)
        let again = try await store.add(NewMessage(clientID: "u1", text: "Hello *there*", sender: "me"), to: c.id)
        #expect(again.existed && again.change.message.seq == 1 && again.change.rev == 1)
        let reply = try await store.add(NewMessage(clientID: "u2", text: "Hi", sender: "ana", replyTo: 1), to: c.id)
        #expect(reply.change.message.seq == 2 && reply.change.message.message.reply?.text == "Hello *there*")
        #expect(reply.change.message.message.direction == .incoming)
        await #expect(throws: LiveError.self) { try await store.add(NewMessage(clientID: "u3", text: "x", sender: "eve"), to: c.id) }
        await #expect(throws: LiveError.self) { try await store.add(NewMessage(clientID: "u4", text: "x", sender: "me"), to: c.id + 99) }
        await #expect(throws: LiveError.self) { try await store.add(NewMessage(clientID: "u5", text: "x", sender: "me", replyTo: 77), to: c.id) }
        // Only the author edits or deletes; anyone in the conversation reacts.
        await #expect(throws: LiveError.self) { try await store.edit(1, in: c.id, text: "no", by: "ana") }
        let edited = try await store.edit(1, in: c.id, text: "Hello all", spans: [TextSpan(.italic, 6..<9)], by: "me")
        #expect(edited.rev == 3 && edited.kind == .edit && edited.message.message.text == "Hello all" && edited.message.message.edited != nil)
        #expect(edited.message.message.spans == [TextSpan(.italic, 6..<9)])
        let liked = try await store.react(2, in: c.id, emoji: "👍", sender: "me", on: true)
        #expect(liked.rev == 4 && liked.message.message.reactions == [Reaction(emoji: "👍", count: 1, senders: ["me"])])
        let same = try await store.react(2, in: c.id, emoji: "👍", sender: "me", on: true)
        #expect(same.rev == 4)  // nothing changed: no revision
        let unliked = try await store.react(2, in: c.id, emoji: "👍", sender: "me", on: false)
        #expect(unliked.rev == 5 && unliked.message.message.reactions.isEmpty)
        let deleted = try await store.delete(2, in: c.id, by: "ana")
        #expect(deleted.rev == 6 && deleted.message.message.attachment?.kind == .deleted && deleted.message.message.text == nil)
        await #expect(throws: LiveError.self) { try await store.edit(2, in: c.id, text: "back", by: "ana") }
        // Changes since a revision: each message once, at its latest revision.
        let since = try await store.changes(in: c.id, since: 2, limit: 100)
        #expect(since.map(\.rev) == [3, 6] && since.map(\.message.seq) == [1, 2] && since.map(\.kind) == [.edit, .delete])
        #expect(since.first?.clientID == "u1")
        #expect(try await store.changes(in: c.id, since: 0, limit: 1).map(\.rev) == [3])
        #expect(try await store.lastRev(of: c.id) == 6)
        #expect(try await store.owner(of: c.id) == "me")
        // Search sees live text, edits included, and not what was deleted.
        #expect(try await store.search(StoreSearch("all", conversation: c.id)).map(\.seq) == [1])
        #expect(try await store.search(StoreSearch("Hi", conversation: c.id)).isEmpty)
        // The feed got every change once, in revision order.
        #expect(await log.wait { $0.count == 6 })
        #expect(log.all.map(\.rev) == [1, 2, 3, 4, 5, 6])
        #expect(try await store.load(c.id).messages.map(\.text) == ["Hello all", nil])
    }

    @Test(
        "a deleted message leaves the replies that quoted it: their quote says it was deleted, each a change with a revision of its own; search and loads no longer hold its text",
        arguments: Backend.allCases)
    func deletedLeavesReplies(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let log = FeedLog(store.feed)
        let c = try await store.createConversation(title: "Plans", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")])
        _ = try await store.add(NewMessage(clientID: "m1", text: "the secret plan is zeppelin", sender: "me"), to: c.id)
        let r1 = try await store.add(NewMessage(clientID: "m2", text: "Wow", sender: "ana", replyTo: 1), to: c.id)
        _ = try await store.add(NewMessage(clientID: "m3", text: "unrelated", sender: "ana"), to: c.id)
        let r2 = try await store.add(NewMessage(clientID: "m4", text: "Really?", sender: "me", replyTo: 1), to: c.id)
        #expect(r1.change.message.message.reply?.text == "the secret plan is zeppelin")
        let deleted = try await store.delete(1, in: c.id, by: "me")
        #expect(deleted.rev == 5)
        // Both replies changed after the deletion, in order; the unrelated message did not.
        let after = try await store.changes(in: c.id, since: 5, limit: 10)
        #expect(after.map(\.message.seq) == [r1.change.message.seq, r2.change.message.seq] && after.map(\.rev) == [6, 7])
        #expect(after.allSatisfy { $0.kind == .edit && $0.message.message.reply?.text == StoreCodec.deletedQuote })
        #expect(after.allSatisfy { $0.message.message.edited == nil && $0.message.message.text != nil })
        #expect(try await store.lastRev(of: c.id) == 7)
        // Nothing of the deleted text anywhere the store gives messages out.
        let all = try await store.load(c.id).messages
        #expect(!all.contains { ($0.text ?? "").contains("zeppelin") || ($0.reply?.text ?? "").contains("zeppelin") })
        #expect(try await store.search(StoreSearch("zeppelin", conversation: c.id)).isEmpty)
        // The feed handed every change over, the replies' too.
        #expect(await log.wait { $0.count == 7 })
        #expect(log.all.map(\.rev) == Array(1...7))
        // Deleting it again is refused (409 on the API) and changes nothing.
        await #expect(throws: LiveError.self) { try await store.delete(1, in: c.id, by: "me") }
        #expect(try await store.lastRev(of: c.id) == 7)
    }

    @Test("concurrent adds: unique sequence numbers and revisions, every client id stored once", arguments: Backend.allCases)
    func concurrentAdds(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let c = try await store.createConversation(title: "Busy", participants: [Participant(id: "a", name: "A"), Participant(id: "b", name: "B")])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<8 {
                group.addTask {
                    for i in 0..<25 {
                        // Each message sent twice (a resend after a lost ack).
                        for _ in 0..<2 {
                            _ = try await store.add(
                                NewMessage(clientID: "c\(client)-\(i)", text: "m \(client) \(i)", sender: client % 2 == 0 ? "a" : "b"), to: c.id)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let all = try await store.messages(in: c.id, after: 0, limit: 1_000)
        #expect(all.map(\.seq) == Array(1...200))
        #expect(Set(all.compactMap(\.message.id)).count == 200)
        #expect(try await store.changes(in: c.id, since: 0, limit: 1_000).map(\.rev) == Array(1...200))
    }
}

@Suite("BubbleStore: PostgreSQL shared by several servers", .serialized)
struct PostgresStoreTests {
    @Test("two stores on one database (two servers): numbers never collide, each hears the other's changes through LISTEN/NOTIFY, in order")
    func twoServers() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = try TestPostgres.shared().createDatabase()
        let one = try PostgresStore(url: url, mediaFolder: dir + "/media")
        let two = try PostgresStore(url: url, mediaFolder: dir + "/media")
        one.start(); two.start()
        defer { one.stop(); two.stop() }
        let heardByOne = FeedLog(one.feed), heardByTwo = FeedLog(two.feed)
        let c = try await one.createConversation(title: "Shared", participants: [Participant(id: "a", name: "A"), Participant(id: "b", name: "B")])
        try await Task.sleep(for: .milliseconds(300))  // both LISTENing
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (k, store) in [one, two].enumerated() {
                group.addTask {
                    for i in 0..<100 {
                        _ = try await store.add(NewMessage(clientID: "s\(k)-\(i)", text: "from \(k): \(i)", sender: k == 0 ? "a" : "b"), to: c.id)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await one.messages(in: c.id, after: 0, limit: 500).map(\.seq) == Array(1...200))
        // Each server handed over all 200, each once, in revision order.
        #expect(await heardByOne.wait { $0.count >= 200 })
        #expect(await heardByTwo.wait { $0.count >= 200 })
        #expect(heardByOne.all.map(\.rev) == Array(1...200))
        #expect(heardByTwo.all.map(\.rev) == Array(1...200))
        // An edit on one reaches the other.
        let author = try #require(try await two.messages(in: c.id, after: 0, limit: 1).first?.message.sender)
        _ = try await two.edit(1, in: c.id, text: "edited on two", by: author)
        #expect(await heardByOne.wait { $0.last?.message.message.text == "edited on two" })
    }

    @Test("the database restarts (pg_ctl restart -m fast): writes wait and go through, the listener reconnects and catches up what it missed")
    func databaseRestart() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pg = try TestPostgres.privateServer()
        defer { pg.stop() }
        let url = try pg.createDatabase()
        let one = try PostgresStore(url: url, mediaFolder: dir + "/media")
        let two = try PostgresStore(url: url, mediaFolder: dir + "/media")
        one.start(); two.start()
        defer { one.stop(); two.stop() }
        let heard = FeedLog(one.feed)
        let c = try await two.createConversation(title: "R", participants: [Participant(id: "a", name: "A")])
        try await Task.sleep(for: .milliseconds(300))
        for i in 0..<10 { _ = try await two.add(NewMessage(clientID: "before-\(i)", text: "before \(i)", sender: "a"), to: c.id) }
        #expect(await heard.wait { $0.count == 10 })
        try pg.restart()
        // Written right after the restart, while one's listener is still reconnecting.
        for i in 0..<10 { _ = try await two.add(NewMessage(clientID: "after-\(i)", text: "after \(i)", sender: "a"), to: c.id) }
        #expect(await heard.wait(20) { $0.count == 20 })
        #expect(heard.all.map(\.rev) == Array(1...20))
        #expect(one.listener.connects.withLock { $0 } >= 2)
    }

    @Test("a URL that is wrong or a server that is not there: a clear error naming the URL without its password")
    func badLocations() async throws {
        #expect { try PostgresStore(url: "postgres://host/db") } throws: { "\($0)".contains("names no user") }
        #expect { try PostgresStore(url: "postgres://u@host") } throws: { "\($0)".contains("names no database") }
        #expect { try PostgresStore(url: "postgres://u@host/db?sslmode=require") } throws: { "\($0)".contains("sslmode=require") }
        let port = TestPostgres.freePort()
        await #expect { try await openStore("postgres://u:secret@127.0.0.1:\(port)/db") } throws: { e in
            "\(e)".contains("postgres://u@127.0.0.1:\(port)/db") && !"\(e)".contains("secret") && "\(e)".contains("PostgreSQL")
        }
    }

    @Test("a database with tables of its own is refused; one from a newer BubbleKit is refused and left alone")
    func foreignDatabases() async throws {
        let pg = try TestPostgres.shared()
        let other = try pg.createDatabase()
        try pg.psql(String(other.split(separator: "/").last!), "CREATE TABLE message (x int)")
        await #expect { try await openStore(other) } throws: { "\($0)".contains("is not a BubbleKit database") }
        let newer = try pg.createDatabase()
        (try await openStore(newer) as? PostgresStore)?.stop()
        try pg.psql(String(newer.split(separator: "/").last!), "INSERT INTO bubbles_schema VALUES ('v99', 0)")
        await #expect { try await openStore(newer) } throws: { "\($0)".contains("newer BubbleKit") && "\($0)".contains("v99") }
    }
}
