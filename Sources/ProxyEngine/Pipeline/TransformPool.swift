import ImageCore
import NIOCore
import NIOPosix
import Synchronization

/// A bounded pool of threads for libvips work: one job per thread, one thread per core by default. Its
/// admission (``transform(_:request:choice:overlay:with:requestID:sourceIdentity:)``) reserves the
/// transform's memory and a thread together from the ``TransformMemoryBudget`` (which hands out the
/// threads too), and only then hands the job to its thread: no pool thread waits for memory, the budget
/// is held by the jobs that run (and the kept decodes), never by jobs still waiting for a thread, and a
/// job whose memory is not free yet leaves the free thread to a smaller job behind it
/// (``admissionCandidates``).
public final class TransformPool: Sendable {
    private let threadPool: NIOThreadPool
    /// Threads in the pool.
    public let workers: Int
    /// Transforms to let into the admission at once: twice the threads, so that while one waits for
    /// memory another that fits can use the free thread (ImagePipeline's transform queue's slots).
    public var admissionCandidates: Int { 2 * workers }
    /// The memory the transforms running on the pool may hold together (`image.maxTransformBytes`).
    public let memoryBudget: TransformMemoryBudget
    /// The jobs running now and their request ids ("" for none).
    private let running = Mutex<(next: Int, ids: [Int: String])>((0, [:]))

