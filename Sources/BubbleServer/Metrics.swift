import BubbleCore
import BubbleStore
import Foundation
import Metrics
import Prometheus
import ServiceLifecycle
import Synchronization

/// What `/metrics` shows, in Prometheus's text format: per route the requests and their latency
/// (`hb_requests_total`, `http_server_request_duration_seconds`: Hummingbird's
/// `MetricsMiddleware`), open live sockets, messages committed by kind, every store call's
/// latency, and what the viewer's layouts hold. Recorded through swift-metrics, kept by
/// swift-prometheus's registry.
public final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry?
    /// Open live sockets.
    let sockets = Meter(label: "bubbles_live_sockets")
    /// Messages laid out for viewers, and the bytes their layouts hold (an estimate).
    let layoutMessages = Gauge(label: "bubbles_layout_messages")
    let layoutBytes = Gauge(label: "bubbles_layout_bytes")
    private let commits: [ChangeKind: Metrics.Counter]
    private let calls: [String: Metrics.Timer]

    /// Every store call `TimedStore` times.
    static let storeCalls = [
        "prepare", "importStream", "createConversation", "add", "edit", "delete", "react", "changes", "lastRev", "people",
        "broadcastTyping", "conversations", "conversation", "messages", "seq", "bounds", "count", "dayCounts", "search", "load"
    ]

    init(registry: PrometheusCollectorRegistry?) {
        self.registry = registry
        commits = Dictionary(
            uniqueKeysWithValues: [ChangeKind.message, .edit, .delete, .react].map {
                ($0, Metrics.Counter(label: "bubbles_changes_committed", dimensions: [("kind", $0.rawValue)]))
            })
        calls = Dictionary(
            uniqueKeysWithValues: Self.storeCalls.map {
                ($0, Metrics.Timer(label: "bubbles_store_call_duration", dimensions: [("call", $0)], preferredDisplayUnit: .seconds))
            })
    }

    /// A live change committed (by this server or, on PostgreSQL, another).
    func committed(_ change: StoredChange) { commits[change.kind]?.increment() }

    /// Runs a store call, timing it.
    func time<T>(_ call: String, _ body: () async throws -> T) async rethrows -> T {
        let start = ContinuousClock.now
        defer { calls[call]?.record(duration: ContinuousClock.now - start) }
        return try await body()
    }

    /// The registry as Prometheus reads it; nil when this server keeps none.
    func prometheusText() -> [UInt8]? { registry?.emitToBuffer() }

    /// The process's metrics system, set once to a Prometheus registry (with latency buckets from
    /// 0.25 ms to 10 s); the registry to hand to `BubbleServer`.
    public static func bootstrap() -> PrometheusCollectorRegistry { shared }

    private static let shared: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10)
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }()
}

/// A store whose every call is timed into `ServerMetrics` (what the server's routes use). Each
/// requirement is forwarded by hand: the protocol has no defaults, so a new one cannot be missed.
final class TimedStore: ConversationStore {
    let base: any ConversationStore
    let metrics: ServerMetrics

    init(_ base: any ConversationStore, metrics: ServerMetrics) {
        self.base = base
        self.metrics = metrics
        base.feed.listen { [metrics] change in metrics.committed(change) }
    }

