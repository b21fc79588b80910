import Foundation
import ImageCore
import Synchronization

/// Hands malloc's free pages back to the kernel (``Vips/releaseFreeMemory()``) at most once per
/// ``minimumInterval``: a trim walks every free chunk of the heaps under their locks, and its cost grows
/// with their fragmentation, so one per transform made the soak's CPU per request climb; one every
/// 250 ms keeps the peak down as well.
enum MallocTrim {
    /// Least time between two trims.
    static let minimumInterval: Double = 0.25

    private static let last = Mutex<Double>(0)

    /// Trims unless another trim ran within ``minimumInterval``; returns whether it trimmed.
    @discardableResult
    static func soon(now: Double = ProcessInfo.processInfo.systemUptime) -> Bool {
        let due = last.withLock { last in
            guard now - last >= minimumInterval else { return false }
            last = now
            return true
        }
        if due { Vips.releaseFreeMemory() }
        return due
    }
}
