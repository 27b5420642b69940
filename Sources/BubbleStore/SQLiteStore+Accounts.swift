import Foundation
import GRDB
import Synchronization

/// Accounts in the SQLite file (the tables of migration `v3-accounts`).
extension SQLiteStore: AccountStore {
    static let userColumns = "a.id, a.name, a.display_name, a.role, a.created, a.disabled"

    static func user(_ row: Row) -> StoredUser {
        StoredUser(
            id: row[0], name: row[1], displayName: row[2], role: UserRole(rawValue: row[3]) ?? .member,
            created: Date(timeIntervalSince1970: row[4]), disabled: row[5])
    }

    public func userCount() async throws -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM account") ?? 0 }
    }

    public func addUser(name: String, displayName: String, role: UserRole, passwordHash: String) async throws -> StoredUser {
        try await write { db in try Self.insertUser(db, name: name, displayName: displayName, role: role, passwordHash: passwordHash) }
    }

    static func insertUser(_ db: Database, name: String, displayName: String, role: UserRole, passwordHash: String) throws -> StoredUser {
        let now = Date().timeIntervalSince1970
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE name_key = ?", arguments: [UserName.key(name)]) == true {
            throw LiveError(.conflict, "a user named \"\(name)\" exists already (names are the same in any case)")
        }
        try db.execute(
            sql: "INSERT INTO account (name, name_key, display_name, role, password_hash, created) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [name, UserName.key(name), displayName, role.rawValue, passwordHash, now])
        return StoredUser(
            id: db.lastInsertedRowID, name: name, displayName: displayName, role: role,
            created: Date(timeIntervalSince1970: now), disabled: false)
    }

    /// A write that changes who reaches what: the changes it names are kept in `access_event` in
    /// the same transaction (other processes' stores read them: `watchAccessEvents`) and told to
    /// this process's listeners once it is committed.
    func writeRevoking<T: Sendable>(
        call function: String = #function, _ body: @escaping @Sendable (Database) throws -> (T, [AccessChange])
    ) async throws -> T {
        // The ids are marked before the commit (the watcher cannot see the rows earlier), and
        // unmarked when the write fails (a rolled-back id may be another process's next).
        let written = Mutex<[Int64]>([])
        let own = ownAccessEvents
        let (value, changes): (T, [AccessChange])
        do {
            (value, changes) = try await write(call: function) { db in
                let (value, changes) = try body(db)
                let now = Date().timeIntervalSince1970
                if !changes.isEmpty { try db.execute(sql: "DELETE FROM access_event WHERE at < ?", arguments: [now - 86_400]) }
                for c in changes {
                    try db.execute(sql: "INSERT INTO access_event (account_id, conversation_id, at) VALUES (?, ?, ?)", arguments: [c.user, c.conversation, now])
                    let id = db.lastInsertedRowID
                    written.withLock { $0.append(id) }
                    own.told([id])
                }
                return (value, changes)
            }
        } catch {
            own.forget(written.withLock { $0 })
            throw error
        }
        for c in changes { feed.emitAccess(c) }
        return value
    }

    /// Tells this process's listeners of the access changes other processes committed (a
    /// `bubbles users sign-out` while the server runs), within a fifth of a second: the one
    /// cross-process signal an SQLite file has is its content, so the newest event's id is read
    /// five times a second (one index look-up). Runs until cancelled.
    func watchAccessEvents() async {
        ownAccessEvents.watch(true)
        defer { ownAccessEvents.watch(false) }
        var last = (try? await read { db in try Int64.fetchOne(db, sql: "SELECT coalesce(max(id), 0) FROM access_event") ?? 0 }) ?? 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(200))
            let since = last
            guard
                let rows = try? await read({ db in
                    try Row.fetchAll(db, sql: "SELECT id, account_id, conversation_id FROM access_event WHERE id > ? ORDER BY id", arguments: [since])
                        .map { (id: $0[0] as Int64, change: AccessChange(user: $0[1], conversation: $0[2])) }
                })
            else { continue }
            for r in rows {
                last = r.id
                if !ownAccessEvents.takeToldAlready(r.id) { feed.emitAccess(r.change) }
            }
        }
    }

    public func users() async throws -> [StoredUser] {
        try await read { db in try Row.fetchAll(db, sql: "SELECT \(Self.userColumns) FROM account a ORDER BY a.name_key").map(Self.user) }
    }

    public func user(named name: String) async throws -> (user: StoredUser, passwordHash: String)? {
        try await read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.userColumns), a.password_hash FROM account a WHERE a.name_key = ?",
                arguments: [UserName.key(name)]
            ).map { (Self.user($0), $0[6]) }
        }
    }

    public func setPassword(of user: Int64, hash: String) async throws {
        try await write { db in try db.execute(sql: "UPDATE account SET password_hash = ? WHERE id = ?", arguments: [hash, user]) }
    }

    public func setDisabled(_ user: Int64, _ disabled: Bool) async throws {
        try await writeRevoking { db in
            try db.execute(sql: "UPDATE account SET disabled = ? WHERE id = ?", arguments: [disabled, user])
            if disabled { try db.execute(sql: "DELETE FROM account_session WHERE account_id = ?", arguments: [user]) }
            return ((), disabled ? [AccessChange(user: user)] : [])
        }
    }

    public func createSession(hash: String, user: Int64, now: Date, policy: SessionPolicy) async throws {
        try await write { db in try Self.insertSession(db, hash: hash, user: user, now: now, policy: policy) }
    }

    static func insertSession(_ db: Database, hash: String, user: Int64, now: Date, policy: SessionPolicy) throws {
        let t = now.timeIntervalSince1970
        // Sessions long gone are dropped as new ones come.
        try db.execute(sql: "DELETE FROM account_session WHERE expires < ? OR last_seen < ?", arguments: [t, t - policy.idle])
        try db.execute(
            sql: "INSERT INTO account_session (hash, account_id, created, last_seen, expires) VALUES (?, ?, ?, ?, ?)",
            arguments: [hash, user, t, t, t + policy.lifetime])
    }

    public func sessionUser(hash: String, now: Date, policy: SessionPolicy) async throws -> StoredUser? {
        let t = now.timeIntervalSince1970
        let found = try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.userColumns), s.last_seen FROM account_session s JOIN account a ON a.id = s.account_id
                    WHERE s.hash = ? AND s.expires > ? AND s.last_seen > ? AND a.disabled = 0
                    """, arguments: [hash, t, t - policy.idle]
            ).map { (Self.user($0), $0[6] as Double) }
        }
        guard let (user, seen) = found else { return nil }
        // Seen again: written at most once a minute (not a write per request).
        if t - seen > 60 {
            try await write { db in try db.execute(sql: "UPDATE account_session SET last_seen = ? WHERE hash = ?", arguments: [t, hash]) }
        }
        return user
    }

    public func deleteSession(hash: String) async throws {
        try await writeRevoking { db in
            let user = try Int64.fetchOne(db, sql: "SELECT account_id FROM account_session WHERE hash = ?", arguments: [hash])
            try db.execute(sql: "DELETE FROM account_session WHERE hash = ?", arguments: [hash])
            return ((), user.map { [AccessChange(user: $0)] } ?? [])
        }
    }

    @discardableResult
    public func signOutEverywhere(_ user: Int64) async throws -> EndedCredentials {
        try await writeRevoking { db in
            try db.execute(sql: "DELETE FROM account_session WHERE account_id = ?", arguments: [user])
            let sessions = db.changesCount
            try db.execute(sql: "DELETE FROM account_token WHERE account_id = ?", arguments: [user])
            return (EndedCredentials(sessions: sessions, tokens: db.changesCount), [AccessChange(user: user)])
        }
    }

    public func createToken(user: Int64, name: String, hash: String) async throws -> StoredToken {
        try await write { db in
            let now = Date().timeIntervalSince1970
            try db.execute(sql: "INSERT INTO account_token (account_id, name, hash, created) VALUES (?, ?, ?, ?)", arguments: [user, name, hash, now])
            return StoredToken(id: db.lastInsertedRowID, name: name, created: Date(timeIntervalSince1970: now), lastUsed: nil)
        }
    }

    public func tokens(of user: Int64) async throws -> [StoredToken] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, created, last_used FROM account_token WHERE account_id = ? ORDER BY id", arguments: [user]).map {
                StoredToken(
                    id: $0[0], name: $0[1], created: Date(timeIntervalSince1970: $0[2]), lastUsed: ($0[3] as Double?).map(Date.init(timeIntervalSince1970:)))
            }
        }
    }

    public func revokeToken(_ id: Int64, of user: Int64) async throws -> Bool {
        try await writeRevoking { db in
            try db.execute(sql: "DELETE FROM account_token WHERE id = ? AND account_id = ?", arguments: [id, user])
            return db.changesCount > 0 ? (true, [AccessChange(user: user)]) : (false, [])
        }
    }

    public func tokenUser(hash: String, now: Date) async throws -> StoredUser? {
        let t = now.timeIntervalSince1970
        let found = try await read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.userColumns), coalesce(k.last_used, 0) FROM account_token k JOIN account a ON a.id = k.account_id
                    WHERE k.hash = ? AND a.disabled = 0
                    """, arguments: [hash]
            ).map { (Self.user($0), $0[6] as Double) }
        }
        guard let (user, used) = found else { return nil }
        if t - used > 60 {
            try await write { db in try db.execute(sql: "UPDATE account_token SET last_used = ? WHERE hash = ?", arguments: [t, hash]) }
        }
        return user
    }

    public func members(of conversation: Int64) async throws -> [StoredMember] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.userColumns), m.access, m.added FROM member m JOIN account a ON a.id = m.account_id
                    WHERE m.conversation_id = ? ORDER BY m.added, a.name_key
                    """, arguments: [conversation]
            ).map {
                StoredMember(user: Self.user($0), access: MemberAccess(rawValue: $0[6]) ?? .read, added: Date(timeIntervalSince1970: $0[7]))
            }
        }
    }

    public func setMember(_ conversation: Int64, user: StoredUser, access: MemberAccess) async throws {
        try await writeRevoking { db in
            try Self.upsertMember(db, conversation, user: user, access: access)
            return ((), [AccessChange(user: user.id, conversation: conversation)])
        }
    }

    static func upsertMember(_ db: Database, _ conversation: Int64, user: StoredUser, access: MemberAccess) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM conversation WHERE id = ?", arguments: [conversation]) == true else {
            throw LiveError(.notFound, "no conversation \(conversation)")
        }
        try db.execute(
            sql: """
                INSERT INTO member (conversation_id, account_id, access, added) VALUES (?, ?, ?, ?)
                ON CONFLICT (conversation_id, account_id) DO UPDATE SET access = excluded.access
                """, arguments: [conversation, user.id, access.rawValue, Date().timeIntervalSince1970])
        // A live conversation's writer speaks in it; an imported archive's people stay its own.
        if access.writes {
            try db.execute(
                sql: """
                    INSERT INTO participant (conversation_id, id, position, name)
                    SELECT ?, ?, (SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = ?), ?
                    WHERE EXISTS (SELECT 1 FROM conversation WHERE id = ? AND source_format = 'live')
                    ON CONFLICT (conversation_id, id) DO NOTHING
                    """, arguments: [conversation, user.key, conversation, user.displayName, conversation])
        }
    }

    public func removeMember(_ conversation: Int64, user: Int64) async throws -> Bool {
        try await writeRevoking { db in
            try db.execute(sql: "DELETE FROM member WHERE conversation_id = ? AND account_id = ?", arguments: [conversation, user])
            return db.changesCount > 0 ? (true, [AccessChange(user: user, conversation: conversation)]) : (false, [])
        }
    }

    public func access(of user: StoredUser, to conversation: Int64) async throws -> MemberAccess? {
        try await read { db in try Self.access(db, of: user, to: conversation) }
    }

    static func access(_ db: Database, of user: StoredUser, to conversation: Int64) throws -> MemberAccess? {
        guard let row = try Row.fetchOne(db, AccessRule.membership(of: user.id, in: conversation)) else { return nil }
        return AccessRule.access(member: (row[0] as String?).flatMap(MemberAccess.init(rawValue:)), isAdmin: user.isAdmin, unowned: row[1])
    }

    @discardableResult
    public func mark(_ conversation: Int64, user: Int64, read: Int64?, delivered: Int64?) async throws -> ReadMark {
        let mark = try await write { db -> ReadMark in
            let last = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM message WHERE conversation_id = ?", arguments: [conversation]) ?? 0
            let r = min(max(read ?? 0, 0), last), d = min(max(delivered ?? 0, r), last)
            let row = try Row.fetchOne(
                db,
                sql: """
                    INSERT INTO read_mark (conversation_id, account_id, read_seq, delivered_seq) VALUES (?, ?, ?, ?)
                    ON CONFLICT (conversation_id, account_id) DO UPDATE
                    SET read_seq = max(read_seq, excluded.read_seq), delivered_seq = max(delivered_seq, excluded.delivered_seq)
                    RETURNING read_seq, delivered_seq
                    """, arguments: [conversation, user, r, d])
            return ReadMark(user: user, conversation: conversation, read: row?[0] ?? r, delivered: row?[1] ?? d)
        }
        feed.emitRead(mark)
        return mark
    }

    public func settings(of user: Int64) async throws -> [String: String] {
        try await read { db in
            Dictionary(try Row.fetchAll(db, sql: "SELECT name, value FROM account_setting WHERE account_id = ?", arguments: [user]).map { ($0[0], $0[1]) }) {
                a, _ in a
            }
        }
    }

    public func setSetting(_ name: String, to value: String?, of user: Int64) async throws {
        try await write { db in
            if let value {
                try db.execute(
                    sql:
                        "INSERT INTO account_setting (account_id, name, value) VALUES (?, ?, ?) ON CONFLICT (account_id, name) DO UPDATE SET value = excluded.value",
                    arguments: [user, name, value])
            } else {
                try db.execute(sql: "DELETE FROM account_setting WHERE account_id = ? AND name = ?", arguments: [user, name])
            }
        }
    }

    public func marks(of conversation: Int64) async throws -> [ReadMark] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT account_id, read_seq, delivered_seq FROM read_mark WHERE conversation_id = ? ORDER BY account_id",
                arguments: [conversation]
            ).map { ReadMark(user: $0[0], conversation: conversation, read: $0[1], delivered: $0[2]) }
        }
    }

    public func unread(_ conversations: [Int64], user: Int64, own: String?) async throws -> [Int64: Int] {
        try await read { db in
            var counts: [Int64: Int] = [:]
            let others = own == nil ? "m.outgoing = 0" : "(m.sender IS NULL OR m.sender != ?)"
            let statement = try db.makeStatement(
                sql: """
                    SELECT count(*) FROM message m
                    WHERE m.conversation_id = ? AND m.rev IS NOT NULL AND m.system = 0 AND coalesce(m.change, '') != 'delete'
                      AND m.seq > coalesce((SELECT read_seq FROM read_mark WHERE conversation_id = ? AND account_id = ?), 0) AND \(others)
                    """)
            for c in conversations {
                statement.setUncheckedArguments(own.map { [c, c, user, $0] } ?? [c, c, user])
                counts[c] = try Int.fetchOne(statement) ?? 0
            }
            return counts
        }
    }

    public func readableConversations(of user: StoredUser) async throws -> Set<Int64> {
        try await read { db in Set(try Int64.fetchAll(db, AccessRule.readable(by: user))) }
    }

    public func createInvite(hash: String, conversation: Int64, by user: Int64, access: MemberAccess, expires: Date) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO invite (hash, conversation_id, created_by, access, created, expires) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [hash, conversation, user, access.rawValue, Date().timeIntervalSince1970, expires.timeIntervalSince1970])
        }
    }

    public func invitation(hash: String, now: Date) async throws -> PendingInvite? {
        try await read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT i.conversation_id, COALESCE(NULLIF(a.display_name, ''), a.name, '') AS inviter, i.access, i.expires
                        FROM invite i LEFT JOIN account a ON a.id = i.created_by
                        WHERE i.hash = ? AND i.used IS NULL AND i.expires > ?
                        """, arguments: [hash, now.timeIntervalSince1970])
            else { return nil }
            return PendingInvite(
                conversation: row[0], invitedBy: row[1], access: MemberAccess(rawValue: row[2]) ?? .read,
                expires: Date(timeIntervalSince1970: row[3]))
        }
    }

    public func acceptInvite(hash: String, joiner: InviteJoiner, now: Date, policy: SessionPolicy) async throws -> AcceptedInvite {
        let t = now.timeIntervalSince1970
        // One write transaction (SQLite has one writer): a taken invitation, a name taken or any
        // failure undoes all of it.
        return try await writeRevoking { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT conversation_id, access FROM invite WHERE hash = ? AND used IS NULL AND expires > ?",
                    arguments: [hash, t])
            else { throw InviteText.invalid }
            let conversation: Int64 = row[0]
            let access = MemberAccess(rawValue: row[1]) ?? .write
            let user: StoredUser
            switch joiner {
            case .existing(let u): user = u
            case let .newAccount(name, displayName, passwordHash, sessionHash):
                user = try Self.insertUser(db, name: name, displayName: displayName, role: .member, passwordHash: passwordHash)
                try Self.insertSession(db, hash: sessionHash, user: user.id, now: now, policy: policy)
            }
            try db.execute(sql: "UPDATE invite SET used_by = ?, used = ? WHERE hash = ? AND used IS NULL", arguments: [user.id, t, hash])
            guard db.changesCount == 1 else { throw InviteText.invalid }
            // A member already is kept at the higher of both accesses.
            let current = try Self.access(db, of: user, to: conversation)
            try Self.upsertMember(db, conversation, user: user, access: max(current ?? .read, access))
            return (AcceptedInvite(conversation: conversation, user: user), [AccessChange(user: user.id, conversation: conversation)])
        }
    }

    public func recordMedia(_ files: [String], in conversation: Int64) async throws {
        try await write { db in try Self.recordMedia(db, files, in: conversation) }
    }

    static func recordMedia(_ db: Database, _ files: some Sequence<String>, in conversation: Int64) throws {
        let add = try db.cachedStatement(sql: "INSERT OR IGNORE INTO conversation_media (conversation_id, file) VALUES (?, ?)")
        for file in files {
            add.setUncheckedArguments([conversation, file])
            try add.execute()
        }
    }

    public func mediaReadable(_ file: String, by user: StoredUser) async throws -> Bool {
        try await read { db in try Row.fetchOne(db, AccessRule.mediaReadable(file, by: user)) != nil }
    }
}

