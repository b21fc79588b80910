import ImageCore
import Synchronization

/// A deduplicating priority queue that runs async jobs: callers ask for the result under a key, the
/// first one's `operation` runs once a slot is free, everyone waiting for that key gets its result.
///
/// Rules (see ``WorkQueueState``): priority is the highest waiter's, waiting jobs start in priority
/// order, the backlog is bounded (``QueueFullError``), and a caller whose task is cancelled leaves at
/// once with `CancellationError`. A job nobody waits for any more is dropped while it waits; while it
/// runs it is cancelled when `abortsAbandonedJobs` (downloads) or left to finish (transforms, whose
/// result still lands in the caches).
final class PriorityWorkQueue<Value: Sendable>: Sendable {
    typealias Operation = @Sendable () async throws -> Value
    typealias Priority = WorkQueueState.Priority

    private struct Storage {
        var state: WorkQueueState
        var continuations: [WorkQueueState.WaiterID: CheckedContinuation<Value?, any Error>] = [:]
        /// The operation of each waiting job, until it starts.
        var operations: [WorkQueueState.JobID: Operation] = [:]
        /// The task of each running job.
        var tasks: [WorkQueueState.JobID: Task<Void, Never>] = [:]
        var enqueuedAt: [WorkQueueState.JobID: ContinuousClock.Instant] = [:]
        /// Every caller inside ``run(key:priority:_:)``, by token, so that a cancellation can name it.
        var callers: [Int: Caller] = [:]
        var tokenOfWaiter: [WorkQueueState.WaiterID: Int] = [:]
        var nextToken = 0
    }

    private enum Caller {
        case arriving
        case cancelledEarly
        case waiting(key: String, waiter: WorkQueueState.WaiterID)
    }

    private let storage: Mutex<Storage>
    private let abortsAbandonedJobs: Bool
    private let observer: @Sendable (_ waiting: Int, _ running: Int, _ waited: Duration?) -> Void
    private let onJoin: @Sendable () -> Void
    private let prefers: @Sendable (String) -> Bool

    /// - Parameters:
    ///   - slots: jobs running at once.
    ///   - maxQueued: jobs waiting for a slot at most.
    ///   - observer: told the waiting and running counts after every change, with the wait of a job that just started.
    ///   - onJoin: called when a caller joins an existing job.
    ///   - prefers: whether waiting jobs of a group go first (``WorkQueueState/nextToStart(preferring:)``);
    ///     asked under the queue's lock, so it must not call back into the queue.
    init(
        slots: Int, maxQueued: Int, order: WorkQueueState.Order, abortsAbandonedJobs: Bool, maxRunningPerTenant: Int? = nil,
        maxRunningHeavy: Int? = nil,
        observer: @escaping @Sendable (_ waiting: Int, _ running: Int, _ waited: Duration?) -> Void = { _, _, _ in },
        onJoin: @escaping @Sendable () -> Void = {},
        prefers: @escaping @Sendable (String) -> Bool = { _ in false }
    ) {
        storage = Mutex(
            Storage(state: WorkQueueState(
                slots: slots, maxQueued: maxQueued, order: order, maxRunningPerTenant: maxRunningPerTenant,
                maxRunningHeavy: maxRunningHeavy)))
        self.abortsAbandonedJobs = abortsAbandonedJobs
        self.observer = observer
        self.onJoin = onJoin
        self.prefers = prefers
    }

    /// Jobs waiting for a slot and jobs running.
    var counts: (waiting: Int, running: Int) {
        storage.withLock { ($0.state.waitingCount, $0.state.runningCount) }
    }

    /// Whether a job for `key` is waiting or running.
    func hasJob(for key: String) -> Bool { storage.withLock { $0.state.job(for: key) != nil } }

    /// Whether a new job would be refused now (the backlog is full and no slot is free).
    var isFull: Bool {
        storage.withLock { $0.state.waitingCount >= $0.state.maxQueued && $0.state.runningCount >= $0.state.slots }
    }

    /// The result of the job for `key`, running `operation` if no job for `key` exists; a new job is of
    /// `group` (``WorkQueueState/join(key:priority:mayShed:group:)``).
    /// - Throws: ``QueueFullError`` when a new job does not fit (only when `mayShed`), `CancellationError` when the calling
    ///   task is cancelled while it waits, or what `operation` threw.
    func run(
        key: String, priority: Priority, mayShed: Bool = true, group: String? = nil, tenant: String? = nil, heavy: Bool = false,
        _ operation: @escaping Operation
    ) async throws -> Value {
        // With an operation there is always a result (or an error).
        try await enqueue(key: key, priority: priority, mayShed: mayShed, group: group, tenant: tenant, heavy: heavy, operation)!
    }

