import Foundation
import Logging
import PostgresNIO

/// Accounts in PostgreSQL (migration `v3-accounts`): every server of the store reads the same
/// sessions, so a session made on one works on all, and ending it on one ends it everywhere.
extension PostgresStore: AccountStore {
    static let userColumns = "a.id, a.name, a.display_name, a.role, a.created, a.disabled"

    static func user(_ row: PostgresRow) throws -> StoredUser {
        let cells = Array(row)
        return StoredUser(
            id: try cells[0].decode(Int64.self), name: try cells[1].decode(String.self), displayName: try cells[2].decode(String.self),
            role: UserRole(rawValue: try cells[3].decode(String.self)) ?? .member,
            created: Date(timeIntervalSince1970: try cells[4].decode(Double.self)), disabled: try cells[5].decode(Bool.self))
    }

    /// A statement that changes rows and ends in `RETURNING 1`, once the schema is ready; how
    /// many it changed.
    func change(_ query: PostgresQuery, call function: String = #function) async throws -> Int {
        try await read(call: function) { [logger] c in try await c.changed(query, logger) }
    }

    func rows(_ query: PostgresQuery, call function: String = #function) async throws -> [PostgresRow] {
        try await read(call: function) { [logger] c in try await c.run(query, logger) }
    }

    public func userCount() async throws -> Int {
        Int(try await rows("SELECT count(*) FROM account").first!.decode(Int64.self))
    }

    public func addUser(name: String, displayName: String, role: UserRole, passwordHash: String) async throws -> StoredUser {
        try await read { [logger] c in try await Self.insertUser(c, logger, name: name, displayName: displayName, role: role, passwordHash: passwordHash) }
    }

    static func insertUser(
        _ c: PostgresConnection, _ logger: Logger, name: String, displayName: String, role: UserRole,
        passwordHash: String
    ) async throws -> StoredUser {
        let now = Date().timeIntervalSince1970
        guard
            let row = try await c.run(
                """
                INSERT INTO account (name, name_key, display_name, role, password_hash, created)
                VALUES (\(name), \(UserName.key(name)), \(displayName), \(role.rawValue), \(passwordHash), \(now))
                ON CONFLICT (name_key) DO NOTHING RETURNING id
                """, logger
            ).first
        else {
            throw LiveError(.conflict, "a user named \"\(name)\" exists already (names are the same in any case)")
        }
        return StoredUser(
            id: try row.decode(Int64.self), name: name, displayName: displayName, role: role,
            created: Date(timeIntervalSince1970: now), disabled: false)
    }

    /// `NOTIFY bubbles_access, 'U[:C]'` inside the transaction of the change: every server of the
    /// store (and this one) hears it once the change is committed, never before, never for a
    /// change rolled back.
    static func notifyAccess(_ c: PostgresConnection, _ logger: Logger, _ changes: [AccessChange]) async throws {
        for change in changes { try await c.run("SELECT pg_notify(\(accessChannel), \(change.payload))", logger) }
    }

    static let accessChannel = "bubbles_access"

    public func users() async throws -> [StoredUser] {
        try await rows("SELECT \(unescaped: Self.userColumns) FROM account a ORDER BY a.name_key").map(Self.user)
    }

    public func user(named name: String) async throws -> (user: StoredUser, passwordHash: String)? {
        try await rows("SELECT \(unescaped: Self.userColumns), a.password_hash FROM account a WHERE a.name_key = \(UserName.key(name))")
            .first.map { (try Self.user($0), try Array($0)[6].decode(String.self)) }
    }

    public func setPassword(of user: Int64, hash: String) async throws {
        _ = try await change("UPDATE account SET password_hash = \(hash) WHERE id = \(user) RETURNING 1")
    }

    public func setDisabled(_ user: Int64, _ disabled: Bool) async throws {
        try await transaction(retry: true) { [logger] c in
            try await c.run("UPDATE account SET disabled = \(disabled) WHERE id = \(user)", logger)
            if disabled {
                try await c.run("DELETE FROM account_session WHERE account_id = \(user)", logger)
                try await Self.notifyAccess(c, logger, [AccessChange(user: user)])
            }
        }
    }

