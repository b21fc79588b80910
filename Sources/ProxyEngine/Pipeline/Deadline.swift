import ImageCore
import Synchronization

/// Runs a request's `work` and stops waiting for it when `milliseconds` pass
/// (``PipelineError/deadlinePassed(milliseconds:)``) or when `disconnect` fires (`CancellationError`):
/// the work's task is cancelled, so the request leaves the download and transform queues (a download
/// nobody else waits for is aborted; a running transform finishes and is cached).
public func withDeadline<Value: Sendable>(
    milliseconds: Int, disconnect: ClientDisconnectSignal? = nil, _ work: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let timedOut = Flag()
    let task = Task { try await work() }
    let timer = Task {
        try? await Task.sleep(for: .milliseconds(milliseconds))
        guard !Task.isCancelled else { return }
        timedOut.set()
        task.cancel()
    }
    let registration = disconnect?.onDisconnect { task.cancel() }
    defer {
        timer.cancel()
        disconnect?.remove(registration)
    }
    do {
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    } catch {
        if timedOut.isSet { throw PipelineError.deadlinePassed(milliseconds: milliseconds) }
        throw error
    }
}

/// A flag set once, read from any thread.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
