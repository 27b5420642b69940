import BubbleCore
import BubbleRender
import BubbleStore
import BubbleTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import Testing
@testable import BubbleServer

/// The store a test server runs on: an SQLite file in a folder of its own, or a new database on
/// the tests' PostgreSQL (`TestPostgres`, started by the tests themselves).
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// `bubbles serve`'s router in this process (no socket, no port): requests go straight to the
/// responder the application would use, through every middleware, with the store running as the
/// server runs it (its feed of access changes included).
final class InProcessServer: @unchecked Sendable {
    let folder: String
    let store: any ConversationStore & AccountStore
    let server: BubbleServer
    let router: Router<BubbleRequestContext>
    let rules: AccessTable
    let responder: any HTTPResponder<BubbleRequestContext>
    private let running: Task<Void, any Error>?
    /// The request's logger as the server makes it (with the request id its context reads).
    var logger: Logger {
        var logger = Logger(label: "test")
        logger[metadataKey: "hb.request.id"] = "\(UInt32.random(in: 0...UInt32.max))"
        return logger
    }

    /// `metrics`: the process's Prometheus registry behind `/metrics` (else the route is a 404).
    init(_ backend: Backend, metrics: Bool = false, configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        TestFonts.pin()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("bk-server-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        switch backend {
        case .sqlite:
            let sqlite = try SQLiteStore(path: folder + "/db.sqlite")
            store = sqlite
            running = Task { try await sqlite.run() }
        case .postgres:
            let pg = try PostgresStore(url: try TestPostgres.shared().createDatabase("server"), mediaFolder: folder + "/media")
            pg.start()
            store = pg
            running = nil
        }
        var configuration = ServerConfiguration(port: 0)
        configure(&configuration)
        server = try BubbleServer(
            store: store, configuration: configuration, pictures: PhotoDecoder(), metrics: metrics ? ServerMetrics.bootstrap() : nil)
        (router, rules) = server.routerAndRules()
        responder = router.buildResponder()
    }

    func stop() {
        running?.cancel()
        (store as? PostgresStore)?.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPFields
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var array: [Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [Any] }
        func header(_ name: String) -> String? { HTTPFields.Element.Name(name).flatMap { headers[$0] } }
    }

    /// One request, as a client at `address` sends it to `host`.
    func request(
        _ method: HTTPRequest.Method, _ path: String, headers: [String: String] = [:], body: Data? = nil,
        contentType: String = "application/json", host: String = "127.0.0.1:8080", address: String = "127.0.0.1"
    ) async throws -> Reply {
        var fields = HTTPFields()
        for (k, v) in headers { fields[HTTPFields.Element.Name(k)!] = v }
        if body != nil, fields[.contentType] == nil { fields[.contentType] = contentType }
        if let body { fields[.contentLength] = String(body.count) }
        let head = HTTPRequest(method: method, scheme: "http", authority: host, path: path, headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body ?? Data())))
        var context = BubbleRequestContext(source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: logger))
        context.address = address
        let response = try await responder.respond(to: request, context: context)
        let collector = Collector()
        try await response.body.write(collector.writer)
        return Reply(status: Int(response.status.code), headers: response.headers, body: collector.data.value)
    }

    /// Collects a response's body.
    struct Collector {
        final class Box: @unchecked Sendable { var value = Data() }
        let data = Box()
        var writer: Writer { Writer(box: data) }
        struct Writer: ResponseBodyWriter {
            let box: Box
            mutating func write(_ buffer: ByteBuffer) async throws { box.value.append(contentsOf: buffer.readableBytesView) }
            consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
    }

    // MARK: accounts

    @discardableResult
    func addUser(_ name: String, admin: Bool = false) async throws -> StoredUser {
        try await store.addUser(
            name: name, displayName: name.capitalized, role: admin ? .admin : .member,
            passwordHash: try await Passwords.hash(name + "-password", cost: 4))
    }

    /// Signs in as `name` (password `NAME-password`) from `address`.
    func signIn(_ name: String, address: String = "127.0.0.1") async throws -> Client {
        let r = try await request(.post, "/api/v1/login", body: Self.json(["name": name, "password": name + "-password"]), address: address)
        guard r.status == 200, let cookie = r.header("Set-Cookie")?.split(separator: ";").first else {
            throw TestFailure("sign-in of \(name): \(r.status) \(r.text)")
        }
        return Client(server: self, name: name, cookie: String(cookie), csrf: r.json["csrf"] as? String)
    }

    static func json(_ object: Any) -> Data { try! JSONSerialization.data(withJSONObject: object) }

    /// A live conversation made by `owner` with `members` (name: access).
    func conversation(by owner: Client, title: String = "Plans", members: [(String, MemberAccess)] = []) async throws -> Int64 {
        let made = try await owner.call(.post, "/api/v1/conversations", ["title": title, "participants": [owner.name]])
        guard made.status == 201, let id = made.json["id"] as? Int else { throw TestFailure("create: \(made.status) \(made.text)") }
        for (name, access) in members {
            let r = try await owner.call(.post, "/api/v1/conversations/\(id)/members", ["name": name, "access": access.rawValue])
            guard r.status == 200 else { throw TestFailure("add \(name): \(r.status) \(r.text)") }
        }
        return Int64(id)
    }
}

/// A signed-in user's client: their cookie, and the CSRF token on writes.
struct Client: Sendable {
    let server: InProcessServer
    var name: String
    var cookie: String?
    var csrf: String?
    var bearer: String?

    var headers: [String: String] {
        var h: [String: String] = [:]
        if let cookie { h["Cookie"] = cookie }
        if let bearer { h["Authorization"] = "Bearer " + bearer }
        return h
    }

    func call(_ method: HTTPRequest.Method, _ path: String, _ body: Any? = nil, extra: [String: String] = [:]) async throws -> InProcessServer.Reply {
        var h = headers
        if method != .get, method != .head, let csrf { h["X-CSRF-Token"] = csrf }
        for (k, v) in extra { h[k] = v }
        return try await server.request(method, path, headers: h, body: body.map(InProcessServer.json))
    }

    func get(_ path: String) async throws -> InProcessServer.Reply { try await call(.get, path) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