    public func createSession(hash: String, user: Int64, now: Date, policy: SessionPolicy) async throws {
        try await transaction(retry: true) { [logger] c in try await Self.insertSession(c, logger, hash: hash, user: user, now: now, policy: policy) }
    }

    static func insertSession(_ c: PostgresConnection, _ logger: Logger, hash: String, user: Int64, now: Date, policy: SessionPolicy) async throws {
        let t = now.timeIntervalSince1970
        try await c.run("DELETE FROM account_session WHERE expires < \(t) OR last_seen < \(t - policy.idle)", logger)
        try await c.run(
            """
            INSERT INTO account_session (hash, account_id, created, last_seen, expires) VALUES (\(hash), \(user), \(t), \(t), \(t + policy.lifetime))
            ON CONFLICT (hash) DO NOTHING
            """, logger)
    }

    public func sessionUser(hash: String, now: Date, policy: SessionPolicy) async throws -> StoredUser? {
        let t = now.timeIntervalSince1970
        guard
            let row = try await rows(
                """
                SELECT \(unescaped: Self.userColumns), s.last_seen FROM account_session s JOIN account a ON a.id = s.account_id
                WHERE s.hash = \(hash) AND s.expires > \(t) AND s.last_seen > \(t - policy.idle) AND NOT a.disabled
                """
            ).first
        else { return nil }
        if t - (try Array(row)[6].decode(Double.self)) > 60 {
            _ = try await change("UPDATE account_session SET last_seen = \(t) WHERE hash = \(hash) RETURNING 1")
        }
        return try Self.user(row)
    }

    public func deleteSession(hash: String) async throws {
        try await transaction(retry: true) { [logger] c in
            let users = try await c.run("DELETE FROM account_session WHERE hash = \(hash) RETURNING account_id", logger).map { try $0.decode(Int64.self) }
            try await Self.notifyAccess(c, logger, users.map { AccessChange(user: $0) })
        }
    }

    @discardableResult
    public func signOutEverywhere(_ user: Int64) async throws -> EndedCredentials {
        try await transaction(retry: true) { [logger] c in
            let sessions = try await c.changed("DELETE FROM account_session WHERE account_id = \(user) RETURNING 1", logger)
            let tokens = try await c.changed("DELETE FROM account_token WHERE account_id = \(user) RETURNING 1", logger)
            try await Self.notifyAccess(c, logger, [AccessChange(user: user)])
            return EndedCredentials(sessions: sessions, tokens: tokens)
        }
    }

    public func createToken(user: Int64, name: String, hash: String) async throws -> StoredToken {
        let now = Date().timeIntervalSince1970
        let id = try await rows("INSERT INTO account_token (account_id, name, hash, created) VALUES (\(user), \(name), \(hash), \(now)) RETURNING id")
            .first!.decode(Int64.self)
        return StoredToken(id: id, name: name, created: Date(timeIntervalSince1970: now), lastUsed: nil)
    }

    public func tokens(of user: Int64) async throws -> [StoredToken] {
        try await rows("SELECT id, name, created, last_used FROM account_token WHERE account_id = \(user) ORDER BY id").map {
            let (id, name, created, used) = try $0.decode((Int64, String, Double, Double?).self)
            return StoredToken(id: id, name: name, created: Date(timeIntervalSince1970: created), lastUsed: used.map(Date.init(timeIntervalSince1970:)))
        }
    }

    public func revokeToken(_ id: Int64, of user: Int64) async throws -> Bool {
        try await transaction(retry: true) { [logger] c in
            guard try await c.changed("DELETE FROM account_token WHERE id = \(id) AND account_id = \(user) RETURNING 1", logger) > 0 else { return false }
            try await Self.notifyAccess(c, logger, [AccessChange(user: user)])
            return true
        }
    }

