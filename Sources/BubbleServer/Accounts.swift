import BubbleStore
import Foundation
import Hummingbird
import HummingbirdBcrypt
import HummingbirdCore
import NIOPosix
import Synchronization

/// Who a request is. Without users in the store the server has one owner (on loopback, or who
/// holds its token): `.owner`, today's single-owner mode. Once a user exists every request but
/// the sign-in's is a signed-in user's: by the `bk_session` cookie (`.session`) or an API token.
public enum Identity: Sendable, Hashable {
    /// The single owner: no users in the store, a request on loopback or with the server's token.
    case owner
    /// A signed-in user, and how they proved it.
    case user(StoredUser, Credential)

    /// The signed-in user; nil for the owner.
    public var user: StoredUser? {
        if case let .user(u, _) = self { return u }
        return nil
    }

    /// The participant id the user speaks as in every live conversation; nil for the owner
    /// (who names a sender).
    public var speaker: String? { user?.key }

    /// The CSRF token of a cookie session (unsafe requests must carry it).
    var csrf: String? {
        if case let .user(_, .session(_, csrf)) = self { return csrf }
        return nil
    }
}

/// How a user proved who they are; the store knows each by its SHA-256 only.
public enum Credential: Sendable, Hashable {
    /// The `bk_session` cookie's session (its SHA-256) and the CSRF token unsafe requests carry.
    case session(hash: String, csrf: String)
    /// An API token (its SHA-256) from `Authorization: Bearer`.
    case token(hash: String)
}

/// Passwords: bcrypt (hummingbird-auth's), off Swift's cooperative threads (a hash takes tens of
/// milliseconds on purpose).
public enum Passwords {
    /// bcrypt's cost: 2^10 rounds (~60 ms here), the least OWASP advises.
    public static let cost: UInt8 = 10

    /// The bcrypt hash of `password` at `cost`, made off the cooperative threads.
    public static func hash(_ password: String, cost: UInt8 = cost) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches the bcrypt `hash`.
    public static func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }

    /// Why `password` is too weak to keep (nil: it is fine).
    public static func problem(_ password: String) -> String? {
        if password.count < 8 { return "expected at least 8 characters" }
        if password.utf8.count > 72 { return "expected at most 72 bytes (bcrypt reads no more)" }
        return nil
    }
}

/// How accounts behave on one server.
public struct AccountSettings: Sendable {
    /// How long sessions last from sign-in and without a request.
    public var sessions = SessionPolicy()
    /// `Secure` on the session cookie even over plain HTTP (a TLS proxy in front).
    public var secureCookies = false
    /// Failed sign-ins a minute per account and per address before 429.
    public var failedSignInsPerMinute = 10
    /// How long an invitation link works.
    public var inviteLifetime: TimeInterval = 7 * 86_400
    /// The defaults: 30-day sessions idle for at most 7 days, 10 failed sign-ins a minute, 7-day invitations.
    public init() {}
}

/// Sign-in, sessions, tokens and who reaches which conversation, for the routes and the
/// middleware. Everything is checked here against the store (no session is cached: one signed
/// out on another server is gone on this one at its next request).
final class AccountGate: Sendable {
    let store: any AccountStore
    let settings: AccountSettings
    let limiter: SignInLimiter
    /// A bcrypt hash of nothing anyone knows: an unknown name is checked against it, so it takes
    /// as long as a wrong password.
    let decoy: String
    /// Whether the store has users (checked at most once a second until it has: then for good).
    private let active = Mutex<(on: Bool, checked: ContinuousClock.Instant?)>((false, nil))

    static let cookie = "bk_session"

    init(store: any AccountStore, settings: AccountSettings) {
        self.store = store
        self.settings = settings
        limiter = SignInLimiter(limit: settings.failedSignInsPerMinute)
        decoy = Bcrypt.hash(AccountSecret.make(), cost: Passwords.cost)
    }

    func accountsActive() async throws -> Bool {
        let now = ContinuousClock.now
        let known = active.withLock { s -> Bool? in
            if s.on { return true }
            if let c = s.checked, now - c < .seconds(1) { return false }
            return nil
        }
        if let known { return known }
        let on = try await store.userCount() > 0
        active.withLock { s in s.on = s.on || on; s.checked = now }
        return on
    }

    /// The CSRF token of a session: derived from its secret (which only the browser holds,
    /// HttpOnly), so every server computes the same one and nothing more is stored.
    static func csrf(of secret: String) -> String { String(AccountSecret.hash("csrf:" + secret).prefix(40)) }

