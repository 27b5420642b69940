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

    /// A timer per store call, made when the store first reports it (`StoreTiming`).
    private let calls = Mutex<[String: Metrics.Timer]>([:])

    init(registry: PrometheusCollectorRegistry?) {
        self.registry = registry
        commits = Dictionary(
            uniqueKeysWithValues: [ChangeKind.message, .edit, .delete, .react].map {
                ($0, Metrics.Counter(label: "bubbles_changes_committed", dimensions: [("kind", $0.rawValue)]))
            })
    }

    /// A live change committed (by this server or, on PostgreSQL, another).
    func committed(_ change: StoredChange) { commits[change.kind]?.increment() }

    /// Takes `store`'s database rounds (each timed by the store, labelled by its call) and its
    /// committed changes. The store's common paths are timed, not each method: a call added to
    /// a store is measured without a line here.
    func observe(_ store: some StoreBackend & LiveStore) {
        store.timing.report { [self] call, duration in timer(call).record(duration: duration) }
        store.feed.listen { [self] change in committed(change) }
    }

    private func timer(_ call: String) -> Metrics.Timer {
        calls.withLock { timers in
            if let t = timers[call] { return t }
            let t = Metrics.Timer(label: "bubbles_store_call_duration", dimensions: [("call", call)], preferredDisplayUnit: .seconds)
            timers[call] = t
            return t
        }
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
