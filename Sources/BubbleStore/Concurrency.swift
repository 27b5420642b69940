import Foundation
import Synchronization

/// Work done once (a schema brought up to date): every caller waits for the same run; a run
/// that failed is tried again by the next caller.
final class Once: Sendable {
    private enum State { case idle, running(Task<Void, any Error>), done }
    private let state = Mutex(State.idle)

    /// Runs `body` (once) and waits for it.
    func run(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let task: Task<Void, any Error>? = state.withLock { state in
            switch state {
            case .done: return nil
            case .running(let task): return task
            case .idle:
                let made = Task { try await body() }
                state = .running(made)
                return made
            }
        }
        guard let task else { return }
        do {
            try await task.value
            state.withLock { $0 = .done }
        } catch {
            state.withLock { if case .running(let t) = $0, t == task { $0 = .idle } }
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
