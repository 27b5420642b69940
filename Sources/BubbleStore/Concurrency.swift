import Foundation

/// A value behind a lock, for state shared by tasks that never wait while holding it.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    @discardableResult
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body(&stored)
    }
}

/// Work done once (a schema brought up to date): every caller waits for the same run; a run
/// that failed is tried again by the next caller.
final class Once: Sendable {
    private let state = Locked<Task<Void, any Error>?>(nil)
    private let done = Locked(false)

    /// Runs `body` (once) and waits for it.
    func run(_ body: @escaping @Sendable () async throws -> Void) async throws {
        if done.value { return }
        let task = state.withLock { task -> Task<Void, any Error> in
            if let task { return task }
            let made = Task { try await body() }
            task = made
            return made
        }
        do {
            try await task.value
            done.withLock { $0 = true }
        } catch {
            state.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }
}

/// A value handed to work that runs while its owner waits for it (a closure run once on a
/// database's writer, the owner suspended until it returns): never used from two places at once.
struct Handed<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
