import ImageCore
import NIOCore
import NIOPosix
import Synchronization

/// A bounded pool of threads for libvips work: one job per thread, one thread per core by default. Its
/// admission (``transform(_:request:choice:overlay:with:requestID:)``) reserves a transform's memory from
/// the ``TransformMemoryBudget`` before the job takes a thread, so no pool thread waits for memory.
public final class TransformPool: Sendable {
    private let threadPool: NIOThreadPool
    /// Threads in the pool.
    public let workers: Int
    /// The memory the transforms running on the pool may hold together (`image.maxTransformBytes`).
    public let memoryBudget: TransformMemoryBudget
    /// The jobs running now and their request ids ("" for none).
    private let running = Mutex<(next: Int, ids: [Int: String])>((0, [:]))

    /// Creates a pool of `workers` threads (0 means one per core) whose transforms hold at most
    /// `memoryBytes` together (0: no budget), lent by `lender` (the memory tier) while they run; call
    /// ``start()`` before use.
    public init(workers: Int, memoryBytes: Int = 0, lender: (any TransformMemoryLender)? = nil) {
        let count = workers > 0 ? workers : System.coreCount
        self.workers = count
        memoryBudget = TransformMemoryBudget(capacity: memoryBytes, lender: lender)
        self.threadPool = NIOThreadPool(numberOfThreads: count)
    }

    public func start() {
        Vips.start()
        threadPool.start()
    }

    public func shutdown() async throws { try await threadPool.shutdownGracefully() }

    /// Transforms `source` as `request` asks: planned from its header on the calling task, its memory
    /// reserved (waiting here, at most the transform time limit, never on a pool thread), then run on a
    /// pool thread. When the DC-only decoder declines a source and the budget cannot grow at once, the
    /// job gives its thread back, waits here for the whole reservation and runs again.
    /// - Returns: the variant and the time spent on pool threads.
    /// - Throws: ``ImagingError`` (``ImagingError/memoryBudgetBusy`` when the memory stays taken).
    public func transform(
        _ source: [UInt8], request: ImageRequest, choice: FormatChoice, overlay: [UInt8]?, with transformer: ImageTransformer,
        requestID: String? = nil
    ) async throws -> (encoded: EncodedImage, duration: Duration) {
        var plan = try transformer.plan(source, request: request, choice: choice, overlay: overlay)
        let limit = transformer.maxTransformMilliseconds
        let wait = Duration.milliseconds(limit > 0 ? limit : 10_000)
        var duration = Duration.zero
        let budget = memoryBudget
        while true {
            let reserved = Mutex(try await budget.reserve(plan.reservation, wait: wait))
            defer { budget.release(reserved.withLock { $0 }) }
            let attempt = plan
            let (outcome, spent) = try await run(requestID: requestID) { () throws -> (TransformRun, Duration) in
                let begin = ContinuousClock.now
                let outcome = try transformer.run(attempt, source: source, overlay: overlay, reserved: reserved.withLock { $0 }) { bytes in
                    reserved.withLock { held in
                        guard budget.tryGrow(from: held, to: bytes) else { return false }
                        held = max(held, bytes)
                        return true
                    }
                }
                return (outcome, ContinuousClock.now - begin)
            }
            duration += spent
            switch outcome {
            case .encoded(let encoded): return (encoded, duration)
            case .needsFullReservation: plan = plan.withFullReservation
            }
        }
    }

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
