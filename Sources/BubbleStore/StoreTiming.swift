import Synchronization

/// Where a store's database time goes. Both backends time their common paths — every SQLite
/// read and write transaction, every PostgreSQL connection use and transaction — labelled by
/// the store call that made it (`messages`, `add`, `sessionUser`, …), and hand each duration
/// to the one reporter set with `report(to:)` (the server's metrics). Nothing is measured
/// until a reporter is set.
public final class StoreTiming: Sendable {
    /// A database round's duration, with the store call that made it.
    public typealias Reporter = @Sendable (_ call: String, _ duration: Duration) -> Void
    private let reporter = ClosureSlot<Reporter>()

    /// Timing that reports nowhere until `report(to:)`.
    public init() {}

    /// Hands every later round's duration to `reporter` (replacing an earlier one).
    public func report(to reporter: @escaping Reporter) {
        self.reporter.set(reporter)
    }

    /// Runs `body`, one database round of the store call `function` (`#function` of the
    /// caller: its name before the parenthesis is the label).
    func time<T>(_ function: String, _ body: () async throws -> T) async rethrows -> T {
        guard let report = reporter.value else { return try await body() }
        let start = ContinuousClock.now
        defer { report(Self.label(function), ContinuousClock.now - start) }
        return try await body()
    }

    /// `messages(in:after:limit:)` → `messages`.
    static func label(_ function: String) -> String {
        String(function.prefix { $0 != "(" })
    }
}

/// A closure shared between threads, set and read under a lock. Kept directly in a generic lock
/// (`Mutex<F?>`) and read through `withLock`'s inout, a closure is written back re-abstracted:
/// each read wrapped it in two more thunks, so every call went deeper than the one before (a
/// server's store timing a million rounds: slower by the hour, then a stack overflow). Here
/// the lock holds a box, which only hands the closure out.
final class ClosureSlot<F: Sendable>: Sendable {
    private final class Box: Sendable {
        let value: F
        init(_ value: F) { self.value = value }
    }
    private let box = Mutex<Box?>(nil)

    init() {}

    func set(_ value: F?) { box.withLock { $0 = value.map(Box.init) } }
    var value: F? { box.withLock { $0 }?.value }
}
