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
import Logging
import Prometheus
import ServiceLifecycle
import CHeap

/// How `bubbles serve` runs.
public struct ServerConfiguration: Sendable {
    /// The address to listen on; loopback (127.0.0.1) unless told otherwise.
    public var host: String
    /// The TCP port (0: any free port, told to `onRunning`).
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
    /// What the log says: `info` adds a line per request (with its id), `debug` more.
    public var logLevel: Logger.Level
    /// How long a request's headers may take to arrive from their first byte (then `408`).
    public var headerTimeout: Duration = .seconds(20)
    /// Conversations of at least this many messages are laid out compactly for the viewer: the
    /// layout keeps a few dozen bytes a message instead of the messages (windows read theirs from
    /// the store).
    public var compactFrom = 20_000
    /// Sessions, cookies, sign-in limits, invitations (once the store has users).
    public var accounts = AccountSettings()
    /// Names (`Host`) the server is reached by besides its address (`--public-host`); a request
    /// for any other name is refused (421), so no web page can reach it by re-binding a name of
    /// its own to this machine (DNS rebinding). A server on loopback also answers `localhost`.
    public var publicHosts: [String] = []
    /// Proxies whose `X-Forwarded-For` names the client (`--trusted-proxy CIDR`): sign-in limits
    /// count that client, not the proxy every user shares. Addresses or CIDR ranges.
    public var trustedProxies: [String] = []

    /// A configuration; every parameter is the property of the same name.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, theme: String = "imessage",
        maxUpload: Int = 512 << 20, live: LiveLimits = LiveLimits(), logLevel: Logger.Level = .notice
    ) {
        self.host = host; self.port = port; self.token = token; self.theme = theme; self.maxUpload = maxUpload; self.live = live
        self.logLevel = logLevel
    }

    /// Whether `host` only accepts connections from this machine.
    public var isLoopback: Bool { ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.") }
}

/// The store over HTTP: the JSON API under `/api/v1`, server-rendered pages (the library, a
/// conversation, search) in the store's theme with a strict Content-Security-Policy, live
/// sockets, `/metrics`. docs/SERVER.md describes its services and how a request flows.
public struct BubbleServer: Sendable {
    /// The store the routes use; its database rounds are timed for `/metrics` (`StoreTiming`).
    public let store: any ConversationStore
    /// Users, sessions, members: the same store, by its account roles.
    let accounts: any AccountStore
    let gate: AccountGate
    /// How the server runs.
    public let configuration: ServerConfiguration
    let pages: Pages
    let files: Files
    let live: LiveAPI
    let metrics: ServerMetrics
    /// Read marks, and the signed-in users' list feeds (`Reads.swift`).
    let reads: ReadMarks
    let userFeed: UserFeed

    /// `importer` takes uploads (`POST /api/v1/imports`), `exporter` writes downloads; without
    /// them those routes answer 501. `metrics`: the registry `/metrics` shows (see
    /// `ServerMetrics.bootstrap()`); without it the route answers 404.
    public init(
        store: any ConversationStore & AccountStore, configuration: ServerConfiguration, pictures: any PictureDecoder,
        importer: (any ExportImporting)? = nil, exporter: (any ConversationExporting)? = nil,
        metrics registry: PrometheusCollectorRegistry? = nil
    ) throws {
        // Two C heaps for all threads, not eight a core: each keeps what its threads freed, and
        // a million-message layout built on some threads and read on others left ~25 MB more
        // per reader in them.
        _ = bk_heap_limit_arenas(2)
        // Blocks of 8 MB and more (a long conversation layout's arrays) mapped on their
        // own and given back when freed: a second reader's build left 20–45 MB of freed blocks
        // resident between live ones when they came from the heap.
        _ = bk_heap_map_large(8 << 20)
        let metrics = ServerMetrics(registry: registry)
        metrics.observe(store)
        self.store = store
        accounts = store
        gate = AccountGate(store: store, settings: configuration.accounts)
        self.configuration = configuration
        self.metrics = metrics
        pages = try Pages(
            store: store, accounts: store, theme: configuration.theme, pictures: pictures, live: configuration.live, metrics: metrics,
            compactFrom: configuration.compactFrom)
        files = Files(
            store: store, accounts: store, importer: importer, exporter: exporter, maxUpload: configuration.maxUpload,
            geometries: pages.geometries)
        reads = ReadMarks(store: store, accounts: store, names: UserKeys(accounts: store))
        live = LiveAPI(store: store, accounts: store, hub: LiveHub(store: store, reads: reads), limits: configuration.live, pictures: pictures)
        userFeed = UserFeed(store: store, accounts: store)
    }

