import BubbleCore
import BubbleHTML
import BubbleStore
import BubbleText
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import NIOHTTPTypes

/// How `bubbles serve` runs.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Required on every request when set (`?token=` or `Authorization: Bearer`); always set when
    /// the server listens beyond loopback.
    public var token: String?
    /// The theme pages are drawn in.
    public var theme: String
    /// The largest upload taken (bytes); larger ones get a 413.
    public var maxUpload: Int
    /// Live writes: message size and per-connection rate.
    public var live: LiveLimits

    public init(host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, theme: String = "imessage",
                maxUpload: Int = 512 << 20, live: LiveLimits = LiveLimits()) {
        self.host = host; self.port = port; self.token = token; self.theme = theme; self.maxUpload = maxUpload; self.live = live
    }

    /// Whether `host` only accepts connections from this machine.
    public var isLoopback: Bool { ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.") }
}

/// A request that cannot be answered: a status and one line naming what was wrong, sent as
/// `{"error": "…"}`.
struct APIError: Error {
    var status: HTTPResponse.Status
    var message: String
    /// Answered with `Connection: close`, and the connection closed after the answer (a body
    /// too large: what the client still sends is not read).
    var closesConnection = false
    static func badRequest(_ m: String) -> APIError { APIError(status: .badRequest, message: m) }
    static func notFound(_ m: String) -> APIError { APIError(status: .notFound, message: m) }
    /// 413 for a body over `limit` bytes, naming the limit; the connection closes after it.
    static func tooLarge(_ what: String, limit: Int, length: Int? = nil) -> APIError {
        APIError(status: .contentTooLarge,
                 message: "\(what): " + (length.map { "\($0) bytes" } ?? "over \(limit) bytes") + "; this route takes at most \(limit) bytes",
                 closesConnection: true)
    }
}

/// The body of `request`, at most `limit` bytes, or a 413 naming the limit: at once when its
/// Content-Length says more (nothing of it is read), else as soon as `limit` bytes have come.
func collectBody(_ request: Request, limit: Int, what: String = "the body") async throws -> ByteBuffer {
    if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
        throw APIError.tooLarge(what, limit: limit, length: length)
    }
    do {
        return try await request.body.collect(upTo: limit)
    } catch is NIOTooManyBytesError {
        throw APIError.tooLarge(what, limit: limit)
    }
}

/// Closes the connection once a response that says `Connection: close` has been written (Hummingbird
/// would otherwise read on: a client still sending a body too large would wait for its answer).
final class CloseAfterResponse: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    private var closing = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        switch part {
        case .head(let head):
            closing = head.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .end where closing:
            closing = false
            context.writeAndFlush(data).whenComplete { result in
                promise?.completeWith(result)
                context.close(promise: nil)
            }
        default:
            context.write(data, promise: promise)
        }
    }
}

/// The store over HTTP: the JSON API under `/api/v1`, and server-rendered pages (the library,
/// a conversation, search) in the store's theme, with a strict Content-Security-Policy.
public struct BubbleServer: Sendable {
    public let store: any ConversationStore
    public let configuration: ServerConfiguration
    let pages: Pages
    let files: Files
    let live: LiveAPI

    /// `importer` takes uploads (`POST /api/v1/imports`), `exporter` writes downloads; without
    /// them those routes answer 501.
    public init(store: any ConversationStore, configuration: ServerConfiguration, pictures: any PictureDecoder,
                importer: (any ExportImporting)? = nil, exporter: (any ConversationExporting)? = nil) throws {
        self.store = store
        self.configuration = configuration
        pages = try Pages(store: store, theme: configuration.theme, pictures: pictures, live: configuration.live)
        files = Files(store: store, importer: importer, exporter: exporter, maxUpload: configuration.maxUpload, geometries: pages.geometries)
        live = LiveAPI(store: store, hub: LiveHub(store: store), limits: configuration.live, pictures: pictures)
    }

