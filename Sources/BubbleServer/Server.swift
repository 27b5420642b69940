import BubbleCore
import BubbleHTML
import BubbleStore
import BubbleText
import Foundation
import Hummingbird
import HummingbirdCore

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

    public init(host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, theme: String = "imessage",
                maxUpload: Int = 512 << 20) {
        self.host = host; self.port = port; self.token = token; self.theme = theme; self.maxUpload = maxUpload
    }

    /// Whether `host` only accepts connections from this machine.
    public var isLoopback: Bool { ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.") }
}

/// A request that cannot be answered: a status and one line naming what was wrong, sent as
/// `{"error": "…"}`.
struct APIError: Error {
    var status: HTTPResponse.Status
    var message: String
    static func badRequest(_ m: String) -> APIError { APIError(status: .badRequest, message: m) }
    static func notFound(_ m: String) -> APIError { APIError(status: .notFound, message: m) }
}

/// The store over HTTP: the JSON API under `/api/v1`, and server-rendered pages (the library,
/// a conversation, search) in the store's theme, with a strict Content-Security-Policy.
public struct BubbleServer: Sendable {
    public let store: SQLiteStore
    public let configuration: ServerConfiguration
    let pages: Pages
    let files: Files

    /// `importer` takes uploads (`POST /api/v1/imports`), `exporter` writes downloads; without
    /// them those routes answer 501.
    public init(store: SQLiteStore, configuration: ServerConfiguration, pictures: any PictureDecoder,
                importer: (any ExportImporting)? = nil, exporter: (any ConversationExporting)? = nil) throws {
        self.store = store
        self.configuration = configuration
        pages = try Pages(store: store, theme: configuration.theme, pictures: pictures)
        files = Files(store: store, importer: importer, exporter: exporter, maxUpload: configuration.maxUpload, geometries: pages.geometries)
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
        return router
    }

    /// Runs until SIGINT or SIGTERM, then stops gracefully (requests in flight finish). Calls
    /// `onRunning` with the port it listens on (the one the system chose for port 0).
    public func run(onRunning: @escaping @Sendable (Int) -> Void) async throws {
        let app = Application(router: router(),
                              configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "BubbleKit"),
                              onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) })
        try await app.runService()
    }
}

/// The conversation id of a route, or a 400 naming it.
func id(_ context: BasicRequestContext) throws -> Int64 {
    guard let raw = context.parameters.get("id"), let value = Int64(raw), value > 0 else {
        throw APIError.badRequest("conversation id \"\(context.parameters.get("id") ?? "")\" is not a number ≥ 1")
    }
    return value
}

/// `value` as a JSON response.
func json(_ value: Any, status: HTTPResponse.Status = .ok) throws -> Response {
    let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
    return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(bytes: data)))
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
