import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore

/// Who a request is, before routing (`RouteAccess` decides, after routing, what they reach).
/// First the `Host`: a name this server was not started for is refused (421), so a web page that
/// re-binds its own name to this machine's address (DNS rebinding) cannot use it. Single-owner
/// mode (no users in the store): the server's token when it has one (`?token=`,
/// `Authorization: Bearer`, the `bk_token` cookie), and no write from another site's page. Once
/// a user exists: the user of the session cookie or API token (else anonymous); cookie sessions
/// prove unsafe requests with `X-CSRF-Token` and a same-origin `Origin`.
struct IdentityMiddleware: RouterMiddleware {
    typealias Context = BubbleRequestContext
    let gate: AccountGate
    let token: String?
    let hosts: AllowedHosts
    let proxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.address = proxies.client(of: request, peer: context.address)
        guard hosts.allows(request.head.authority) else {
            throw APIError(
                status: .misdirectedRequest,
                message:
                    "this server does not answer for the host \"\(request.head.authority ?? "")\"; start it with --public-host NAME to be reached by that name")
        }
        let unsafe = ![.get, .head, .options].contains(request.method)
        if unsafe && Self.crossSite(request) {
            throw APIError.forbidden(
                "a write from another site (Origin \(request.headers[.origin] ?? "none"), Sec-Fetch-Site \(Self.fetchSite(request) ?? "none")) is refused; this server takes writes from its own pages and from programs"
            )
        }
        guard try await gate.accountsActive() else {
            context.identity = .owner
            return try await ownerMode(request, context: context, next: next)
        }
        guard let identity = try await gate.identify(request) else { return try await next(request, context) }
        context.identity = identity
        if unsafe, let csrf = identity.csrf {
            guard let given = request.headers[HTTPFields.Element.Name("X-CSRF-Token")!], ServerToken.constantTimeEqual(given, csrf) else {
                throw APIError.forbidden("a write with a session cookie needs the X-CSRF-Token header (the \"csrf\" sign-in gave, or the page's bk-csrf)")
            }
        }
        return try await next(request, context)
    }

    /// Today's single-owner check: the token, when the server has one (`/healthz` needs none).
    func ownerMode(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token, request.uri.path != "/healthz" else { return try await next(request, context) }
        guard ServerToken.carries(request, token: token) else {
            throw APIError(status: .unauthorized, message: "this server needs its token: ?token=… or Authorization: Bearer …")
        }
        var response = try await next(request, context)
        // A browser given the token once (the URL printed) keeps it in a cookie of this site only.
        if request.uri.queryParameters["token"] != nil {
            response.headers[.setCookie] = "bk_token=\(token); Path=/; HttpOnly; SameSite=Strict"
        }
        return response
    }

    /// Whether an unsafe request comes from another site's page: a browser says where a request
    /// comes from (`Origin` on every cross-origin write, `Sec-Fetch-Site` on every request of
    /// current browsers); one that names another origin, or "null", is refused whatever its
    /// content type. A request without either is a program's (curl, a script), not a page's.
    static func crossSite(_ request: Request) -> Bool {
        if request.headers[.origin] != nil { return !LiveRoutes.sameOrigin(request) }
        if let site = fetchSite(request) { return site != "same-origin" && site != "none" }
        return false
    }

    static func fetchSite(_ request: Request) -> String? {
        request.headers[HTTPFields.Element.Name("Sec-Fetch-Site")!]?.lowercased()
    }
}

/// The names (`Host`) this server answers to: loopback's (`127.0.0.1`, `localhost`, `[::1]`) when
/// it listens on loopback, the address it listens on, and each `--public-host`. A server on
/// another address without `--public-host` answers any name (it has a token or accounts).
struct AllowedHosts: Sendable {
    let names: Set<String>?

    init(host: String, loopback: Bool, publicHosts: [String]) {
        if publicHosts.isEmpty && !loopback { names = nil; return }
        var names = Set(publicHosts.map { $0.lowercased() })
        names.insert(Self.bare(host.lowercased()))
        if loopback { names.formUnion(["127.0.0.1", "localhost", "::1"]) }
        self.names = names
    }

    func allows(_ authority: String?) -> Bool {
        guard let names else { return true }
        guard let authority else { return false }
        return names.contains(Self.name(of: authority.lowercased()))
    }

    /// The host name of an authority: `a.example:8080` → `a.example`, `[::1]:80` → `::1`.
    static func name(of authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if authority.filter({ $0 == ":" }).count == 1, let colon = authority.lastIndex(of: ":") { return String(authority[..<colon]) }
        return authority
    }

    static func bare(_ host: String) -> String { host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host }
}

/// `api/v1`: sign-in, sign-out, who am I, API tokens, members and invitations.
struct AccountRoutes {
    let gate: AccountGate
    let hub: LiveHub

