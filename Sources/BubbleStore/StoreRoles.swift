import BubbleCore
import Foundation
import NIOPosix
import ServiceLifecycle

// The store's protocols, one per role. `SQLiteStore` (GRDB) is the embedded default;
// `PostgresStore` (postgres-nio) is shared by several servers; both conform to all of them.
// Code that needs one role takes that role (a page of messages needs `ConversationReading`,
// the sign-in gate `UserStore`), so a new requirement touches only the code of its role, and a
// test double implements only what it is for. `ConversationStore` and `AccountStore` are the
// roles together, what `openStore` gives.
//
// Async end to end: every call suspends its task while the database works (GRDB's async reads
// and writes on SQLite's own threads; postgres-nio's `PostgresClient` on its event loops), so
// a server's handlers never hold a thread. A store is a `Service`: `run()` keeps its
// connections and background work (PostgreSQL's pool and change feed) until the service group
// shuts down; `bubbles serve` runs it in its `ServiceGroup`, commands and tests use
// `PostgresStore.start()`.

/// What every store is, whatever its role: where it is, where its files are, whether it is
/// ready, and the timing of its database rounds.
public protocol StoreBackend: AnyObject, Sendable, Service {
    /// Where it is: a file path, or a `postgres://` URL without its password (errors name it;
    /// `--db` takes it back).
    var path: String { get }
    /// Where its pictures and files are (`media/…` store paths are relative to it).
    var mediaFolder: String { get }
    /// Where each database round's time goes (`StoreTiming.report(to:)`): every read and
    /// every transaction, labelled by the store call that made it.
    var timing: StoreTiming { get }
    /// Waits until the store can be used (its schema up to date, its server answering): a
    /// `StoreError` naming it when it cannot.
    func prepare() async throws
}

/// Reading conversations: the list, windows of messages, dates, counts, search, the whole model.
public protocol ConversationReading: StoreBackend {
    /// Every conversation, with its participants named (contacts applied) and its counts.
    func conversations() async throws -> [StoredConversation]
    /// One conversation, as `conversations()` gives it; nil when there is none.
    func conversation(id: Int64) async throws -> StoredConversation?
    /// Up to `limit` messages after `seq` (exclusive), in order; `seq` 0 starts at the first.
    func messages(in conversation: Int64, after seq: Int64, limit: Int) async throws -> [StoredMessage]
    /// Up to `limit` messages before `seq` (exclusive), in order.
    func messages(in conversation: Int64, before seq: Int64, limit: Int) async throws -> [StoredMessage]
    /// The sequence number of the first message at or after `date`, nil after the last.
    func seq(in conversation: Int64, atOrAfter date: Date) async throws -> Int64?
    /// The first and last sequence numbers; nil for an empty conversation.
    func bounds(of conversation: Int64) async throws -> (first: Int64, last: Int64)?
    /// How many messages the conversation has.
    func count(of conversation: Int64) async throws -> Int
    /// How many messages each day has, days counted in `timeZone`.
    func dayCounts(of conversation: Int64, timeZone: TimeZone) async throws -> [StoreDayCount]
    /// Full-text search: the best hits first, at most `StoreSearch.limit`.
    func search(_ search: StoreSearch) async throws -> [StoreHit]
    /// Every message matching a search (its filters too; not `limit`), as each conversation's
    /// sequence numbers in order — how many hits there are, and where (in-conversation ↑/↓) —
    /// at most `cap` in all (the oldest first when there are more).
    func searchMatches(_ search: StoreSearch, cap: Int) async throws -> [Int64: [Int64]]
    /// The whole conversation as the model, for every renderer (photo paths absolute).
    func load(_ conversation: Int64) async throws -> Conversation

}

/// Importing an export into the store.
public protocol ConversationImporting: StoreBackend {
    /// Imports messages as `read` hands them over, in one transaction (see `SQLiteStore`). `read`
    /// runs once, off Swift's cooperative threads (it parses files and copies pictures).
    func importStream(
        sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
        read: @escaping StoreImportReader
    ) async throws -> StoreImportSummary
}

