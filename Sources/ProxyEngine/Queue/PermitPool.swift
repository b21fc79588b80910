import ImageCore
import Synchronization

/// A counting semaphore for async code: at most `capacity` permits out at once, waiters served first
/// come first served, a cancelled waiter leaves at once. A permit is given back when the last reference
/// to its ``Permit`` goes away, so it can travel with the data it stands for.
final class PermitPool: Sendable {
    /// One permit; returned to the pool when released by deinit.
    final class Permit: Sendable {
        private let pool: PermitPool
        fileprivate init(pool: PermitPool) { self.pool = pool }
        deinit { pool.giveBack() }
    }

    private struct State {
        var available: Int
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID = 0
        var cancelledEarly: Set<Int> = []
    }

    private let state: Mutex<State>

    init(capacity: Int) {
        state = Mutex(State(available: max(1, capacity)))
    }

    /// A permit, waiting in line for one when none is free.
    /// - Throws: `CancellationError` when the calling task is cancelled while it waits.
    func acquire() async throws -> Permit {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    if state.available > 0, state.waiters.isEmpty {
                        state.available -= 1
                        return .success(())
                    }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                return state.waiters.remove(at: index).continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
        return Permit(pool: self)
    }

    private func giveBack() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiters.isEmpty else {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
