import Foundation
import ImageCore
import ProxyEngine
import ServiceLifecycle

/// Every `status.sampleSeconds`: closes the status page's open interval with the queue depth and the
/// process's resident memory at that moment.
public struct StatusSamplerService: Service {
    let runtime: ProxyRuntime

    public init(runtime: ProxyRuntime) {
        self.runtime = runtime
    }

    public func run() async throws {
        let runtime = self.runtime
        await runPeriodically(every: .milliseconds(Int64(runtime.statusHistory.interval * 1000))) { runtime.sampleStatus() }
    }
}

extension ProxyRuntime {
    /// Closes the status history's open interval now.
    public func sampleStatus(now: Double = Date().timeIntervalSince1970) {
        let waiting = ProxyMetrics.Stage.allCases.reduce(0) { $0 + metrics.stageCounts($1).waiting }
        statusHistory.close(
            at: now, queueDepth: waiting, residentBytes: ProcessStatistics.current()?.residentMemoryBytes ?? 0)
    }
}
