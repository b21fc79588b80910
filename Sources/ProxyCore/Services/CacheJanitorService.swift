import ImageCore
import Logging
import ProxyEngine
import ServiceLifecycle

/// Every `cache.janitorInterval` seconds: flushes batched access times, removes expired entries and
/// evicts least recently used ones until the disk budget holds.
public struct CacheJanitorService: Service {
    let disk: DiskCache
    let interval: Duration
    let logger: Logger

    public init(disk: DiskCache, intervalSeconds: Int, logger: Logger) {
        self.disk = disk
        self.interval = .seconds(intervalSeconds)
        self.logger = logger
    }

    public func run() async throws {
        let disk = self.disk, logger = self.logger
        await runPeriodically(every: interval) {
            let result = await disk.runJanitor()
            if result.expired + result.evicted > 0 {
                logger.info("disk cache janitor", metadata: ["expired": "\(result.expired)", "evicted": "\(result.evicted)"])
            }
        }
    }
}