    /// Every response's security headers: scripts and style sheets only from this server, nothing
    /// from anywhere else, no framing, no sniffing, no referrer. Style *attributes* are allowed
    /// (`style-src-attr`): the rows size video frames and colour initials avatars with them;
    /// they are written by BubbleHTML from numbers and the theme, never from message text.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; "
        + "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: Guard(token: configuration.token))
        let api = API(store: store)
        router.get("healthz") { _, _ in try json(["status": "ok"]) }
        router.get("api/v1/conversations") { _, _ in try api.conversations() }
        router.get("api/v1/conversations/:id") { request, context in try api.conversation(try id(context)) }
        router.get("api/v1/conversations/:id/messages") { request, context in try api.messages(try id(context), request.uri.queryParameters) }
        router.get("api/v1/conversations/:id/days") { request, context in try api.days(try id(context), request.uri.queryParameters) }
        router.get("api/v1/search") { request, _ in try api.search(request.uri.queryParameters) }
        let pages = self.pages, files = self.files
        router.post("api/v1/imports") { request, _ in try await files.upload(request) }
        router.get("api/v1/attachments/:file") { request, context in try files.attachment(context.parameters.get("file") ?? "", request) }
        router.get("api/v1/conversations/:id/export") { request, context in
            try await files.export(try id(context), request.uri.queryParameters, theme: try pages.themed(request.uri.queryParameters).name)
        }
        router.get("/") { _, _ in try pages.library() }
        router.get("c/:id") { request, context in try pages.conversation(try id(context), request.uri.queryParameters) }
        router.get("search") { request, _ in try pages.search(request.uri.queryParameters) }
        router.get("c/:id/view") { request, context in try await pages.view(try id(context), request.uri.queryParameters) }
        router.get("assets/style.css") { request, _ in try pages.styleSheet(request.uri.queryParameters) }
        router.get("assets/viewer.js") { _, _ in pages.script() }
        addLiveRoutes(to: router)
        return router
    }

    /// The live conversation's writes and catch-up (`LiveAPI`); the socket itself is upgraded
    /// by `webSocketRouter()`, and a plain request to its path says why it was not.
    func addLiveRoutes(to router: Router<BasicRequestContext>) {
        let live = self.live, maxUpload = configuration.maxUpload
        let bodyLimit = live.limits.maxText * 2 + 65_536
        router.post("api/v1/conversations") { request, _ in
            try json(try await live.createConversation(try await LiveAPI.object(request, limit: 1 << 20)), status: .created)
        }
        router.post("api/v1/conversations/:id/messages") { request, context in
            let id = try id(context)
            return try live.added(try await live.send(id, try await LiveAPI.object(request, limit: bodyLimit)))
        }
        router.patch("api/v1/conversations/:id/messages/:seq") { request, context in
            try live.changed(try await live.edit(try id(context), try seq(context), try await LiveAPI.object(request, limit: bodyLimit)))
        }
        router.delete("api/v1/conversations/:id/messages/:seq") { request, context in
            let sender = try Self.field(request, "sender")
            return try live.changed(try await live.delete(try id(context), try seq(context), sender: sender))
        }
        router.post("api/v1/conversations/:id/messages/:seq/reactions") { request, context in
            let body = try await LiveAPI.object(request, limit: 65_536)
            return try live.changed(try await live.react(try id(context), try seq(context), emoji: try LiveAPI.string(body, "emoji"),
                                                         sender: try LiveAPI.string(body, "sender"), on: true))
        }
        router.delete("api/v1/conversations/:id/messages/:seq/reactions") { request, context in
            try live.changed(try await live.react(try id(context), try seq(context), emoji: try Self.field(request, "emoji"),
                                                  sender: try Self.field(request, "sender"), on: false))
        }
        router.get("api/v1/conversations/:id/changes") { request, context in try live.changes(try id(context), request.uri.queryParameters) }
        router.post("api/v1/conversations/:id/photos") { request, context in
            try await live.uploadPhoto(try id(context), request, maxUpload: maxUpload)
        }
        router.get("api/v1/conversations/:id/live") { request, context -> Response in
            _ = try Self.admit(request, id: context.parameters.get("id"), live: live)
            throw APIError(status: .upgradeRequired, message: "expected a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)")
        }
    }

    /// The router that decides WebSocket upgrades: the token (as every request), the page's own
    /// `Origin` (a browser on another site cannot listen or write), a known conversation and a
    /// valid `since`. What it refuses is answered by the HTTP router's route with the reason.
    public func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.add(middleware: Guard(token: configuration.token))
        let live = self.live
        router.ws("api/v1/conversations/:id/live") { request, context in
            (try? Self.admit(request, id: context.parameters.get("id"), live: live)) != nil ? .upgrade([:]) : .dontUpgrade
        } onUpgrade: { inbound, outbound, context in
            let (id, since) = try Self.admit(context.request, id: context.requestContext.parameters.get("id"), live: live)
            try await LiveSocket(live: live, conversation: id, since: since).run(inbound: inbound, outbound: outbound)
        }
        return router
    }

    /// Whether a socket may be opened, for both routers: this server's own page (`Origin`), a
    /// valid `since`, a conversation that exists — else the error naming why (403, 400, 404).
    static func admit(_ request: Request, id raw: String?, live: LiveAPI) throws -> (conversation: Int64, since: Int64) {
        let id = try conversationID(raw)
        guard sameOrigin(request) else {
            throw APIError(status: .forbidden, message: "Origin \(request.headers[.origin] ?? "") is not this server's; live updates are for its own pages")
        }
        let since = try API.integer(request.uri.queryParameters, "since", range: 0...Int64.max) ?? 0
        _ = try live.hub.participantNames(id)
        return (id, since)
    }

    /// A browser's request from this server's own pages (or no browser: no `Origin`).
    static func sameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }

    /// A field of a DELETE: from the query (`?sender=`), the only place a DELETE carries it.
    static func field(_ request: Request, _ name: String) throws -> String {
        guard let v = request.uri.queryParameters[Substring(name)], !v.isEmpty else {
            throw APIError.badRequest("\(name) is missing; expected ?\(name)=…")
        }
        return String(v)
    }

    /// Runs until SIGINT or SIGTERM, then stops gracefully (requests in flight finish). Calls
    /// `onRunning` with the port it listens on (the one the system chose for port 0).
    public func run(onRunning: @escaping @Sendable (Int) -> Void) async throws {
        // A client that does not answer a close within 2 s is dropped (Ctrl-C waits no longer for it).
        let ws = WebSocketServerConfiguration(maxFrameSize: configuration.live.maxText * 2 + 16_384, autoPing: .enabled(timePeriod: .seconds(20)),
                                              closeTimeout: .seconds(2))
        // Idle keep-alive connections close after a minute; a response that closes its
        // connection (a body too large) does so once written.
        let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [CloseAfterResponse()], idleTimeout: .seconds(60))
        let app = Application(router: router(), server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter(),
                                                                                configuration: .init(http1: http1, ws: ws)),
                              configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "BubbleKit"),
                              onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) })
        try await app.runService()
    }
}