    /// The user a request's cookie or bearer token stands for; nil when it carries neither or
    /// what it carries is not (or no longer) valid.
    func identify(_ request: Request) async throws -> Identity? {
        if let auth = request.headers[.authorization], auth.hasPrefix("Bearer ") {
            let hash = AccountSecret.hash(String(auth.dropFirst(7)).trimmingCharacters(in: .whitespaces))
            return try await store.tokenUser(hash: hash, now: Date()).map { .user($0, .token(hash: hash)) }
        }
        guard let secret = Self.cookie(Self.cookie, in: request) else { return nil }
        let hash = AccountSecret.hash(secret)
        return try await store.sessionUser(hash: hash, now: Date(), policy: settings.sessions).map {
            .user($0, .session(hash: hash, csrf: Self.csrf(of: secret)))
        }
    }

    /// Whether an identity still holds (for an open socket): its session or token, its user.
    func stillValid(_ identity: Identity) async -> Bool {
        guard case let .user(_, credential) = identity else { return true }
        switch credential {
        case let .session(hash, _): return ((try? await store.sessionUser(hash: hash, now: Date(), policy: settings.sessions)) ?? nil) != nil
        case let .token(hash): return ((try? await store.tokenUser(hash: hash, now: Date())) ?? nil) != nil
        }
    }

    /// For a user's socket: whether it may stay open (still signed in, still a member); nil for
    /// the single owner.
    func watch(_ identity: Identity, in conversation: Int64) -> (@Sendable () async -> Bool)? {
        guard let user = identity.user else { return nil }
        return { [self] in
            guard await stillValid(identity) else { return false }
            let access: MemberAccess?? = try? await store.access(of: user, to: conversation)
            return (access ?? nil) != nil
        }
    }

    /// Signs in: the user and a new session's secret (for the cookie). Unknown names, disabled
    /// users and wrong passwords are one 401 and take one bcrypt check each; the 11th failure in
    /// a minute for a name or an address is a 429, before any check.
    func signIn(name: String, password: String, address: String) async throws -> (StoredUser, String) {
        let keys = ["name:" + UserName.key(name), "address:" + address]
        if let wait = limiter.blocked(keys) {
            throw APIError(status: .tooManyRequests, message: "too many failed sign-ins; try again in \(wait) s", headers: [.retryAfter: String(wait)])
        }
        let found = try await store.user(named: name)
        let matches = try await Passwords.verify(password, hash: found?.passwordHash ?? decoy)
        guard let found, matches, !found.user.disabled else {
            limiter.failed(keys)
            throw APIError(status: .unauthorized, message: "that name and password do not match a user here")
        }
        let secret = AccountSecret.make()
        try await store.createSession(hash: AccountSecret.hash(secret), user: found.user.id, now: Date(), policy: settings.sessions)
        return (found.user, secret)
    }

    /// `Set-Cookie` for a new session (or, with nil, one that ends the cookie).
    func sessionCookie(_ secret: String?, request: Request) -> String {
        // This server speaks plain HTTP: a TLS proxy in front says so (or `--secure-cookies`).
        let secure = settings.secureCookies || request.headers[HTTPFields.Element.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
        let age = secret == nil ? 0 : Int(settings.sessions.lifetime)
        return "\(Self.cookie)=\(secret ?? ""); Path=/; Max-Age=\(age); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// A cookie's value in a request.
    static func cookie(_ name: String, in request: Request) -> String? {
        for cookie in request.headers[values: .cookie].flatMap({ $0.split(separator: ";") }) {
            let kv = cookie.trimmingCharacters(in: .whitespaces)
            if kv.hasPrefix(name + "=") { return String(kv.dropFirst(name.count + 1)) }
        }
        return nil
    }
}

/// Failed sign-ins per key (a name, an address) in the last minute, in this server's memory.
final class SignInLimiter: Sendable {
    let limit: Int
    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])

    init(limit: Int) { self.limit = limit }

    /// Seconds to wait when a key has `limit` failures in the last minute; nil: go on.
    func blocked(_ keys: [String]) -> Int? {
        let now = ContinuousClock.now
        return failures.withLock { f in
            var wait: Int?
            for key in keys {
                let recent = (f[key] ?? []).filter { now - $0 < .seconds(60) }
                f[key] = recent.isEmpty ? nil : recent
                if recent.count >= limit, let oldest = recent.first {
                    let left = Int(((oldest + .seconds(60)) - now).components.seconds) + 1
                    wait = max(wait ?? 0, left)
                }
            }
            return wait
        }
    }

    func failed(_ keys: [String]) {
        let now = ContinuousClock.now
        failures.withLock { f in
            // Keys of the past go as the map grows (a flood of made-up names).
            if f.count > 50_000 { f = f.filter { now - ($0.value.last ?? now) < .seconds(60) } }
            for key in keys { f[key, default: []].append(now) }
        }
    }
}
