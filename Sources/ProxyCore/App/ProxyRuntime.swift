import Foundation
import ImageCore
import Logging
import ProxyEngine
import ServiceLifecycle
import Synchronization

/// The long-lived parts of one running service: thread pools, caches, the pipeline.
///
/// Pools start and the disk cache recovers when the runtime is created; as a `Service` it stops them
/// at graceful shutdown, after the HTTP server (listed after it) has drained, waiting for background
/// cache writes and flushing the index.
public final class ProxyRuntime: Service, Sendable {
    public let configuration: ProxyConfiguration
    /// Who may use this deployment (decided at start; the status page and `imageproxy_access_mode` show it).
    public let accessMode: AccessMode
    public let pipeline: ImagePipeline
    public let transformPool: TransformPool
    public let fetcher: OriginFetcher
    /// The shared result tier, when `cache.shared.bucket` is set.
    public let sharedTier: SharedTier?
    public let memoryCache: MemoryCache
    public let diskCache: DiskCache
    public let negativeCache: NegativeCache
    public let statistics: CacheStatistics
    public let sourceKeys: SourceKeyPolicy
    public let readiness: Readiness
    /// The port the HTTP server actually listens on (known once it runs; `bind` may say 0).
    public let listeningPort = AtomicCounter()
    /// Requests answered by the memory-hit front (in front of the HTTP decoder), for tests and diagnosis.
    public let frontAnswers = AtomicCounter()
    public let metrics: ProxyMetrics
    public let requestLog: RequestLog
    /// The last hour of the status page's charts.
    public let statusHistory: StatusHistory
    /// When the runtime started (seconds since 1970), for the status page.
    public let startedAt: Double
    let logger: Logger
    /// Where the one-line-per-request access log goes.
    let accessLog: AccessLog
    /// The tracer and its exporter when `tracing.enabled`.
    public let tracing: RequestTracing?
    let collected = CollectedCounters()

    /// Creates the runtime, opens (and recovers) the disk cache and starts the pools.
    /// - Parameters:
    ///   - metrics: where metrics are recorded; a fresh registry by default.
    ///   - accessLogger: the access log; `logger` relabelled `imageproxy.access` by default.
    /// - Throws: ``ConfigurationError`` when the deployment would be an open proxy by accident
    ///   (``AccessMode/of(_:)``), libvips cannot start or the cache folder is unusable.
    public init(
        configuration: ProxyConfiguration, logger: Logger, metrics: ProxyMetrics = ProxyMetrics(), accessLogger: Logger? = nil
    ) throws {
        accessMode = try AccessMode.of(configuration)
        guard Vips.start() else { throw ConfigurationError("libvips failed to start") }
        self.configuration = configuration
        metrics.recordAccessMode(accessMode.rawValue, among: AccessMode.allCases.map(\.rawValue))
        if accessMode == .open { logger.warning("open proxy: any source for anyone (security.allowOpenProxy)", metadata: ["bind": "\(configuration.bind)"]) }
        self.logger = logger
        self.metrics = metrics
        self.accessLog = AccessLog(logger: accessLogger ?? logger)
        do {
            tracing = try RequestTracing.make(
                settings: configuration.tracing, includesSourceQuery: configuration.observability.logSourceURLs, logger: logger,
                metrics: metrics)
        } catch {
            throw ConfigurationError("tracing: \(error)")
        }
        self.requestLog = RequestLog()
        self.startedAt = Date().timeIntervalSince1970
        self.statusHistory = StatusHistory(
            interval: Double(configuration.observability.statusSampleSeconds), now: startedAt)
        do {
            diskCache = try DiskCache(settings: configuration.cache.disk, logger: logger)
        } catch {
            throw ConfigurationError("cannot open the disk cache in cache.dir \(configuration.cache.disk.directory): \(error)")
        }
        readiness = Readiness()
        memoryCache = MemoryCache(settings: configuration.cache.memory)
        negativeCache = NegativeCache(settings: configuration.cache.negative)
        statistics = CacheStatistics()
        sourceKeys = SourceKeyPolicy(ignoredParameters: configuration.cache.ignoredSourceParameters)
        fetcher = OriginFetcher(settings: configuration.fetch, logger: logger, metrics: metrics)
        sharedTier = configuration.cache.shared.isEnabled ? SharedTier(settings: configuration.cache.shared, metrics: metrics) : nil
        var decodedSources = DecodedSourceCache.Settings()
        decodedSources.capacity = configuration.image.decodedSourceBytes
        decodedSources.lifetime = .seconds(configuration.image.decodedSourceSeconds)
        transformPool = TransformPool(
            workers: configuration.image.workers, memoryBytes: configuration.image.transformer.maxTransformBytes,
            lender: memoryCache, decodedSources: decodedSources, observe: { metrics.recordDecodedSource($0) })
        pipeline = ImagePipeline(
            memory: memoryCache, disk: diskCache, negative: negativeCache, statistics: statistics,
            fetcher: fetcher, pool: transformPool,
            transformer: ImageTransformer(settings: configuration.image.transformer),
            freshness: configuration.cache.freshness,
            sourceKeys: sourceKeys, allowAutoAVIF: configuration.image.autoAVIF, metrics: metrics,
            queues: .init(
                downloadSlots: configuration.fetch.concurrency, maxPending: configuration.queue.maxPending,
                order: configuration.queue.order, sourceHostShare: Double(configuration.queue.sourceHostSharePercent) / 100),
            originalAdmission: OriginalAdmission(policy: configuration.cache.storeOriginals), sharedTier: sharedTier,
            allowAutoJXL: configuration.image.autoJXL)
        transformPool.start()
        let pool = transformPool
        LibvipsLogForwarder(logger: logger, soleRunningRequestID: { pool.soleRunningRequestID }).install()
        readiness.markCachesOpen()
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }

    /// Marks the service not ready, stops the pools, waits for cache writes and flushes the index.
    public func shutdown() async {
        readiness.markShuttingDown()
        try? await transformPool.shutdown()
        try? await fetcher.shutdown()
        await sharedTier?.shutdown()
        await diskCache.shutdown()
    }

    /// Removes a source and all its variants from every tier, the shared tier included (whose purge log
    /// makes every other replica drop them too); returns how many entries went.
    public func purge(source: SourceURL) async -> Int {
        let sourceKey = sourceKeys.key(for: source)
        let local = await purgeLocally(sourceKey: sourceKey)
        return local + (await sharedTier?.purge(sourceKey: sourceKey) ?? 0)
    }

    /// Removes everything from every tier; returns how many entries went.
    public func purgeAll() async -> Int {
        let local = await purgeLocally(sourceKey: SharedTier.everything)
        return local + (await sharedTier?.purgeAll() ?? 0)
    }

    /// Removes a source's entries (``SharedTier/everything``: all) from this replica's tiers only: a
    /// purge made here, or one read from the shared tier's purge log.
    func purgeLocally(sourceKey: String) async -> Int {
        guard sourceKey != SharedTier.everything else {
            negativeCache.forgetAll()
            pipeline.transformFailures.forgetAll()
            let overlays = pipeline.forgetOverlayImages()
            let fromMemory = memoryCache.purgeAll() + overlays
            await diskCache.waitForPendingWrites()
            return fromMemory + (await diskCache.purgeAll())
        }
        negativeCache.forget(sourceKey)
        pipeline.transformFailures.forget(sourceKey: sourceKey)
        // A watermark image's URL: its bytes in hand, and (by the index) every variant that drew it.
        let overlay = pipeline.forgetOverlayImage(sourceKey: sourceKey) ? 1 : 0
        let fromMemory = memoryCache.purge(sourceKey: sourceKey) + overlay
        let fromDisk = await diskCache.purge(sourceKey: sourceKey)
        return fromMemory + fromDisk
    }

    /// Entries, bytes and hit ratios per tier.
    public func cacheStatistics() async -> [String: TierStatistics] {
        let memoryUsage = memoryCache.usage
        let diskUsage = await diskCache.usage()
        return [
            "memory": TierStatistics(
                entries: memoryUsage.entries, bytes: memoryUsage.bytes, capacityBytes: memoryCache.capacityBytes,
                counts: statistics.counts(.memory)),
            "disk": TierStatistics(
                entries: diskUsage.entries, bytes: diskUsage.bytes, capacityBytes: diskCache.capacityBytes,
                counts: statistics.counts(.disk)),
        ]
    }

    /// One tier's figures in `GET /cache/stats`.
    public struct TierStatistics: Sendable, Codable, Equatable {
        public var entries: Int
        public var bytes: Int
        public var capacityBytes: Int
        public var hits: Int
        public var misses: Int
        /// hits / (hits + misses), 0 before any lookup.
        public var hitRatio: Double

        init(entries: Int, bytes: Int, capacityBytes: Int, counts: (hits: Int, misses: Int)) {
            self.entries = entries
            self.bytes = bytes
            self.capacityBytes = capacityBytes
            self.hits = counts.hits
            self.misses = counts.misses
            let total = counts.hits + counts.misses
            self.hitRatio = total == 0 ? 0 : Double(counts.hits) / Double(total)
        }
    }
}
