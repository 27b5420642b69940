import BubbleCore
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore

// The server's routes, one collection per part (docs/SERVER.md lists them all). Each handler
// reads its parameters, calls one of API, LiveAPI, Files or Pages, and returns what it gives:
// errors are thrown and answered as JSON by `ErrorMiddleware`.

/// `/healthz` and `/metrics`.
struct OperationsRoutes {
    let metrics: ServerMetrics

    var collection: RouteCollection<BubbleRequestContext> {
        let routes = RouteCollection(context: BubbleRequestContext.self)
        routes.get("healthz") { _, _ in HealthJSON(status: "ok") }
        let metrics = self.metrics
        routes.get("metrics") { _, _ -> Response in
            guard let text = metrics.prometheusText() else { throw APIError.notFound("this server keeps no metrics") }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        return routes
    }
}

/// `api/v1`: conversations, windows of messages, days, search.
struct ConversationRoutes {
    let api: API

    var collection: RouteCollection<BubbleRequestContext> {
        let routes = RouteCollection(context: BubbleRequestContext.self)
        let api = self.api
        routes.get("conversations") { _, context in try await api.conversations(for: context.identity) }
        routes.get("conversations/:id") { _, context in try await api.conversation(try id(context)) }
        routes.get("conversations/:id/messages") { request, context in try await api.messages(try id(context), request.uri.queryParameters) }
        routes.get("conversations/:id/days") { request, context in try await api.days(try id(context), request.uri.queryParameters) }
        routes.get("search") { request, context in try await api.search(request.uri.queryParameters, for: context.identity) }
        return routes
    }
}

/// `api/v1`: uploads of exports, attachments, downloads.
struct FileRoutes {
    let files: Files
    let pages: Pages

    var collection: RouteCollection<BubbleRequestContext> {
        let routes = RouteCollection(context: BubbleRequestContext.self)
        let files = self.files, pages = self.pages
        routes.post("imports") { request, context in try await files.upload(request, identity: context.identity) }
        routes.get("attachments/:file") { request, context in
            try await files.attachment(context.parameters.get("file") ?? "", request, identity: context.identity)
        }
        routes.get("conversations/:id/export") { request, context in
            try await files.export(try id(context), request.uri.queryParameters, theme: try pages.themed(request.uri.queryParameters).name)
        }
        return routes
    }
}

/// `api/v1`: live conversations' writes and catch-up (`LiveAPI`); the socket itself is upgraded
/// by `BubbleServer.webSocketRouter()`, and a plain request to its path says why it was not.
struct LiveRoutes {
    let live: LiveAPI
    let maxUpload: Int

    var collection: RouteCollection<BubbleRequestContext> {
        let routes = RouteCollection(context: BubbleRequestContext.self)
        let live = self.live, maxUpload = self.maxUpload
        let bodyLimit = live.limits.maxText * 2 + 65_536
        routes.post("conversations") { request, context in
            EditedResponse(status: .created, response: try await live.createConversation(try await LiveAPI.object(request, limit: 1 << 20),
                                                                                          by: context.identity))
        }
        routes.post("conversations/:id/messages") { request, context in
            let id = try id(context)
            return try await live.added(try await live.send(id, try await LiveAPI.object(request, limit: bodyLimit), as: context.identity.speaker))
        }
        routes.patch("conversations/:id/messages/:seq") { request, context in
            try await live.changed(try await live.edit(try id(context), try seq(context), try await LiveAPI.object(request, limit: bodyLimit),
                                                       as: context.identity.speaker))
        }
        routes.delete("conversations/:id/messages/:seq") { request, context in
            try await live.changed(try await live.delete(try id(context), try seq(context), sender: Self.optional(request, "sender"),
                                                         as: context.identity.speaker))
        }
        routes.post("conversations/:id/messages/:seq/reactions") { request, context in
            let body = try await LiveAPI.object(request, limit: 65_536)
            return try await live.changed(try await live.react(try id(context), try seq(context), emoji: try LiveAPI.string(body, "emoji"),
                                                               sender: body["sender"] as? String, as: context.identity.speaker, on: true))
        }
        routes.delete("conversations/:id/messages/:seq/reactions") { request, context in
            try await live.changed(try await live.react(try id(context), try seq(context), emoji: try Self.field(request, "emoji"),
                                                        sender: Self.optional(request, "sender"), as: context.identity.speaker, on: false))
        }
        routes.get("conversations/:id/changes") { request, context in try await live.changes(try id(context), request.uri.queryParameters) }
        routes.post("conversations/:id/photos") { request, context in
            try await live.uploadPhoto(try id(context), request, maxUpload: maxUpload)
        }
        routes.get("conversations/:id/live") { request, context -> Response in
            _ = try await Self.admit(request, id: context.parameters.get("id"), live: live)
            throw APIError(status: .upgradeRequired, message: "expected a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)")
        }
        return routes
    }

    /// Whether a socket may be opened, for both routers: this server's own page (`Origin`), a
    /// valid `since`, a conversation that exists — else the error naming why (403, 400, 404).
    static func admit(_ request: Request, id raw: String?, live: LiveAPI) async throws -> (conversation: Int64, since: Int64) {
        let id = try conversationID(raw)
        guard sameOrigin(request) else {
            throw APIError(status: .forbidden, message: "Origin \(request.headers[.origin] ?? "") is not this server's; live updates are for its own pages")
        }
        let since = try API.integer(request.uri.queryParameters, "since", range: 0...Int64.max) ?? 0
        _ = try await live.hub.participantNames(id)
        return (id, since)
    }

    /// A browser's request from this server's own pages (or no browser: no `Origin`).
    static func sameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }

    /// An optional field of a DELETE (`?sender=`; a signed-in user's is theirs).
    static func optional(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters[Substring(name)].flatMap { $0.isEmpty ? nil : String($0) }
    }

    /// A field of a DELETE: from the query (`?sender=`), the only place a DELETE carries it.
    static func field(_ request: Request, _ name: String) throws -> String {
        guard let v = request.uri.queryParameters[Substring(name)], !v.isEmpty else {
            throw APIError.badRequest("\(name) is missing; expected ?\(name)=…")
        }
        return String(v)
    }
}

/// The pages: the library, a conversation, search, the viewer's windows, its assets.
struct PageRoutes {
    let pages: Pages

    var collection: RouteCollection<BubbleRequestContext> {
        let routes = RouteCollection(context: BubbleRequestContext.self)
        let pages = self.pages
        routes.get("/") { _, context in try await pages.library(for: context.identity) }
        routes.get("c/:id") { request, context in
            try await pages.conversation(try id(context), request.uri.queryParameters, for: context.identity, access: context.access)
        }
        routes.get("search") { request, context in try await pages.search(request.uri.queryParameters, for: context.identity) }
        routes.get("c/:id/view") { request, context in try await pages.view(try id(context), request.uri.queryParameters, for: context.identity) }
        routes.get("login") { request, _ in pages.signIn(request.uri.queryParameters) }
        routes.get("invite/:token") { _, context in try await pages.invitation(context.parameters.get("token") ?? "", for: context.identity) }
        routes.get("assets/style.css") { request, _ in try pages.styleSheet(request.uri.queryParameters) }
        routes.get("assets/viewer.js") { _, _ in pages.script() }
        routes.get("assets/fonts/:name") { _, context in try pages.font(context.parameters.get("name") ?? "") }
        return routes
    }
}
