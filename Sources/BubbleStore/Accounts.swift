import Crypto
import Foundation

/// What a user may do on the whole server: an admin creates conversations for others, imports
/// archives (which are theirs), shares them, removes members; a member uses the conversations
/// they belong to.
public enum UserRole: String, Sendable, Hashable, Codable {
    /// Creates conversations for others, imports archives, shares them, manages users.
    case admin
    /// Uses the conversations they belong to.
    case member
}

/// A person who signs in. `name` is unique case-insensitively and is the person's participant
/// id in every live conversation (`key`, its lower-case form).
public struct StoredUser: Sendable, Hashable {
    /// The user's number in the store.
    public var id: Int64
    /// The name they sign in with (unique in any case).
    public var name: String
    /// The name shown to others.
    public var displayName: String
    /// Admin or member.
    public var role: UserRole
    /// When the user was added.
    public var created: Date
    /// A disabled user cannot sign in; their sessions are ended.
    public var disabled: Bool
    /// The name as participants and look-ups know it: lower case.
    public var key: String { UserName.key(name) }
    /// True for an admin.
    public var isAdmin: Bool { role == .admin }
    /// A user; every parameter is the property of the same name.
    public init(id: Int64, name: String, displayName: String, role: UserRole, created: Date, disabled: Bool) {
        self.id = id; self.name = name; self.displayName = displayName; self.role = role; self.created = created; self.disabled = disabled
    }
}

/// A user's name: 1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit.
public enum UserName {
    /// The name as look-ups and participant ids know it: lower case.
    public static func key(_ name: String) -> String { name.lowercased() }

    /// Why `name` cannot be a user's name (nil: it can).
    public static func problem(_ name: String) -> String? {
        guard !name.isEmpty, name.count <= 64 else { return "expected 1 to 64 characters" }
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || ("0"..."9").contains(Character(first)) else {
            return "expected a letter or digit first"
        }
        for s in name.unicodeScalars where !(s.properties.isAlphabetic || ("0"..."9").contains(Character(s)) || ".-_".unicodeScalars.contains(s)) {
            return "\"\(s)\" is not allowed; expected letters, digits, '.', '_' and '-'"
        }
        return nil
    }
}

/// How a user reaches a conversation: its owner (who imported it or created it; may share it),
/// a member who writes, or one who only reads (an archive shared with them).
public enum MemberAccess: String, Sendable, Hashable, Codable, Comparable {
    /// Reads the conversation.
    case read
    /// Reads and writes.
    case write
    /// Reads, writes, shares and removes members.
    case owner
    /// True for `write` and `owner`.
    public var writes: Bool { self != .read }
    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
    private var rank: Int { self == .read ? 0 : self == .write ? 1 : 2 }
}

/// A member of a conversation.
public struct StoredMember: Sendable, Hashable {
    /// The member.
    public var user: StoredUser
    /// What they may do.
    public var access: MemberAccess
    /// When they joined.
    public var added: Date
}

/// An API token as its owner sees it (the token itself is shown once, when made; the store keeps
/// its SHA-256 only).
public struct StoredToken: Sendable, Hashable {
    /// The token's number (to revoke it).
    public var id: Int64
    /// The name its owner gave it.
    public var name: String
    /// When it was made.
    public var created: Date
    /// When it was last used; nil if never.
    public var lastUsed: Date?
}

/// What the sessions of a store last: `lifetime` from sign-in at most, `idle` without a request.
public struct SessionPolicy: Sendable, Hashable {
    /// The longest a session lasts from sign-in (seconds).
    public var lifetime: TimeInterval
    /// The longest a session lasts without a request (seconds).
    public var idle: TimeInterval
    /// A policy of `lifetime` and `idle` seconds (default 30 days and 7 days).
    public init(lifetime: TimeInterval = 30 * 86_400, idle: TimeInterval = 7 * 86_400) {
        self.lifetime = lifetime; self.idle = idle
    }
}

/// Who accepts an invitation: a signed-in user, or a new account made with it.
public enum InviteJoiner: Sendable {
    /// A user who has an account.
    case existing(StoredUser)
    /// A new member's account and the SHA-256 of the session it is signed in with.
    case newAccount(name: String, displayName: String, passwordHash: String, sessionHash: String)
}

/// An invitation that can still be used, as its page tells it.
public struct PendingInvite: Sendable, Hashable {
    /// The conversation it opens.
    public var conversation: Int64
    /// The name shown of the member who made it ("" when their account is gone).
    public var invitedBy: String
    /// The access it gives.
    public var access: MemberAccess
    /// When it stops working.
    public var expires: Date
    /// An invitation; every parameter is the property of the same name.
    public init(conversation: Int64, invitedBy: String, access: MemberAccess, expires: Date) {
        self.conversation = conversation; self.invitedBy = invitedBy; self.access = access; self.expires = expires
    }
}

