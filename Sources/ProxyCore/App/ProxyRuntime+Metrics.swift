import ImageCore
import ProxyEngine
import Synchronization

extension ProxyRuntime {
    /// Counters sampled from their owners at scrape time, to turn totals into increments.
    final class CollectedCounters: Sendable {
        let values = Mutex<[String: Double]>([:])

        /// The increase of `name` since the last call.
        func delta(_ name: String, _ total: Double) -> Double {
            values.withLock { values in
                defer { values[name] = total }
                return max(0, total - (values[name] ?? 0))
            }
        }
    }

    /// Brings the scrape-time metrics up to date: cache sizes and evictions, disk write failures,
    /// libvips memory, process figures.
    public func collectMetrics() async {
        let memoryUsage = memoryCache.usage
        let diskUsage = await diskCache.usage()
        metrics.cacheBytes["memory"]?.set(Double(memoryUsage.bytes))
        metrics.cacheEntries["memory"]?.set(Double(memoryUsage.entries))
        metrics.cacheBytes["disk"]?.set(Double(diskUsage.bytes))
        metrics.cacheCapacity["memory"]?.set(Double(memoryCache.capacityBytes))
        metrics.cacheCapacity["disk"]?.set(Double(diskCache.capacityBytes))
        metrics.memoryLimit.set(ProcessStatistics.memoryLimitBytes() ?? 0)
        metrics.cacheEntries["disk"]?.set(Double(diskUsage.entries))
        metrics.cacheEvictions["memory"]?.increment(by: collected.delta("memory_evictions", Double(memoryCache.evictions)))
        metrics.cacheEvictions["disk"]?.increment(by: collected.delta("disk_evictions", Double(diskCache.evictions)))
        metrics.cachePendingWriteBytes.set(Double(diskCache.pendingWriteBytes))
        metrics.cacheWriteFailures.increment(by: collected.delta("write_failures", Double(diskCache.writeFailures)))
        metrics.logLinesDropped.increment(by: collected.delta("log_dropped", Double(LogLineWriter.standardError.droppedLines)))
        let vips = Vips.trackedMemory
        metrics.vipsMemory.set(Double(vips.current))
        metrics.vipsMemoryHighWater.set(Double(vips.highWater))
        let malloc = Vips.mallocStatistics
        metrics.mallocInUse.set(Double(malloc.inUse))
        metrics.mallocFree.set(Double(malloc.freeInHeaps))
        if let process = ProcessStatistics.current() {
            metrics.residentMemory.set(process.residentMemoryBytes)
            metrics.cpuSeconds.increment(by: collected.delta("cpu", process.cpuSeconds))
            metrics.openFileDescriptors.set(process.openFileDescriptors)
            metrics.startTime.set(process.startTimeSeconds)
        }
    }
}
