import BubbleCore
import Foundation
import GRDB
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
    @Test("users unique in any case; sessions expire, go idle and end with a disabled user; tokens by their hash; members and who reaches what; invitations once; media only through a conversation one reaches",
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
        #expect(try await accounts.sessionUser(hash: "s-ben", now: t0.addingTimeInterval(160), policy: policy)?.id == ben.id,
                "seen at +70 s, so not idle at +160 s")
        #expect(try await accounts.sessionUser(hash: "s-ben", now: t0.addingTimeInterval(400), policy: policy) == nil, "idle")
        try await accounts.createSession(hash: "s-ben2", user: ben.id, now: t0, policy: policy)
        #expect(try await accounts.sessionUser(hash: "s-ben2", now: t0.addingTimeInterval(1_001), policy: SessionPolicy(lifetime: 1_000, idle: 10_000)) == nil,
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
        #expect(try await accounts.deleteSessions(of: ann.id) == 1)

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
        #expect(try await accounts.invitation(hash: "i-1", now: Date()) == live.id)
        #expect(try await accounts.invitation(hash: "i-old", now: Date()) == nil)
        #expect(try await accounts.redeemInvite(hash: "i-1", user: ben, now: Date()) == live.id)
        await #expect(throws: LiveError.self) { _ = try await accounts.redeemInvite(hash: "i-1", user: ben, now: Date()) }
        await #expect(throws: LiveError.self) { _ = try await accounts.redeemInvite(hash: "i-old", user: ben, now: Date()) }
        #expect(try await accounts.access(of: ben, to: live.id) == .write)
        #expect(try await store.people(of: live.id).ids == Set(["ann", "ben"]))
        #expect(try await accounts.readableConversations(of: ben) == [archive, live.id])
        #expect(try await accounts.removeMember(live.id, user: ben.id))
        #expect(try await accounts.access(of: ben, to: live.id) == nil)

        // Search sees only what one reaches.
        #expect(try await store.search(StoreSearch("look", within: [live.id])).isEmpty)
        #expect(try await store.search(StoreSearch("look", within: [archive])).count == 1)
        #expect(try await store.search(StoreSearch("look", within: [])).isEmpty)
    }

    @Test("a store made before accounts gets them, and its conversations' photos stay visible to the admins (media names found in what the messages hold)",
          arguments: Backend.allCases)
    func upgradeKeepsPhotos(backend: Backend) async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = backend == .postgres ? try TestPostgres.shared().createDatabase() : dir + "/db.sqlite"
        let drop = "DROP TABLE conversation_media; DROP TABLE invite; DROP TABLE member; DROP TABLE account_token; DROP TABLE account_session; DROP TABLE account"
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