    public func tokenUser(hash: String, now: Date) async throws -> StoredUser? {
        let t = now.timeIntervalSince1970
        guard
            let row = try await rows(
                """
                SELECT \(unescaped: Self.userColumns), coalesce(k.last_used, 0) FROM account_token k JOIN account a ON a.id = k.account_id
                WHERE k.hash = \(hash) AND NOT a.disabled
                """
            ).first
        else { return nil }
        if t - (try Array(row)[6].decode(Double.self)) > 60 {
            _ = try await change("UPDATE account_token SET last_used = \(t) WHERE hash = \(hash) RETURNING 1")
        }
        return try Self.user(row)
    }

    public func members(of conversation: Int64) async throws -> [StoredMember] {
        try await rows(
            """
            SELECT \(unescaped: Self.userColumns), m.access, m.added FROM member m JOIN account a ON a.id = m.account_id
            WHERE m.conversation_id = \(conversation) ORDER BY m.added, a.name_key
            """
        ).map {
            let cells = Array($0)
            return StoredMember(
                user: try Self.user($0), access: MemberAccess(rawValue: try cells[6].decode(String.self)) ?? .read,
                added: Date(timeIntervalSince1970: try cells[7].decode(Double.self)))
        }
    }

    public func setMember(_ conversation: Int64, user: StoredUser, access: MemberAccess) async throws {
        try await transaction(retry: true) { [logger] c in
            try await Self.upsertMember(c, logger, conversation, user: user, access: access)
            try await Self.notifyAccess(c, logger, [AccessChange(user: user.id, conversation: conversation)])
        }
    }

    static func upsertMember(_ c: PostgresConnection, _ logger: Logger, _ conversation: Int64, user: StoredUser, access: MemberAccess) async throws {
        // The conversation's row locked: positions of participants are taken one at a time.
        guard try await c.run("SELECT 1 FROM conversation WHERE id = \(conversation) FOR UPDATE", logger).first != nil else {
            throw LiveError(.notFound, "no conversation \(conversation)")
        }
        try await c.run(
            """
            INSERT INTO member (conversation_id, account_id, access, added) VALUES (\(conversation), \(user.id), \(access.rawValue), \(Date().timeIntervalSince1970))
            ON CONFLICT (conversation_id, account_id) DO UPDATE SET access = excluded.access
            """, logger)
        // A live conversation's writer speaks in it; an imported archive's people stay its own.
        if access.writes {
            try await c.run(
                """
                INSERT INTO participant (conversation_id, id, position, name)
                SELECT \(conversation), \(user.key), (SELECT coalesce(max(position), -1) + 1 FROM participant WHERE conversation_id = \(conversation)),
                       \(user.displayName)
                WHERE EXISTS (SELECT 1 FROM conversation WHERE id = \(conversation) AND source_format = 'live')
                ON CONFLICT (conversation_id, id) DO NOTHING
                """, logger)
        }
    }

    public func removeMember(_ conversation: Int64, user: Int64) async throws -> Bool {
        try await transaction(retry: true) { [logger] c in
            guard try await c.changed("DELETE FROM member WHERE conversation_id = \(conversation) AND account_id = \(user) RETURNING 1", logger) > 0 else {
                return false
            }
            try await Self.notifyAccess(c, logger, [AccessChange(user: user, conversation: conversation)])
            return true
        }
    }

    public func access(of user: StoredUser, to conversation: Int64) async throws -> MemberAccess? {
        try await read { [logger] c in try await Self.access(c, logger, of: user, to: conversation) }
    }

    static func access(_ c: PostgresConnection, _ logger: Logger, of user: StoredUser, to conversation: Int64) async throws -> MemberAccess? {
        guard let row = try await c.run(AccessRule.membership(of: user.id, in: conversation).postgres, logger).first else { return nil }
        let (access, unowned) = try row.decode((String?, Bool).self)
        return AccessRule.access(member: access.flatMap(MemberAccess.init(rawValue:)), isAdmin: user.isAdmin, unowned: unowned)
    }

