import ImageCore

/// The bookkeeping of a deduplicating priority queue as a pure value type (no locks, no tasks, no
/// clocks), so every rule can be tested on its own:
///
/// - one job per key; a second request for the key joins it as another waiter;
/// - a job's priority is its highest waiter's, raised when a higher waiter joins;
/// - at most `slots` jobs run at once; the rest wait in priority order, then `fifo` or `lifo`, except that
///   a waiting job of a preferred group (e.g. a source whose decode is kept) may start before the jobs ahead
///   of it, each of which it passes at most ``maxPasses`` times in all;
/// - at most `maxQueued` jobs wait for a slot; a new job beyond that is refused (joining is always allowed);
/// - a tenant (a source host) runs at most `maxRunningPerTenant` jobs while another tenant's job waits: a
///   waiting job of a tenant at its share starts only when no job of a tenant under its share waits (so no
///   slot idles, and one host's burst cannot hold every slot while others wait);
/// - at most `maxRunningHeavy` heavy jobs (a transform estimated at seconds of CPU) run at once, whatever
///   waits: the other slots stay for the cheap work, so a burst of expensive requests cannot make every
///   ordinary request wait behind one of them;
/// - a waiting job whose last waiter leaves is removed; a running one is reported as abandoned, and
///   keeps its slot until it reports that it finished.
///
/// ``PriorityWorkQueue`` drives it under a lock and owns the tasks and continuations.
public struct WorkQueueState: Sendable {
    /// Who is waiting: a client (`high`) or a prefetch (`low`).
    public enum Priority: Int, Sendable, Comparable, CaseIterable {
        case low = 0
        case high = 1

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The order of waiting jobs of the same priority.
    public enum Order: String, Sendable, CaseIterable {
        /// Oldest first.
        case fifo
        /// Newest first (under a burst, the requests most likely still wanted are served first).
        case lifo
    }

    /// Identifies one waiter of one job.
    public typealias WaiterID = Int
    /// Identifies one job (a key may be used again by a later job once its job finished or was abandoned).
    public typealias JobID = Int

    struct Job: Sendable {
        let id: JobID
        let key: String
        var waiters: [WaiterID: Priority]
        var priority: Priority
        /// Position in arrival order.
        let sequence: Int
        var running: Bool
        /// What the job's work shares with other jobs' (a source), for ``nextToStart(preferring:)``.
        let group: String?
        /// Who the job is for, for the per-tenant share (``maxRunningPerTenant``); nil counts as no tenant.
        var tenant: String? = nil
        /// Whether the job is heavy (``maxRunningHeavy``).
        var heavy = false
        /// How many times a preferred job behind this one started before it.
        var passed = 0
    }

    /// How many times a waiting job may be passed by preferred jobs behind it: each job starts at most this
    /// many starts later than its order says.
    public static let maxPasses = 4

    /// What ``join(key:priority:)`` decided.
    public enum JoinResult: Equatable, Sendable {
        /// A job for the key exists (waiting or running); the waiter shares its result.
        case joined(JobID, WaiterID)
        /// A new job, waiting for a slot.
        case queued(JobID, WaiterID)
        /// A new job that may start now (a slot was free).
        case start(JobID, WaiterID)
        /// The queue is full: answer "busy" at once.
        case rejected
    }

    /// What ``leave(key:waiter:)`` decided.
    public enum LeaveResult: Equatable, Sendable {
        /// Other waiters remain, or the waiter was unknown.
        case stays
        /// The job was waiting and nobody wants it any more: it is gone.
        case removedWaiting(JobID)
        /// The job runs and nobody wants it any more: abort it if possible (it keeps its slot until finished).
        case abandonedRunning(JobID)
    }

    public let slots: Int
    public let maxQueued: Int
    public let order: Order
    /// Jobs one tenant may run while another tenant's job waits (``slots`` by default: no share).
    public let maxRunningPerTenant: Int
    /// Heavy jobs that may run at once (``slots`` by default: no limit).
    public let maxRunningHeavy: Int
    /// Heavy jobs running now.
    public private(set) var runningHeavy = 0

