import Testing

@testable import ProxyEngine

/// The queue's rules on the pure state machine: joining, priorities, order, bounds, leaving.
@Suite struct WorkQueueStateTests {
    @Test func aSecondRequestForAKeyJoinsItsJob() {
        var state = WorkQueueState(slots: 1, maxQueued: 4)
        guard case .start(let job, _) = state.join(key: "a", priority: .high) else { Issue.record("first starts"); return }
        guard case .joined(let joined, _) = state.join(key: "a", priority: .low) else { Issue.record("second joins"); return }
        #expect(joined == job)
        #expect(state.job(for: "a")?.waiters == 2)
        #expect(state.runningCount == 1 && state.waitingCount == 0)
    }

    @Test func highPriorityStartsBeforeEarlierLowJobsAndJoiningRaisesPriority() {
        var state = WorkQueueState(slots: 1, maxQueued: 10)
        _ = state.join(key: "busy", priority: .high)
        _ = state.join(key: "low1", priority: .low)
        _ = state.join(key: "low2", priority: .low)
        _ = state.join(key: "low3", priority: .low)
        _ = state.join(key: "high", priority: .high)
        _ = state.join(key: "low3", priority: .high)  // a client joins a prefetch: raised
        #expect(state.job(for: "low3")?.priority == .high)
        var started: [String] = []
        var finishing = (key: "busy", job: state.job(for: "busy")!.id)
        while true {
            _ = state.finish(key: finishing.key, job: finishing.job)
            guard let next = state.nextToStart() else { break }
            started.append(next.key)
            finishing = next
        }
        #expect(started == ["low3", "high", "low1", "low2"], "high first (fifo among them), then low in arrival order")
    }

    @Test func lifoServesTheNewestFirstWithinAPriority() {
        var state = WorkQueueState(slots: 1, maxQueued: 10, order: .lifo)
        _ = state.join(key: "busy", priority: .high)
        for key in ["a", "b", "c"] { _ = state.join(key: key, priority: .high) }
        _ = state.finish(key: "busy", job: state.job(for: "busy")!.id)
        #expect(state.nextToStart()?.key == "c")
    }

    @Test func theBacklogIsBoundedButJoiningIsAlwaysAllowed() {
        var state = WorkQueueState(slots: 2, maxQueued: 1)
        #expect(state.join(key: "a", priority: .high).isStart)
        #expect(state.join(key: "b", priority: .high).isStart)
        if case .queued = state.join(key: "c", priority: .high) {} else { Issue.record("third waits") }
        #expect(state.join(key: "d", priority: .high) == .rejected)
        if case .joined = state.join(key: "c", priority: .low) {} else { Issue.record("joining is allowed") }
        if case .queued = state.join(key: "e", priority: .high, mayShed: false) {} else { Issue.record("accepted work is never shed") }
    }

    @Test func leavingRemovesWaitingJobsAndAbandonsRunningOnes() {
        var state = WorkQueueState(slots: 1, maxQueued: 4)
        guard case .start(let running, let first) = state.join(key: "run", priority: .high),
            case .queued(let waiting, let second) = state.join(key: "wait", priority: .high),
            case .joined(_, let third) = state.join(key: "wait", priority: .high)
        else { Issue.record("setup"); return }
        #expect(state.leave(key: "wait", waiter: second) == .stays, "another waiter remains")
        #expect(state.leave(key: "wait", waiter: third) == .removedWaiting(waiting))
        #expect(state.waitingCount == 0 && state.job(for: "wait") == nil)
        #expect(state.leave(key: "run", waiter: first) == .abandonedRunning(running))
        #expect(state.runningCount == 1, "an abandoned job keeps its slot until it ends")
        if case .queued = state.join(key: "run", priority: .high) {} else { Issue.record("a new job for the key waits for the slot") }
        #expect(state.finish(key: "run", job: running).isEmpty)
        #expect(state.nextToStart()?.key == "run")
        #expect(state.runningCount == 1 && state.waitingCount == 0)
    }

    /// A waiting job whose group is preferred (its source's decode is kept) starts before the jobs ahead
    /// of it of its priority, never before a higher priority, and each job it passes is passed at most
    /// ``WorkQueueState/maxPasses`` times in all.
    @Test func aPreferredGroupGoesFirstAFewPlacesAtMost() {
        var state = WorkQueueState(slots: 1, maxQueued: 20)
        _ = state.join(key: "busy", priority: .high)
        _ = state.join(key: "old", priority: .high, group: "cold")
        for index in 0..<6 { _ = state.join(key: "warm\(index)", priority: .high, group: "warm") }
        _ = state.join(key: "prefetch", priority: .low, group: "warm")
        var started: [String] = []
        var finishing = (key: "busy", job: state.job(for: "busy")!.id)
        while true {
            _ = state.finish(key: finishing.key, job: finishing.job)
            guard let next = state.nextToStart(preferring: { $0 == "warm" }) else { break }
            started.append(next.key)
            finishing = next
        }
        #expect(started == ["warm0", "warm1", "warm2", "warm3", "old", "warm4", "warm5", "prefetch"], "\(started)")
        #expect(WorkQueueState.maxPasses == 4)
    }

