import BubbleCore
import Foundation
import GRDB
import Synchronization
import Testing
import BubbleTestSupport
@testable import BubbleStore

/// A conversation with a photo, imported from `dir` (its photo's store file name is returned).
private func importWithPhoto(_ store: any ConversationStore, _ dir: String, key: String = "ana") async throws -> (Int64, String) {
    try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 9, 8, 7, UInt8(key.count)]).write(to: URL(fileURLWithPath: dir + "/photo-\(key).png"))
    var m = Message(sender: "ana", direction: .incoming, date: t0, text: "look")
    m.images = [ImageAttachment(path: "photo-\(key).png", width: 10, height: 10)]
    let c = Conversation(title: "Ana", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")], messages: [m])
    let summary = try await store.add(c, sourceFormat: "native", chatKey: key, title: nil, mediaFolder: dir)
    let path = try #require(try await store.load(summary.conversationID).messages[0].images.first?.path)
    return (summary.conversationID, (path as NSString).lastPathComponent)
}

@Suite("BubbleStore: accounts (users, sessions, tokens, members, invitations, media access)")
struct AccountStoreTests {
    @Test(
        "users unique in any case; sessions expire, go idle and end with a disabled user; tokens by their hash; members and who reaches what; invitations once; media only through a conversation one reaches",
        arguments: Backend.allCases)
    func accounts(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let accounts = try #require(store as? any AccountStore)
        #expect(try await accounts.userCount() == 0)
        let ann = try await accounts.addUser(name: "Ann", displayName: "Ann Lee", role: .admin, passwordHash: "h1")
        let ben = try await accounts.addUser(name: "ben", displayName: "Ben", role: .member, passwordHash: "h2")
        await #expect(throws: LiveError.self) { _ = try await accounts.addUser(name: "ANN", displayName: "x", role: .member, passwordHash: "h") }
        #expect(try await accounts.userCount() == 2)
        #expect(try await accounts.user(named: "aNN")?.user.id == ann.id)
        #expect(try await accounts.user(named: "aNN")?.passwordHash == "h1")
        #expect(try await accounts.users().map(\.key) == ["ann", "ben"])

        // Sessions: by their hash; expired, idle or of a disabled user: none.
        let policy = SessionPolicy(lifetime: 1_000, idle: 100)
        try await accounts.createSession(hash: "s-ben", user: ben.id, now: t0, policy: policy)
        // Seen again is written at most once a minute: at +70 s, not at +30 s.
        #expect(try await accounts.sessionUser(hash: "s-ben", now: t0.addingTimeInterval(30), policy: policy)?.id == ben.id)
        #expect(try await accounts.sessionUser(hash: "s-ben", now: t0.addingTimeInterval(70), policy: policy)?.id == ben.id)
        #expect(
            try await accounts.sessionUser(hash: "s-ben", now: t0.addingTimeInterval(160), policy: policy)?.id == ben.id,
            "seen at +70 s, so not idle at +160 s")
        #expect(try await accounts.sessionUser(hash: "s-ben", now: t0.addingTimeInterval(400), policy: policy) == nil, "idle")
        try await accounts.createSession(hash: "s-ben2", user: ben.id, now: t0, policy: policy)
        #expect(
            try await accounts.sessionUser(hash: "s-ben2", now: t0.addingTimeInterval(1_001), policy: SessionPolicy(lifetime: 1_000, idle: 10_000)) == nil,
            "expired")
        try await accounts.createSession(hash: "s-ben3", user: ben.id, now: Date(), policy: SessionPolicy())
        #expect(try await accounts.sessionUser(hash: "nope", now: Date(), policy: SessionPolicy()) == nil)
        try await accounts.setDisabled(ben.id, true)
        #expect(try await accounts.sessionUser(hash: "s-ben3", now: Date(), policy: SessionPolicy()) == nil)
        try await accounts.setDisabled(ben.id, false)
        #expect(try await accounts.sessionUser(hash: "s-ben3", now: Date(), policy: SessionPolicy()) == nil, "disabling ended the session")
        try await accounts.createSession(hash: "s-ann1", user: ann.id, now: Date(), policy: SessionPolicy())
        try await accounts.createSession(hash: "s-ann2", user: ann.id, now: Date(), policy: SessionPolicy())
        try await accounts.deleteSession(hash: "s-ann1")
        #expect(try await accounts.sessionUser(hash: "s-ann1", now: Date(), policy: SessionPolicy()) == nil)
        #expect(try await accounts.signOutEverywhere(ann.id) == EndedCredentials(sessions: 1, tokens: 0))

        // Tokens: listed and revoked by their owner only.
        let token = try await accounts.createToken(user: ben.id, name: "bot", hash: "t-ben")
        #expect(try await accounts.tokenUser(hash: "t-ben", now: Date())?.id == ben.id)
        #expect(try await accounts.tokens(of: ben.id).map(\.name) == ["bot"])
        #expect(try await accounts.revokeToken(token.id, of: ann.id) == false)
        #expect(try await accounts.revokeToken(token.id, of: ben.id) == true)
        #expect(try await accounts.tokenUser(hash: "t-ben", now: Date()) == nil)

        // An imported archive has no members: the admins'. Shared read-only, ben reads it.
        let (archive, photo) = try await importWithPhoto(store, dir)
        #expect(try await accounts.access(of: ann, to: archive) == .owner)
        #expect(try await accounts.access(of: ben, to: archive) == nil)
        #expect(try await accounts.mediaReadable(photo, by: ann))
        #expect(try await !accounts.mediaReadable(photo, by: ben))
        #expect(try await accounts.readableConversations(of: ben).isEmpty)
        try await accounts.setMember(archive, user: ann, access: .owner)
        try await accounts.setMember(archive, user: ben, access: .read)
        #expect(try await accounts.access(of: ben, to: archive) == .read)
        #expect(try await accounts.mediaReadable(photo, by: ben))
        #expect(try await store.people(of: archive).ids == Set(["me", "ana"]), "one who reads is no participant")
        #expect(try await accounts.members(of: archive).map { "\($0.user.key):\($0.access.rawValue)" } == ["ann:owner", "ben:read"])

        // A live conversation; an invitation joins once, as a participant who writes.
        let live = try await store.createConversation(title: "Plans", participants: [Participant(id: "ann", name: "Ann Lee")])
        try await accounts.setMember(live.id, user: ann, access: .owner)
        #expect(try await accounts.access(of: ann, to: live.id) == .owner)
        #expect(try await accounts.access(of: ben, to: live.id) == nil, "an admin's reach does not extend to conversations with members")
        try await accounts.createInvite(hash: "i-1", conversation: live.id, by: ann.id, access: .write, expires: Date().addingTimeInterval(60))
        try await accounts.createInvite(hash: "i-old", conversation: live.id, by: ann.id, access: .write, expires: Date().addingTimeInterval(-1))
        let pending = try #require(try await accounts.invitation(hash: "i-1", now: Date()))
        #expect(pending.conversation == live.id && pending.access == .write && pending.expires > Date())
        #expect(pending.invitedBy == ann.displayName && !pending.invitedBy.isEmpty, "the page names who invites")
        #expect(try await accounts.invitation(hash: "i-old", now: Date()) == nil)
        #expect(try await accounts.acceptInvite(hash: "i-1", joiner: .existing(ben), now: Date(), policy: policy).conversation == live.id)
        await #expect(throws: LiveError.self) { _ = try await accounts.acceptInvite(hash: "i-1", joiner: .existing(ben), now: Date(), policy: policy) }
        await #expect(throws: LiveError.self) { _ = try await accounts.acceptInvite(hash: "i-old", joiner: .existing(ben), now: Date(), policy: policy) }
        #expect(try await accounts.access(of: ben, to: live.id) == .write)
        #expect(try await store.people(of: live.id).ids == Set(["ann", "ben"]))
        #expect(try await accounts.readableConversations(of: ben) == [archive, live.id])
        #expect(try await accounts.removeMember(live.id, user: ben.id))
        #expect(try await accounts.access(of: ben, to: live.id) == nil)

        // Search sees only what one reaches.
        #expect(try await store.search(StoreSearch("look", within: [live.id])).isEmpty)
        #expect(try await store.search(StoreSearch("look", within: [archive])).count == 1)
        #expect(try await store.search(StoreSearch("look", within: [])).isEmpty)

        // Settings are each user's own; set again replaces, nil forgets; quotes and non-ASCII kept.
        try await accounts.setSetting("theme", to: "whatsapp", of: ann.id)
        try await accounts.setSetting("theme", to: "classic", of: ann.id)
        try await accounts.setSetting("scheme", to: "dark'; DROP TABLE account; --é", of: ann.id)
        try await accounts.setSetting("theme", to: "sms", of: 0)
        #expect(try await accounts.settings(of: ann.id) == ["theme": "classic", "scheme": "dark'; DROP TABLE account; --é"])
        #expect(try await accounts.settings(of: ben.id) == [:])
        #expect(try await accounts.settings(of: 0) == ["theme": "sms"], "the owner of a server without accounts is user 0")
        try await accounts.setSetting("scheme", to: nil, of: ann.id)
        #expect(try await accounts.settings(of: ann.id) == ["theme": "classic"])
        #expect(try await accounts.userCount() == 2)
    }

    @Test(
        "an invitation accepted by 8 new accounts at once: exactly one account, member and session; a name taken leaves the invitation unused",
        arguments: Backend.allCases)
    func invitationRace(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try backend.make(dir)
        let accounts = try #require(store as? any AccountStore)
        let ann = try await accounts.addUser(name: "ann", displayName: "Ann", role: .admin, passwordHash: "h")
        let live = try await store.createConversation(title: "Plans", participants: [Participant(id: "ann", name: "Ann")])
        try await accounts.setMember(live.id, user: ann, access: .owner)
        try await accounts.createInvite(hash: "race", conversation: live.id, by: ann.id, access: .write, expires: Date().addingTimeInterval(60))
        let policy = SessionPolicy()
        let outcomes = await withTaskGroup(of: Result<AcceptedInvite, any Error>.self) { group in
            for k in 0..<8 {
                group.addTask {
                    do {
                        return .success(
                            try await accounts.acceptInvite(
                                hash: "race",
                                joiner: .newAccount(
                                    name: "new\(k)", displayName: "New \(k)",
                                    passwordHash: "h", sessionHash: "session-\(k)"),
                                now: Date(), policy: policy))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var all: [Result<AcceptedInvite, any Error>] = []
            for await r in group { all.append(r) }
            return all
        }
        let won = outcomes.compactMap { try? $0.get() }
        #expect(won.count == 1)
        #expect(outcomes.filter { if case .failure(let e) = $0 { return (e as? LiveError)?.kind == .notFound } else { return false } }.count == 7)
        #expect(try await accounts.userCount() == 2, "one account made, not eight")
        let winner = try #require(won.first?.user)
        #expect(try await accounts.members(of: live.id).map(\.user.key).sorted() == ["ann", winner.key])
        let k = winner.key.dropFirst(3)
        #expect(try await accounts.sessionUser(hash: "session-\(k)", now: Date(), policy: policy)?.id == winner.id)
        for other in 0..<8 where "\(other)" != k {
            #expect(try await accounts.sessionUser(hash: "session-\(other)", now: Date(), policy: policy) == nil)
        }
        // A name taken: nothing made, and the invitation can still be used.
        try await accounts.createInvite(hash: "taken", conversation: live.id, by: ann.id, access: .read, expires: Date().addingTimeInterval(60))
        await #expect(throws: LiveError.self) {
            _ = try await accounts.acceptInvite(
                hash: "taken", joiner: .newAccount(name: "ANN", displayName: "x", passwordHash: "h", sessionHash: "s-x"),
                now: Date(), policy: policy)
        }
        #expect(try await accounts.invitation(hash: "taken", now: Date())?.conversation == live.id)
        #expect(try await accounts.userCount() == 2)
        (store as? PostgresStore)?.stop()
    }

    @Test(
        "access changes reach the feed: sign-out, sign-out everywhere (sessions and tokens), token revoked, disabled, member removed — also from another process's store of the same database",
        arguments: Backend.allCases)
    func accessFeed(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = backend == .postgres ? try TestPostgres.shared().createDatabase() : dir + "/db.sqlite"
        let store = try Backend.open(url, media: dir)
        let accounts = try #require(store as? any AccountStore)
        let heard = Mutex<[AccessChange]>([])
        store.feed.listenAccess { change in heard.withLock { $0.append(change) } }
        // The server's store runs (its LISTEN, or its watcher of the SQLite file).
        let running = (store as? SQLiteStore).map { sqlite in Task { try await sqlite.run() } }
        defer { running?.cancel(); (store as? PostgresStore)?.stop() }
        let ben = try await accounts.addUser(name: "ben", displayName: "Ben", role: .member, passwordHash: "h")
        let live = try await store.createConversation(title: "Plans", participants: [Participant(id: "ben", name: "Ben")])
        try await accounts.createSession(hash: "s1", user: ben.id, now: Date(), policy: SessionPolicy())
        try await accounts.createSession(hash: "s2", user: ben.id, now: Date(), policy: SessionPolicy())
        _ = try await accounts.createToken(user: ben.id, name: "bot", hash: "t1")
        try await Task.sleep(for: .milliseconds(300))
        heard.withLock { $0.removeAll() }
        func waitFor(_ expected: AccessChange, _ what: String) async throws {
            for _ in 0..<50 where !heard.withLock({ $0.contains(expected) }) { try await Task.sleep(for: .milliseconds(40)) }
            #expect(heard.withLock { $0.contains(expected) }, "\(what): \(heard.withLock { $0 })")
            heard.withLock { $0.removeAll() }
        }
        try await accounts.deleteSession(hash: "s1")
        // Told once: this process's own change is not told again when the store's watcher
        // (for other processes) reads it back.
        try await Task.sleep(for: .milliseconds(600))
        #expect(heard.withLock { $0.filter { $0 == AccessChange(user: ben.id) }.count } == 1, "\(heard.withLock { $0 })")
        try await waitFor(AccessChange(user: ben.id), "signing out")
        // Another process (`bubbles users sign-out`): its own store of the same database.
        let other = try Backend.open(url, media: dir)
        let ended = try await (other as! any AccountStore).signOutEverywhere(ben.id)
        #expect(ended == EndedCredentials(sessions: 1, tokens: 1))
        try await waitFor(AccessChange(user: ben.id), "signed out everywhere by another process")
        #expect(try await accounts.tokenUser(hash: "t1", now: Date()) == nil, "the token ended with the sessions")
        (other as? PostgresStore)?.stop()
        try await accounts.setMember(live.id, user: ben, access: .write)
        try await waitFor(AccessChange(user: ben.id, conversation: live.id), "membership set")
        #expect(try await accounts.removeMember(live.id, user: ben.id))
        try await waitFor(AccessChange(user: ben.id, conversation: live.id), "removed")
        let t2 = try await accounts.createToken(user: ben.id, name: "bot", hash: "t2")
        #expect(try await accounts.revokeToken(t2.id, of: ben.id))
        try await waitFor(AccessChange(user: ben.id), "token revoked")
        try await accounts.setDisabled(ben.id, true)
        try await waitFor(AccessChange(user: ben.id), "disabled")
    }

    @Test(
        "a store made before accounts gets them, and its conversations' photos stay visible to the admins (media names found in what the messages hold)",
        arguments: Backend.allCases)
    func upgradeKeepsPhotos(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = backend == .postgres ? try TestPostgres.shared().createDatabase() : dir + "/db.sqlite"
        let drop =
            "DROP TABLE conversation_media; DROP TABLE invite; DROP TABLE member; DROP TABLE account_token; DROP TABLE account_session; DROP TABLE account"
        var photo = ""
        do {
            let store = try Backend.open(url, media: dir)
            (_, photo) = try await importWithPhoto(store, dir)
            (store as? PostgresStore)?.stop()
        }
        // Back to the schema before accounts.
        if backend == .postgres {
            try TestPostgres.shared().psql(String(url.split(separator: "/").last!), drop + "; DELETE FROM bubbles_schema WHERE id = 'v3-accounts'")
        } else {
            let queue = try DatabaseQueue(path: url)
            try await queue.write { db in try db.execute(sql: drop + "; DELETE FROM grdb_migrations WHERE identifier = 'v3-accounts'") }
            try queue.close()
        }
        let store = try Backend.open(url, media: dir)
        defer { (store as? PostgresStore)?.stop() }
        let accounts = try #require(store as? any AccountStore)
        let admin = try await accounts.addUser(name: "ann", displayName: "Ann", role: .admin, passwordHash: "h")
        let member = try await accounts.addUser(name: "ben", displayName: "Ben", role: .member, passwordHash: "h")
        #expect(try await accounts.mediaReadable(photo, by: admin))
        #expect(try await !accounts.mediaReadable(photo, by: member))
    }
}

/// The store's digests are swift-crypto's SHA-256 in hex: FIPS 180-4's known answers (the empty
/// string, "abc", the two-block message) for secrets, and a file read across the 1 MiB chunk edge
/// gives the same digest as its bytes hashed at once.
@Suite("BubbleStore: SHA-256 digests (known answers)")
struct DigestTests {
    @Test(
        "secrets hash to FIPS 180-4's known answers",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        ])
    func knownAnswers(input: String, expected: String) {
        #expect(AccountSecret.hash(input) == expected)
    }

    @Test("a file's digest is its bytes' digest, across the read size, and its size is counted")
    func fileDigest() throws {
        let path = NSTemporaryDirectory() + "bubblekit-digest-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        // One million "a" is FIPS 180-4's long known answer; one byte more crosses the 1 MiB read.
        for (count, expected) in [
            (1_000_000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
            ((1 << 20) + 1, nil as String?)
        ] {
            let bytes = Data(repeating: UInt8(ascii: "a"), count: count)
            try bytes.write(to: URL(fileURLWithPath: path))
            let (size, digest) = try DurableFile.digest(path)
            #expect(size == Int64(count))
            #expect(digest == (expected ?? AccountSecret.hash(String(repeating: "a", count: count))))
        }
        #expect(throws: StoreError.self) { try DurableFile.digest(path + ".missing") }
    }
}
