import ImageCore
import NIOCore
import NIOPosix
import Synchronization

/// A bounded pool of threads for libvips work: one job per thread, one thread per core by default.
public final class TransformPool: Sendable {
    private let threadPool: NIOThreadPool
    /// Threads in the pool.
    public let workers: Int
    /// The request ids of the jobs running now (for log lines written by libvips during a job).
    private let running = Mutex<(next: Int, ids: [Int: String])>((0, [:]))

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

    /// Runs `work` on a pool thread, on behalf of request `requestID` (for logs).
    public func run<Result: Sendable>(
        requestID: String? = nil, _ work: @Sendable @escaping () throws -> Result
    ) async throws -> Result {
        guard let requestID else { return try await threadPool.runIfActive(work) }
        return try await threadPool.runIfActive { [self] in
            let job = running.withLock { state in
                state.next += 1
                state.ids[state.next] = requestID
                return state.next
            }
            defer { _ = running.withLock { $0.ids.removeValue(forKey: job) } }
            return try work()
        }
    }

    /// The request ids of the jobs running now, sorted.
    public var runningRequestIDs: [String] { running.withLock { $0.ids.values.sorted() } }
}