/// Live conversations: messages added, edited, deleted and reacted to while people read, and
/// the feed that tells every reader.
public protocol LiveStore: StoreBackend {
    /// Every committed live change, in revision order per conversation (on PostgreSQL also the
    /// ones other servers made).
    var feed: ChangeFeed { get }
    /// A new live conversation of `participants`, titled `title`.
    func createConversation(title: String, participants: [Participant]) async throws -> StoredConversation
    /// Adds a live message: exactly once per `NewMessage.clientID` (a resend is `existed`).
    func add(_ new: NewMessage, to conversation: Int64) async throws -> AddedMessage
    /// Replaces the text of message `seq` (only its author may); the edit is a new revision.
    func edit(_ seq: Int64, in conversation: Int64, text: String, spans: [TextSpan], by sender: String) async throws -> StoredChange
    /// Deletes message `seq` (only its author may): its bubble then says it was deleted.
    func delete(_ seq: Int64, in conversation: Int64, by sender: String) async throws -> StoredChange
    /// Adds (`on`) or takes back `sender`'s reaction `emoji` to message `seq`.
    func react(_ seq: Int64, in conversation: Int64, emoji: String, sender: String, on: Bool) async throws -> StoredChange
    /// Up to `limit` changes of `conversation` after revision `rev`, in revision order.
    func changes(in conversation: Int64, since rev: Int64, limit: Int) async throws -> [StoredChange]
    /// The latest revision of `conversation`; nil when it has had no live change.
    func lastRev(of conversation: Int64) async throws -> Int64?
    /// The conversation's owner (whose messages are outgoing) and its participants' ids.
    func people(of conversation: Int64) async throws -> (owner: String?, ids: Set<String>)
    /// Tells the other servers of the store that `sender` is typing in `conversation`, after
    /// revision `rev` (what they had seen: their earlier messages do not hide it). Nothing is
    /// stored. Required, with no default: a backend shared by several servers that left it out
    /// would silently stop typing from crossing them.
    func broadcastTyping(_ conversation: Int64, sender: String, after rev: Int64) async
}

/// People: names for numbers. Every read of `ConversationReading` names participants and
/// titles conversations through them (`PeopleDirectory.name`), so contacts imported later
/// apply at once.
public protocol PeopleStore: StoreBackend {
    /// Every person with its identities, and the region numbers are read in.
    func peopleSnapshot() async throws -> PeopleSnapshot
    /// Keeps contact cards as persons (a card seen before is updated); identities linked by
    /// hand stay where they are. `region`, when given, is kept for reading numbers.
    func saveCards(_ cards: [PersonCard], region: String?) async throws -> ContactsImportSummary
    /// A person made by hand (no card), named `name`; its id.
    func createPerson(name: String) async throws -> Int64
    /// Links `keys` to `person` by hand; nil leaves them to nobody (no card takes them back).
    func setIdentities(_ keys: [String], person: Int64?) async throws
    /// Moves every identity of `source` to `target` (by hand); `source` is hidden, not deleted,
    /// so its card read again does not bring it back.
    func mergePerson(_ source: Int64, into target: Int64) async throws
    /// Every conversation's participants as imported, with its app and owner.
    func rawParticipants() async throws -> [RawParticipants]
}

/// What the rest of BubbleKit needs from a conversation store: every role of it.
public typealias ConversationStore = ConversationReading & ConversationImporting & LiveStore & PeopleStore

extension ConversationImporting {
    /// Adds `conversation` (as an importer produced it) in one transaction: messages already
    /// present (same source identity) are skipped, new ones appended after the last sequence
    /// number; `sourceFormat` and `chatKey` say which stored conversation it is the newer export
    /// of. Pictures and files are copied into the store. Either all of it is stored or nothing.
    public func add(
        _ conversation: Conversation, sourceFormat: String, chatKey: String, title: String?,
        mediaFolder exportFolder: String
    ) async throws -> StoreImportSummary {
        var header = conversation
        header.messages = []
        return try await importStream(sourceFormat: sourceFormat, title: title, mediaFolder: exportFolder, sortByDate: false) { add in
            for m in conversation.messages { try add(m) }
            return (header, chatKey)
        }
    }

}