    /// The result of the job for `key` when one is waiting or running (joining it), nil at once otherwise.
    func joinExisting(key: String, priority: Priority) async throws -> Value? {
        try await enqueue(key: key, priority: priority, mayShed: false, nil)
    }

    private func enqueue(
        key: String, priority: Priority, mayShed: Bool, group: String? = nil, tenant: String? = nil, heavy: Bool = false,
        _ operation: Operation?
    ) async throws -> Value? {
        let token = storage.withLock { storage in
            defer { storage.nextToken += 1 }
            storage.callers[storage.nextToken] = .arriving
            return storage.nextToken
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value?, any Error>) in
                let refusal: Result<Value?, any Error>? = storage.withLock { storage in
                    if case .cancelledEarly? = storage.callers.removeValue(forKey: token) { return .failure(CancellationError()) }
                    guard operation != nil || storage.state.job(for: key) != nil else {
                        storage.callers[token] = nil
                        return .success(nil)
                    }
                    let joined = storage.state.join(key: key, priority: priority, mayShed: mayShed, group: group, tenant: tenant, heavy: heavy)
                    switch joined {
                    case .rejected:
                        return .failure(QueueFullError())
                    case .joined(_, let waiter), .queued(_, let waiter), .start(_, let waiter):
                        storage.continuations[waiter] = continuation
                        storage.callers[token] = .waiting(key: key, waiter: waiter)
                        storage.tokenOfWaiter[waiter] = token
                    }
                    switch joined {
                    case .rejected: break
                    case .joined: onJoin()
                    case .queued(let job, _):
                        storage.operations[job] = operation
                        storage.enqueuedAt[job] = .now
                    case .start(let job, _):
                        if let operation { start(job, key: key, operation: operation, in: &storage) }
                    }
                    report(storage, waited: nil)
                    return nil
                }
                if let refusal { continuation.resume(with: refusal) }
            }
        } onCancel: {
            leave(token: token)
        }
    }

    /// The caller behind `token` no longer waits.
    private func leave(token: Int) {
        let (continuation, abort) = storage.withLock { storage -> (CheckedContinuation<Value?, any Error>?, Task<Void, Never>?) in
            guard case .waiting(let key, let waiter)? = storage.callers[token] else {
                if case .arriving? = storage.callers[token] { storage.callers[token] = .cancelledEarly }
                return (nil, nil)
            }
            storage.callers[token] = nil
            storage.tokenOfWaiter[waiter] = nil
            let continuation = storage.continuations.removeValue(forKey: waiter)
            var abort: Task<Void, Never>?
            switch storage.state.leave(key: key, waiter: waiter) {
            case .stays: break
            case .removedWaiting(let job):
                storage.operations[job] = nil
                storage.enqueuedAt[job] = nil
            case .abandonedRunning(let job):
                if abortsAbandonedJobs { abort = storage.tasks[job] }
            }
            report(storage, waited: nil)
            return (continuation, abort)
        }
        abort?.cancel()
        continuation?.resume(throwing: CancellationError())
    }

    /// Starts `job` in its own task; called under the lock.
    private func start(_ job: WorkQueueState.JobID, key: String, operation: @escaping Operation, in storage: inout Storage) {
        storage.tasks[job] = Task {
            let result: Result<Value, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            self.finish(job, key: key, with: result)
        }
    }

    private func finish(_ job: WorkQueueState.JobID, key: String, with result: Result<Value, any Error>) {
        let continuations = storage.withLock { storage -> [CheckedContinuation<Value?, any Error>] in
            storage.tasks[job] = nil
            let waiters = storage.state.finish(key: key, job: job)
            let continuations = waiters.compactMap { storage.continuations.removeValue(forKey: $0) }
            for waiter in waiters {
                if let token = storage.tokenOfWaiter.removeValue(forKey: waiter) { storage.callers[token] = nil }
            }
            while let next = storage.state.nextToStart(preferring: prefers) {
                guard let operation = storage.operations.removeValue(forKey: next.job) else { continue }
                let waited = storage.enqueuedAt.removeValue(forKey: next.job).map { ContinuousClock.now - $0 }
                start(next.job, key: next.key, operation: operation, in: &storage)
                report(storage, waited: waited)
            }
            report(storage, waited: nil)
            return continuations
        }
        for continuation in continuations { continuation.resume(with: result.map { Optional($0) }) }
    }

    private func report(_ storage: Storage, waited: Duration?) {
        observer(storage.state.waitingCount, storage.state.runningCount, waited)
    }
}

/// The queue's backlog is full: 503 with `Retry-After`.
struct QueueFullError: Error {}
