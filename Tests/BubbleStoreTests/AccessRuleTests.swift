import BubbleCore
import Foundation
import Synchronization
import Testing
import BubbleTestSupport
@testable import BubbleStore

@Suite("BubbleStore: one access rule on both backends; database rounds timed by their call")
struct AccessRuleTests {
    /// Drawn memberships over drawn conversations: what both backends answer for every user and
    /// conversation — also ids that name no conversation — is what the rule says of the drawing
    /// (a member's access; an admin owns a conversation without members; nobody else).
    @Test("access, readable conversations and media follow the drawn memberships", arguments: Backend.allCases)
    func drawnMemberships(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        defer { (store as? PostgresStore)?.stop() }
        let accounts = try #require(store as? any AccountStore)
        var rng = SplitMix64(seed: 0x5EED_ACCE55)
        let users = [
            try await accounts.addUser(name: "root", displayName: "Root", role: .admin, passwordHash: "h"),
            try await accounts.addUser(name: "boss", displayName: "Boss", role: .admin, passwordHash: "h"),
            try await accounts.addUser(name: "ann", displayName: "Ann", role: .member, passwordHash: "h"),
            try await accounts.addUser(name: "ben", displayName: "Ben", role: .member, passwordHash: "h")
        ]
        let levels: [MemberAccess?] = [nil, nil, .read, .write, .owner]
        var drawn: [Int64: [Int64: MemberAccess]] = [:]  // conversation → user → access
        var files: [Int64: String] = [:]
        for i in 0..<8 {
            let (id, photo) = try await importPhoto(store, dir, key: "c\(i)")
            files[id] = photo
            var members: [Int64: MemberAccess] = [:]
            for u in users { if let a = levels.randomElement(using: &rng)! { members[u.id] = a } }
            // A conversation whose only member is removed again has no members: the admins' once more.
            if i == 7, let u = users.first { members = [u.id: .read] }
            for (u, a) in members { try await accounts.setMember(id, user: users.first { $0.id == u }!, access: a) }
            if i == 7 {
                _ = try await accounts.removeMember(id, user: users[0].id)
                members = [:]
            }
            drawn[id] = members
        }
        func expected(_ user: StoredUser, _ c: Int64) -> MemberAccess? {
            guard let members = drawn[c] else { return nil }
            if let a = members[user.id] { return a }
            return user.isAdmin && members.isEmpty ? .owner : nil
        }
        let missing: [Int64] = [0, -1, (drawn.keys.max() ?? 0) + 1, Int64.max]
        for u in users {
            for c in drawn.keys.sorted() + missing {
                #expect(try await accounts.access(of: u, to: c) == expected(u, c), "\(u.name) in \(c), members \(drawn[c] ?? [:])")
            }
            let readable = Set(drawn.keys.filter { expected(u, $0) != nil })
            #expect(try await accounts.readableConversations(of: u) == readable, "\(u.name)")
            for (c, file) in files {
                #expect(try await accounts.mediaReadable(file, by: u) == (expected(u, c) != nil), "\(u.name): \(file) of \(c)")
            }
            // Names that are not a stored file, or try to be one with SQL in them, reach nothing.
            for hostile in ["", "?", "' OR 1=1 --", "../" + (files.values.first ?? ""), String(files.values.first!.dropLast())] {
                #expect(try await !accounts.mediaReadable(hostile, by: u), "\(u.name): \(hostile)")
            }
        }
    }

    @Test("the rule itself, every case")
    func rule() {
        for member in [nil, MemberAccess.read, .write, .owner] {
            for admin in [false, true] {
                for unowned in [false, true] {
                    let want: MemberAccess? = member ?? (admin && unowned ? .owner : nil)
                    #expect(AccessRule.access(member: member, isAdmin: admin, unowned: unowned) == want)
                }
            }
        }
    }

    @Test("a shared statement numbers its marks for PostgreSQL and keeps the rest of its text")
    func numbering() {
        let s = SharedStatement("SELECT ? , 'é' || ?, x FROM t WHERE a = ?\nAND b", [.int(1), .text("?"), .bool(true)])
        #expect(s.numbered == "SELECT $1 , 'é' || $2, x FROM t WHERE a = $3\nAND b")
        #expect(SharedStatement("SELECT 1", []).numbered == "SELECT 1")
        for statement in [
            AccessRule.membership(of: 1, in: 2), AccessRule.readable(by: StoredUser.sample), AccessRule.mediaReadable("f", by: StoredUser.sample)
        ] {
            #expect(!statement.numbered.contains("?"))
            #expect(statement.numbered.contains("$\(statement.arguments.count)"))
        }
    }

