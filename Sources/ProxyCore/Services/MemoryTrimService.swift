import ImageCore
import ServiceLifecycle

/// Every ``interval``: returns the free pages inside malloc's heaps to the kernel (``Vips/releaseFreeMemory()``),
/// so that resident memory follows what is live (the memory tier, running transforms) instead of the
/// high-water mark of freed buffers. One call walks the free lists of the two arenas in a few
/// milliseconds; at this interval that is well under 0.1% of a core.
public struct MemoryTrimService: Service {
    /// Seconds between trims.
    public static let interval: Duration = .seconds(10)

    public init() {}

    public func run() async throws {
        await runPeriodically(every: Self.interval) { Vips.releaseFreeMemory() }
    }
}
