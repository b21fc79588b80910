import Foundation
import ImageCore
import Logging
import NIOCore
import Tracing

/// The `/img` request path as one readable sequence:
/// memory → disk → original (disk, revalidated, or downloaded) → transform → store.
///
/// Downloads and transforms go through two ``PriorityWorkQueue``s: one job per source and one per
/// variant, each request a waiter with its priority (`high` for clients, `low` for prefetches). A
/// request whose task is cancelled (client gone, deadline passed) leaves both; a download nobody waits
/// for is aborted. It calls the caches, the fetcher and the transformer; none of them calls it.
public final class ImagePipeline: Sendable {
    /// What the pipeline answers with.
    public struct Outcome: Sendable {
        /// The variant; its body is empty when `notModified`.
        public var variant: CachedVariant
        /// Which tier answered.
        public var tier: CacheTier
        /// The client's `If-None-Match` matched: answer 304 without the bytes.
        public var notModified: Bool
    }

    /// What the client's request adds to the query.
    public struct ClientConditions: Sendable {
        public var accept: String?
        public var ifNoneMatch: String?
        /// `Cache-Control: only-if-cached`: never contact the origin.
        public var onlyIfCached: Bool

        public init(accept: String? = nil, ifNoneMatch: String? = nil, onlyIfCached: Bool = false) {
            self.accept = accept
            self.ifNoneMatch = ifNoneMatch
            self.onlyIfCached = onlyIfCached
        }
    }

    let memory: MemoryCache
    let disk: DiskCache
    let negative: NegativeCache
    let statistics: CacheStatistics
    let fetcher: OriginFetcher
    let pool: TransformPool
    let transformer: ImageTransformer
    let freshness: FreshnessPolicy
    let sourceKeys: SourceKeyPolicy
    let allowAutoAVIF: Bool
    /// Whether `format=auto` may choose JPEG XL (ahead of AVIF) for clients that accept it.
    let allowAutoJXL: Bool
    let metrics: ProxyMetrics
    /// The fleet's shared result tier, below memory and disk (nil: off).
    let sharedTier: SharedTier?
    /// Which downloaded originals go to disk.
    let originalAdmission: OriginalAdmission
    /// Downloaded originals in memory at once (arriving, or waiting for their transforms): sources are
    /// megabytes each, and when the transforms are the bottleneck downloading further ahead only costs
    /// memory. A download waits (in order, holding its slot but no bytes) for a permit; the permit goes
    /// back when the bytes are released.
    let originalsInHand: PermitPool
    /// One job per source: at most `fetch.concurrency` transfers, aborted when nobody waits.
    let downloads: PriorityWorkQueue<Original>
    /// One job per variant: at most one per pool thread, finished even when nobody waits (it is cached).
    let transforms: PriorityWorkQueue<Produced>
    /// Watermark images in hand, with their identities.
    let overlayImages = OverlayImages()
    /// The CPU estimate from which a transform is heavy (at most half the pool's threads run such at once).
    static let heavyTransformMilliseconds = 1_000
    /// Variants whose transform failed for a limit, answered again without the work for a while.
    public let transformFailures = TransformFailureCache(lifetime: 60)

    /// A variant made (or refreshed) by the shared part of the path.
    struct Produced: Sendable {
        var variant: CachedVariant
        var tier: CacheTier
        /// Time spent transforming, when a transform ran.
        var transformDuration: Duration = .zero
        /// The traced request whose job made it, when traced: the transform's span is in its trace.
        var madeBy: RequestTrace?
        /// That span (requests that joined the job link to it) and when the job started.
        var transformSpan: ServiceContext?
        var startedAt: ContinuousClock.Instant?
    }

    /// How the download and transform queues behave.
    public struct QueueSettings: Sendable {
        /// Transfers at once.
        public var downloadSlots: Int
        /// Jobs waiting for a slot, per queue, before new work is refused.
        public var maxPending: Int
        public var order: WorkQueueState.Order

        /// The share of the transform slots one source host may hold while another host's transform
        /// waits (0...1; 1: no share). Default 0.5.
        public var sourceHostShare: Double

        public init(downloadSlots: Int = 16, maxPending: Int = 256, order: WorkQueueState.Order = .fifo, sourceHostShare: Double = 0.5) {
            self.downloadSlots = downloadSlots
            self.maxPending = maxPending
            self.order = order
            self.sourceHostShare = sourceHostShare
        }
    }