    var path: String { base.path }
    var mediaFolder: String { base.mediaFolder }
    var feed: ChangeFeed { base.feed }
    func run() async throws { try await base.run() }
    func prepare() async throws { try await metrics.time("prepare") { try await base.prepare() } }
    func importStream(
        sourceFormat: String, title: String?, mediaFolder exportFolder: String, sortByDate: Bool,
        read: @escaping StoreImportReader
    ) async throws -> StoreImportSummary {
        try await metrics.time("importStream") {
            try await base.importStream(sourceFormat: sourceFormat, title: title, mediaFolder: exportFolder, sortByDate: sortByDate, read: read)
        }
    }
    func createConversation(title: String, participants: [Participant]) async throws -> StoredConversation {
        try await metrics.time("createConversation") { try await base.createConversation(title: title, participants: participants) }
    }
    func add(_ new: NewMessage, to conversation: Int64) async throws -> AddedMessage {
        try await metrics.time("add") { try await base.add(new, to: conversation) }
    }
    func edit(_ seq: Int64, in conversation: Int64, text: String, spans: [TextSpan], by sender: String) async throws -> StoredChange {
        try await metrics.time("edit") { try await base.edit(seq, in: conversation, text: text, spans: spans, by: sender) }
    }
    func delete(_ seq: Int64, in conversation: Int64, by sender: String) async throws -> StoredChange {
        try await metrics.time("delete") { try await base.delete(seq, in: conversation, by: sender) }
    }
    func react(_ seq: Int64, in conversation: Int64, emoji: String, sender: String, on: Bool) async throws -> StoredChange {
        try await metrics.time("react") { try await base.react(seq, in: conversation, emoji: emoji, sender: sender, on: on) }
    }
    func changes(in conversation: Int64, since rev: Int64, limit: Int) async throws -> [StoredChange] {
        try await metrics.time("changes") { try await base.changes(in: conversation, since: rev, limit: limit) }
    }
    func lastRev(of conversation: Int64) async throws -> Int64? {
        try await metrics.time("lastRev") { try await base.lastRev(of: conversation) }
    }
    func people(of conversation: Int64) async throws -> (owner: String?, ids: Set<String>) {
        try await metrics.time("people") { try await base.people(of: conversation) }
    }
    func broadcastTyping(_ conversation: Int64, sender: String, after rev: Int64) async {
        await metrics.time("broadcastTyping") { await base.broadcastTyping(conversation, sender: sender, after: rev) }
    }
    func conversations() async throws -> [StoredConversation] {
        try await metrics.time("conversations") { try await base.conversations() }
    }
    func conversation(id: Int64) async throws -> StoredConversation? {
        try await metrics.time("conversation") { try await base.conversation(id: id) }
    }
    func messages(in conversation: Int64, after seq: Int64, limit: Int) async throws -> [StoredMessage] {
        try await metrics.time("messages") { try await base.messages(in: conversation, after: seq, limit: limit) }
    }
    func messages(in conversation: Int64, before seq: Int64, limit: Int) async throws -> [StoredMessage] {
        try await metrics.time("messages") { try await base.messages(in: conversation, before: seq, limit: limit) }
    }
    func seq(in conversation: Int64, atOrAfter date: Date) async throws -> Int64? {
        try await metrics.time("seq") { try await base.seq(in: conversation, atOrAfter: date) }
    }
    func bounds(of conversation: Int64) async throws -> (first: Int64, last: Int64)? {
        try await metrics.time("bounds") { try await base.bounds(of: conversation) }
    }
    func count(of conversation: Int64) async throws -> Int {
        try await metrics.time("count") { try await base.count(of: conversation) }
    }
    func dayCounts(of conversation: Int64, timeZone: TimeZone) async throws -> [StoreDayCount] {
        try await metrics.time("dayCounts") { try await base.dayCounts(of: conversation, timeZone: timeZone) }
    }
    func search(_ search: StoreSearch) async throws -> [StoreHit] {
        try await metrics.time("search") { try await base.search(search) }
    }
    func searchMatches(_ search: StoreSearch, cap: Int) async throws -> [Int64: [Int64]] {
        try await metrics.time("search_matches") { try await base.searchMatches(search, cap: cap) }
    }
    func load(_ conversation: Int64) async throws -> Conversation {
        try await metrics.time("load") { try await base.load(conversation) }
    }
    func peopleSnapshot() async throws -> PeopleSnapshot {
        try await metrics.time("peopleSnapshot") { try await base.peopleSnapshot() }
    }
    func saveCards(_ cards: [PersonCard], region: String?) async throws -> ContactsImportSummary {
        try await metrics.time("saveCards") { try await base.saveCards(cards, region: region) }
    }
    func createPerson(name: String) async throws -> Int64 {
        try await metrics.time("createPerson") { try await base.createPerson(name: name) }
    }
    func setIdentities(_ keys: [String], person: Int64?) async throws {
        try await metrics.time("setIdentities") { try await base.setIdentities(keys, person: person) }
    }
    func mergePerson(_ source: Int64, into target: Int64) async throws {
        try await metrics.time("mergePerson") { try await base.mergePerson(source, into: target) }
    }
    func rawParticipants() async throws -> [RawParticipants] {
        try await metrics.time("rawParticipants") { try await base.rawParticipants() }
    }
}