    /// Sources decoded whole, kept for their next variants (one decode for a srcset), inside the budget.
    public let decodedSources: DecodedSourceCache
    /// The faces found in each source (``resolvingFaces(_:source:with:requestID:identity:)``).
    public let faceSearches = FaceSearchCache()

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
        memoryBudget = TransformMemoryBudget(capacity: memoryBytes, jobs: count, lender: lender)
        self.decodedSources = DecodedSourceCache(settings: decodedSources, budget: memoryBudget, observe: observe)
        self.threadPool = NIOThreadPool(numberOfThreads: count)
    }

    public func start() {
        Vips.start()
        threadPool.start()
    }

    public func shutdown() async throws { try await threadPool.shutdownGracefully() }

    /// Transforms `source` as `request` asks: planned from its header on the calling task (a source that
    /// cannot be transformed fails here, without waiting), then it reserves its memory and a thread
    /// (waiting at most the transform time limit, never on a pool thread; first come, first served but
    /// for a job that fits going before one that does not) and runs on that thread. When the DC-only decoder declines a source and the budget cannot
    /// grow at once, the job gives its memory back, waits for the whole reservation and runs again.
    ///
    /// With `sourceIdentity` (``DecodedSourceCache/identity(sourceKey:bytes:)``, asked for only when the
    /// variant may use or keep a decode, ``ImageTransformer/looksUpKeptDecode(for:source:)``: it hashes the
    /// bytes), a decode kept for it (``decodedSources``) is resized from instead of decoding, and a
    /// source's decode made to keep is kept for its next variants. The kept decodes are looked up again once a job that waited
    /// has its memory and thread, so a variant that waited behind its source's first decode finds it.
    /// - Returns: the variant and the time spent on pool threads.
    /// - Throws: ``ImagingError`` (``ImagingError/memoryBudgetBusy`` when the memory stays taken).
    public func transform(
        _ source: [UInt8], request: ImageRequest, choice: FormatChoice, overlay: [UInt8]?, with transformer: ImageTransformer,
        requestID: String? = nil, sourceIdentity lookUpIdentity: @autoclosure () -> String? = nil
    ) async throws -> (encoded: EncodedImage, duration: Duration) {
        let request = try await resolvingFaces(request, source: source, with: transformer, requestID: requestID, identity: lookUpIdentity())
        var plan = try transformer.plan(source, request: request, choice: choice, overlay: overlay)
        let sourceIdentity = decodedSources.isEnabled && transformer.looksUpKeptDecode(for: plan, source: source) ? lookUpIdentity() : nil
        let wait = Duration.milliseconds(transformer.maxTransformMilliseconds > 0 ? transformer.maxTransformMilliseconds : 10_000)
        // A kept decode in use cannot be given back, so a job holding one never waits for memory: a job
        // larger than the budget waiting for it to empty would wait for this one's decode, while this one
        // waited behind it. It uses the decode only when it may start at once; else it waits for its
        // own reservation, and looks again once it has it (its source's first decode may have been kept
        // meanwhile).
        var lease = sourceIdentity.flatMap { decodedSources.lease($0) }
        defer { lease?.end() }
        var reserved: Int?
        if let kept = lease {
            let fromKept = try transformer.plan(source, request: request, choice: choice, overlay: overlay, decoded: kept.source)
            if fromKept.usesDecodedSource, let bytes = memoryBudget.reserveIfAdmissible(fromKept.reservation) {
                plan = fromKept
                reserved = bytes
                kept.markUsed()
            } else {
                kept.end()
                lease = nil
            }
        }
        var duration = Duration.zero
        var memoryWaits: [TransformPhase] = []
        while true {
            var bytes: Int
            if let given = reserved {
                bytes = given
            } else {
                let waitStarted = ContinuousClock.now
                bytes = try await memoryBudget.reserve(plan.reservation, wait: wait)
                memoryWaits.append(
                    TransformPhase(
                        name: "memory_wait", start: waitStarted, end: .now, details: [("imageproxy.reserved_bytes", .integer(plan.reservation))]))
                if lease == nil, let kept = sourceIdentity.flatMap({ decodedSources.lease($0) }) {
                    let fromKept: TransformPlan
                    do {
                        fromKept = try transformer.plan(source, request: request, choice: choice, overlay: overlay, decoded: kept.source)
                    } catch {
                        // Nothing runs: the decode, the reservation and the thread go back before the error does.
                        kept.end()
                        memoryBudget.release(bytes)
                        throw error
                    }
                    // Resizing from the decode may need more than this job's own decode (a narrow width
                    // decoded small): grown when that fits now, as any job's reservation may.
                    if fromKept.usesDecodedSource, memoryBudget.tryGrow(from: bytes, to: fromKept.reservation) {
                        if memoryBudget.capacity > 0 { bytes = max(bytes, fromKept.reservation) }
                        plan = fromKept
                        kept.markUsed()
                        lease = kept
                    } else {
                        kept.end()
                    }
                }
            }
            reserved = nil
            let (outcome, spent) = try await run(
                plan, reserved: bytes, source: source, overlay: overlay, with: transformer, requestID: requestID, keepingFor: sourceIdentity)
            duration += spent
            switch outcome {
            case .encoded(var encoded, _):
                encoded.phases = memoryWaits + encoded.phases
                return (encoded, duration)
            case .needsFullReservation: plan = plan.withFullReservation
            }
        }
    }

    /// Runs `plan` on a pool thread with the `bytes` (and the thread) reserved for it, and gives them back;
    /// a whole decode the run hands back is kept for `sourceIdentity` in the same step as the job ends
    /// (so a job that waited behind this one finds it, and the decode's own bytes fit).
    private func run(
        _ plan: TransformPlan, reserved bytes: Int, source: [UInt8], overlay: [UInt8]?, with transformer: ImageTransformer,
        requestID: String?, keepingFor sourceIdentity: String?
    ) async throws -> (TransformRun, Duration) {
        let budget = memoryBudget
        let reserved = Mutex(bytes)
        var handedOn = false
        defer { if !handedOn { budget.release(reserved.withLock { $0 }) } }
        let result = try await run(requestID: requestID) { () throws -> (TransformRun, Duration) in
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
        if case .encoded(_, let kept?) = result.0, let sourceIdentity {
            handedOn = true
            decodedSources.keep(kept, for: sourceIdentity, endingJobOf: reserved.withLock { $0 })
        }
        return result
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
