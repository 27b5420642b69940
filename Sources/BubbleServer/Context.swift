import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// What every request of `bubbles serve` carries through the middlewares and routes: Hummingbird's
/// own (its logger, which holds the request id `hb.request.id`, the route matched, its
/// parameters) and the WebSocket upgrade's handler. The one place a request's own state lives.
public struct BubbleRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The WebSocket upgrade of the request (Hummingbird's), for the live routes.
    public let webSocket: WebSocketHandlerReference<Self>
    /// Who the request is (set by `IdentityMiddleware`; nobody until then).
    public var identity = Identity.anonymous
    /// The conversation the route names, as `RouteAccess` decided it (routes of
    /// `/api/v1/conversations/{id}…` and `/c/{id}…`); handlers read the id from here.
    var conversation: DecidedConversation?
    /// The signed-in user's access to the route's conversation; nil in single-owner mode.
    public var access: MemberAccess? { conversation?.access }
    /// The client's address (failed sign-ins are counted per address): the peer's, or the one a
    /// trusted proxy names (`--trusted-proxy`).
    public var address: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        address = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Bodies are read by each route with its own limit (`collectBody`); nothing else reads one.
    public var maxUploadSize: Int { 64 << 10 }

    /// Responses' JSON: keys sorted (stable bytes, as the socket's frames), `/` not escaped.
    public var responseEncoder: JSONEncoder { Self.encoder }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    /// The request's id, as the access log and the `X-Request-Id` header give it.
    public var requestID: String { id }
}

/// A request that cannot be answered: a status and one line naming what was wrong, sent as
/// `{"error": "…"}` (Hummingbird answers it wherever it is thrown).
struct APIError: HTTPResponseError {
    var status: HTTPResponse.Status
    var message: String
    /// Answered with `Connection: close`, and the connection closed after the answer (a body
    /// too large: what the client still sends is not read).
    var closesConnection = false
    /// More headers of the answer (`Retry-After`).
    var extra: HTTPFields = [:]

    init(status: HTTPResponse.Status, message: String, closesConnection: Bool = false, headers: HTTPFields = [:]) {
        self.status = status; self.message = message; self.closesConnection = closesConnection; extra = headers
    }

    static func badRequest(_ m: String) -> APIError { APIError(status: .badRequest, message: m) }
    static func notFound(_ m: String) -> APIError { APIError(status: .notFound, message: m) }
    /// 413 for a body over `limit` bytes, naming the limit; the connection closes after it.
    static func tooLarge(_ what: String, limit: Int, length: Int? = nil) -> APIError {
        APIError(
            status: .contentTooLarge,
            message: "\(what): " + (length.map { "\($0) bytes" } ?? "over \(limit) bytes") + "; this route takes at most \(limit) bytes",
            closesConnection: true)
    }

    var headers: HTTPFields {
        var h = extra
        if closesConnection { h[.connection] = "close" }
        return h
    }
    static func forbidden(_ m: String) -> APIError { APIError(status: .forbidden, message: m) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try ErrorJSON(error: message).response(from: request, context: context)
        response.status = status
        response.headers.append(contentsOf: headers)
        return response
    }

    /// What any error a route threw means to a client: a store's refusal is the client's
    /// mistake (400, 404, 409), a store's failure a 500 naming the database's problem, anything
    /// else a 500 that names no internal type (the log has it, under the request's id).
    static func from(_ error: any Error, request: Request, context: BubbleRequestContext) -> APIError {
        switch error {
        case let e as APIError: return e
        case let e as LiveError:
            switch e.kind {
            case .notFound: return .notFound(e.reason)
            case .invalid: return .badRequest(e.reason)
            case .conflict: return APIError(status: .conflict, message: e.reason)
            case .forbidden: return .forbidden(e.reason)
            }
        case let e as StoreError: return APIError(status: e.outOfSpace ? .insufficientStorage : .internalServerError, message: e.reason)
        case let e as HTTPError:
            let message = e.status == .notFound ? "no such page or API route: \(request.uri.path)" : (e.body ?? e.status.reasonPhrase)
            return APIError(status: e.status, message: message)
        case let e as any HTTPResponseError where e.status == .contentTooLarge:
            return APIError(status: .contentTooLarge, message: "the body is larger than this route takes", closesConnection: true)
        case let e as any HTTPResponseError:
            return APIError(status: e.status, message: e.status.reasonPhrase)
        default:
            context.logger.error("request failed", metadata: ["error": "\(error)", "path": "\(AccessLogMiddleware.redacted(request.uri.path))"])
            return APIError(status: .internalServerError, message: "the server failed on this request (request id \(context.requestID); its log says why)")
        }
    }
}

/// `{"error": "…"}`.
struct ErrorJSON: ResponseEncodable {
    var error: String
}

extension HTTPResponse.Status {
    /// 507: the store's disk (or the server's file-size limit) refused the write; nothing of it was
    /// stored, and the same request succeeds once there is room.
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
}