    public init(
        memory: MemoryCache, disk: DiskCache, negative: NegativeCache, statistics: CacheStatistics,
        fetcher: OriginFetcher, pool: TransformPool, transformer: ImageTransformer,
        freshness: FreshnessPolicy, sourceKeys: SourceKeyPolicy, allowAutoAVIF: Bool, metrics: ProxyMetrics,
        queues: QueueSettings = QueueSettings(), originalAdmission: OriginalAdmission = OriginalAdmission(policy: .always),
        sharedTier: SharedTier? = nil, allowAutoJXL: Bool = false
    ) {
        self.allowAutoJXL = allowAutoJXL
        self.metrics = metrics
        self.sharedTier = sharedTier
        self.originalAdmission = originalAdmission
        originalsInHand = PermitPool(capacity: max(4, pool.workers * 3))
        downloads = PriorityWorkQueue(
            slots: queues.downloadSlots, maxQueued: queues.maxPending, order: queues.order, abortsAbandonedJobs: true,
            observer: { metrics.recordStage(.fetch, waiting: $0, running: $1, waited: $2) },
            onJoin: { metrics.recordDedupJoin(.fetch) })
        transforms = PriorityWorkQueue(
            slots: pool.admissionCandidates, maxQueued: queues.maxPending, order: queues.order, abortsAbandonedJobs: false,
            // One source host's burst (an attacker's URLs on one host) holds at most its share of the slots while
            // another host's transform waits.
            maxRunningPerTenant: max(1, Int((Double(pool.admissionCandidates) * min(1, max(0, queues.sourceHostShare))).rounded(.down))),
            // Transforms estimated at a second of CPU or more hold at most half the pool's threads, whatever
            // waits: the other threads stay for ordinary requests.
            maxRunningHeavy: max(1, pool.workers / 2),
            observer: { metrics.recordStage(.transform, waiting: $0, running: $1, waited: $2) },
            onJoin: { metrics.recordDedupJoin(.transform) },
            // One decode for a srcset: a waiting variant whose source's decode is kept goes first (a few
            // places at most), before that decode is given back.
            prefers: { [decodedSources = pool.decodedSources] sourceKey in decodedSources.holdsDecode(ofSourceKey: sourceKey) })
        self.memory = memory
        self.disk = disk
        self.negative = negative
        self.statistics = statistics
        self.fetcher = fetcher
        self.pool = pool
        self.transformer = transformer
        self.freshness = freshness
        self.sourceKeys = sourceKeys
        self.allowAutoAVIF = allowAutoAVIF
    }

    /// The memory-tier answer for a key from ``variantKey(for:accept:)`` when the tier holds a fresh variant:
    /// no I/O, no suspension, one short lock (the hot path); nil otherwise (then call
    /// ``variant(for:knownKey:conditions:timings:priority:)``).
    public func freshInMemory(
        _ key: VariantKey, sourceHost: String?, conditions: ClientConditions, timings: RequestTimings
    ) -> Outcome? {
        if case .fresh(let outcome) = probeMemory(key, sourceHost: sourceHost, conditions: conditions, timings: timings) {
            return outcome
        }
        return nil
    }

    /// What the memory tier holds for a key, looked up once per request: a fresh variant's answer, or
    /// what is held (stale, or nothing), which ``variant(for:knownKey:memory:conditions:timings:priority:)``
    /// then uses instead of looking again.
    public enum MemoryProbe: Sendable {
        /// A fresh variant: the answer.
        case fresh(Outcome)
        /// No fresh variant; `held` is a stale one, if any.
        case notFresh(key: VariantKey, held: CachedVariant?)
    }

    /// The memory tier's answer for `key` (one short lock, no I/O; a fresh hit is counted here, anything
    /// else when the pipeline goes on with ``variant(for:knownKey:memory:conditions:timings:priority:)``).
    public func probeMemory(
        _ key: VariantKey, sourceHost: String?, conditions: ClientConditions, timings: RequestTimings
    ) -> MemoryProbe {
        let held = memory.value(for: key)
        guard let hit = held, hit.expiresAt > Date().timeIntervalSince1970 else { return .notFresh(key: key, held: held) }
        record(.memory, hit: true)
        timings.sourceHost = sourceHost
        return .fresh(outcome(hit, tier: .memory, conditions, timings))
    }