    private var jobsByKey: [String: Job] = [:]
    /// Running jobs whose waiters all left, with their tenant and weight; they hold a slot until they finish.
    private var abandoned: [JobID: (tenant: String?, heavy: Bool)] = [:]
    /// Running jobs per tenant.
    private var runningByTenant: [String: Int] = [:]
    private var nextJob: JobID = 0
    private var nextWaiter: WaiterID = 0
    private var nextSequence = 0
    public private(set) var runningCount = 0
    public private(set) var waitingCount = 0

    /// - Parameters:
    ///   - slots: jobs running at once (at least 1).
    ///   - maxQueued: jobs waiting for a slot at most (0 refuses every job that cannot start at once).
    ///   - maxRunningPerTenant: jobs one tenant may run while another's waits (default: all the slots).
    ///   - maxRunningHeavy: heavy jobs that may run at once (default: all the slots).
    public init(slots: Int, maxQueued: Int, order: Order = .fifo, maxRunningPerTenant: Int? = nil, maxRunningHeavy: Int? = nil) {
        self.slots = max(1, slots)
        self.maxQueued = max(0, maxQueued)
        self.order = order
        self.maxRunningPerTenant = max(1, min(self.slots, maxRunningPerTenant ?? self.slots))
        self.maxRunningHeavy = max(1, min(self.slots, maxRunningHeavy ?? self.slots))
    }

    /// Adds a waiter for `key`: joins the job for `key`, or creates one. With `mayShed` false a new
    /// job is queued even beyond `maxQueued` (for work already accepted at an earlier stage).
    /// `group`: what the job's work shares with other jobs' (``nextToStart(preferring:)``).
    /// `tenant`: who the job is for (``maxRunningPerTenant``).
    public mutating func join(
        key: String, priority: Priority, mayShed: Bool = true, group: String? = nil, tenant: String? = nil, heavy: Bool = false
    ) -> JoinResult {
        if var job = jobsByKey[key] {
            let waiter = makeWaiterID()
            job.waiters[waiter] = priority
            job.priority = max(job.priority, priority)
            jobsByKey[key] = job
            return .joined(job.id, waiter)
        }
        let canStart = runningCount < slots && (!heavy || runningHeavy < maxRunningHeavy)
        guard canStart || waitingCount < maxQueued || !mayShed else { return .rejected }
        let waiter = makeWaiterID()
        let job = Job(
            id: nextJob, key: key, waiters: [waiter: priority], priority: priority, sequence: nextSequence, running: canStart,
            group: group, tenant: tenant, heavy: heavy)
        nextJob += 1
        nextSequence += 1
        jobsByKey[key] = job
        if canStart {
            runningCount += 1
            countRunning(tenant, by: 1)
            if heavy { runningHeavy += 1 }
            return .start(job.id, waiter)
        }
        waitingCount += 1
        return .queued(job.id, waiter)
    }

    /// Removes a waiter (its client went away or its deadline passed).
    public mutating func leave(key: String, waiter: WaiterID) -> LeaveResult {
        guard var job = jobsByKey[key], job.waiters.removeValue(forKey: waiter) != nil else { return .stays }
        guard job.waiters.isEmpty else {
            job.priority = job.waiters.values.max() ?? .low
            jobsByKey[key] = job
            return .stays
        }
        jobsByKey[key] = nil
        if job.running {
            abandoned[job.id] = (job.tenant, job.heavy)
            return .abandonedRunning(job.id)
        }
        waitingCount -= 1
        return .removedWaiting(job.id)
    }

    /// A running job ended. Returns its waiters (none for an abandoned job) and frees its slot;
    /// then call ``nextToStart()`` until it returns nil.
    public mutating func finish(key: String, job id: JobID) -> [WaiterID] {
        runningCount -= 1
        if let gone = abandoned.removeValue(forKey: id) {
            countRunning(gone.tenant, by: -1)
            if gone.heavy { runningHeavy -= 1 }
            return []
        }
        guard let job = jobsByKey[key], job.id == id else { return [] }
        jobsByKey[key] = nil
        countRunning(job.tenant, by: -1)
        if job.heavy { runningHeavy -= 1 }
        return Array(job.waiters.keys)
    }

