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

    public init(
        memory: MemoryCache, disk: DiskCache, negative: NegativeCache, statistics: CacheStatistics,
        fetcher: OriginFetcher, pool: TransformPool, transformer: ImageTransformer,
        freshness: FreshnessPolicy, sourceKeys: SourceKeyPolicy, allowAutoAVIF: Bool
    ) {
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

    /// Produces (or finds) the variant `request` asks for.
    /// - Throws: a ``PublicError`` (``FetchError``, ``ImagingError``, ``CacheMissError``, ``CacheableError``).
    public func variant(for request: ImageRequest, conditions: ClientConditions) async throws -> Outcome {
        let now = Date().timeIntervalSince1970
        let (choice, negotiated) = request.formatChoice(accept: conditions.accept, allowAVIF: allowAutoAVIF)
        let sourceKey = sourceKeys.key(for: request.source)
        let key = request.variantKey(choice: choice, sourceKey: sourceKey)
        let usable = { (variant: CachedVariant) in variant.expiresAt > now || conditions.onlyIfCached }

        // 1. Memory: no I/O, one short lock.
        var stale: (variant: CachedVariant, tier: CacheTier)?
        if let hit = memory.value(for: key) {
            statistics.record(tier: .memory, hit: true)
            if usable(hit) { return outcome(hit, tier: .memory, conditions) }
            stale = (hit, .memory)
        } else {
            statistics.record(tier: .memory, hit: false)
        }

        // 2. Disk: the index first (a matching ETag needs no file read), then the file.
        if stale == nil, let entry = await disk.entry(for: key.hex) {
            let cached = CachedVariant(entry: entry, body: ByteBuffer())
            if usable(cached), let condition = conditions.ifNoneMatch, EntityTag.matches(condition, etag: entry.etag) {
                statistics.record(tier: .disk, hit: true)
                disk.noteAccess(entry.key)
                return Outcome(variant: cached, tier: .disk, notModified: true)
            }
            if let bytes = await disk.contents(of: entry) {
                statistics.record(tier: .disk, hit: true)
                let variant = CachedVariant(entry: entry, body: ByteBuffer(bytes: bytes))
                if usable(variant) {
                    memory.insert(variant, for: key)
                    return outcome(variant, tier: .disk, conditions)
                }
                stale = (variant, .disk)
            } else {
                statistics.record(tier: .disk, hit: false)
            }
        } else if stale == nil {
            statistics.record(tier: .disk, hit: false)
        }

        // 3. The original: fresh on disk, revalidated (304), or downloaded.
        let original = try await original(of: request.source, sourceKey: sourceKey, conditions: conditions, now: now)
        if original.revalidated, var refreshed = stale?.variant {
            refreshed.expiresAt = original.expiresAt
            memory.insert(refreshed, for: key)
            await disk.refresh(key: key.hex, expiresAt: original.expiresAt)
            return outcome(refreshed, tier: stale!.tier, conditions)
        }

        // 4. Transform on the bounded pool, then store (disk in the background).
        let transformer = self.transformer
        let source = original.bytes
        let encoded = try await pool.run { try transformer.transform(source, request: request, choice: choice) }
        let variant = CachedVariant(
            body: ByteBuffer(bytes: encoded.bytes), contentType: encoded.format.mediaType,
            etag: EntityTag.strong(for: encoded.bytes), expiresAt: original.expiresAt, storable: original.storable,
            variesOnAccept: negotiated, sourceKey: sourceKey)
        if original.storable {
            memory.insert(variant, for: key)
            if original.needsStore { disk.storeInBackground(original.bytes, as: original.entry) }
            disk.storeInBackground(encoded.bytes, as: variant.diskEntry(key: key.hex, original: original.entry, now: now))
        }
        return outcome(variant, tier: .miss, conditions)
    }

    private func outcome(_ variant: CachedVariant, tier: CacheTier, _ conditions: ClientConditions) -> Outcome {
        let matched = conditions.ifNoneMatch.map { EntityTag.matches($0, etag: variant.etag) } ?? false
        return Outcome(variant: variant, tier: tier, notModified: matched)
    }
}