/// What accepting an invitation did: the conversation joined, and by whom.
public struct AcceptedInvite: Sendable, Hashable {
    /// The conversation joined.
    public var conversation: Int64
    /// The member (the new account, for `InviteJoiner.newAccount`).
    public var user: StoredUser
    /// What accepting did; every parameter is the property of the same name.
    public init(conversation: Int64, user: StoredUser) { self.conversation = conversation; self.user = user }
}

/// How many credentials `signOutEverywhere` ended.
public struct EndedCredentials: Sendable, Hashable {
    /// Cookie sessions ended.
    public var sessions: Int
    /// API tokens revoked.
    public var tokens: Int
    /// Counts; every parameter is the property of the same name.
    public init(sessions: Int, tokens: Int) { self.sessions = sessions; self.tokens = tokens }
}

/// Where a user is in a conversation: the newest message they have read, and the newest that
/// reached one of their devices (the peers' ticks).
public struct ReadMark: Sendable, Hashable {
    /// The account; 0 for the owner of a server without accounts.
    public var user: Int64
    /// The conversation.
    public var conversation: Int64
    /// The newest message (sequence number) the user has read; 0: none.
    public var read: Int64
    /// The newest message that reached one of the user's devices (at least `read`).
    public var delivered: Int64
    /// A user's marks in a conversation.
    public init(user: Int64, conversation: Int64, read: Int64, delivered: Int64) {
        self.user = user; self.conversation = conversation; self.read = read; self.delivered = delivered
    }

    /// `U:C:READ:DELIVERED`, as `NOTIFY bubbles_reads` carries it.
    var payload: String { "\(user):\(conversation):\(read):\(delivered)" }

    init?(payload: String) {
        let parts = payload.split(separator: ":").compactMap { Int64($0) }
        guard parts.count == 4 else { return nil }
        (user, conversation, read, delivered) = (parts[0], parts[1], parts[2], parts[3])
    }
}

/// A change to what a user may reach, told to every server of the store so that open sockets
/// close at once: a session or token ended, the user disabled, or (with `conversation`) their
/// membership removed or changed. Sockets ask the store again; the store is the truth.
public struct AccessChange: Sendable, Hashable {
    /// The user whose credentials or membership changed.
    public var user: Int64
    /// The conversation whose membership changed; nil: the user's credentials.
    public var conversation: Int64?
    /// A change of `user`'s access (to `conversation`, or everywhere when nil).
    public init(user: Int64, conversation: Int64? = nil) { self.user = user; self.conversation = conversation }

    /// `U` or `U:C`, as `NOTIFY bubbles_access` and the SQLite store's `access_event` carry it.
    var payload: String { conversation.map { "\(user):\($0)" } ?? "\(user)" }

    init?(payload: String) {
        let parts = payload.split(separator: ":")
        guard (1...2).contains(parts.count), let user = Int64(parts[0]) else { return nil }
        self.user = user
        conversation = parts.count == 2 ? Int64(parts[1]) : nil
        if parts.count == 2 && conversation == nil { return nil }
    }
}

/// The random values that stand for a signed-in client: 32 bytes from the system's
/// cryptographic generator, URL-safe base64, and the hex SHA-256 the store keeps instead.
public enum AccountSecret {
    /// A new secret: 32 random bytes as URL-safe base64 after `prefix`.
    public static func make(prefix: String = "") -> String {
        var g = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &g) }
        return prefix
            + Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The hex SHA-256 of `secret`: what the store keeps.
    public static func hash(_ secret: String) -> String {
        SHA256.hex(of: Array(secret.utf8))
    }
}

/// The one answer for an invitation that cannot be used (the store's, and the server's when it
/// checks before hashing a new account's password).
package enum InviteText {
    package static let invalid = LiveError(.notFound, "this invitation is not valid: it was used already, has expired or never existed")
}

/// The store's file names of media in a message's stored JSON or a path (`media/ab/<sha256>.ext`).
enum MediaNames {
    nonisolated(unsafe) static let pattern = #/media\\?/[0-9a-f]{2}\\?/([0-9a-f]{64}(?:\.[a-z0-9]{1,10})?)/#

    static func files(in text: String) -> [String] {
        text.matches(of: pattern).map { String($0.output.1) }
    }

    /// The files copied messages and participants show (`bubbles db copy`).
    static func files(in rows: [CopiedMessage]) -> Set<String> {
        Set(rows.flatMap { r in r.extra.map { $0.contains("media") ? files(in: $0) : [] } ?? [] })
    }
}