extension LiveStore {
    /// The participant whose messages are outgoing; nil when there is none.
    public func owner(of conversation: Int64) async throws -> String? { try await people(of: conversation).owner }
    /// Up to 1,000 changes of `conversation` after revision `rev`.
    public func changes(in conversation: Int64, since rev: Int64) async throws -> [StoredChange] {
        try await changes(in: conversation, since: rev, limit: 1_000)
    }
    /// Replaces the text of message `seq`, without styled ranges.
    public func edit(_ seq: Int64, in conversation: Int64, text: String, by sender: String) async throws -> StoredChange {
        try await edit(seq, in: conversation, text: text, spans: [], by: sender)
    }
}

extension StoreBackend {
    /// The absolute path of a store path (`media/…`); other paths as they are.
    public func mediaPath(_ stored: String) -> String {
        stored.hasPrefix("media/") ? mediaFolder + "/" + stored.dropFirst("media/".count) : stored
    }

    /// An absolute path inside the media folder as the store keeps it (`media/…`).
    func relative(_ path: String) -> String {
        path.hasPrefix(mediaFolder + "/") ? "media/" + path.dropFirst(mediaFolder.count + 1) : path
    }

    /// A message's pictures with absolute paths (as every read gives them).
    func resolvingImages(_ m: Message) -> Message {
        var m = m
        m.images = m.images.map {
            var i = $0; i.path = i.path.map(mediaPath); return i
        }
        return m
    }

    /// Copies the file at `file` into the store's media (by its SHA-256, once) and gives its
    /// store path (`media/ab/<sha256>.<ext>`, `ext` taken from `name`).
    public func storeMedia(file: String, name: String) async throws -> String {
        // Hashing and copying a file block: off Swift's cooperative threads.
        try await NIOThreadPool.singleton.runIfActive { [mediaFolder] in
            var summary = StoreImportSummary(conversationID: 0)
            var copier = MediaCopier(mediaFolder: mediaFolder, exportFolder: "/")
            guard let stored = try copier.store(file, summary: &summary, extensionFrom: name) else {
                throw StoreError(path: file, reason: "cannot be read")
            }
            return stored
        }
    }
}

/// Users, their sessions and API tokens. Kept in the same database as the conversations (so
/// every server of one PostgreSQL store knows them). Secrets are never stored: sessions, tokens
/// and invitations are looked up by the SHA-256 of the random value the client holds
/// (`AccountSecret`).
public protocol UserStore: AnyObject, Sendable {
    /// How many users the store has (none: the server runs in single-owner mode).
    func userCount() async throws -> Int
    /// A new user; `LiveError(.conflict)` when the name is taken (in any case).
    func addUser(name: String, displayName: String, role: UserRole, passwordHash: String) async throws -> StoredUser
    /// Every user, by name.
    func users() async throws -> [StoredUser]
    /// The user of that name (any case) and their password hash.
    func user(named name: String) async throws -> (user: StoredUser, passwordHash: String)?
    /// Replaces `user`'s password hash (bcrypt).
    func setPassword(of user: Int64, hash: String) async throws
    /// Disables (or enables) a user; disabling ends their sessions.
    func setDisabled(_ user: Int64, _ disabled: Bool) async throws

    /// Keeps a session of `user` by the SHA-256 `hash` of its cookie, from `now` under `policy`.
    func createSession(hash: String, user: Int64, now: Date, policy: SessionPolicy) async throws
    /// The user of a live session (not expired, not idle too long, not disabled); seen now.
    func sessionUser(hash: String, now: Date, policy: SessionPolicy) async throws -> StoredUser?
    /// Ends the session whose cookie hashes to `hash` (signing out); its user's open sockets are
    /// told (`ChangeFeed.listenAccess`).
    func deleteSession(hash: String) async throws
    /// Ends every session and every API token of `user` ("sign out everywhere", a password
    /// reset, `bubbles users sign-out`), in one transaction; their open sockets are told.
    @discardableResult func signOutEverywhere(_ user: Int64) async throws -> EndedCredentials

    /// Makes an API token named `name` for `user`, kept by its SHA-256 `hash`.
    func createToken(user: Int64, name: String, hash: String) async throws -> StoredToken
    /// `user`'s API tokens, newest first.
    func tokens(of user: Int64) async throws -> [StoredToken]
    /// Whether `user` had a token `id` (now revoked).
    func revokeToken(_ id: Int64, of user: Int64) async throws -> Bool
    /// The user of the API token whose SHA-256 is `hash` (not revoked, user not disabled); marks it used.
    func tokenUser(hash: String, now: Date) async throws -> StoredUser?

}

