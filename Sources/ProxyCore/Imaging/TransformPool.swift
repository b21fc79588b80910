import NIOCore
import NIOPosix

/// A bounded pool of threads for libvips work: one job per thread, one thread per core by default.
public final class TransformPool: Sendable {
    private let threadPool: NIOThreadPool
    /// Threads in the pool.
    public let workers: Int

    /// Creates a pool of `workers` threads (0 means one per core); call ``start()`` before use.
    public init(workers: Int) {
        let count = workers > 0 ? workers : System.coreCount
        self.workers = count
        self.threadPool = NIOThreadPool(numberOfThreads: count)
    }

    public func start() {
        Vips.start()
        threadPool.start()
    }

    public func shutdown() async throws { try await threadPool.shutdownGracefully() }

    /// Runs `work` on a pool thread.
    public func run<Result: Sendable>(_ work: @Sendable @escaping () throws -> Result) async throws -> Result {
        try await threadPool.runIfActive(work)
    }
}
