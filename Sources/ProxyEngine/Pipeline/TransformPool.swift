import ImageCore
import NIOCore
import NIOPosix
import Synchronization

/// A bounded pool of threads for libvips work: one job per thread, one thread per core by default.
public final class TransformPool: Sendable {
    private let threadPool: NIOThreadPool
    /// Threads in the pool.
    public let workers: Int
    /// The jobs running now and their request ids ("" for none).
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

    /// Runs `work` on a pool thread, on behalf of request `requestID`: libvips messages emitted on that
    /// thread during the job carry its id (``VipsLog``).
    public func run<Result: Sendable>(
        requestID: String? = nil, _ work: @Sendable @escaping () throws -> Result
    ) async throws -> Result {
        try await threadPool.runIfActive { [self] in
            let job = running.withLock { state in
                state.next &+= 1
                state.ids[state.next] = requestID ?? ""
                return state.next
            }
            defer { _ = running.withLock { $0.ids.removeValue(forKey: job) } }
            return try VipsLog.withRequestTag(requestID, work)
        }
    }

    /// The request id of the only job running now, when exactly one runs and it has one: a libvips
    /// message from one of libvips' own worker threads (untagged) can then only be that job's. With two
    /// or more jobs running such a message is attributed to none.
    public var soleRunningRequestID: String? {
        running.withLock { state in
            guard state.ids.count == 1, let id = state.ids.first?.value, !id.isEmpty else { return nil }
            return id
        }
    }
}
