import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore

/// Who may pass, before every route. Single-owner mode (no users in the store): the server's
/// token when it has one (`?token=`, `Authorization: Bearer`, the `bk_token` cookie), as before.
/// Once a user exists: a signed-in user on every route but the sign-in's and the assets; cookie
/// sessions prove unsafe requests with `X-CSRF-Token` and a same-origin `Origin`; a conversation
/// named in the path (`/c/{id}…`, `/api/v1/conversations/{id}…`) is a 404 to whoever is not
/// its member — the same answer as for one that does not exist — and a write to one a member
/// only reads is a 403.
struct AccountMiddleware: RouterMiddleware {
    typealias Context = BubbleRequestContext
    let gate: AccountGate
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path == "/healthz" { return try await next(request, context) }
        guard try await gate.accountsActive() else { return try await ownerMode(request, context: context, next: next) }
        var context = context
        let identity = try await gate.identify(request)
        let unsafe = ![.get, .head, .options].contains(request.method)
        guard let identity else {
            guard Self.isPublic(path) else {
                if request.method == .get && !path.hasPrefix("/api/") {
                    let back = path + (request.uri.query.map { "?" + $0 } ?? "")
                    return Response(status: .seeOther, headers: [.location: "/login?next=" + (back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")])
                }
                throw APIError(status: .unauthorized, message: "sign in first: POST /api/v1/login {\"name\", \"password\"}, or Authorization: Bearer TOKEN")
            }
            if unsafe && !LiveRoutes.sameOrigin(request) { throw APIError.forbidden("Origin \(request.headers[.origin] ?? "") is not this server's") }
            return try await next(request, context)
        }
        context.identity = identity
        if unsafe, let csrf = identity.csrf {
            guard let given = request.headers[HTTPFields.Element.Name("X-CSRF-Token")!], ServerToken.constantTimeEqual(given, csrf) else {
                throw APIError.forbidden("a write with a session cookie needs the X-CSRF-Token header (the \"csrf\" sign-in gave, or the page's bk-csrf)")
            }
            guard LiveRoutes.sameOrigin(request) else { throw APIError.forbidden("Origin \(request.headers[.origin] ?? "") is not this server's") }
        }
        guard let user = identity.user else { return try await next(request, context) }
        if path == "/metrics" && !user.isAdmin { throw APIError.forbidden("/metrics is for admins") }
        if let id = Self.conversation(in: path) {
            let access = try await gate.store.access(of: user, to: id)
            // An admin manages the members of any conversation (removes someone, shares an archive).
            let managing = path.hasPrefix("/api/v1/conversations/\(id)/members") && user.isAdmin
            guard access != nil || managing else { throw APIError.notFound("no conversation \(id)") }
            context.access = access
            let ownRoute = path.hasPrefix("/api/v1/conversations/\(id)/members") || path.hasPrefix("/api/v1/conversations/\(id)/invites")
            if unsafe && !ownRoute && !(access?.writes ?? false) {
                throw APIError.forbidden("you can read conversation \(id) but not write to it")
            }
        }
        return try await next(request, context)
    }

    /// Today's single-owner check: the token, when the server has one.
    func ownerMode(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token else { return try await next(request, context) }
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

    /// What anyone may ask for: signing in, the assets its page needs, an invitation's page and
    /// accepting it (with a new account).
    static func isPublic(_ path: String) -> Bool {
        path == "/login" || path == "/api/v1/login" || path.hasPrefix("/assets/") || path.hasPrefix("/invite/")
            || (path.hasPrefix("/api/v1/invites/") && path.hasSuffix("/accept"))
    }

    /// The conversation a path names, if any.
    static func conversation(in path: String) -> Int64? {
        for prefix in ["/api/v1/conversations/", "/c/"] where path.hasPrefix(prefix) {
            let digits = path.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
            return Int64(digits)
        }
        return nil
    }
}

/// `api/v1`: sign-in, sign-out, who am I, API tokens, members and invitations.
struct AccountRoutes {
    let gate: AccountGate
    let hub: LiveHub

    var collection: RouteCollection<BubbleRequestContext> {
        let routes = RouteCollection(context: BubbleRequestContext.self)
        let gate = self.gate, hub = self.hub
        routes.post("login") { request, context -> Response in
            guard try await gate.accountsActive() else {
                throw APIError(status: .unauthorized, message: "this server has no users yet; add one with `bubbles users add NAME --password-stdin`")
            }
            let body = try await LiveAPI.object(request, limit: 16_384)
            let (user, secret) = try await gate.signIn(name: try LiveAPI.string(body, "name"), password: try LiveAPI.string(body, "password"),
                                                       address: context.address)
            var response = try EditedResponse(status: .ok, response: SignedInJSON(user: UserJSON(user), csrf: AccountGate.csrf(of: secret)))
                .response(from: request, context: context)
            response.headers[.setCookie] = gate.sessionCookie(secret, request: request)
            return response
        }
        routes.post("logout") { request, context -> Response in
            let body = (try? await LiveAPI.object(request, limit: 16_384)) ?? [:]
            let user = try Self.signedIn(context)
            if body["everywhere"] as? Bool == true {
                try await gate.store.deleteSessions(of: user.id)
            } else if case let .user(_, .session(hash, _)) = context.identity {
                try await gate.store.deleteSession(hash: hash)
            }
            var response = Response(status: .noContent)
            response.headers[.setCookie] = gate.sessionCookie(nil, request: request)
            return response
        }
        routes.get("me") { _, context -> SignedInJSON in
            SignedInJSON(user: UserJSON(try Self.signedIn(context)), csrf: context.identity.csrf)
        }
        routes.post("tokens") { request, context -> EditedResponse<TokenJSON> in
            let user = try Self.signedIn(context)
            let body = try await LiveAPI.object(request, limit: 16_384)
            let name = try LiveAPI.string(body, "name").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.count <= 100 else { throw APIError.badRequest("name: expected 1 to 100 characters naming the script or bot") }
            let secret = AccountSecret.make(prefix: "bkt_")
            let t = try await gate.store.createToken(user: user.id, name: name, hash: AccountSecret.hash(secret))
            return EditedResponse(status: .created, response: TokenJSON(id: t.id, name: t.name, created: API.iso(t.created), token: secret))
        }
        routes.get("tokens") { _, context -> TokensJSON in
            let user = try Self.signedIn(context)
            return TokensJSON(tokens: try await gate.store.tokens(of: user.id).map {
                TokenJSON(id: $0.id, name: $0.name, created: API.iso($0.created), lastUsed: $0.lastUsed.map(API.iso))
            })
        }
        routes.delete("tokens/:token") { _, context -> Response in
            let user = try Self.signedIn(context)
            let id = try positive(context.parameters.get("token"), "token id \"\(context.parameters.get("token") ?? "")\" is not a number ≥ 1")
            guard try await gate.store.revokeToken(id, of: user.id) else { throw APIError.notFound("you have no token \(id)") }
            return Response(status: .noContent)
        }
        routes.get("conversations/:id/members") { _, context -> MembersJSON in
            _ = try Self.signedIn(context)
            return MembersJSON(members: try await gate.store.members(of: try id(context)).map(MemberJSON.init))
        }
        routes.post("conversations/:id/members") { request, context -> MembersJSON in
            let user = try Self.signedIn(context)
            let conversation = try id(context)
            guard user.isAdmin || context.access == .owner else {
                throw APIError.forbidden("only the conversation's owner or an admin adds members; others invite (POST …/invites)")
            }
            let body = try await LiveAPI.object(request, limit: 16_384)
            let access = try Self.access(body["access"], default: .write)
            guard let added = try await gate.store.user(named: try LiveAPI.string(body, "name"))?.user, !added.disabled else {
                throw APIError.badRequest("name: no user named \"\(body["name"] as? String ?? "")\"")
            }
            try await gate.store.setMember(conversation, user: added, access: access)
            hub.forget(conversation)
            return MembersJSON(members: try await gate.store.members(of: conversation).map(MemberJSON.init))
        }
        routes.delete("conversations/:id/members/:name") { _, context -> Response in
            let user = try Self.signedIn(context)
            let conversation = try id(context)
            let name = context.parameters.get("name") ?? ""
            let leaving = UserName.key(name) == user.key
            guard leaving || user.isAdmin || context.access == .owner else {
                throw APIError.forbidden("only an admin or the conversation's owner removes someone else; you may leave (DELETE …/members/\(user.name))")
            }
            guard let removed = try await gate.store.user(named: name)?.user,
                  try await gate.store.removeMember(conversation, user: removed.id) else {
                throw APIError.notFound("\"\(name)\" is not a member of conversation \(conversation)")
            }
            return Response(status: .noContent)
        }
        routes.post("conversations/:id/invites") { request, context -> EditedResponse<InviteJSON> in
            let user = try Self.signedIn(context)
            let conversation = try id(context)
            let body = (try? await LiveAPI.object(request, limit: 16_384)) ?? [:]
            let access = try Self.access(body["access"], default: context.access == .read ? .read : .write)
            guard let mine = context.access, mine.writes, access <= max(mine, .write) else {
                throw APIError.forbidden("you can read conversation \(conversation) but not invite others to it")
            }
            let secret = AccountSecret.make()
            let expires = Date().addingTimeInterval(gate.settings.inviteLifetime)
            try await gate.store.createInvite(hash: AccountSecret.hash(secret), conversation: conversation, by: user.id,
                                              access: access == .owner ? .write : access, expires: expires)
            return EditedResponse(status: .created, response: InviteJSON(url: "/invite/" + secret, token: secret, access: access.rawValue,
                                                                         expires: API.iso(expires)))
        }
        routes.post("invites/:token/accept") { request, context -> Response in
            guard try await gate.accountsActive() else { throw APIError.notFound("this server has no users; invitations are for accounts") }
            let secret = context.parameters.get("token") ?? ""
            var user = context.identity.user
            var newSession: String?
            if user == nil {
                // A new account made with the invitation, then signed in.
                let body = try await LiveAPI.object(request, limit: 16_384)
                let name = try LiveAPI.string(body, "name"), password = try LiveAPI.string(body, "password")
                if let why = UserName.problem(name) { throw APIError.badRequest("name: \(why)") }
                if let why = Passwords.problem(password) { throw APIError.badRequest("password: \(why)") }
                let display = ((body["displayName"] as? String)?.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0.isEmpty ? nil : $0 } ?? name
                // The invitation first: a used or made-up one creates no account.
                guard try await gate.store.invitation(hash: AccountSecret.hash(secret), now: Date()) != nil else {
                    throw APIError.notFound("this invitation is not valid: it was used already, has expired or never existed")
                }
                let made = try await gate.store.addUser(name: name, displayName: display, role: .member, passwordHash: try await Passwords.hash(password))
                let session = AccountSecret.make()
                try await gate.store.createSession(hash: AccountSecret.hash(session), user: made.id, now: Date(), policy: gate.settings.sessions)
                user = made
                newSession = session
            }
            let conversation = try await gate.store.redeemInvite(hash: AccountSecret.hash(secret), user: user!, now: Date())
            hub.forget(conversation)
            var response = try AcceptedJSON(conversation: conversation, user: UserJSON(user!), csrf: newSession.map(AccountGate.csrf(of:)))
                .response(from: request, context: context)
            if let newSession { response.headers[.setCookie] = gate.sessionCookie(newSession, request: request) }
            return response
        }
        return routes
    }

    static func signedIn(_ context: BubbleRequestContext) throws -> StoredUser {
        guard let user = context.identity.user else {
            throw APIError.badRequest("this route is for signed-in users; this server has none (single-owner mode)")
        }
        return user
    }

    static func access(_ raw: Any?, default fallback: MemberAccess) throws -> MemberAccess {
        guard let raw else { return fallback }
        guard let s = raw as? String, let a = MemberAccess(rawValue: s), a != .owner else {
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