    /// Jobs `tenant` runs now.
    public func running(tenant: String) -> Int { runningByTenant[tenant] ?? 0 }

    private mutating func countRunning(_ tenant: String?, by change: Int) {
        guard let tenant else { return }
        let count = (runningByTenant[tenant] ?? 0) + change
        runningByTenant[tenant] = count > 0 ? count : nil
    }

    /// Whether a waiting job's tenant is under its share (no tenant: always).
    private func isUnderShare(_ job: Job) -> Bool {
        guard let tenant = job.tenant else { return true }
        return (runningByTenant[tenant] ?? 0) < maxRunningPerTenant
    }

    /// The waiting job to start next when a slot is free: highest priority, then by ``Order``; but the
    /// first job of that priority whose group `preferred` says (a source with a decode kept) goes before
    /// the jobs ahead of it unless one of them was passed ``maxPasses`` times already.
    public mutating func nextToStart(preferring preferred: (String) -> Bool = { _ in false }) -> (key: String, job: JobID)? {
        guard runningCount < slots, waitingCount > 0 else { return nil }
        // Linear scans without allocating: the backlog is bounded by `maxQueued`.
        func goesBefore(_ job: Job, _ other: Job) -> Bool {
            order == .fifo ? job.sequence < other.sequence : job.sequence > other.sequence
        }
        // Jobs of tenants at their share wait while a job of a tenant under its share waits.
        var shareLimits = false
        if maxRunningPerTenant < slots {
            var anyUnder = false, anyOver = false
            for job in jobsByKey.values where !job.running && (!job.heavy || runningHeavy < maxRunningHeavy) {
                if isUnderShare(job) { anyUnder = true } else { anyOver = true }
            }
            shareLimits = anyUnder && anyOver
        }
        let heavyFull = runningHeavy >= maxRunningHeavy
        func eligible(_ job: Job) -> Bool { !job.running && !(job.heavy && heavyFull) && (!shareLimits || isUnderShare(job)) }
        var first: Job?
        for job in jobsByKey.values where eligible(job) {
            guard let best = first else {
                first = job
                continue
            }
            if job.priority > best.priority || (job.priority == best.priority && goesBefore(job, best)) { first = job }
        }
        guard let head = first else { return nil }
        // Passes only grow towards the head (every job ahead of a preferred one is passed together), so the
        // head is the one that may have used its passes up.
        var chosen = head
        if head.passed < Self.maxPasses, !(head.group.map(preferred) ?? false) {
            var preferredJob: Job?
            for job in jobsByKey.values where eligible(job) && job.priority == head.priority {
                guard let group = job.group, preferredJob.map({ goesBefore(job, $0) }) ?? true, preferred(group) else { continue }
                preferredJob = job
            }
            if let preferredJob {
                chosen = preferredJob
                for (key, job) in jobsByKey where !job.running && job.priority == head.priority && goesBefore(job, preferredJob) {
                    jobsByKey[key]?.passed += 1
                }
            }
        }
        guard var job = jobsByKey[chosen.key] else { return nil }
        job.running = true
        jobsByKey[job.key] = job
        waitingCount -= 1
        runningCount += 1
        countRunning(job.tenant, by: 1)
        if job.heavy { runningHeavy += 1 }
        return (job.key, job.id)
    }

    /// The job currently registered under `key` and whether it runs.
    public func job(for key: String) -> (id: JobID, priority: Priority, running: Bool, waiters: Int)? {
        jobsByKey[key].map { ($0.id, $0.priority, $0.running, $0.waiters.count) }
    }

    private mutating func makeWaiterID() -> WaiterID {
        defer { nextWaiter += 1 }
        return nextWaiter
    }
}
