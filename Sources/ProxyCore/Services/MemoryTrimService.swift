import ImageCore
import ServiceLifecycle

/// Every ``interval``: returns the free pages inside malloc's heaps to the kernel (``Vips/releaseFreeMemory()``),
/// so that resident memory follows what is live (the memory tier, running transforms) instead of the
/// high-water mark of freed buffers. A call walks the free chunks of the (two) arenas under their
/// locks; its cost was not measured on its own (the 10-minute soak answered 4316 req/s with it, 4548
/// without, inside the run-to-run drift: `bench/RESULTS.md`).
public struct MemoryTrimService: Service {
    /// Seconds between trims.
    public static let interval: Duration = .seconds(10)

    public init() {}

    public func run() async throws {
        await runPeriodically(every: Self.interval) { Vips.releaseFreeMemory() }
    }
}