    /// The cache key of `request`'s variant for a client sending `accept` (the output format may be
    /// negotiated from it). It depends on the request, `accept` and this pipeline's settings, and on the
    /// identity of a watermark's image: nil when that image is not in hand and fresh (the key is then
    /// known only after it is fetched, by ``variant(for:knownKey:conditions:timings:priority:)``).
    public func variantKey(for request: ImageRequest, accept: String?) -> VariantKey? {
        var identity: String?
        if let watermark = request.watermark {
            let held = overlayImages.fresh(sourceKeys.key(for: watermark.source), now: Date().timeIntervalSince1970)
            guard let held else { return nil }
            identity = held.identity
        }
        let (choice, _) = request.formatChoice(accept: accept, allowAVIF: allowAutoAVIF, allowJXL: allowAutoJXL)
        return request.variantKey(choice: choice, sourceKey: sourceKeys.key(for: request.source), overlayIdentity: identity)
    }

    /// Produces (or finds) the variant `request` asks for, waiting with `priority`.
    /// - Parameter knownKey: the key ``variantKey(for:accept:)`` gave for this request and `Accept`, when the
    ///   caller computed it already (not computed twice); a watermark's key is always made again once its
    ///   image is in hand, so that the key and the bytes drawn agree.
    /// - Throws: a ``PublicError`` (``FetchError``, ``ImagingError``, ``CacheMissError``, ``CacheableError``,
    ///   ``PipelineError``), or `CancellationError` when the calling task is cancelled.
    /// - Parameter memory: what ``probeMemory(_:sourceHost:conditions:timings:)`` found for this request's
    ///   key, when the caller looked already (the tier is then not consulted again for that key).
    public func variant(
        for request: ImageRequest, knownKey: VariantKey? = nil, memory probe: MemoryProbe? = nil, conditions: ClientConditions,
        timings: RequestTimings = RequestTimings(), priority: WorkQueueState.Priority = .high
    ) async throws -> Outcome {
        let now = Date().timeIntervalSince1970
        timings.sourceHost = request.source.host
        let (choice, _) = request.formatChoice(accept: conditions.accept, allowAVIF: allowAutoAVIF, allowJXL: allowAutoJXL)
        let sourceKey = sourceKeys.key(for: request.source)
        var overlay: OverlayImages.Image?
        if let watermark = request.watermark {
            overlay = try await overlayImage(watermark.source, conditions: conditions, now: now, timings: timings, priority: priority)
        }
        let key = overlay.map { request.variantKey(choice: choice, sourceKey: sourceKey, overlayIdentity: $0.identity) }
            ?? knownKey ?? request.variantKey(choice: choice, sourceKey: sourceKey)
        let overlayBytes = overlay?.bytes
        let overlaySourceKey = request.watermark.map { sourceKeys.key(for: $0.source) }
        let transformer = self.transformer
        // A replay of a variant that failed for a limit: the same answer, none of the work.
        if let remembered = transformFailures.recall(key, now: now) { throw remembered }
        let failures = transformFailures
        return try await shared(
            key: key, source: request.source, sourceKey: sourceKey, conditions: conditions, now: now, timings: timings,
            priority: priority, memory: probe,
            heavy: { original in
                (transformer.estimatedCost(original.bytes, request: request, choice: choice)?.milliseconds ?? 0)
                    >= Self.heavyTransformMilliseconds
            }
        ) { original in
            let source = original.bytes
            let jobStarted = ContinuousClock.now
            let (encoded, transformDuration): (EncodedImage, Duration)
            do {
                (encoded, transformDuration) = try await self.pool.transform(
                    source, request: request, choice: choice, overlay: overlayBytes, with: transformer, requestID: timings.requestID,
                    sourceIdentity: DecodedSourceCache.identity(sourceKey: sourceKey, bytes: source))
            } catch let error as ImagingError {
                failures.remember(error, key: key, sourceKey: sourceKey)
                timings.trace?.recordFailedTransform(error, from: jobStarted)
                throw error
            }
            let transformSpan = timings.trace?.recordTransform(encoded, from: jobStarted)
            self.metrics.recordTransform(
                format: encoded.format.rawValue, duration: transformDuration, outputBytes: encoded.bytes.count)
            if let quality = encoded.chosenQuality {
                // `max_bytes`: the quality the size target chose, and whether it was met.
                timings.describe("quality", encoded.fitsSizeTarget == false ? "\(quality)-over-max-bytes" : "\(quality)")
            }
            var variant = CachedVariant(
                body: ByteBuffer(bytes: encoded.bytes), contentType: encoded.format.mediaType,
                etag: EntityTag.strong(for: encoded.bytes), expiresAt: original.expiresAt, storable: original.storable,
                revalidation: original.entry.revalidation, sourceKey: sourceKey,
                originValidators: original.entry.originValidators)
            variant.overlaySourceKey = overlaySourceKey
            self.store(variant, bytes: encoded.bytes, key: key, original: original, now: now, trace: timings.trace)
            return Produced(
                variant: variant, tier: .miss, transformDuration: transformDuration, madeBy: timings.trace, transformSpan: transformSpan,
                startedAt: jobStarted)
        }
    }

