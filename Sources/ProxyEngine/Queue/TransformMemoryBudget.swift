import ImageCore
import Synchronization

/// Bounds the memory of the transforms running at once, at the transform pool's admission: each job
/// reserves its working set (``ImageCore/TransformPlan/reservation``, estimated from the source's header
/// before anything is decoded) before it takes a pool thread, waiting here, on its own task, while the
/// running jobs hold too much of `capacity`; one that cannot get its share within the wait is shed (503).
/// No pool thread ever waits for memory.
///
/// It also hands out the pool's threads (`jobs`, one per thread): a job is admitted when memory and a
/// thread are both free, so memory is never held by a job waiting for a thread, and more jobs may wait
/// here than there are threads. Waiting jobs are admitted in order, except that one that fits goes
/// before an earlier one that does not (a small job runs beside a large one instead of leaving a core
/// idle); a waiting job is passed so at most ``overtakesAllowed`` times, then the jobs behind it wait.
///
/// While a large job (more than half the budget, or more than all of it, running alone) runs, small jobs
/// (at most a quarter of the budget) may overdraw by a quarter above the budget or the large job's own
/// reservation, whichever is more: one heavy transform (a 4096 px WebP or AVIF takes
/// the whole 256 MiB) cannot make every ordinary transform wait for its end (issue #56: the ordinary p99 under
/// an attack of heavy requests was 10x its value alone, all of it waiting for memory).
///
/// A job larger than the whole budget (a source `image.maxSourcePixels` allows, the cap on any one job)
/// runs alone: it waits until no other job holds memory, and while it waits no job behind it is
/// admitted, so a stream of small jobs cannot starve it (the jobs that were waiting before it go first).
public final class TransformMemoryBudget: Sendable {
    /// Bytes all running transforms may hold together; 0 means no budget.
    public let capacity: Int
    /// Jobs running at once (the pool's threads); `Int.max` for no limit.
    public let jobs: Int
    /// How many later jobs may start before a waiting one: twice `jobs` (a waiting job is held up by
    /// about two runs of the jobs beside it at most), unlimited without a limit on jobs.
    public let overtakesAllowed: Int
    /// Told of every reservation and its release (the memory tier), when set.
    let lender: (any TransformMemoryLender)?

    private struct Waiter {
        let id: Int
        let bytes: Int
        let continuation: CheckedContinuation<Void, any Error>
        /// Later jobs admitted while this one waited.
        var overtaken = 0
    }

    private struct State {
        var reserved = 0
        /// Jobs admitted and not released yet.
        var running = 0
        /// Large jobs (more than half the budget) running, and what they hold: small jobs may overdraw then.
        var largeRunning = 0
        var largeReserved = 0
        var waiters: [Waiter] = []
        var nextID = 0
        /// Reservations asked for and neither admitted nor given up yet.
        var undecided: Set<Int> = []
        /// Reservations given up on (timed out or cancelled) before they joined the waiters.
        var abandoned: [Int: any Error] = [:]
        /// Bytes of the largest waiting job (0: none waits); one above the capacity holds the others back.
        var largestWaiting: Int { waiters.map(\.bytes).max() ?? 0 }
    }

    private let state = Mutex(State())
    /// Memory held in the budget that gives itself back on demand (the kept decodes), asked before a
    /// reservation waits; held weakly (it holds the budget).
    private let reclaimer = Mutex(WeakReclaimer())

    private struct WeakReclaimer {
        weak var value: (any TransformMemoryReclaimer)?
    }

    /// A budget of `capacity` bytes (0: none) for at most `jobs` jobs at once, lent by `lender` while held.
    public init(capacity: Int, jobs: Int = .max, lender: (any TransformMemoryLender)? = nil) {
        self.capacity = capacity
        self.jobs = max(1, jobs)
        overtakesAllowed = jobs >= Int.max / 2 ? .max : 2 * max(1, jobs)
        self.lender = lender
    }

    /// Jobs holding a reservation now.
    public var runningJobs: Int { state.withLock { $0.running } }

