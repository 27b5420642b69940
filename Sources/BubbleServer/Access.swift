import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore
import Synchronization

// Who may reach which route is decided once, by the router: every route is registered through an
// `AccessGroup` that declares its `AccessRule`, and the group's `RouteAccess` middleware — which
// runs after the router matched the route, so it reads the conversation id from the router's own
// parameters — decides it through one `AccessPolicy` and stores the decision on the context.
// Handlers take the decided conversation (`id(context)`); nothing re-reads the path.
// `AccessTable` lists every rule registered; `BubbleServer.router()` refuses to build a router
// with a route that has none (and a test walks the routes too).

/// What a route requires of the one who asks.
enum AccessRule: Sendable, Hashable, CustomStringConvertible {
    /// Anyone, signed in or not: signing in, the assets, an invitation, `/healthz`.
    case anyone
    /// The single owner, or any signed-in user (what they see is filtered to what they reach).
    case signedIn
    /// The single owner, or an admin.
    case admin
    /// A conversation named by the route's `:id`, with what the route does to it.
    case conversation(ConversationNeed)

    var description: String {
        switch self {
        case .anyone: "anyone"
        case .signedIn: "signed in"
        case .admin: "admin"
        case .conversation(let need): "conversation: \(need.rawValue)"
        }
    }
}

/// What a conversation route does, and so which members may ask for it.
enum ConversationNeed: String, Sendable, Hashable {
    /// Reads it: any member (or an admin, of a conversation without members).
    case read
    /// Writes to it: a member who writes.
    case write
    /// Its members: any member, or any admin (who manages every conversation's members); the
    /// route itself says who may add or remove whom.
    case members
}

/// The conversation a route names, as the policy decided it: its id (canonical) and the user's
/// access (nil for the single owner, and for an admin managing members of a conversation they
/// are not in).
struct DecidedConversation: Sendable, Hashable {
    var id: Int64
    var access: MemberAccess?
}

/// One decision of who reaches a conversation, for the HTTP routes and the WebSocket alike.
struct AccessPolicy: Sendable {
    let accounts: any MembershipStore

    /// The decided conversation, or a 404 (not a member — the same answer as for one that does
    /// not exist) or 403 (a member who only reads asking to write).
    func decide(_ identity: Identity, conversation id: Int64, need: ConversationNeed) async throws -> DecidedConversation {
        switch identity {
        case .anonymous: throw APIError(status: .unauthorized, message: "sign in first")
        case .owner: return DecidedConversation(id: id, access: nil)
        case let .user(user, _):
            let access = try await accounts.access(of: user, to: id)
            switch need {
            case .read:
                guard access != nil else { throw APIError.notFound("no conversation \(id)") }
            case .write:
                guard let access else { throw APIError.notFound("no conversation \(id)") }
                guard access.writes else { throw APIError.forbidden("you can read conversation \(id) but not write to it") }
            case .members:
                guard access != nil || user.isAdmin else { throw APIError.notFound("no conversation \(id)") }
            }
            return DecidedConversation(id: id, access: access)
        }
    }
}

/// A conversation id as a route must spell it: the digits of a whole number ≥ 1, without sign,
/// leading zeros or anything else (`3`, not `+3`, `03` or ` 3`); nil for any other spelling, so
/// one conversation has one URL.
func canonicalID(_ raw: String?) -> Int64? {
    guard let raw, let first = raw.utf8.first, first != UInt8(ascii: "0"), raw.utf8.count <= 19,
        raw.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    else { return nil }
    return Int64(raw)
}

/// Every route's rule by `METHOD /path`, as the groups registered them.
final class AccessTable: Sendable {
    private let rules = Mutex<[String: AccessRule]>([:])

    static func key(_ method: HTTPRequest.Method, _ path: RouterPath) -> String { "\(method) \(path)" }

    func record(_ method: HTTPRequest.Method, _ path: RouterPath, _ rule: AccessRule) {
        rules.withLock { $0[Self.key(method, path)] = rule }
    }

    /// The rule of a route; nil: none was declared.
    func rule(_ method: HTTPRequest.Method, _ path: RouterPath) -> AccessRule? {
        rules.withLock { $0[Self.key(method, path)] }
    }

    /// Every route of `router` that was registered without a rule (it did not go through an
    /// `AccessGroup`).
    func unruled<Context>(_ router: Router<Context>) -> [String] {
        router.routes.compactMap { rule($0.method, $0.path) == nil ? "\($0.method) \($0.path)" : nil }
    }

    /// Every route and its rule, sorted (docs/SERVER.md's table is checked against it).
    var all: [(route: String, rule: AccessRule)] {
        rules.withLock { $0.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }
}

/// Routes that share a path prefix and an access rule: a router group with `RouteAccess` in
/// front of its routes, which records each route's rule in the table as it is added. The only
/// way the server's routes are registered.
struct AccessGroup: RouterMethods {
    typealias Context = BubbleRequestContext
    let group: RouterGroup<Context>
    let prefix: RouterPath
    let rule: AccessRule
    let table: AccessTable

    /// `prefix`'s routes under `rule`; `page`: a page (a browser not signed in is sent to the
    /// sign-in page) rather than the API (401).
    init(
        _ parent: some RouterMethods<Context>, _ prefix: RouterPath, rule: AccessRule, page: Bool, policy: AccessPolicy, table: AccessTable,
        errorPage: (@Sendable (APIError, Identity) async -> Response)? = nil
    ) {
        var group = parent.group(prefix)
        // A page's errors as a page in the app's frame, with the identity the request has.
        if page, let errorPage { group = group.add(middleware: ErrorMiddleware(htmlPage: errorPage)) }
        self.group = group.add(middleware: RouteAccess(rule: rule, page: page, policy: policy))
        self.prefix = prefix
        self.rule = rule
        self.table = table
    }

    @discardableResult func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == Context {
        table.record(method, prefix.appendingPath(path), rule)
        group.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        group.add(middleware: middleware)
        return self
    }
}

/// The access check of one group of routes, after the router matched: anyone, a signed-in
/// identity, an admin, or the conversation of the route's `:id` decided by `AccessPolicy` and
/// kept on the context (`context.conversation`).
struct RouteAccess: RouterMiddleware {
    typealias Context = BubbleRequestContext
    let rule: AccessRule
    let page: Bool
    let policy: AccessPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if rule == .anyone { return try await next(request, context) }
        if context.identity == .anonymous {
            guard page, request.method == .get || request.method == .head else {
                throw APIError(status: .unauthorized, message: "sign in first: POST /api/v1/login {\"name\", \"password\"}, or Authorization: Bearer TOKEN")
            }
            let back = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
            return Response(
                status: .seeOther, headers: [.location: "/login?next=" + (back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")])
        }
        var context = context
        switch rule {
        case .anyone, .signedIn: break
        case .admin:
            if let user = context.identity.user, !user.isAdmin { throw APIError.forbidden("\(request.uri.path) is for admins") }
        case .conversation(let need):
            let raw = context.parameters.get("id")
            guard let id = canonicalID(raw) else { throw APIError.notFound("no conversation \"\(raw ?? "")\"; expected its number, as /c/3") }
            context.conversation = try await policy.decide(context.identity, conversation: id, need: need)
        }
        return try await next(request, context)
    }
}