    /// The part of the path shared by `/img` and `/info`: the caches, then the original (one download
    /// per source), then `make` (one job per variant on the transform queue).
    func shared(
        key: VariantKey, source: SourceURL, sourceKey: String, conditions: ClientConditions, now: Double,
        timings: RequestTimings, priority: WorkQueueState.Priority, memory probe: MemoryProbe? = nil,
        heavy: @Sendable (Original) -> Bool = { _ in false },
        make: @escaping @Sendable (Original) async throws -> Produced
    ) async throws -> Outcome {
        let stale: (variant: CachedVariant, tier: CacheTier)?
        switch await lookUp(key, sourceKey: sourceKey, conditions: conditions, now: now, timings: timings, memory: probe) {
        case .found(let outcome): return outcome
        case .stale(let variant, let tier): stale = (variant, tier)
        case .missing: stale = nil
        }
        // The variant is being made already (its download is over): wait for it.
        let flightKey = key.hex + (conditions.onlyIfCached ? "|only-if-cached" : "")
        let joinStarted = ContinuousClock.now
        if let made = try await transforms.joinExisting(key: flightKey, priority: priority) {
            if let trace = timings.trace, made.madeBy !== trace, let span = made.transformSpan {
                trace.recordSpan("imageproxy.transform", from: joinStarted, to: .now, attributes: ["imageproxy.joined": .bool(true)], links: [span])
            }
            return outcome(made.variant, tier: made.tier, conditions, timings)
        }
        // At the door: new work is refused at once while the transform backlog is full.
        if transforms.isFull, !transforms.hasJob(for: flightKey) { throw PipelineError.overloaded }

        // A stale variant carries its original's validators: without a stored original (see
        // `cache.storeOriginals`) they still let the origin answer 304 instead of the whole source.
        var staleValidators = stale?.variant.originValidators
        if stale != nil, staleValidators == nil { staleValidators = await disk.entry(for: key.hex).flatMap(\.originValidators) }
        let original = try await self.original(
            of: source, sourceKey: sourceKey, conditions: conditions, now: now, timings: timings, priority: priority,
            staleVariantValidators: staleValidators)
        if original.revalidated, let stale {
            let refreshed = await refresh(stale, key: key, until: original.expiresAt)
            return outcome(refreshed.variant, tier: refreshed.tier, conditions, timings)
        }
        // Made by another request while this one waited for the original.
        if let made = memory.value(for: key), made.expiresAt > now {
            return outcome(made, tier: .memory, conditions, timings)
        }
        let started = ContinuousClock.now
        let produced = try await transforms.run(
            key: flightKey, priority: priority, mayShed: false, group: sourceKey, tenant: source.host, heavy: heavy(original)
        ) {
            try await make(original)
        }
        let finished = ContinuousClock.now
        timings.record("queue", finished - started - produced.transformDuration)
        timings.record("transform", produced.transformDuration)
        if let trace = timings.trace {
            let jobStarted = produced.madeBy === trace ? produced.startedAt : nil
            trace.recordSpan("imageproxy.queue", from: started, to: jobStarted ?? (finished - produced.transformDuration))
            if produced.madeBy !== trace, let made = produced.transformSpan {
                // Made for another request (joined): a link to the transform that made it.
                trace.recordSpan(
                    "imageproxy.transform", from: finished - produced.transformDuration, to: finished,
                    attributes: ["imageproxy.joined": .bool(true)], links: [made])
            }
        }
        return outcome(produced.variant, tier: produced.tier, conditions, timings)
    }

    /// The origin answered 304: a stale variant is good again until `expiresAt`, in both tiers.
    func refresh(_ stale: (variant: CachedVariant, tier: CacheTier), key: VariantKey, until expiresAt: Double) async -> Produced {
        var refreshed = stale.variant
        refreshed.expiresAt = expiresAt
        memory.insert(refreshed, for: key)
        await disk.refresh(key: key.hex, expiresAt: expiresAt)
        return Produced(variant: refreshed, tier: stale.tier)
    }

    /// Keeps a new variant (memory now, disk and the shared tier in the background), unless the origin
    /// forbade storing.
    func store(_ variant: CachedVariant, bytes: [UInt8], key: VariantKey, original: Original, now: Double, trace: RequestTrace? = nil) {
        guard original.storable else { return }
        memory.insert(variant, for: key)
        disk.storeInBackground(bytes, as: variant.diskEntry(key: key.hex, original: original.entry, now: now))
        sharedTier?.storeInBackground(variant, bytes: bytes, key: key, sourceFetchedAt: original.entry.fetchedAt, trace: trace)
    }