    /// Every request passes, in order: its query read as forms send it (`+` is a space), metrics (count and latency per route), the access log
    /// (with the request id, paths without their queries or secrets), security headers, errors as
    /// JSON, who it is (`IdentityMiddleware`: the Host, the token in single-owner mode, else the
    /// signed-in user) — then the router matches its route, whose group decides what it may reach
    /// (`RouteAccess`). A router with a route outside every access group is not built.
    public func router() -> Router<BubbleRequestContext> {
        let (router, rules) = routerAndRules()
        Self.requireRules(router, rules)
        return router
    }

    /// The router and the access rule of each of its routes (`router()` checks that every route
    /// has one; the tests walk them).
    func routerAndRules() -> (router: Router<BubbleRequestContext>, rules: AccessTable) {
        let router = Router(context: BubbleRequestContext.self)
        router.add(middleware: FormQueryMiddleware())
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: AccessLogMiddleware())
        router.add(middleware: SecurityHeadersMiddleware())
        let pages = self.pages
        let errorPage: @Sendable (APIError, Identity) async -> Response = { error, identity in await pages.errorPage(error, for: identity) }
        router.add(middleware: ErrorMiddleware(htmlPage: errorPage))
        router.add(middleware: identity)
        let groups = RouteGroups(router: router, policy: AccessPolicy(accounts: accounts), table: AccessTable(), errorPage: errorPage)
        OperationsRoutes(metrics: metrics).register(groups)
        AccountRoutes(gate: gate, hub: live.hub).register(groups)
        ConversationRoutes(api: API(store: store, accounts: accounts)).register(groups)
        FileRoutes(files: files, pages: pages).register(groups)
        LiveRoutes(live: live, maxUpload: configuration.maxUpload).register(groups)
        InsightRoutes(pages: pages).register(groups)
        PeopleRoutes(pages: pages).register(groups)
        PageRoutes(pages: pages).register(groups)
        ReadRoutes(reads: reads).register(groups)
        SettingsRoutes(accounts: accounts, themes: Set(pages.themes.keys)).register(groups)
        groups.api.get("feed") { request, _ -> Response in
            guard LiveRoutes.sameOrigin(request) else {
                throw APIError(status: .forbidden, message: "Origin \(request.headers[.origin] ?? "") is not this server's; the feed is for its own pages")
            }
            throw APIError(status: .upgradeRequired, message: "expected a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)")
        }
        return (router, groups.table)
    }

    /// Stops at once on a route registered without an access rule: it would be served to anyone.
    static func requireRules(_ router: Router<BubbleRequestContext>, _ table: AccessTable) {
        let unruled = table.unruled(router)
        precondition(unruled.isEmpty, "routes without an access rule (register them through RouteGroups): \(unruled.joined(separator: ", "))")
    }

    /// Who a request is, for both routers.
    var identity: IdentityMiddleware {
        IdentityMiddleware(
            gate: gate, token: configuration.token,
            hosts: AllowedHosts(host: configuration.host, loopback: configuration.isLoopback, publicHosts: configuration.publicHosts),
            proxies: TrustedProxies(configuration.trustedProxies.compactMap(TrustedProxies.Range.init)))
    }

    /// The router that decides WebSocket upgrades: who it is (as every request: the token, or a
    /// signed-in member of the conversation), the page's own `Origin` (a browser on another site
    /// cannot listen or write), a known conversation and a valid `since`. What it refuses is
    /// answered by the HTTP router's route with the reason. A user's socket closes within a
    /// second of their session or token ending or their membership going.
    public func webSocketRouter() -> Router<BubbleRequestContext> {
        let (router, rules) = webSocketRouterAndRules()
        Self.requireRules(router, rules)
        return router
    }

    /// The WebSocket router, through the same identity and access groups as every route.
    func webSocketRouterAndRules() -> (router: Router<BubbleRequestContext>, rules: AccessTable) {
        let router = Router(context: BubbleRequestContext.self)
        router.add(middleware: FormQueryMiddleware())
        router.add(middleware: AccessLogMiddleware())
        router.add(middleware: identity)
        let groups = RouteGroups(router: router, policy: AccessPolicy(accounts: accounts), table: AccessTable())
        let live = self.live, metrics = self.metrics, gate = self.gate, userFeed = self.userFeed
        // The signed-in user's list as it changes (`Reads.swift`): closes with their session.
        groups.api.ws("feed") { request, _ in
            LiveRoutes.sameOrigin(request) ? .upgrade([:]) : .dontUpgrade
        } onUpgrade: { inbound, outbound, context in
            let identity = context.requestContext.identity
            let (id, frames) = userFeed.connect(identity)
            defer { userFeed.disconnect(identity, id) }
            // Ends when the client goes (its side of the socket ends), the server stops, or the
            // user's session does; frames are written as they come.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for await frame in frames { try await outbound.write(.text(frame)) } }
                group.addTask { for try await _ in inbound.messages(maxSize: 4_096) {} }
                group.addTask { try? await gracefulShutdown() }
                if let user = identity.user {
                    group.addTask {
                        _ = await SocketRevocation(user: user.id, check: { try await gate.stillValid(identity) }).wait(hub: live.hub, conversation: nil)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        groups.conversationAPI(.read).ws("live") { request, context in
            guard let decided = context.conversation else { return .dontUpgrade }
            return (try? await LiveRoutes.admit(request, id: decided.id, live: live)) != nil ? .upgrade([:]) : .dontUpgrade
        } onUpgrade: { inbound, outbound, context in
            let requestContext = context.requestContext
            guard let decided = requestContext.conversation else { return }
            let (id, since) = try await LiveRoutes.admit(context.request, id: decided.id, live: live)
            metrics.sockets.increment()
            defer { metrics.sockets.decrement() }
            let identity = requestContext.identity
            let writes = identity == .owner || (decided.access?.writes ?? false)
            try await LiveSocket(
                live: live, conversation: id, since: since, speaker: identity.speaker, writes: writes,
                revocation: identity.user.map { user in SocketRevocation(user: user.id, check: { try await gate.stillAllowed(identity, decided) }) }
            )
            .run(inbound: inbound, outbound: outbound)
        }
        return (router, groups.table)
    }

    /// The HTTP server as a `Service`: Hummingbird's application with this server's routers.
    /// Calls `onRunning` with the port it listens on (the one the system chose for port 0).
    public func application(logger: Logger, onRunning: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        // A client that does not answer a close within 2 s is dropped (a stop waits no longer for it).
        let ws = WebSocketServerConfiguration(
            maxFrameSize: configuration.live.maxText * 2 + 16_384, autoPing: .enabled(timePeriod: .seconds(20)),
            closeTimeout: .seconds(2))
        // Idle keep-alive connections close after a minute (and a client that stops sending in
        // the middle of a request is dropped then); a response that closes its connection (a
        // body too large) does so once written.
        let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [CloseAfterResponse()], idleTimeout: .seconds(60))
        let channel = HTTP1WebSocketUpgradeChannel.Configuration(http1: http1, ws: ws)
        let webSocketResponder = webSocketRouter().buildResponder()
        let limits = RequestHeadGuard.Limits(headTimeout: TimeAmount(configuration.headerTimeout))
        // Every connection's request heads are guarded before HTTP parsing (header floods, slow heads).
        let server = HTTPServerBuilder { responder in
            GuardedChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channel),
                limits: limits)
        }
        return Application(
            router: router(), server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "BubbleKit"),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) }, logger: logger)
    }

    /// Runs the store and the HTTP server in one `ServiceGroup` until SIGINT or SIGTERM, then
    /// stops gracefully: no new connections; requests and socket writes in flight finish (a
    /// write a client saw acknowledged is stored); then the store closes.
    public func run(onRunning: @escaping @Sendable (Int) -> Void) async throws {
        var logger = Logger(label: "bubbles.serve")
        logger.logLevel = configuration.logLevel
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: store), .init(service: StartAfterStore(store: store, app: application(logger: logger, onRunning: onRunning)))],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let e as IOError where e.errnoCode == EADDRINUSE {
            throw ServerError(
                "port \(configuration.port) on \(configuration.host) is in use by another program; choose another with --port (0 takes any free one)")
        } catch let e as IOError where e.errnoCode == EADDRNOTAVAIL || e.errnoCode == EACCES {
            throw ServerError(
                "cannot listen on \(configuration.host):\(configuration.port) (\(e.errnoCode == EACCES ? "not allowed: ports below 1024 need privileges" : "this machine has no such address")); check --host and --port"
            )
        }
    }
}