    /// Jobs waiting for their memory or a thread now.
    public var waitingJobs: Int { state.withLock { $0.waiters.count } }

    /// Bytes reserved by running transforms (and kept decodes) now.
    public var reservedBytes: Int { state.withLock { $0.reserved } }

    /// Sets what is asked to give memory back before a reservation waits.
    public func setReclaimer(_ value: any TransformMemoryReclaimer) {
        reclaimer.withLock { $0.value = value }
    }

    /// Reserves `bytes` as kept memory (not a job; given back with ``giveBack(_:)``) only if that fits
    /// now beside the next waiting job and no job is about to wait (memory kept for later use must never
    /// hold a transform back), without waiting.
    ///
    /// `commit` runs under the budget's lock when the bytes fit, and they are reserved only if it returns
    /// true: what holds them is in place before any job can ask for memory back, so a reservation that
    /// starts waiting at that moment always finds it to reclaim (done separately, a job larger than the
    /// budget could start waiting between the two, find nothing to reclaim, and wait for memory that
    /// nothing would give back). `commit` must not call into the budget.
    /// - Returns: whether it was reserved (always true without a budget, after `commit`).
    public func tryReserve(_ bytes: Int, committing commit: () -> Bool = { true }) -> Bool {
        guard capacity > 0 else { return commit() }
        let reserved = state.withLock { state in
            guard keepFits(bytes, state), commit() else { return false }
            state.reserved += bytes
            return true
        }
        if reserved { lender?.lend(bytes) }
        return reserved
    }

    /// Reserves `bytes` and a job only if a job of that size may start now (the admission
    /// ``reserve(_:wait:)`` gives without waiting), for a job that must not wait while it holds something
    /// others wait for.
    /// - Returns: the bytes to give back with ``release(_:)``, or nil when the job would have to wait.
    public func reserveIfAdmissible(_ bytes: Int) -> Int? {
        guard capacity > 0 else { return 0 }
        guard state.withLock({ admitAtOnce(bytes, &$0) }) else { return nil }
        lender?.lend(bytes)
        return bytes
    }