    func register(_ groups: RouteGroups) {
        let gate = self.gate, hub = self.hub
        let anyone = groups.publicAPI
        anyone.post("login") { request, context -> Response in
            guard try await gate.accountsActive() else {
                throw APIError(status: .unauthorized, message: "this server has no users yet; add one with `bubbles users add NAME --password-stdin`")
            }
            let body = try await LiveAPI.decode(CredentialsRequest.self, request, limit: 16_384)
            let (user, secret) = try await gate.signIn(
                name: try LiveAPI.required(body.name, "name"), password: try LiveAPI.required(body.password, "password"),
                address: context.address)
            var response = try EditedResponse(status: .ok, response: SignedInJSON(user: UserJSON(user), csrf: AccountGate.csrf(of: secret)))
                .response(from: request, context: context)
            response.headers[.setCookie] = gate.sessionCookie(secret, request: request)
            return response
        }
        anyone.post("invites/:token/accept") { request, context -> Response in
            try await Self.accept(request, context: context, gate: gate, hub: hub)
        }
        let signedIn = groups.api
        signedIn.post("logout") { request, context -> Response in
            let body = try await LiveAPI.decodeIfPresent(SignOutRequest.self, request, limit: 16_384)
            let user = try Self.signedIn(context)
            if body?.everywhere == true {
                try await gate.store.signOutEverywhere(user.id)
            } else if case let .user(_, .session(hash, _)) = context.identity {
                try await gate.store.deleteSession(hash: hash)
            }
            var response = Response(status: .noContent)
            response.headers[.setCookie] = gate.sessionCookie(nil, request: request)
            return response
        }
        signedIn.get("me") { _, context -> SignedInJSON in
            SignedInJSON(user: UserJSON(try Self.signedIn(context)), csrf: context.identity.csrf)
        }
        signedIn.post("tokens") { request, context -> EditedResponse<TokenJSON> in
            let user = try Self.signedIn(context)
            // A token makes no tokens: one stolen cannot make itself a successor that outlives it.
            guard case .user(_, .session) = context.identity else {
                throw APIError.forbidden("API tokens are made from a signed-in session (the web page, or POST /api/v1/login), not with another token")
            }
            let body = try await LiveAPI.decode(NewTokenRequest.self, request, limit: 16_384)
            let name = try LiveAPI.required(body.name, "name").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.count <= 100 else { throw APIError.badRequest("name: expected 1 to 100 characters naming the script or bot") }
            let secret = AccountSecret.make(prefix: "bkt_")
            let t = try await gate.store.createToken(user: user.id, name: name, hash: AccountSecret.hash(secret))
            return EditedResponse(status: .created, response: TokenJSON(id: t.id, name: t.name, created: API.iso(t.created), token: secret))
        }
        signedIn.get("tokens") { _, context -> TokensJSON in
            let user = try Self.signedIn(context)
            return TokensJSON(
                tokens: try await gate.store.tokens(of: user.id).map {
                    TokenJSON(id: $0.id, name: $0.name, created: API.iso($0.created), lastUsed: $0.lastUsed.map(API.iso))
                })
        }
        signedIn.delete("tokens/:token") { _, context -> Response in
            let user = try Self.signedIn(context)
            let id = try positive(context.parameters.get("token"), "you have no token \"\(context.parameters.get("token") ?? "")\"")
            guard try await gate.store.revokeToken(id, of: user.id) else { throw APIError.notFound("you have no token \(id)") }
            return Response(status: .noContent)
        }
        let members = groups.conversationAPI(.members)
        members.get("members") { _, context -> MembersJSON in
            _ = try Self.signedIn(context)
            return MembersJSON(members: try await gate.store.members(of: try id(context)).map(MemberJSON.init))
        }
        members.post("members") { request, context -> MembersJSON in
            let user = try Self.signedIn(context)
            let conversation = try id(context)
            guard user.isAdmin || context.access == .owner else {
                throw APIError.forbidden("only the conversation's owner or an admin adds members; others invite (POST …/invites)")
            }
            let body = try await LiveAPI.decode(MemberRequest.self, request, limit: 16_384)
            let access = try Self.access(body.access, default: .write)
            guard let added = try await gate.store.user(named: try LiveAPI.required(body.name, "name"))?.user, !added.disabled else {
                throw APIError.badRequest("name: no user named \"\(body.name ?? "")\"")
            }
            try await gate.store.setMember(conversation, user: added, access: access)
            hub.forget(conversation)
            return MembersJSON(members: try await gate.store.members(of: conversation).map(MemberJSON.init))
        }
        members.delete("members/:name") { _, context -> Response in
            let user = try Self.signedIn(context)
            let conversation = try id(context)
            let name = context.parameters.get("name") ?? ""
            let leaving = UserName.key(name) == user.key
            guard leaving || user.isAdmin || context.access == .owner else {
                throw APIError.forbidden("only an admin or the conversation's owner removes someone else; you may leave (DELETE …/members/\(user.name))")
            }
            guard let removed = try await gate.store.user(named: name)?.user,
                try await gate.store.removeMember(conversation, user: removed.id)
            else {
                throw APIError.notFound("\"\(name)\" is not a member of conversation \(conversation)")
            }
            return Response(status: .noContent)
        }
        groups.conversationAPI(.write).post("invites") { request, context -> EditedResponse<InviteJSON> in
            let user = try Self.signedIn(context)
            let conversation = try id(context)
            let body = try await LiveAPI.decodeIfPresent(MemberRequest.self, request, limit: 16_384)
            let access = try Self.access(body?.access, default: context.access == .read ? .read : .write)
            guard let mine = context.access, mine.writes, access <= max(mine, .write) else {
                throw APIError.forbidden("you can read conversation \(conversation) but not invite others to it")
            }
            let secret = AccountSecret.make()
            let expires = Date().addingTimeInterval(gate.settings.inviteLifetime)
            try await gate.store.createInvite(
                hash: AccountSecret.hash(secret), conversation: conversation, by: user.id,
                access: access == .owner ? .write : access, expires: expires)
            return EditedResponse(
                status: .created,
                response: InviteJSON(
                    url: "/invite/" + secret, token: secret, access: access.rawValue,
                    expires: API.iso(expires)))
        }
    }