/// Who reaches which conversation: members, invitations, and the files conversations show.
/// Who may read is one rule (`AccessRule`), the same on both backends.
public protocol MembershipStore: AnyObject, Sendable {
    /// The members of `conversation` and their access.
    func members(of conversation: Int64) async throws -> [StoredMember]
    /// Makes `user` a member (or changes their access); one who writes a live conversation
    /// becomes a participant (their name is their participant id); an imported archive's
    /// participants stay those of the export.
    func setMember(_ conversation: Int64, user: StoredUser, access: MemberAccess) async throws
    /// Removes `user` from `conversation`; whether they were a member.
    func removeMember(_ conversation: Int64, user: Int64) async throws -> Bool
    /// `user`'s access to `conversation`: their membership, or `.owner` for an admin when the
    /// conversation has no members at all (imported from the command line, or made before
    /// accounts); nil: none (the conversation may not exist).
    func access(of user: StoredUser, to conversation: Int64) async throws -> MemberAccess?
    /// Every conversation `user` reaches (by `access(of:to:)`'s rule).
    func readableConversations(of user: StoredUser) async throws -> Set<Int64>

    /// An invitation that can still be used (not used, not expired): its conversation, who made
    /// it, the access it gives and until when.
    func invitation(hash: String, now: Date) async throws -> PendingInvite?
    /// Keeps an invitation to `conversation` with `access`, by the SHA-256 of its secret, until `expires`.
    func createInvite(hash: String, conversation: Int64, by user: Int64, access: MemberAccess, expires: Date) async throws
    /// Redeems an invitation in one transaction: takes it (single use, before it expires),
    /// makes the new account and its session when `joiner` is one, and the membership (a member
    /// already keeps the higher access). Of several at once exactly one succeeds; the others get
    /// `LiveError(.notFound)` — saying nothing about why — and nothing of theirs is kept. A name
    /// taken is a `LiveError(.conflict)`, and the invitation stays unused.
    func acceptInvite(hash: String, joiner: InviteJoiner, now: Date, policy: SessionPolicy) async throws -> AcceptedInvite

    /// Files (`<sha256>.<ext>`) a conversation shows, so an attachment is served only to those
    /// who reach one of its conversations.
    func recordMedia(_ files: [String], in conversation: Int64) async throws
    /// Whether `user` reaches a conversation that shows `file` (`<sha256>.<ext>`).
    func mediaReadable(_ file: String, by user: StoredUser) async throws -> Bool
}

/// What each user has read and received, and their settings in the web app.
public protocol ReadStateStore: AnyObject, Sendable {
    /// Moves `user`'s marks in `conversation` forward, never back: read up to `read`, delivered
    /// up to `delivered` (reading is delivery too), each at most the conversation's last message.
    /// The marks after it; told to the feed's read listeners of every process (`listenReads`).
    /// `user` 0 is the owner of a server without accounts.
    @discardableResult
    func mark(_ conversation: Int64, user: Int64, read: Int64?, delivered: Int64?) async throws -> ReadMark
    /// Every user's marks in `conversation`.
    func marks(of conversation: Int64) async throws -> [ReadMark]
    /// For each of `conversations`, how many messages added live (not imported) after `user`'s
    /// read mark someone else wrote: `own` is the user's participant id, nil for the owner (the
    /// outgoing messages are theirs). System lines and deleted messages do not count.
    func unread(_ conversations: [Int64], user: Int64, own: String?) async throws -> [Int64: Int]

    /// `user`'s settings in the web app (its theme, light or dark), by name; `user` 0 is the
    /// owner of a server without accounts.
    func settings(of user: Int64) async throws -> [String: String]
    /// Keeps one of `user`'s settings; nil forgets it.
    func setSetting(_ name: String, to value: String?, of user: Int64) async throws

}

/// Accounts: users, membership and read state — every account role of a store.
public typealias AccountStore = UserStore & MembershipStore & ReadStateStore
