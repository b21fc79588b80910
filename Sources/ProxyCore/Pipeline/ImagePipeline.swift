import Foundation
import Logging
import NIOCore

/// The `/img` request path as one readable sequence:
/// memory → disk → original (disk, revalidated, or downloaded) → transform → store.
///
/// It calls the caches, the fetcher and the transformer; none of them calls it.
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
    let metrics: ProxyMetrics
    /// Distinct uncached variants that may be in production at once.
    let maxPending: Int
    /// One transform per variant key at a time.
    let variantFlights = SingleFlight<Produced>()
    /// One download per source at a time.
    let originalFlights = SingleFlight<Original>()

    /// A variant made (or refreshed) by the shared part of the path.
    struct Produced: Sendable {
        var variant: CachedVariant
        var tier: CacheTier
    }

    public init(
        memory: MemoryCache, disk: DiskCache, negative: NegativeCache, statistics: CacheStatistics,
        fetcher: OriginFetcher, pool: TransformPool, transformer: ImageTransformer,
        freshness: FreshnessPolicy, sourceKeys: SourceKeyPolicy, allowAutoAVIF: Bool, metrics: ProxyMetrics,
        maxPending: Int = 256
    ) {
        self.metrics = metrics
        self.maxPending = maxPending
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

    /// The memory-tier answer for `request` when it holds a fresh variant: no I/O, no suspension, one
    /// short lock (the hot path); nil otherwise (then call ``variant(for:conditions:timings:)``).
    public func freshInMemory(
        _ request: ImageRequest, conditions: ClientConditions, timings: RequestTimings
    ) -> Outcome? {
        let (choice, _) = request.formatChoice(accept: conditions.accept, allowAVIF: allowAutoAVIF)
        let key = request.variantKey(choice: choice, sourceKey: sourceKeys.key(for: request.source))
        guard let hit = memory.value(for: key), hit.expiresAt > Date().timeIntervalSince1970 else { return nil }
        record(.memory, hit: true)
        timings.sourceHost = request.source.host
        return outcome(hit, tier: .memory, conditions, timings)
    }

    /// Produces (or finds) the variant `request` asks for.
    /// - Throws: a ``PublicError`` (``FetchError``, ``ImagingError``, ``CacheMissError``, ``CacheableError``).
    public func variant(
        for request: ImageRequest, conditions: ClientConditions, timings: RequestTimings = RequestTimings()
    ) async throws -> Outcome {
        let now = Date().timeIntervalSince1970
        timings.sourceHost = request.source.host
        let (choice, negotiated) = request.formatChoice(accept: conditions.accept, allowAVIF: allowAutoAVIF)
        let sourceKey = sourceKeys.key(for: request.source)
        let key = request.variantKey(choice: choice, sourceKey: sourceKey)
        let stale: (variant: CachedVariant, tier: CacheTier)?
        switch await lookUp(key, conditions: conditions, now: now, timings: timings) {
        case .found(let outcome): return outcome
        case .stale(let variant, let tier): stale = (variant, tier)
        case .missing: stale = nil
        }

        // 3-4. Shared by identical requests: the original, then the transform.
        let flightKey = key.hex + (conditions.onlyIfCached ? "|only-if-cached" : "")
        try admit(flightKey)
        let staleVariant = stale
        let produced = try await variantFlights.run(key: flightKey, onJoin: { self.metrics.recordDedupJoin(.transform) }) {
            try await self.produce(
                request, choice: choice, negotiated: negotiated, sourceKey: sourceKey, key: key, stale: staleVariant,
                conditions: conditions, now: now, timings: timings)
        }
        return outcome(produced.variant, tier: produced.tier, conditions, timings)
    }

    /// The original (fresh on disk, revalidated, or downloaded), then the transform on the bounded pool,
    /// then the stores (disk in the background).
    private func produce(
        _ request: ImageRequest, choice: FormatChoice, negotiated: Bool, sourceKey: String, key: VariantKey,
        stale: (variant: CachedVariant, tier: CacheTier)?, conditions: ClientConditions, now: Double, timings: RequestTimings
    ) async throws -> Produced {
        let original = try await originalFlights.run(key: sourceKey, onJoin: { self.metrics.recordDedupJoin(.fetch) }) {
            try await self.original(of: request.source, sourceKey: sourceKey, conditions: conditions, now: now, timings: timings)
        }
        if original.revalidated, let stale { return await refresh(stale, key: key, until: original.expiresAt) }

        let transformer = self.transformer
        let source = original.bytes
        let metrics = self.metrics
        let queuedAt = metrics.queuedJob(.transform)
        let started = ContinuousClock.now
        let result = try await pool.run { () throws -> (EncodedImage, Duration) in
            metrics.startedJob(.transform, queuedAt: queuedAt)
            defer { metrics.finishedJob(.transform) }
            let begin = ContinuousClock.now
            let encoded = try transformer.transform(source, request: request, choice: choice)
            return (encoded, ContinuousClock.now - begin)
        }
        let (encoded, transformDuration) = result
        timings.record("queue", ContinuousClock.now - started - transformDuration)
        timings.record("transform", transformDuration)
        metrics.recordTransform(format: encoded.format.rawValue, duration: transformDuration, outputBytes: encoded.bytes.count)

        let variant = CachedVariant(
            body: ByteBuffer(bytes: encoded.bytes), contentType: encoded.format.mediaType,
            etag: EntityTag.strong(for: encoded.bytes), expiresAt: original.expiresAt, storable: original.storable,
            variesOnAccept: negotiated, sourceKey: sourceKey)
        store(variant, bytes: encoded.bytes, key: key, original: original, now: now)
        return Produced(variant: variant, tier: .miss)
    }

    /// The origin answered 304: a stale variant is good again until `expiresAt`, in both tiers.
    func refresh(_ stale: (variant: CachedVariant, tier: CacheTier), key: VariantKey, until expiresAt: Double) async -> Produced {
        var refreshed = stale.variant
        refreshed.expiresAt = expiresAt
        memory.insert(refreshed, for: key)
        await disk.refresh(key: key.hex, expiresAt: expiresAt)
        return Produced(variant: refreshed, tier: stale.tier)
    }

    /// Keeps a new variant (memory now, disk in the background) and a freshly downloaded original,
    /// unless the origin forbade storing.
    func store(_ variant: CachedVariant, bytes: [UInt8], key: VariantKey, original: Original, now: Double) {
        guard original.storable else { return }
        memory.insert(variant, for: key)
        if original.needsStore { disk.storeInBackground(original.bytes, as: original.entry) }
        disk.storeInBackground(bytes, as: variant.diskEntry(key: key.hex, original: original.entry, now: now))
    }

    /// Sheds load: a request that would start new work while `maxPending` variants are already in
    /// production is refused at once (joining work under way is always allowed).
    func admit(_ flightKey: String) throws(PipelineError) {
        guard variantFlights.count >= maxPending, !variantFlights.isRunning(flightKey) else { return }
        throw .overloaded
    }

    /// What the caches hold for a key.
    enum Lookup {
        /// Usable as is (fresh, or `only-if-cached`).
        case found(Outcome)
        /// Held but stale: worth revalidating the original.
        case stale(CachedVariant, CacheTier)
        case missing
    }

    /// Memory (no I/O, one short lock), then disk (the index first: a matching ETag needs no file read).
    func lookUp(_ key: VariantKey, conditions: ClientConditions, now: Double, timings: RequestTimings) async -> Lookup {
        let usable = { (variant: CachedVariant) in variant.expiresAt > now || conditions.onlyIfCached }
        if let hit = memory.value(for: key) {
            record(.memory, hit: true)
            if usable(hit) { return .found(outcome(hit, tier: .memory, conditions, timings)) }
            return .stale(hit, .memory)
        }
        record(.memory, hit: false)
        guard let entry = await timings.measure("disk", { await disk.entry(for: key.hex) }) else {
            record(.disk, hit: false)
            return .missing
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
