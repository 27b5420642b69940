/// Who reaches a conversation — one rule, written once for both backends:
///
/// - a member has their membership's access;
/// - an admin owns a conversation that has no members at all (imported from the command line,
///   or made before accounts);
/// - nobody else reaches it.
///
/// The decision is Swift (`access(member:isAdmin:unowned:)`); the three questions the stores ask
/// the database for it are `SharedStatement`s, the SQL both dialects read alike, so
/// `access(of:to:)`, `readableConversations(of:)` and `mediaReadable(_:by:)` cannot drift apart
/// between SQLite and PostgreSQL.
enum AccessRule {
    /// The access the rule gives: `member`'s own when there is one, else `.owner` for an admin
    /// when the conversation is `unowned` (has no members), else none.
    static func access(member: MemberAccess?, isAdmin: Bool, unowned: Bool) -> MemberAccess? {
        if let member { return member }
        return isAdmin && unowned ? .owner : nil
    }

    /// "`column`'s conversation has no members."
    private static func unowned(_ column: String) -> String {
        "NOT EXISTS (SELECT 1 FROM member m WHERE m.conversation_id = \(column))"
    }

    /// One row — `user`'s membership access (text or NULL) and whether the conversation has no
    /// members — or none when there is no such conversation.
    static func membership(of user: Int64, in conversation: Int64) -> SharedStatement {
        SharedStatement(
            """
            SELECT (SELECT access FROM member WHERE conversation_id = c.id AND account_id = ?), \(unowned("c.id"))
            FROM conversation c WHERE c.id = ?
            """, [.int(user), .int(conversation)])
    }

    /// The ids of the conversations `user` reaches.
    static func readable(by user: StoredUser) -> SharedStatement {
        SharedStatement(
            """
            SELECT conversation_id FROM member WHERE account_id = ?
            UNION SELECT id FROM conversation c WHERE ? AND \(unowned("c.id"))
            """, [.int(user.id), .bool(user.isAdmin)])
    }

    /// A row when `user` reaches a conversation that shows `file` (`<sha256>.<ext>`), or `file`
    /// is a person's picture (names are for everyone who reads).
    static func mediaReadable(_ file: String, by user: StoredUser) -> SharedStatement {
        SharedStatement(
            """
            SELECT 1 FROM conversation_media f WHERE f.file = ? AND (
                EXISTS (SELECT 1 FROM member m WHERE m.conversation_id = f.conversation_id AND m.account_id = ?)
                OR (? AND \(unowned("f.conversation_id"))))
            UNION ALL SELECT 1 FROM person p WHERE p.avatar = 'media/' || substr(?, 1, 2) || '/' || ?
            LIMIT 1
            """, [.text(file), .int(user.id), .bool(user.isAdmin), .text(file), .text(file)])
    }
}

/// A statement in the SQL both backends read alike, with `?` for its arguments in order:
/// `SQLiteStore` hands it to GRDB as it is, `PostgresStore` numbers the marks (`$1`, `$2`, …)
/// and binds the same values. Only for statements whose text has no `?` of its own (no string
/// literal or operator with one).
struct SharedStatement: Sendable {
    /// A value bound to a `?`.
    enum Argument: Sendable, Equatable {
        case int(Int64)
        case text(String)
        case bool(Bool)
    }

    let sql: String
    let arguments: [Argument]

    init(_ sql: String, _ arguments: [Argument]) {
        precondition(sql.utf8.count { $0 == UInt8(ascii: "?") } == arguments.count, "a shared statement needs one argument per ?")
        self.sql = sql
        self.arguments = arguments
    }

    /// The text with its marks numbered, as PostgreSQL wants them.
    var numbered: String {
        var n = 0
        var out = ""
        out.reserveCapacity(sql.utf8.count + arguments.count)
        for ch in sql {
            if ch == "?" {
                n += 1
                out += "$\(n)"
            } else {
                out.append(ch)
            }
        }
        return out
    }
}