/// The conversation id of a route, or a 400 naming it.
func id(_ context: BasicRequestContext) throws -> Int64 { try conversationID(context.parameters.get("id")) }

func conversationID(_ raw: String?) throws -> Int64 { try positive(raw, "conversation id \"\(raw ?? "")\" is not a number ≥ 1") }

/// The message sequence number of a route, or a 400 naming it.
func seq(_ context: BasicRequestContext) throws -> Int64 {
    try positive(context.parameters.get("seq"), "message \"\(context.parameters.get("seq") ?? "")\" is not a sequence number ≥ 1")
}

/// A whole number ≥ 1 from a route, or a 400 with `message`.
func positive(_ raw: String?, _ message: @autoclosure () -> String) throws -> Int64 {
    guard let raw, let value = Int64(raw), value > 0 else { throw APIError.badRequest(message()) }
    return value
}

/// `value` as a JSON response (keys sorted, as `JSONWriter` writes them).
func json(_ value: Any, status: HTTPResponse.Status = .ok) throws -> Response {
    Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
             body: .init(byteBuffer: ByteBuffer(string: JSONWriter.string(value))))
}

/// Security headers on every response, the token check, and errors as JSON (`{"error": "…"}`)
/// with a status that fits — the server keeps serving whatever a request holds.
struct Guard<Context: RequestContext>: RouterMiddleware {
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            if let token, !Self.carries(request, token: token) {
                throw APIError(status: .unauthorized, message: "this server needs its token: ?token=… or Authorization: Bearer …")
            }
            response = try await next(request, context)
            // A browser given the token once (the URL printed) keeps it in a cookie of this site only.
            if let token, request.uri.queryParameters["token"] != nil {
                response.headers[.setCookie] = "bk_token=\(token); Path=/; HttpOnly; SameSite=Strict"
            }
        } catch let e as APIError {
            response = try json(["error": e.message], status: e.status)
            if e.closesConnection { response.headers[.connection] = "close" }
        } catch let e as HTTPError {
            let message = e.status == .notFound ? "no such page or API route: \(request.uri.path)" : (e.body ?? e.status.reasonPhrase)
            response = try json(["error": message], status: e.status)
        } catch let e as StoreError {
            response = try json(["error": e.reason], status: .internalServerError)
        } catch {
            response = try json(["error": "\(error)"], status: .internalServerError)
        }
        response.headers[.contentSecurityPolicy] = BubbleServer.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPFields.Element.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPFields.Element.Name("X-Frame-Options")!] = "DENY"
        return response
    }

    static func carries(_ request: Request, token: String) -> Bool {
        if let q = request.uri.queryParameters["token"], constantTimeEqual(String(q), token) { return true }
        if let auth = request.headers[.authorization], auth.hasPrefix("Bearer "), constantTimeEqual(String(auth.dropFirst(7)), token) { return true }
        for cookie in request.headers[values: .cookie].flatMap({ $0.split(separator: ";") }) {
            let kv = cookie.trimmingCharacters(in: .whitespaces)
            if kv.hasPrefix("bk_token="), constantTimeEqual(String(kv.dropFirst(9)), token) { return true }
        }
        return false
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}
