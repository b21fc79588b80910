import Foundation

/// Bounds the memory of the transforms running at once: each job reserves its working set, estimated
/// from the source's header before anything is decoded (``ResizeStep/estimatedWorkingSetBytes(for:)``),
/// and waits while the running jobs hold too much of `capacity`. A job larger than the whole budget is
/// refused (422); one that cannot get its share within the wait is shed (503).
final class TransformMemoryBudget: @unchecked Sendable {
    /// Bytes all running transforms may hold together; 0 means no budget.
    let capacity: Int
    // `reserved` is only touched under `condition`.
    private let condition = NSCondition()
    private var reserved = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Bytes reserved by running transforms now.
    var reservedBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return reserved
    }

    /// Reserves `bytes`, waiting at most `wait` for running jobs to give memory back.
    /// - Returns: the bytes to give back with ``release(_:)`` (0 when there is no budget).
    /// - Throws: ``ImagingError/needsTooMuchMemory(limit:)`` when `bytes` exceed the whole budget,
    ///   ``ImagingError/memoryBudgetBusy`` when the wait passes first.
    func reserve(_ bytes: Int, wait: Duration) throws(ImagingError) -> Int {
        guard capacity > 0 else { return 0 }
        guard bytes <= capacity else { throw .needsTooMuchMemory(limit: capacity) }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while reserved + bytes > capacity {
            guard condition.wait(until: deadline) else { throw .memoryBudgetBusy }
        }
        reserved += bytes
        return bytes
    }

    /// Gives back what ``reserve(_:wait:)`` returned.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        condition.lock()
        reserved -= bytes
        condition.broadcast()
        condition.unlock()
    }
}
