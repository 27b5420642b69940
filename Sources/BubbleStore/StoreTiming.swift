import Synchronization

/// Where a store's database time goes. Both backends time their common paths — every SQLite
/// read and write transaction, every PostgreSQL connection use and transaction — labelled by
/// the store call that made it (`messages`, `add`, `sessionUser`, …), and hand each duration
/// to the one reporter set with `report(to:)` (the server's metrics). Nothing is measured
/// until a reporter is set.
public final class StoreTiming: Sendable {
    /// A database round's duration, with the store call that made it.
    public typealias Reporter = @Sendable (_ call: String, _ duration: Duration) -> Void
    private let reporter = Mutex<Reporter?>(nil)

    /// Timing that reports nowhere until `report(to:)`.
    public init() {}

    /// Hands every later round's duration to `reporter` (replacing an earlier one).
    public func report(to reporter: @escaping Reporter) {
        self.reporter.withLock { $0 = reporter }
    }

    /// Runs `body`, one database round of the store call `function` (`#function` of the
    /// caller: its name before the parenthesis is the label).
    func time<T>(_ function: String, _ body: () async throws -> T) async rethrows -> T {
        guard let report = reporter.withLock({ $0 }) else { return try await body() }
        let start = ContinuousClock.now
        defer { report(Self.label(function), ContinuousClock.now - start) }
        return try await body()
    }

    /// `messages(in:after:limit:)` → `messages`.
    static func label(_ function: String) -> String {
        String(function.prefix { $0 != "(" })
    }
}
