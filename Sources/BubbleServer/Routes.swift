import BubbleCore
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore

// The server's routes, one struct per part (docs/SERVER.md lists them all), each registering into
// the access groups of `RouteGroups` — the group says who may ask (`AccessRule`), so a route
// cannot be added without a rule. Each handler reads its parameters (the conversation from the
// access decision), calls one of API, LiveAPI, Files or Pages, and returns what it gives: errors
// are thrown and answered as JSON by `ErrorMiddleware`.

/// The groups every route is registered in, by who may ask for it.
struct RouteGroups {
    let router: Router<BubbleRequestContext>
    let policy: AccessPolicy
    let table: AccessTable
    /// A failed page request's page (the app's frame, the error said plainly); nil: JSON only.
    var errorPage: (@Sendable (APIError, Identity) async -> Response)? = nil

    func group(_ prefix: RouterPath, _ rule: AccessRule, page: Bool) -> AccessGroup {
        AccessGroup(router, prefix, rule: rule, page: page, policy: policy, table: table, errorPage: errorPage)
    }

    /// `/api/v1/…` for anyone: signing in, accepting an invitation.
    var publicAPI: AccessGroup { group("api/v1", .anyone, page: false) }
    /// `/api/v1/…` for the owner or any signed-in user (lists filtered to what they reach).
    var api: AccessGroup { group("api/v1", .signedIn, page: false) }
    /// `/api/v1/conversations/{id}/…`, decided per conversation.
    func conversationAPI(_ need: ConversationNeed) -> AccessGroup { group("api/v1/conversations/:id", .conversation(need), page: false) }
    /// Pages for anyone: sign-in, an invitation, the assets.
    var publicPages: AccessGroup { group("", .anyone, page: true) }
    /// Pages for the owner or any signed-in user.
    var pages: AccessGroup { group("", .signedIn, page: true) }
    /// `/c/{id}…`: a conversation's pages, for whoever reads it.
    var conversationPages: AccessGroup { group("c/:id", .conversation(.read), page: true) }
}

/// `/healthz` and `/metrics`.
struct OperationsRoutes {
    let metrics: ServerMetrics

    func register(_ groups: RouteGroups) {
        groups.publicPages.get("healthz") { _, _ in HealthJSON(status: "ok") }
        let metrics = self.metrics
        groups.group("", .admin, page: false).get("metrics") { _, _ -> Response in
            guard let text = metrics.prometheusText() else { throw APIError.notFound("this server keeps no metrics") }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
    }
}

/// `api/v1`: conversations, windows of messages, days, search.
struct ConversationRoutes {
    let api: API

    func register(_ groups: RouteGroups) {
        let api = self.api
        let all = groups.api
        all.get("conversations") { _, context in try await api.conversations(for: context.identity) }
        all.get("search") { request, context in try await api.search(request.uri.queryParameters, for: context.identity) }
        let one = groups.conversationAPI(.read)
        one.get("") { _, context in try await api.conversation(try id(context)) }
        one.get("messages") { request, context in try await api.messages(try id(context), request.uri.queryParameters) }
        one.get("days") { request, context in try await api.days(try id(context), request.uri.queryParameters) }
        one.get("matches") { request, context in try await api.matches(try id(context), request.uri.queryParameters) }
    }
}

/// `api/v1`: uploads of exports, attachments, downloads.
struct FileRoutes {
    let files: Files
    let pages: Pages

    func register(_ groups: RouteGroups) {
        let files = self.files, pages = self.pages
        let api = groups.api
        api.post("imports") { request, context in try await files.upload(request, identity: context.identity) }
        api.get("attachments/:file") { request, context in
            try await files.attachment(context.parameters.get("file") ?? "", request, identity: context.identity)
        }
        groups.conversationAPI(.read).get("export") { request, context in
            try await files.export(try id(context), request.uri.queryParameters, theme: try pages.themed(request.uri.queryParameters).name)
        }
    }
}

/// `api/v1`: live conversations' writes and catch-up (`LiveAPI`); the socket itself is upgraded
/// by `BubbleServer.webSocketRouter()`, and a plain request to its path says why it was not.
struct LiveRoutes {
    let live: LiveAPI
    let maxUpload: Int