    @discardableResult
    public func mark(_ conversation: Int64, user: Int64, read: Int64?, delivered: Int64?) async throws -> ReadMark {
        try await transaction(retry: true) { [logger] c in
            let last = try await c.run("SELECT coalesce(max(seq), 0) FROM message WHERE conversation_id = \(conversation)", logger).first!.decode(Int64.self)
            let r = min(max(read ?? 0, 0), last), d = min(max(delivered ?? 0, r), last)
            let row = try await c.run(
                """
                INSERT INTO read_mark (conversation_id, account_id, read_seq, delivered_seq) VALUES (\(conversation), \(user), \(r), \(d))
                ON CONFLICT (conversation_id, account_id) DO UPDATE
                SET read_seq = GREATEST(read_mark.read_seq, excluded.read_seq), delivered_seq = GREATEST(read_mark.delivered_seq, excluded.delivered_seq)
                RETURNING read_seq, delivered_seq
                """, logger
            ).first!
            let (readSeq, deliveredSeq) = try row.decode((Int64, Int64).self)
            let mark = ReadMark(user: user, conversation: conversation, read: readSeq, delivered: deliveredSeq)
            // Told to every server (this one too) once committed.
            try await c.run("SELECT pg_notify(\(Self.readsChannel), \(mark.payload))", logger)
            return mark
        }
    }

    static let readsChannel = "bubbles_reads"

    public func marks(of conversation: Int64) async throws -> [ReadMark] {
        try await rows("SELECT account_id, read_seq, delivered_seq FROM read_mark WHERE conversation_id = \(conversation) ORDER BY account_id").map {
            let (user, read, delivered) = try $0.decode((Int64, Int64, Int64).self)
            return ReadMark(user: user, conversation: conversation, read: read, delivered: delivered)
        }
    }

    public func settings(of user: Int64) async throws -> [String: String] {
        var all: [String: String] = [:]
        for row in try await rows("SELECT name, value FROM account_setting WHERE account_id = \(user)") {
            let (name, value) = try row.decode((String, String).self)
            all[name] = value
        }
        return all
    }

    public func setSetting(_ name: String, to value: String?, of user: Int64) async throws {
        if let value {
            _ = try await change(
                """
                INSERT INTO account_setting (account_id, name, value) VALUES (\(user), \(name), \(value))
                ON CONFLICT (account_id, name) DO UPDATE SET value = excluded.value RETURNING 1
                """)
        } else {
            _ = try await change("DELETE FROM account_setting WHERE account_id = \(user) AND name = \(name) RETURNING 1")
        }
    }

    public func unread(_ conversations: [Int64], user: Int64, own: String?) async throws -> [Int64: Int] {
        guard !conversations.isEmpty else { return [:] }
        let query: PostgresQuery =
            own.map { own in
                """
                SELECT m.conversation_id, count(*) FROM message m
                LEFT JOIN read_mark r ON r.conversation_id = m.conversation_id AND r.account_id = \(user)
                WHERE m.conversation_id = ANY(\(conversations)) AND m.rev IS NOT NULL AND NOT m.system AND coalesce(m.change, '') <> 'delete'
                  AND m.seq > coalesce(r.read_seq, 0) AND (m.sender IS NULL OR m.sender <> \(own))
                GROUP BY m.conversation_id
                """
            } ?? """
                SELECT m.conversation_id, count(*) FROM message m
                LEFT JOIN read_mark r ON r.conversation_id = m.conversation_id AND r.account_id = \(user)
                WHERE m.conversation_id = ANY(\(conversations)) AND m.rev IS NOT NULL AND NOT m.system AND coalesce(m.change, '') <> 'delete'
                  AND m.seq > coalesce(r.read_seq, 0) AND NOT m.outgoing
                GROUP BY m.conversation_id
                """
        var counts = Dictionary(uniqueKeysWithValues: conversations.map { ($0, 0) })
        for row in try await rows(query) {
            let (c, n) = try row.decode((Int64, Int64).self)
            counts[c] = Int(n)
        }
        return counts
    }

    public func readableConversations(of user: StoredUser) async throws -> Set<Int64> {
        Set(try await rows(AccessRule.readable(by: user).postgres).map { try $0.decode(Int64.self) })
    }