/// Why the server could not run, as one line for its user.
public struct ServerError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The HTTP server, started once the store is ready (its schema up to date, its database
/// answering): a store that cannot be used stops `bubbles serve` with its reason.
struct StartAfterStore<App: ApplicationProtocol>: Service {
    let store: any ConversationStore
    let app: App
    func run() async throws {
        try await store.prepare()
        try await app.run()
    }
}

/// The conversation of a route, as `RouteAccess` decided it. A route outside a conversation
/// group has none: a 500 (a route registered under the wrong rule), never a reading of the path.
func id(_ context: BubbleRequestContext) throws -> Int64 {
    guard let decided = context.conversation else {
        throw APIError(status: .internalServerError, message: "this route names a conversation but was registered without its access rule")
    }
    return decided.id
}

/// The message sequence number of a route (canonical digits, as `canonicalID`), or a 404.
func seq(_ context: BubbleRequestContext) throws -> Int64 {
    let raw = context.parameters.get("seq")
    guard let seq = canonicalID(raw) else { throw APIError.notFound("no message \"\(raw ?? "")\"; expected its sequence number, as …/messages/12") }
    return seq
}

/// A whole number ≥ 1 from a route (canonical digits), or a 404 with `message`.
func positive(_ raw: String?, _ message: @autoclosure () -> String) throws -> Int64 {
    guard let value = canonicalID(raw) else { throw APIError.notFound(message()) }
    return value
}