    func register(_ groups: RouteGroups) {
        let live = self.live, maxUpload = self.maxUpload
        let bodyLimit = live.limits.maxText * 2 + 65_536
        groups.api.post("conversations") { request, context in
            EditedResponse(
                status: .created,
                response: try await live.createConversation(
                    try await LiveAPI.decode(NewConversationRequest.self, request, limit: 1 << 20),
                    by: context.identity))
        }
        let write = groups.conversationAPI(.write)
        write.post("messages") { request, context in
            let id = try id(context)
            return try await live.added(
                try await live.send(id, try await LiveAPI.decode(SendRequest.self, request, limit: bodyLimit), as: context.identity.speaker))
        }
        write.patch("messages/:seq") { request, context in
            try await live.changed(
                try await live.edit(
                    try id(context), try seq(context), try await LiveAPI.decode(EditRequest.self, request, limit: bodyLimit),
                    as: context.identity.speaker))
        }
        write.delete("messages/:seq") { request, context in
            try await live.changed(
                try await live.delete(
                    try id(context), try seq(context), sender: Self.optional(request, "sender"),
                    as: context.identity.speaker))
        }
        write.post("messages/:seq/reactions") { request, context in
            let body = try await LiveAPI.decode(ReactRequest.self, request, limit: 65_536)
            return try await live.changed(
                try await live.react(
                    try id(context), try seq(context), emoji: try LiveAPI.required(body.emoji, "emoji"),
                    sender: body.sender, as: context.identity.speaker, on: true))
        }
        write.delete("messages/:seq/reactions") { request, context in
            try await live.changed(
                try await live.react(
                    try id(context), try seq(context), emoji: try Self.field(request, "emoji"),
                    sender: Self.optional(request, "sender"), as: context.identity.speaker, on: false))
        }
        write.post("photos") { request, context in
            try await live.uploadPhoto(try id(context), request, maxUpload: maxUpload)
        }
        let read = groups.conversationAPI(.read)
        read.get("changes") { request, context in try await live.changes(try id(context), request.uri.queryParameters) }
        read.get("live") { request, context -> Response in
            _ = try await Self.admit(request, id: try id(context), live: live)
            throw APIError(status: .upgradeRequired, message: "expected a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)")
        }
    }

    /// Whether a socket may be opened, for both routers (the conversation decided by
    /// `RouteAccess`): this server's own page (`Origin`), a valid `since`, a conversation that
    /// exists — else the error naming why (403, 400, 404).
    static func admit(_ request: Request, id: Int64, live: LiveAPI) async throws -> (conversation: Int64, since: Int64) {
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

    func register(_ groups: RouteGroups) {
        let pages = self.pages
        let anyone = groups.publicPages
        anyone.get("login") { request, _ in await pages.signIn(request.uri.queryParameters) }
        anyone.get("invite/:token") { _, context in try await pages.invitation(context.parameters.get("token") ?? "", for: context.identity) }
        anyone.get("assets/:name") { request, context in try pages.asset(context.parameters.get("name") ?? "", request.headers) }
        anyone.get("assets/fonts/:name") { _, context in try await pages.font(context.parameters.get("name") ?? "") }
        let signedIn = groups.pages
        signedIn.get("/") { request, context in try await pages.library(request.uri.queryParameters, for: context.identity) }
        signedIn.get("search") { request, context in try await pages.search(request.uri.queryParameters, for: context.identity) }
        let conversation = groups.conversationPages
        conversation.get("") { request, context in
            try await pages.conversation(try id(context), request.uri.queryParameters, for: context.identity, access: context.access)
        }
        conversation.get("view") { request, context in try await pages.view(try id(context), request.uri.queryParameters, for: context.identity) }
    }
}