    /// `POST /api/v1/invites/{token}/accept`: a signed-in user joins; anyone else makes an account
    /// with it (name, password) and is signed in. One transaction in the store: of several at once
    /// exactly one joins, the others get 404 and nothing is made.
    static func accept(_ request: Request, context: BubbleRequestContext, gate: AccountGate, hub: LiveHub) async throws -> Response {
        guard try await gate.accountsActive() else { throw APIError.notFound("this server has no users; invitations are for accounts") }
        let secret = context.parameters.get("token") ?? ""
        var newSession: String?
        let joiner: InviteJoiner
        if let user = context.identity.user {
            joiner = .existing(user)
        } else {
            let body = try await LiveAPI.decode(CredentialsRequest.self, request, limit: 16_384)
            let name = try LiveAPI.required(body.name, "name"), password = try LiveAPI.required(body.password, "password")
            if let why = UserName.problem(name) { throw APIError.badRequest("name: \(why)") }
            if let why = Passwords.problem(password) { throw APIError.badRequest("password: \(why)") }
            let display = (body.displayName?.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0.isEmpty ? nil : $0 } ?? name
            // Not worth a bcrypt hash when the invitation cannot be used (the store checks again).
            guard try await gate.store.invitation(hash: AccountSecret.hash(secret), now: Date()) != nil else {
                throw APIError.notFound(InviteText.invalid.reason)
            }
            let session = AccountSecret.make()
            newSession = session
            joiner = .newAccount(name: name, displayName: display, passwordHash: try await Passwords.hash(password), sessionHash: AccountSecret.hash(session))
        }
        let accepted = try await gate.store.acceptInvite(hash: AccountSecret.hash(secret), joiner: joiner, now: Date(), policy: gate.settings.sessions)
        hub.forget(accepted.conversation)
        var response = try AcceptedJSON(conversation: accepted.conversation, user: UserJSON(accepted.user), csrf: newSession.map(AccountGate.csrf(of:)))
            .response(from: request, context: context)
        if let newSession { response.headers[.setCookie] = gate.sessionCookie(newSession, request: request) }
        return response
    }

    static func signedIn(_ context: BubbleRequestContext) throws -> StoredUser {
        guard let user = context.identity.user else {
            throw APIError.badRequest("this route is for signed-in users; this server has none (single-owner mode)")
        }
        return user
    }

    static func access(_ raw: String?, default fallback: MemberAccess) throws -> MemberAccess {
        guard let raw else { return fallback }
        guard let a = MemberAccess(rawValue: raw), a != .owner else {
            throw APIError.badRequest("access: expected \"read\" or \"write\"")
        }
        return a
    }
}

struct UserJSON: Codable, Sendable {
    var name: String
    var displayName: String
    var role: String
    init(_ u: StoredUser) { name = u.name; displayName = u.displayName; role = u.role.rawValue }
}

struct SignedInJSON: ResponseEncodable, Sendable {
    var user: UserJSON
    var csrf: String?
}

struct AcceptedJSON: ResponseEncodable, Sendable {
    var conversation: Int64
    var user: UserJSON
    var csrf: String?
}

/// An API token as its owner sees it: `token` itself only in the answer that made it (the
/// server keeps its SHA-256 only).
struct TokenJSON: ResponseEncodable, Codable, Sendable {
    var id: Int64
    var name: String
    var created: String
    var lastUsed: String?
    var token: String?
}

struct TokensJSON: ResponseEncodable, Sendable { var tokens: [TokenJSON] }

struct MemberJSON: Codable, Sendable {
    var name: String
    var displayName: String
    var access: String
    init(_ m: StoredMember) { name = m.user.name; displayName = m.user.displayName; access = m.access.rawValue }
}

struct MembersJSON: ResponseEncodable, Sendable { var members: [MemberJSON] }

struct InviteJSON: ResponseEncodable, Sendable {
    var url: String
    var token: String
    var access: String
    var expires: String
}