    public func createInvite(hash: String, conversation: Int64, by user: Int64, access: MemberAccess, expires: Date) async throws {
        _ = try await change(
            """
            INSERT INTO invite (hash, conversation_id, created_by, access, created, expires)
            VALUES (\(hash), \(conversation), \(user), \(access.rawValue), \(Date().timeIntervalSince1970), \(expires.timeIntervalSince1970))
            RETURNING 1
            """)
    }

    public func invitation(hash: String, now: Date) async throws -> PendingInvite? {
        guard
            let row = try await rows(
                """
                SELECT i.conversation_id, COALESCE(NULLIF(a.display_name, ''), a.name, ''), i.access, i.expires
                FROM invite i LEFT JOIN account a ON a.id = i.created_by
                WHERE i.hash = \(hash) AND i.used IS NULL AND i.expires > \(now.timeIntervalSince1970)
                """
            ).first
        else { return nil }
        let (id, by, access, expires) = try row.decode((Int64, String, String, Double).self)
        return PendingInvite(conversation: id, invitedBy: by, access: MemberAccess(rawValue: access) ?? .read, expires: Date(timeIntervalSince1970: expires))
    }

    public func acceptInvite(hash: String, joiner: InviteJoiner, now: Date, policy: SessionPolicy) async throws -> AcceptedInvite {
        let t = now.timeIntervalSince1970
        // One transaction: the invitation's row is locked by the UPDATE that takes it (a second
        // accept waits, then finds it used and takes nothing); a name taken rolls all back.
        return try await transaction(retry: true) { [logger] c in
            guard
                let row = try await c.run(
                    """
                    UPDATE invite SET used = \(t) WHERE hash = \(hash) AND used IS NULL AND expires > \(t)
                    RETURNING conversation_id, access
                    """, logger
                ).first
            else { throw InviteText.invalid }
            let (conversation, raw) = try row.decode((Int64, String).self)
            let member: StoredUser
            switch joiner {
            case .existing(let user): member = user
            case let .newAccount(name, displayName, passwordHash, sessionHash):
                member = try await Self.insertUser(c, logger, name: name, displayName: displayName, role: .member, passwordHash: passwordHash)
                try await Self.insertSession(c, logger, hash: sessionHash, user: member.id, now: now, policy: policy)
            }
            try await c.run("UPDATE invite SET used_by = \(member.id) WHERE hash = \(hash)", logger)
            // A member already is kept at the higher of both accesses.
            let current = try await Self.access(c, logger, of: member, to: conversation)
            try await Self.upsertMember(c, logger, conversation, user: member, access: max(current ?? .read, MemberAccess(rawValue: raw) ?? .write))
            try await Self.notifyAccess(c, logger, [AccessChange(user: member.id, conversation: conversation)])
            return AcceptedInvite(conversation: conversation, user: member)
        }
    }

    public func recordMedia(_ files: [String], in conversation: Int64) async throws {
        try await read { [logger] c in try await Self.recordMedia(c, files, in: conversation, logger) }
    }

    static func recordMedia(_ c: PostgresConnection, _ files: some Collection<String>, in conversation: Int64, _ logger: Logger) async throws {
        guard !files.isEmpty else { return }
        try await c.run(
            """
            INSERT INTO conversation_media (conversation_id, file) SELECT \(conversation), unnest(\(Array(files))::text[])
            ON CONFLICT DO NOTHING
            """, logger)
    }

    public func mediaReadable(_ file: String, by user: StoredUser) async throws -> Bool {
        try await rows(AccessRule.mediaReadable(file, by: user).postgres).first != nil
    }
}

extension SharedStatement {
    /// The statement as postgres-nio sends it: `$1`, `$2`, … bound to the same values.
    var postgres: PostgresQuery {
        var binds = PostgresBindings(capacity: arguments.count)
        for a in arguments {
            switch a {
            case .int(let v): binds.append(v)
            case .text(let v): binds.append(v)
            case .bool(let v): binds.append(v)
            }
        }
        return PostgresQuery(unsafeSQL: numbered, binds: binds)
    }
}