    /// What the caches hold for a key.
    enum Lookup {
        /// Usable as is (fresh, or `only-if-cached`).
        case found(Outcome)
        /// Held but stale: worth revalidating the original.
        case stale(CachedVariant, CacheTier)
        case missing
    }

    /// Memory (no I/O, one short lock), then disk (the index first: a matching ETag needs no file read),
    /// then the shared tier (a hit is kept in memory and on disk).
    /// `probe`: what the memory tier held when the caller probed it; for this key it is not looked up again.
    func lookUp(
        _ key: VariantKey, sourceKey: String, conditions: ClientConditions, now: Double, timings: RequestTimings,
        memory probe: MemoryProbe? = nil
    ) async -> Lookup {
        let usable = { (variant: CachedVariant) in variant.isUsable(at: now, onlyIfCached: conditions.onlyIfCached) }
        let held: CachedVariant?
        let lookupStarted = ContinuousClock.now
        if case .notFresh(let probedKey, let probed)? = probe, probedKey == key { held = probed } else { held = memory.value(for: key) }
        timings.trace?.recordSpan(
            "imageproxy.memory", from: lookupStarted, to: .now,
            attributes: ["imageproxy.hit": .bool(held.map { usable($0) } ?? false), "imageproxy.stale": .bool(held.map { !usable($0) } ?? false)])
        if let hit = held {
            record(.memory, hit: true)
            if usable(hit) { return .found(outcome(hit, tier: .memory, conditions, timings)) }
            return .stale(hit, .memory)
        }
        record(.memory, hit: false)
        guard let entry = await timings.measure("disk", hit: { $0 != nil }, { await disk.entry(for: key.hex) }) else {
            record(.disk, hit: false)
            return await lookUpShared(key, sourceKey: sourceKey, conditions: conditions, now: now, timings: timings)
        }
        let cached = CachedVariant(entry: entry, body: ByteBuffer())
        if usable(cached), let condition = conditions.ifNoneMatch, EntityTag.matches(condition, etag: entry.etag) {
            record(.disk, hit: true)
            disk.noteAccess(entry.key)
            timings.cacheTier = CacheTier.disk.rawValue
            return .found(Outcome(variant: cached, tier: .disk, notModified: true))
        }
        guard let bytes = await timings.measure("disk_read", { await disk.contents(of: entry) }) else {
            record(.disk, hit: false)
            return .missing
        }
        record(.disk, hit: true)
        let variant = CachedVariant(entry: entry, body: ByteBuffer(bytes: bytes))
        guard usable(variant) else { return .stale(variant, .disk) }
        memory.insert(variant, for: key)
        return .found(outcome(variant, tier: .disk, conditions, timings))
    }

    /// The shared tier's answer for a memory and disk miss: a fresh, whole variant is kept in memory and
    /// on disk and answered; anything else (off, miss, fault) is a miss.
    func lookUpShared(
        _ key: VariantKey, sourceKey: String, conditions: ClientConditions, now: Double, timings: RequestTimings
    ) async -> Lookup {
        guard let sharedTier else { return .missing }
        let trace = timings.trace
        let found = await timings.measure("shared") { span in
            let variant = await sharedTier.variant(
                for: key, sourceKey: sourceKey, now: now, traceHeaders: span.flatMap { trace?.headerLines(for: $0.context) } ?? [])
            span?.attributes["imageproxy.hit"] = variant != nil
            return variant
        }
        guard let variant = found else { return .missing }
        memory.insert(variant, for: key)
        let bytes = Array(variant.body.readableBytesView)
        disk.storeInBackground(bytes, as: variant.diskEntry(key: key.hex, now: now))
        return .found(outcome(variant, tier: .shared, conditions, timings))
    }

    func outcome(_ variant: CachedVariant, tier: CacheTier, _ conditions: ClientConditions, _ timings: RequestTimings) -> Outcome {
        timings.cacheTier = tier.rawValue
        let matched = conditions.ifNoneMatch.map { EntityTag.matches($0, etag: variant.etag) } ?? false
        return Outcome(variant: variant, tier: tier, notModified: matched)
    }

    func record(_ tier: CacheTier, hit: Bool) {
        statistics.record(tier: tier, hit: hit)
        metrics.recordLookup(tier: tier.rawValue, hit: hit)
    }
}
