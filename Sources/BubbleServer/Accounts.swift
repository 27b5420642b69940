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
    /// Nobody known: no users' credentials on a server with users (what every request is until
    /// `IdentityMiddleware` says otherwise). Reaches only the routes open to anyone.
    case anonymous
    /// The single owner: no users in the store, a request on loopback or with the server's token.
    case owner
    /// A signed-in user, and how they proved it.
    case user(StoredUser, Credential)

    /// The signed-in user; nil for the owner and for nobody.
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
    let store: any UserStore & MembershipStore
    let settings: AccountSettings
    let limiter: SignInLimiter
    /// A bcrypt hash of nothing anyone knows: an unknown name is checked against it, so it takes
    /// as long as a wrong password.
    let decoy: String
    /// Whether the store has users (checked at most once a second until it has: then for good).
    private let active = Mutex<(on: Bool, checked: ContinuousClock.Instant?)>((false, nil))

    static let cookie = "bk_session"

    init(store: any UserStore & MembershipStore, settings: AccountSettings) {
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
        active.withLock { s in
            s.on = s.on || on; s.checked = now
        }
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
    /// Throws when the store cannot say (a failed call is not a revocation).
    func stillValid(_ identity: Identity) async throws -> Bool {
        switch identity {
        case .anonymous: return false
        case .owner: return true
        case .user(_, .session(let hash, _)): return try await store.sessionUser(hash: hash, now: Date(), policy: settings.sessions) != nil
        case .user(_, .token(let hash)): return try await store.tokenUser(hash: hash, now: Date()) != nil
        }
    }

    /// For a user's socket: whether it may stay open with what it was opened with — still signed
    /// in, still a member with the same access (one who lost the right to write reconnects as a
    /// reader). Throws when the store cannot say.
    func stillAllowed(_ identity: Identity, _ decided: DecidedConversation) async throws -> Bool {
        guard let user = identity.user else { return true }
        guard try await stillValid(identity) else { return false }
        return try await store.access(of: user, to: decided.id) == decided.access
    }

    /// Signs in: the user and a new session's secret (for the cookie). Unknown names, disabled
    /// users and wrong passwords are one 401 and take one bcrypt check each; `SignInLimiter`
    /// answers 429 before any check.
    func signIn(name: String, password: String, address: String) async throws -> (StoredUser, String) {
        if let wait = limiter.blocked(name: UserName.key(name), address: address) {
            throw APIError(status: .tooManyRequests, message: "too many failed sign-ins; try again in \(wait) s", headers: [.retryAfter: String(wait)])
        }
        let found = try await store.user(named: name)
        let matches = try await Passwords.verify(password, hash: found?.passwordHash ?? decoy)
        guard let found, matches, !found.user.disabled else {
            limiter.failed(name: UserName.key(name), address: address)
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

/// Failed sign-ins in the last minute, in this server's memory, counted so that nobody can lock
/// others out (OWASP's advice): a name from one address is refused after `limit` failures from
/// that address; an address after `limit × 10` failures for any names (one machine guessing many
/// accounts); a name after `limit` failures from anywhere, but only for addresses that have failed
/// themselves (many machines guessing one account) — the right password from an address that has
/// not failed always gets through. Behind a proxy the address is the client's
/// (`--trusted-proxy`).
final class SignInLimiter: Sendable {
    let limit: Int
    var addressLimit: Int { limit * 10 }
    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])

    init(limit: Int) { self.limit = limit }

    /// Seconds to wait before `name` may try again from `address`; nil: go on.
    func blocked(name: String, address: String) -> Int? {
        let now = ContinuousClock.now
        return failures.withLock { f in
            func wait(_ key: String, _ limit: Int) -> Int? {
                let recent = (f[key] ?? []).filter { now - $0 < .seconds(60) }
                f[key] = recent.isEmpty ? nil : recent
                guard recent.count >= limit, let oldest = recent.first else { return nil }
                return Int(((oldest + .seconds(60)) - now).components.seconds) + 1
            }
            let pair = wait("pair:" + name + "\u{0}" + address, limit)
            let byAddress = wait("address:" + address, addressLimit)
            let addressFailed = !(f["address:" + address] ?? []).isEmpty
            let byName = addressFailed ? wait("name:" + name, limit) : nil
            return [pair, byAddress, byName].compactMap { $0 }.max()
        }
    }

    func failed(name: String, address: String) {
        let now = ContinuousClock.now
        failures.withLock { f in
            // Keys of the past go as the map grows (a flood of made-up names).
            if f.count > 50_000 { f = f.filter { now - ($0.value.last ?? now) < .seconds(60) } }
            for key in ["pair:" + name + "\u{0}" + address, "address:" + address, "name:" + name] { f[key, default: []].append(now) }
        }
    }
}

/// The proxies whose `X-Forwarded-For` is believed (`--trusted-proxy CIDR`): a request from one
/// of them is counted against the client the proxy names — the rightmost address in the header
/// that is not itself a trusted proxy — rather than against the proxy, which every user behind
/// it shares. From any other peer the header is ignored (anyone can write it).
package struct TrustedProxies: Sendable {
    package struct Range: Sendable, Hashable {
        let bytes: [UInt8]
        let prefix: Int

        /// `10.0.0.0/8`, `127.0.0.1` (one address), `fd00::/8`; nil for anything else.
        package init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1)
            guard let bytes = TrustedProxies.address(String(parts[0])) else { return nil }
            let bits = bytes.count * 8
            if parts.count == 2 {
                guard let p = Int(parts[1]), (0...bits).contains(p), String(p) == parts[1] else { return nil }
                prefix = p
            } else {
                prefix = bits
            }
            self.bytes = bytes
        }

        func contains(_ other: [UInt8]) -> Bool {
            guard other.count == bytes.count else { return false }
            var left = prefix
            for i in bytes.indices where left > 0 {
                let take = min(8, left)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
                if bytes[i] & mask != other[i] & mask { return false }
                left -= take
            }
            return true
        }
    }

    let ranges: [Range]

    init(_ ranges: [Range] = []) { self.ranges = ranges }

    /// The address's bytes (4 for IPv4, 16 for IPv6; an IPv4-mapped IPv6 address as IPv4).
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    func trusts(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.address(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client a request stands for: `peer` itself, or, when `peer` is a trusted proxy, the
    /// address its `X-Forwarded-For` names last that is not a trusted proxy.
    func client(of request: Request, peer: String) -> String {
        guard trusts(peer) else { return peer }
        let hops = request.headers[values: HTTPFields.Element.Name("X-Forwarded-For")!]
            .flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard Self.address(hop) != nil else { return peer }
            if !trusts(hop) { return hop }
        }
        return peer
    }
}