    /// Both backends time their common paths: each round reaches the reporter labelled by the
    /// store call that made it, accounts' calls too; nothing is reported before a reporter is set.
    @Test("every database round reaches the reporter, labelled by its store call", arguments: Backend.allCases)
    func timing(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        defer { (store as? PostgresStore)?.stop() }
        let accounts = try #require(store as? any AccountStore)
        let (id, _) = try await importPhoto(store, dir, key: "t")
        let seen = Mutex<[String]>([])
        store.timing.report { call, duration in
            #expect(duration >= .zero)
            seen.withLock { $0.append(call) }
        }
        let ann = try await accounts.addUser(name: "ann", displayName: "Ann", role: .admin, passwordHash: "h")
        _ = try await store.messages(in: id, after: 0, limit: 10)
        _ = try await store.count(of: id)
        _ = try await accounts.access(of: ann, to: id)
        let live = try await store.createConversation(title: "Plans", participants: [Participant(id: "ann", name: "Ann")])
        _ = try await store.add(NewMessage(clientID: "c1", text: "hi", sender: "ann"), to: live.id)
        _ = try await store.react(1, in: live.id, emoji: "👍", sender: "ann", on: true)
        let calls = seen.withLock { $0 }
        for call in ["addUser", "messages", "count", "access", "createConversation", "add", "react"] {
            #expect(calls.contains(call), "\(call) in \(calls)")
        }
        #expect(!calls.contains { $0.contains("(") || $0 == "importStream" }, "labels are call names; the import came before the reporter: \(calls)")
    }

    /// A reporter read for every round must stay the closure it was: kept in a generic lock and
    /// read back through its inout, a closure was written back re-abstracted, two thunks deeper
    /// at every round — after a million windows a call went a million frames down (a server
    /// getting slower by the hour, then a stack overflow). The stack under the reporter is as
    /// deep at the 3,000th round as at the first.
    @Test("the reporter is called as deep in the stack at the 3,000th round as at the first")
    func reporterDoesNotDeepen() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try Backend.sqlite.make(dir)
        let depths = Mutex<[Int]>([])
        store.timing.report { _, _ in
            let depth = Thread.callStackReturnAddresses.count
            depths.withLock { $0.append(depth) }
        }
        for _ in 0..<3_000 { _ = try await store.conversations() }
        let seen = depths.withLock { $0 }
        #expect(seen.count >= 3_000)
        #expect((seen.max() ?? 0) - (seen.min() ?? 0) < 16, "stack depth under the reporter from \(seen.min() ?? 0) to \(seen.max() ?? 0) frames")
        // The PostgreSQL feed's change reader (read at every poll) sits in the same slot.
        let slot = ClosureSlot<@Sendable (_ conversation: Int64, _ after: Int64) async throws -> [StoredChange]>()
        slot.set { _, _ in
            #expect(Thread.callStackReturnAddresses.count < 64)
            return []
        }
        for k in 0..<3_000 { _ = try await slot.value?(Int64(k), 0) }
        slot.set(nil)
        #expect(slot.value == nil)
    }
}

extension StoredUser {
    fileprivate static let sample = StoredUser(id: 3, name: "ann", displayName: "Ann", role: .admin, created: Date(), disabled: false)
}

/// A one-message conversation with a photo, imported from `dir`; its id and the photo's store file name.
private func importPhoto(_ store: any ConversationStore, _ dir: String, key: String) async throws -> (Int64, String) {
    try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(key.utf8)).write(to: URL(fileURLWithPath: dir + "/photo-\(key).png"))
    var m = Message(sender: "ana", direction: .incoming, date: Date(timeIntervalSince1970: 1_700_000_000), text: "look")
    m.images = [ImageAttachment(path: "photo-\(key).png", width: 10, height: 10)]
    let c = Conversation(title: key, participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")], messages: [m])
    let summary = try await store.add(c, sourceFormat: "native", chatKey: key, title: nil, mediaFolder: dir)
    let path = try #require(try await store.load(summary.conversationID).messages[0].images.first?.path)
    return (summary.conversationID, (path as NSString).lastPathComponent)
}
