import Synchronization

/// Runs `work`, but answers ``PipelineError/deadlinePassed(milliseconds:)`` once `milliseconds` pass.
/// The work itself goes on (its result still reaches the caches and the requests that share it).
func withDeadline<Value: Sendable>(
    milliseconds: Int, _ work: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let answered = ClaimOnce()
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(milliseconds))
            guard !Task.isCancelled, answered.claim() else { return }
            continuation.resume(throwing: PipelineError.deadlinePassed(milliseconds: milliseconds))
        }
        Task {
            let result: Result<Value, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            timer.cancel()
            guard answered.claim() else { return }
            continuation.resume(with: result)
        }
    }
}

/// True for the first caller of ``claim()`` only.
private final class ClaimOnce: Sendable {
    private let claimed = Atomic<Bool>(false)

    func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
