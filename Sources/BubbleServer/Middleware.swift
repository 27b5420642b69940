import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Security headers on every response (errors too): scripts and style sheets only from this
/// server, nothing from anywhere else, no framing, no sniffing, no referrer; and the request's id.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = BubbleRequestContext

    /// Style *attributes* are allowed (`style-src-attr`): the rows size video frames and colour
    /// initials avatars with them; they are written by BubbleHTML from numbers and the theme,
    /// never from message text.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; "
        + "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPFields.Element.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPFields.Element.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPFields.Element.Name("X-Request-Id")!] = context.requestID
        return response
    }
}

/// A line per request at `info` (and up): method, path, status, time, the request's id (in the
/// logger's metadata). The path is logged without its query (`?token=`) and with the secret of an
/// invitation (`/invite/…`, `/api/v1/invites/…`) replaced by `…`: the log holds no secret.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = BubbleRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        func log(_ status: HTTPResponse.Status) {
            let ms = (ContinuousClock.now - started).components
            context.logger.info(
                "Request",
                metadata: [
                    "hb.request.method": .string(request.method.rawValue), "hb.request.path": .string(Self.redacted(request.uri.path)),
                    "hb.response.status": .stringConvertible(status.code),
                    "hb.request.duration_ms": .stringConvertible(ms.seconds * 1000 + ms.attoseconds / 1_000_000_000_000_000)
                ])
        }
        do {
            let response = try await next(request, context)
            log(response.status)
            return response
        } catch let e as any HTTPResponseError {
            log(e.status)
            throw e
        } catch {
            log(.internalServerError)
            throw error
        }
    }

    /// `path` with each segment after `invite` or `invites` replaced by `…`.
    static func redacted(_ path: String) -> String {
        var secret = false
        return path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> Substring in
            defer { secret = segment == "invite" || segment == "invites" }
            return secret && !segment.isEmpty ? "…" : segment
        }.joined(separator: "/")
    }
}

/// A query as HTML forms send it (`application/x-www-form-urlencoded`): `+` is a space. The
/// query is rewritten with `%20` for each `+` before anything reads it, so `q=tonight+fox` from a
/// search form is the two words (a `+` meant as a plus arrives as `%2B` and stays one).
struct FormQueryMiddleware: RouterMiddleware {
    typealias Context = BubbleRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let path = request.head.path, let q = path.firstIndex(of: "?"), path[q...].contains("+") else {
            return try await next(request, context)
        }
        var head = request.head
        head.path = String(path[..<q]) + path[q...].replacingOccurrences(of: "+", with: "%20")
        return try await next(Request(head: head, body: request.body), context)
    }
}

/// Every error a route throws as JSON (`{"error": "…"}`) with a status that fits
/// (`APIError.from`) — the server keeps serving whatever a request holds.
/// A browser's page request (`GET`/`HEAD` accepting `text/html`) that fails gets an HTML page
/// instead (`htmlPage`): a route no page or API has, a conversation that is not there.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = BubbleRequestContext
    var htmlPage: (@Sendable (APIError, Identity) async -> Response)?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let e = APIError.from(error, request: request, context: context)
            if let htmlPage, Self.wantsPage(request) {
                var page = await htmlPage(e, context.identity)
                page.headers.append(contentsOf: e.headers)
                return page
            }
            return try e.response(from: request, context: context)
        }
    }

    /// A browser navigating: `GET` or `HEAD` whose `Accept` names `text/html` (the script's
    /// `fetch` and API clients ask for JSON or anything, and get JSON).
    static func wantsPage(_ request: Request) -> Bool {
        guard request.method == .get || request.method == .head, !request.uri.path.hasPrefix("/api/") else { return false }
        return request.headers[values: .accept].contains { $0.lowercased().contains("text/html") }
    }
}

/// The server's token of single-owner mode (`IdentityMiddleware.ownerMode`): `?token=`,
/// `Authorization: Bearer`, or the cookie a browser was given with the first.
enum ServerToken {
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

/// The body of `request`, at most `limit` bytes, or a 413 naming the limit: at once when its
/// Content-Length says more (nothing of it is read), else as soon as `limit` bytes have come.
func collectBody(_ request: Request, limit: Int, what: String = "the body") async throws -> ByteBuffer {
    try refuseDeclaredLength(request, limit: limit, what: what)
    do {
        return try await request.body.collect(upTo: limit)
    } catch is NIOTooManyBytesError {
        throw APIError.tooLarge(what, limit: limit)
    }
}

/// A 413 naming the limit, before anything is read, when the body's Content-Length says it is
/// over `limit` bytes.
func refuseDeclaredLength(_ request: Request, limit: Int, what: String) throws {
    if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
        throw APIError.tooLarge(what, limit: limit, length: length)
    }
}

/// Closes the connection after a response that says `Connection: close` (a body too large) —
/// but as nginx's "lingering close" does: the answer is sent and the sending side shut, then
/// what the client still sends is read and dropped until its request ends, `lingerBytes` have
/// come or `lingerTime` has passed, and only then is the connection closed. Closed at once, a
/// client that sends its whole body before reading (Python's urllib, most scripts) got
/// "connection reset" instead of the 413: the system resets a connection closed with unread
/// bytes.
final class CloseAfterResponse: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    static let lingerTime = TimeAmount.seconds(3)
    static let lingerBytes = 64 << 20
    private var closing = false
    private var lingering = false
    private var dropped = 0
    private var timer: Scheduled<Void>?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        switch part {
        case .head(let head):
            closing = head.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .end where closing:
            closing = false
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.writeAndFlush(data).whenComplete { result in
                promise?.completeWith(result)
                let (handler, context) = bound.value
                handler.linger(context)
            }
        default:
            context.write(data, promise: promise)
        }
    }

    /// The answer is out: shut the sending side, read on for a while, then close.
    private func linger(_ context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        lingering = true
        context.close(mode: .output, promise: nil)
        context.read()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: Self.lingerTime) { bound.value.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard lingering else { return context.fireChannelRead(data) }
        switch unwrapInboundIn(data) {
        case .body(let buffer):
            dropped += buffer.readableBytes
            if dropped > Self.lingerBytes { finish(context) }
        case .end:
            finish(context)
        case .head:
            finish(context)
        }
    }

    /// While lingering nothing downstream asks for more (what was read is dropped here): ask.
    func channelReadComplete(context: ChannelHandlerContext) {
        if lingering { context.read() }
        context.fireChannelReadComplete()
    }

    private func finish(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        lingering = false
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }
}
