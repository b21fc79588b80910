import Foundation

/// Bounds the memory of the transforms running at once: each job reserves its working set, estimated
/// from the source's header before anything is decoded (``ResizeStep/estimatedWorkingSetBytes(for:format:)``),
/// and waits while the running jobs hold too much of `capacity`; one that cannot get its share within
/// the wait is shed (503). A job larger than the whole budget (a source `image.maxSourcePixels` allows,
/// the cap on any one job) runs alone: it waits until no other job holds memory, and while it waits no
/// new job is admitted, so a stream of small jobs cannot starve it.
final class TransformMemoryBudget: @unchecked Sendable {
    /// Bytes all running transforms may hold together; 0 means no budget.
    let capacity: Int
    /// Told of every reservation and its release (the memory tier), when set.
    let lender: (any TransformMemoryLender)?
    // `reserved` and `largeWaiting` are only touched under `condition`.
    private let condition = NSCondition()
    private var reserved = 0
    /// Jobs larger than the budget waiting to run alone.
    private var largeWaiting = 0

    init(capacity: Int, lender: (any TransformMemoryLender)? = nil) {
        self.capacity = capacity
        self.lender = lender
    }

    /// Bytes reserved by running transforms now.
    var reservedBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return reserved
    }

    /// Reserves `bytes`, waiting at most `wait` for running jobs to give memory back.
    /// - Returns: the bytes to give back with ``release(_:)`` (0 when there is no budget).
    /// - Throws: ``ImagingError/memoryBudgetBusy`` when the wait passes first.
    func reserve(_ bytes: Int, wait: Duration) throws(ImagingError) -> Int {
        guard capacity > 0 else { return 0 }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        try admit(bytes, until: Date(timeIntervalSinceNow: seconds))
        // Outside the budget's lock: the lender may evict many entries.
        lender?.lend(bytes)
        return bytes
    }

    /// Waits under the lock until `bytes` may be reserved, and reserves them.
    private func admit(_ bytes: Int, until deadline: Date) throws(ImagingError) {
        condition.lock()
        defer { condition.unlock() }
        let large = bytes > capacity
        if large { largeWaiting += 1 }
        defer { if large { largeWaiting -= 1 } }
        // A large job needs the budget to itself; others fit in what is left, and yield to a large job waiting.
        while large ? reserved > 0 : (reserved + bytes > capacity || largeWaiting > 0) {
            guard condition.wait(until: deadline) else {
                if large { condition.broadcast() }  // the jobs it held back may go
                throw .memoryBudgetBusy
            }
        }
        reserved += bytes
    }

    /// Gives back what ``reserve(_:wait:)`` returned.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        condition.lock()
        reserved -= bytes
        condition.broadcast()
        condition.unlock()
        lender?.takeBack(bytes)
    }
}