/// The ids of the access events this process wrote and told its own listeners of at once, so
/// that `watchAccessEvents` — which is for other processes' events — does not tell them again.
/// Kept only while the watcher runs (nothing else would take them out).
final class OwnAccessEvents: Sendable {
    private let state = Mutex<(watching: Bool, ids: Set<Int64>)>((false, []))

    func watch(_ on: Bool) { state.withLock { $0 = (on, []) } }

    func told(_ ids: [Int64]) {
        state.withLock { s in if s.watching { s.ids.formUnion(ids) } }
    }

    func forget(_ ids: [Int64]) {
        state.withLock { s in s.ids.subtract(ids) }
    }

    /// Whether `id` was told already (and forgets it).
    func takeToldAlready(_ id: Int64) -> Bool {
        state.withLock { $0.ids.remove(id) != nil }
    }
}

extension Row {
    /// The first row `statement` (the SQL both backends share) gives, if any.
    static func fetchOne(_ db: Database, _ statement: SharedStatement) throws -> Row? {
        try fetchOne(db, sql: statement.sql, arguments: statement.grdbArguments)
    }
}

extension DatabaseValueConvertible where Self: StatementColumnConvertible {
    /// The values of the first column of the rows `statement` gives.
    static func fetchAll(_ db: Database, _ statement: SharedStatement) throws -> [Self] {
        try fetchAll(db, sql: statement.sql, arguments: statement.grdbArguments)
    }
}

extension SharedStatement {
    /// The arguments as GRDB binds them (a Boolean as 0 or 1).
    var grdbArguments: StatementArguments {
        StatementArguments(
            arguments.map { a -> (any DatabaseValueConvertible)? in
                switch a {
                case .int(let v): v
                case .text(let v): v
                case .bool(let v): v
                }
            })
    }
}
