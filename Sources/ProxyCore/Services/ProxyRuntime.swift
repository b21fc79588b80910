import Foundation
import Logging
import ServiceLifecycle

/// The long-lived parts of one running service: thread pools, caches, the pipeline.
///
/// Pools start when the runtime is created; as a `Service` it stops them at graceful shutdown,
/// after the HTTP server (listed after it) has drained.
public final class ProxyRuntime: Service, Sendable {
    public let configuration: ProxyConfiguration
    public let pipeline: ImagePipeline
    public let transformPool: TransformPool
    public let fetcher: OriginFetcher
    public let memoryCache: MemoryCache
    public let readiness: Readiness
    let logger: Logger

    /// Creates the runtime and starts its pools.
    /// - Throws: ``ConfigurationError`` when libvips cannot start or the cache folder cannot be created.
    public init(configuration: ProxyConfiguration, logger: Logger) throws {
        guard Vips.start() else { throw ConfigurationError("libvips failed to start") }
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.cache.directory, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError("cannot create cache.dir \(configuration.cache.directory)")
        }
        self.configuration = configuration
        self.logger = logger
        readiness = Readiness()
        memoryCache = MemoryCache(capacityBytes: configuration.cache.memoryBytes)
        fetcher = OriginFetcher(settings: .init(configuration), logger: logger)
        transformPool = TransformPool(workers: configuration.image.workers)
        pipeline = ImagePipeline(
            memory: memoryCache, fetcher: fetcher, pool: transformPool,
            transformer: ImageTransformer(
                maxSourcePixels: configuration.image.maxSourcePixels,
                encoding: EncodingSettings(configuration.image)),
            maxAgeSeconds: configuration.http.maxAgeSeconds,
            allowAutoAVIF: configuration.image.autoAVIF)
        fetcher.start()
        transformPool.start()
        readiness.markCachesOpen()
    }

    public func run() async throws {
        try? await gracefulShutdown()
        readiness.markShuttingDown()
        try await transformPool.shutdown()
        try await fetcher.shutdown()
    }
}
