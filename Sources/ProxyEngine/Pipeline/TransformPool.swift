import ImageCore
import NIOCore
import NIOPosix
import Synchronization

/// A bounded pool of threads for libvips work: one job per thread, one thread per core by default. Its
/// admission (``transform(_:request:choice:overlay:with:requestID:sourceIdentity:)``) first waits for a
/// free thread (a slot), then reserves the transform's memory from the ``TransformMemoryBudget``, and only
/// then hands the job to a thread: no pool thread waits for memory, and the budget is held by the jobs
/// that run (and the kept decodes), never by jobs still waiting for a thread.
public final class TransformPool: Sendable {
    private let threadPool: NIOThreadPool
    /// Threads in the pool.
    public let workers: Int
    /// One permit per thread: a transform holds one from before it reserves memory until its run ends.
    let slots: PermitPool
    /// The memory the transforms running on the pool may hold together (`image.maxTransformBytes`).
    public let memoryBudget: TransformMemoryBudget
    /// The jobs running now and their request ids ("" for none).
    private let running = Mutex<(next: Int, ids: [Int: String])>((0, [:]))

    /// Sources decoded whole, kept for their next variants (one decode for a srcset), inside the budget.
    public let decodedSources: DecodedSourceCache

    /// Creates a pool of `workers` threads (0 means one per core) whose transforms hold at most
    /// `memoryBytes` together (0: no budget), lent by `lender` (the memory tier) while they run, and
    /// which keeps whole decodes as `decodedSources` says (counted with `observe`); call ``start()``
    /// before use.
    public init(
        workers: Int, memoryBytes: Int = 0, lender: (any TransformMemoryLender)? = nil,
        decodedSources: DecodedSourceCache.Settings = DecodedSourceCache.Settings(),
        observe: (@Sendable (DecodedSourceCache.Event) -> Void)? = nil
    ) {
        let count = workers > 0 ? workers : System.coreCount
        self.workers = count
        memoryBudget = TransformMemoryBudget(capacity: memoryBytes, lender: lender)
        self.decodedSources = DecodedSourceCache(settings: decodedSources, budget: memoryBudget, observe: observe)
        self.threadPool = NIOThreadPool(numberOfThreads: count)
        slots = PermitPool(capacity: count)
    }

    public func start() {
        Vips.start()
        threadPool.start()
    }

    public func shutdown() async throws { try await threadPool.shutdownGracefully() }

    /// Transforms `source` as `request` asks: planned from its header on the calling task (a source that
    /// cannot be transformed fails here, without waiting), then it waits for a free thread (first come,
    /// first served), reserves its memory (waiting at most the transform time limit, never on a pool
    /// thread) and runs on that thread. When the DC-only decoder declines a source and the budget cannot
    /// grow at once, the job gives its memory back, waits for the whole reservation and runs again.
    ///
    /// With `sourceIdentity` (``DecodedSourceCache/identity(sourceKey:bytes:)``), a whole decode
    /// kept for it (``decodedSources``) is resized from instead of decoding, and a source that is decoded
    /// whole is kept for its next variants. The kept decodes are looked up once the job has its thread,
    /// so a variant that waited behind its source's first decode finds it.
    /// - Returns: the variant and the time spent on pool threads.
    /// - Throws: ``ImagingError`` (``ImagingError/memoryBudgetBusy`` when the memory stays taken).
    public func transform(
        _ source: [UInt8], request: ImageRequest, choice: FormatChoice, overlay: [UInt8]?, with transformer: ImageTransformer,
        requestID: String? = nil, sourceIdentity: String? = nil
    ) async throws -> (encoded: EncodedImage, duration: Duration) {
        var plan = try transformer.plan(source, request: request, choice: choice, overlay: overlay)
        let slot = try await slots.acquire()
        defer { withExtendedLifetime(slot) {} }
        let lease = sourceIdentity.flatMap { decodedSources.lease($0) }
        defer { lease?.end() }
        // A kept decode in use cannot be given back, so a job holding one never waits for memory: a job
        // larger than the budget waiting for it to empty would wait for this one's decode, while this one
        // waited behind it. It uses the decode only when it may start at once; else it decodes itself.
        var reserved: Int?
        if let lease {
            let fromKept = try transformer.plan(source, request: request, choice: choice, overlay: overlay, decoded: lease.source)
            if fromKept.usesDecodedSource, let bytes = memoryBudget.reserveIfAdmissible(fromKept.reservation) {
                plan = fromKept
                reserved = bytes
                lease.markUsed()
            } else {
                lease.end()
            }
        }
        var duration = Duration.zero
        while true {
            let given = reserved
            reserved = nil
            let (outcome, spent) = try await reserveAndRun(
                plan, reserved: given, source: source, overlay: overlay, with: transformer, requestID: requestID)
            duration += spent
            switch outcome {
            case .encoded(let encoded, let kept):
                // Kept after this job's reservation went back, so that the decode's own bytes fit.
                if let kept, let sourceIdentity { decodedSources.keep(kept, for: sourceIdentity) }
                return (encoded, duration)
            case .needsFullReservation: plan = plan.withFullReservation
            }
        }
    }

    /// Reserves `plan`'s memory (waiting off the pool) unless `given` was reserved already, runs it on a
    /// pool thread, and gives the memory back.
    private func reserveAndRun(
        _ plan: TransformPlan, reserved given: Int?, source: [UInt8], overlay: [UInt8]?, with transformer: ImageTransformer,
        requestID: String?
    ) async throws -> (TransformRun, Duration) {
        let limit = transformer.maxTransformMilliseconds
        let budget = memoryBudget
        let wait = Duration.milliseconds(limit > 0 ? limit : 10_000)
        let bytes: Int
        if let given { bytes = given } else { bytes = try await budget.reserve(plan.reservation, wait: wait) }
        let reserved = Mutex(bytes)
        defer { budget.release(reserved.withLock { $0 }) }
        return try await run(requestID: requestID) { () throws -> (TransformRun, Duration) in
            let begin = ContinuousClock.now
            let outcome = try transformer.run(plan, source: source, overlay: overlay, reserved: reserved.withLock { $0 }) { bytes in
                reserved.withLock { held in
                    guard budget.tryGrow(from: held, to: bytes) else { return false }
                    held = max(held, bytes)
                    return true
                }
            }
            return (outcome, ContinuousClock.now - begin)
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