    @Test func withoutAPreferenceTheOrderIsArrival() {
        var state = WorkQueueState(slots: 1, maxQueued: 20)
        _ = state.join(key: "busy", priority: .high)
        for key in ["a", "b", "c"] { _ = state.join(key: key, priority: .high, group: key) }
        _ = state.finish(key: "busy", job: state.job(for: "busy")!.id)
        let first = state.nextToStart(preferring: { _ in false })?.key
        #expect(first == "a")
        _ = state.finish(key: "a", job: state.job(for: "a")!.id)
        let second = state.nextToStart(preferring: { $0 == "c" })?.key
        #expect(second == "c", "c passes b")
        _ = state.finish(key: "c", job: state.job(for: "c")!.id)
        let third = state.nextToStart(preferring: { $0 == "c" })?.key
        #expect(third == "b")
    }

    /// One source host's burst holds at most its share of the slots while another host's job waits
    /// (issue #56), and uses every slot when it is alone.
    @Test func aTenantAtItsShareWaitsWhileAnotherTenantsJobWaits() {
        var state = WorkQueueState(slots: 4, maxQueued: 100, maxRunningPerTenant: 2)
        // Alone, the attacker's host takes every slot (nothing else waits: no slot idles).
        for index in 0..<4 {
            guard case .start(_, _) = state.join(key: "a\(index)", priority: .high, tenant: "attacker.example") else {
                Issue.record("a\(index) starts at once")
                return
            }
        }
        #expect(state.running(tenant: "attacker.example") == 4)
        for index in 4..<20 { _ = state.join(key: "a\(index)", priority: .high, tenant: "attacker.example") }
        _ = state.join(key: "page1", priority: .high, tenant: "www.example.com")
        _ = state.join(key: "page2", priority: .high, tenant: "www.example.com")
        // Every slot that frees goes to the other host until the attacker is down to its share.
        var started: [String] = []
        for index in 0..<4 {
            let key = "a\(index)"
            _ = state.finish(key: key, job: state.job(for: key)!.id)
            while let next = state.nextToStart() { started.append(next.key) }
        }
        #expect(Array(started.prefix(2)) == ["page1", "page2"], "\(started)")
        #expect(state.running(tenant: "www.example.com") == 2)
        #expect(state.running(tenant: "attacker.example") == 2, "the attacker keeps its share")
        // With the other host's jobs done, the attacker's backlog uses the freed slots again.
        for key in ["page1", "page2"] {
            _ = state.finish(key: key, job: state.job(for: key)!.id)
            while state.nextToStart() != nil {}
        }
        #expect(state.running(tenant: "attacker.example") == 4 && state.runningCount == 4)
        // An abandoned running job gives its tenant's count back when it finishes.
        var alone = WorkQueueState(slots: 2, maxQueued: 4, maxRunningPerTenant: 1)
        guard case .start(let job, let waiter) = alone.join(key: "x", priority: .high, tenant: "h") else { return }
        #expect(alone.leave(key: "x", waiter: waiter) == .abandonedRunning(job))
        #expect(alone.running(tenant: "h") == 1, "it still runs")
        _ = alone.finish(key: "x", job: job)
        #expect(alone.running(tenant: "h") == 0 && alone.runningCount == 0)
    }

    /// Heavy jobs (seconds of CPU) hold at most their share of the slots whatever waits (issue #56): the
    /// other slots stay free for cheap work even when only heavy jobs are queued.
    @Test func heavyJobsNeverHoldMoreThanTheirSlots() {
        var state = WorkQueueState(slots: 2, maxQueued: 20, maxRunningHeavy: 1)
        guard case .start(_, _) = state.join(key: "h1", priority: .high, heavy: true) else {
            Issue.record("the first heavy job starts")
            return
        }
        guard case .queued(_, _) = state.join(key: "h2", priority: .high, heavy: true) else {
            Issue.record("a second heavy job waits though a slot is free")
            return
        }
        #expect(state.runningCount == 1 && state.runningHeavy == 1)
        #expect(state.nextToStart() == nil, "the free slot is kept for cheap work")
        guard case .start(_, _) = state.join(key: "cheap", priority: .high) else {
            Issue.record("a cheap job starts at once in the kept slot")
            return
        }
        _ = state.finish(key: "h1", job: state.job(for: "h1")!.id)
        #expect(state.nextToStart()?.key == "h2", "the next heavy job when the first is done")
        #expect(state.runningHeavy == 1)
    }
}

extension WorkQueueState.JoinResult {
    var isStart: Bool {
        if case .start = self { return true }
        return false
    }
}