    /// Reserves `bytes` and a job, waiting at most `wait` for running jobs to give memory (or a thread)
    /// back.
    /// - Returns: the bytes to give back with ``release(_:)`` (0 when there is no budget).
    /// - Throws: ``ImagingError/memoryBudgetBusy`` when the wait passes first; `CancellationError` when
    ///   the task is cancelled while it waits.
    public func reserve(_ bytes: Int, wait: Duration) async throws -> Int {
        guard capacity > 0 else { return 0 }
        // Admitted at once when it may start now: no timer, no wait.
        let id = state.withLock { state -> Int? in
            if admitAtOnce(bytes, &state) { return nil }
            defer { state.nextID += 1 }
            state.undecided.insert(state.nextID)
            return state.nextID
        }
        guard let id else {
            lender?.lend(bytes)
            return bytes
        }
        // Kept decodes give their memory back before anyone waits for it; the admission is tried again
        // below, before the job queues.
        if let reclaimer = reclaimer.withLock({ $0.value }) {
            let shortfall = state.withLock { state in
                guard state.running < jobs else { return 0 }  // a job's end asks again
                return bytes > capacity ? state.reserved : state.reserved + bytes - capacity
            }
            if shortfall > 0 { reclaimer.reclaim(shortfall) }
        }
        let timeout = Task { [self] in
            guard (try? await Task.sleep(for: wait)) != nil else { return }
            giveUp(id, with: ImagingError.memoryBudgetBusy)
        }
        defer { timeout.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if let error = state.abandoned.removeValue(forKey: id) { return .failure(error) }
                    if admitAtOnce(bytes, &state) {
                        state.undecided.remove(id)
                        return .success(())
                    }
                    state.waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                } else {
                    // Queued: kept memory that became unused since the reclaim above goes now (a job that
                    // ended its use of it meanwhile found no waiter to give it to).
                    reclaimForWaiters()
                }
            }
        } onCancel: {
            giveUp(id, with: CancellationError())
        }
        // Outside the budget's lock: the lender may evict many entries.
        lender?.lend(bytes)
        return bytes
    }

    /// Asks the reclaimer for what the waiting jobs lack: memory kept for later use that was in use when
    /// they started waiting (so it could not be given back then) is given back once it no longer is.
    public func reclaimForWaiters() {
        let shortfall = state.withLock { self.shortfall(of: $0) }
        if shortfall > 0, let reclaimer = reclaimer.withLock({ $0.value }) { reclaimer.reclaim(shortfall) }
    }

    /// Grows a running job's reservation from `held` to `bytes` if that fits now, without waiting (a job
    /// larger than the budget grows only when it holds all that is reserved).
    /// - Returns: whether it grew (always true without a budget).
    public func tryGrow(from held: Int, to bytes: Int) -> Bool {
        guard capacity > 0, bytes > held else { return true }
        let grew = state.withLock { state in
            let fits = bytes > capacity ? state.reserved == held : state.reserved - held + bytes <= capacity
            if fits { state.reserved += bytes - held }
            return fits
        }
        if grew { lender?.lend(bytes - held) }
        return grew
    }

    /// Ends a job: gives back what ``reserve(_:wait:)`` or ``reserveIfAdmissible(_:)`` returned (and any
    /// growth ``tryGrow(from:to:)`` gave) and the job's thread.
    public func release(_ bytes: Int) {
        guard capacity > 0 else { return }
        free(bytes, endingJob: true)
    }

    /// Ends a job like ``release(_:)`` and, in the same step, keeps `kept` bytes as kept memory (what
    /// the job hands on: its decode) where ``tryReserve(_:committing:)`` would, before any waiting job is
    /// admitted: a job that waited behind this one finds what it kept.
    /// - Returns: whether `kept` was kept (`commit` ran and returned true).
    @discardableResult
    public func release(_ bytes: Int, keeping kept: Int, committing commit: () -> Bool) -> Bool {
        guard capacity > 0 else { return commit() }
        return free(bytes, endingJob: true, keeping: kept, committing: commit)
    }

    /// Gives back memory kept with ``tryReserve(_:committing:)``.
    public func giveBack(_ bytes: Int) {
        guard capacity > 0, bytes > 0 else { return }
        free(bytes, endingJob: false)
    }

    /// Whether `bytes` may be kept now: they fit beside the next waiting job, and no job is between
    /// asking and waiting.
    private func keepFits(_ bytes: Int, _ state: State) -> Bool {
        let next = state.waiters.first?.bytes ?? 0
        return bytes <= capacity && next <= capacity && state.undecided.count == state.waiters.count
            && state.reserved + bytes + next <= capacity
    }

    @discardableResult
    private func free(_ bytes: Int, endingJob: Bool, keeping kept: Int = 0, committing commit: () -> Bool = { false }) -> Bool {
        let (admitted, shortfall, keptIt) = state.withLock { state -> ([CheckedContinuation<Void, any Error>], Int, Bool) in
            state.reserved -= bytes
            if endingJob {
                state.running -= 1
                if isLarge(bytes) {
                    state.largeRunning = max(0, state.largeRunning - 1)
                    state.largeReserved = state.largeRunning == 0 ? 0 : max(0, state.largeReserved - bytes)
                }
            }
            let keptIt = kept > 0 && keepFits(kept, state) && commit()
            if keptIt { state.reserved += kept }
            let admitted = admitWaiters(&state)
            return (admitted, self.shortfall(of: state), keptIt)
        }
        lender?.takeBack(bytes)
        if keptIt { lender?.lend(kept) }
        for continuation in admitted { continuation.resume() }
        // Jobs still wait: kept decodes give their memory back (each one given back releases again,
        // until nothing unused is left).
        if shortfall > 0, let reclaimer = reclaimer.withLock({ $0.value }) { reclaimer.reclaim(shortfall) }
        return keptIt
    }

    /// What the first waiting job, the next to be admitted, lacks (all that is reserved when it is larger
    /// than the budget: it needs the budget empty); 0 when none waits, or when no thread is free (a job's
    /// end asks again).
    private func shortfall(of state: State) -> Int {
        guard state.running < jobs, let first = state.waiters.first else { return 0 }
        if first.bytes > capacity { return state.reserved }
        return max(0, state.reserved + first.bytes - capacity)
    }

    /// Reserves `bytes` and a job in `state` when a job of that size arriving now may start before every
    /// waiting one (the one rule of both ``reserve(_:wait:)``'s fast path and ``reserveIfAdmissible(_:)``).
    private func admitAtOnce(_ bytes: Int, _ state: inout State) -> Bool {
        guard admissible(bytes, state, overtaking: !state.waiters.isEmpty, largeWaiting: state.largestWaiting > capacity) else {
            return false
        }
        admit(bytes, &state, overtaking: !state.waiters.isEmpty)
        return true
    }

    /// Whether a job of `bytes` may start now: a thread is free, and a large one alone; others where they
    /// fit and no large job waits; one that would go before the first waiting job only while that one
    /// has been passed less than ``overtakesAllowed`` times.
    private func admissible(_ bytes: Int, _ state: State, overtaking: Bool, largeWaiting: Bool) -> Bool {
        guard state.running < jobs else { return false }
        if overtaking, let first = state.waiters.first, first.overtaken >= overtakesAllowed { return false }
        if bytes > capacity { return state.reserved == 0 }
        guard !largeWaiting else { return false }
        if state.reserved + bytes <= capacity { return true }
        // The overdraft: a small job beside a large one.
        return bytes <= smallJobBytes && state.largeRunning > 0
            && state.reserved + bytes <= max(capacity, state.largeReserved) + smallJobBytes
    }

    /// The most a small job holds, and the overdraft small jobs share while a large one runs: a quarter
    /// (64 MiB of the default 256: an ordinary srcset transform of a 2400x1600 RGBA PNG reserves about 50).
    var smallJobBytes: Int { capacity / 4 }

    /// Whether a job of `bytes` is large: more than half the budget.
    private func isLarge(_ bytes: Int) -> Bool { bytes > capacity / 2 }

    private func admit(_ bytes: Int, _ state: inout State, overtaking: Bool) {
        state.reserved += bytes
        state.running += 1
        if isLarge(bytes) {
            state.largeRunning += 1
            state.largeReserved += bytes
        }
        if overtaking, !state.waiters.isEmpty { state.waiters[0].overtaken += 1 }
    }

    /// Admits the waiters that may start now, in order, and returns their continuations. A large waiting
    /// job holds back the jobs behind it, never those ahead of it: they came first, and holding them back
    /// too left nothing admissible once the first had been passed ``overtakesAllowed`` times (the large
    /// one may not pass it either), so every transform waited out its time limit with the budget empty.
    private func admitWaiters(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        var admitted: [CheckedContinuation<Void, any Error>] = []
        var index = 0
        var largeAhead = false
        while index < state.waiters.count, state.running < jobs {
            let waiter = state.waiters[index]
            if admissible(waiter.bytes, state, overtaking: index > 0, largeWaiting: largeAhead) {
                state.undecided.remove(waiter.id)
                admitted.append(waiter.continuation)
                state.waiters.remove(at: index)
                admit(waiter.bytes, &state, overtaking: index > 0)
            } else {
                if waiter.bytes > capacity { largeAhead = true }
                index += 1
            }
        }
        return admitted
    }

    /// Ends a wait with `error` (its time passed, or its task was cancelled); a large waiter that leaves
    /// lets the jobs it held back go.
    private func giveUp(_ id: Int, with error: any Error) {
        let (waiting, admitted) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [CheckedContinuation<Void, any Error>]) in
            guard state.undecided.remove(id) != nil else { return (nil, []) }
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                // Not queued yet: its continuation finds the error when it is.
                state.abandoned[id] = error
                return (nil, [])
            }
            let waiter = state.waiters.remove(at: index)
            return (waiter.continuation, admitWaiters(&state))
        }
        waiting?.resume(throwing: error)
        for continuation in admitted { continuation.resume() }
    }
}

