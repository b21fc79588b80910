import ImageCore
import Prometheus
import Synchronization

/// Every metric the service exports, named in one place, created once, with label values from
/// bounded sets (routes, status codes, tiers, stages, formats, reasons; never a URL).
///
/// Each runtime owns one ``PrometheusCollectorRegistry``; `GET /metrics` emits it. The executable
/// also bootstraps swift-metrics with the same registry so libraries' metrics land there too.
public final class ProxyMetrics: Sendable {
    /// The registry `GET /metrics` emits.
    public let registry: PrometheusCollectorRegistry

    /// Pipeline stages with queues.
    public enum Stage: String, Sendable, CaseIterable {
        case fetch, transform
    }

    /// Jobs waiting and running per stage, for the status page.
    private let stageCounts = Mutex<[Stage: (waiting: Int, running: Int)]>([:])

    /// Jobs waiting and running in `stage` now.
    public func stageCounts(_ stage: Stage) -> (waiting: Int, running: Int) {
        stageCounts.withLock { $0[stage] ?? (0, 0) }
    }

    static let durationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .seconds(2.5), .seconds(5), .seconds(10), .seconds(30),
    ]
    static let byteBuckets: [Double] = [1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216]

    private let requestCounters = Mutex<[String: Counter]>([:])
    private let requestDurations = Mutex<[String: DurationHistogram]>([:])
    private let rejections = Mutex<[String: Counter]>([:])
    private let originResults = Mutex<[String: Counter]>([:])
    private let transformDurations = Mutex<[String: DurationHistogram]>([:])
    private let cacheLookups: [String: Counter]
    public let cacheBytes: [String: Gauge]
    public let cacheEntries: [String: Gauge]
    public let cacheEvictions: [String: Counter]
    public let cacheWriteFailures: Counter
    public let cachePendingWriteBytes: Gauge
    public let logLinesDropped: Counter
    let originDuration: DurationHistogram
    let originBytes: Counter
    let queueDepth: [Stage: Gauge]
    let queueWait: [Stage: DurationHistogram]
    let inflight: [Stage: Gauge]
    let dedupJoins: [Stage: Counter]
    let decodedSourceEvents: [DecodedSourceCache.Event: Counter]
    let outputBytes: ValueHistogram
    public let vipsMemory: Gauge
    public let vipsMemoryHighWater: Gauge
    public let residentMemory: Gauge
    public let mallocInUse: Gauge
    public let mallocFree: Gauge
    public let cacheCapacity: [String: Gauge]
    public let memoryLimit: Gauge
    public let cpuSeconds: Counter
    /// Shared tier reads by result: hit, miss, error (failed, timed out, damaged), skipped (breaker open).
    let sharedReads: [String: Counter]
    /// Shared tier writes by result: ok, error, dropped (the bounded write queue was full).
    let sharedWrites: [String: Counter]
    let sharedReadDuration: DurationHistogram
    /// 1 while the shared tier's circuit breaker skips it.
    let sharedBreakerOpen: Gauge
    /// Purges applied from the shared tier's purge log (made through another replica, or this one).
    let sharedPurgesApplied: Counter
    /// Finished spans the trace exporter's queue had no room for (`tracing.queueSize`).
    public let traceSpansDropped: Counter
    /// Batches of spans the collector did not take (down, slow, or answering errors).
    public let traceExportFailures: Counter
    /// Purge-log keys stepped over: not a purge key, unreadable (4xx), or a body that is no source key.
    let sharedPurgeKeysSkipped: Counter
    /// Sets `imageproxy_access_mode{mode}`: 1 for `active`, 0 for the other `modes` (called once, at start).
    public func recordAccessMode(_ active: String, among modes: [String]) {
        for mode in modes {
            let gauge = registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    metricName: "imageproxy_access_mode", unitName: "",
                    helpText: "1 for who may use this deployment: signed, allowlist, signed_allowlist, local_only or open."),
                labels: [("mode", mode)])
            gauge.set(Int64(mode == active ? 1 : 0))
        }
    }

    public let openFileDescriptors: Gauge
    public let startTime: Gauge

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(metricName: metric, unitName: unit, helpText: help)
        }
        var lookups: [String: Counter] = [:]
        for tier in ["memory", "disk"] {
            for result in ["hit", "miss"] {
                lookups["\(tier)|\(result)"] = registry.makeCounter(
                    descriptor: name("imageproxy_cache_lookups", "total", "Cache lookups by tier and result."),
                    labels: [("tier", tier), ("result", result)])
            }
        }
        cacheLookups = lookups
        let tiers = ["memory", "disk"]
        cacheBytes = Dictionary(uniqueKeysWithValues: tiers.map { tier in
            (tier, registry.makeGauge(descriptor: name("imageproxy_cache", "bytes", "Bytes held by a cache tier."), labels: [("tier", tier)]))
        })
        cacheEntries = Dictionary(uniqueKeysWithValues: tiers.map { tier in
            (tier, registry.makeGauge(descriptor: name("imageproxy_cache", "entries", "Entries held by a cache tier."), labels: [("tier", tier)]))
        })
        cacheEvictions = Dictionary(uniqueKeysWithValues: tiers.map { tier in
            (tier, registry.makeCounter(
                descriptor: name("imageproxy_cache_evictions", "total", "Entries evicted from a cache tier to keep its byte budget."),
                labels: [("tier", tier)]))
        })
        cachePendingWriteBytes = registry.makeGauge(
            descriptor: name("imageproxy_cache_pending_write", "bytes", "Bytes held in memory by disk-cache writes not yet done."))
        cacheWriteFailures = registry.makeCounter(
            descriptor: name("imageproxy_cache_write_failures", "total", "Disk cache writes that failed (disk full, read-only)."))
        logLinesDropped = registry.makeCounter(
            descriptor: name("imageproxy_log_lines_dropped", "total", "Log lines dropped because the log writer's buffer was full."))
        originDuration = registry.makeDurationHistogram(
            descriptor: name("imageproxy_origin_duration", "seconds", "Time of origin downloads, retries included."),
            labels: [], buckets: Self.durationBuckets)
        originBytes = registry.makeCounter(descriptor: name("imageproxy_origin_bytes", "total", "Bytes downloaded from origins."))
        queueDepth = Dictionary(uniqueKeysWithValues: Stage.allCases.map { stage in
            (stage, registry.makeGauge(
                descriptor: name("imageproxy_queue", "depth", "Jobs waiting for a slot in a stage."), labels: [("stage", stage.rawValue)]))
        })
        queueWait = Dictionary(uniqueKeysWithValues: Stage.allCases.map { stage in
            (stage, registry.makeDurationHistogram(
                descriptor: name("imageproxy_queue_wait", "seconds", "Time jobs waited for a slot in a stage."),
                labels: [("stage", stage.rawValue)], buckets: Self.durationBuckets))
        })
        inflight = Dictionary(uniqueKeysWithValues: Stage.allCases.map { stage in
            (stage, registry.makeGauge(
                descriptor: name("imageproxy_inflight", "", "Jobs running in a stage now."), labels: [("stage", stage.rawValue)]))
        })
        dedupJoins = Dictionary(uniqueKeysWithValues: Stage.allCases.map { stage in
            (stage, registry.makeCounter(
                descriptor: name("imageproxy_dedup_joins", "total", "Requests that joined identical work already under way."),
                labels: [("stage", stage.rawValue)]))
        })
        outputBytes = registry.makeValueHistogram(
            descriptor: name("imageproxy_output", "bytes", "Size of encoded images produced."), labels: [], buckets: Self.byteBuckets)
        decodedSourceEvents = Dictionary(uniqueKeysWithValues: DecodedSourceCache.Event.allCases.map { event in
            (event, registry.makeCounter(
                descriptor: name(
                    "imageproxy_decoded_sources", "total",
                    "Whole decodes kept for a source's next variants: hit (a variant made from one), kept, dropped (no room)."),
                labels: [("event", event.rawValue)]))
        })
        vipsMemory = registry.makeGauge(descriptor: name("imageproxy_vips_memory", "bytes", "Memory libvips tracks as allocated now."))
        vipsMemoryHighWater = registry.makeGauge(
            descriptor: name("imageproxy_vips_memory_highwater", "bytes", "Most memory libvips has tracked at once since start."))
        residentMemory = registry.makeGauge(descriptor: name("process_resident_memory", "bytes", "Resident memory size in bytes."))
        mallocInUse = registry.makeGauge(
            descriptor: name("imageproxy_malloc_in_use", "bytes", "Bytes in live allocations, as glibc's malloc counts them."))
        mallocFree = registry.makeGauge(
            descriptor: name("imageproxy_malloc_free", "bytes", "Free bytes held inside malloc's heaps (not returned to the kernel)."))
        cacheCapacity = Dictionary(uniqueKeysWithValues: tiers.map { tier in
            (tier, registry.makeGauge(
                descriptor: name("imageproxy_cache_capacity", "bytes", "Byte budget of a cache tier."), labels: [("tier", tier)]))
        })
        memoryLimit = registry.makeGauge(
            descriptor: name("imageproxy_memory_limit", "bytes", "The process's memory limit from its cgroup (0 when unlimited)."))
        cpuSeconds = registry.makeCounter(descriptor: name("process_cpu_seconds", "total", "Total user and system CPU time spent in seconds."))
        sharedReads = Dictionary(uniqueKeysWithValues: ["hit", "miss", "error", "skipped"].map { result in
            (result, registry.makeCounter(
                descriptor: name("imageproxy_shared_tier_reads", "total", "Shared tier lookups by result (hit, miss, error, skipped while its breaker is open)."),
                labels: [("result", result)]))
        })
        sharedWrites = Dictionary(uniqueKeysWithValues: ["ok", "error", "dropped"].map { result in
            (result, registry.makeCounter(
                descriptor: name("imageproxy_shared_tier_writes", "total", "Shared tier writes by result (dropped: the write queue was full)."),
                labels: [("result", result)]))
        })
        sharedReadDuration = registry.makeDurationHistogram(
            descriptor: name("imageproxy_shared_tier_read_duration", "seconds", "Time of shared tier lookups."),
            labels: [], buckets: Self.durationBuckets)
        sharedBreakerOpen = registry.makeGauge(
            descriptor: name("imageproxy_shared_tier_breaker_open", "", "1 while the shared tier is skipped after repeated failures."))
        sharedPurgesApplied = registry.makeCounter(
            descriptor: name("imageproxy_shared_tier_purges_applied", "total", "Purges read from the shared tier's purge log and applied here."))
        sharedPurgeKeysSkipped = registry.makeCounter(
            descriptor: name(
                "imageproxy_shared_tier_purge_keys_skipped", "total",
                "Keys under the shared tier's purge log stepped over: not a purge, unreadable, or naming no source."))
        traceSpansDropped = registry.makeCounter(
            descriptor: name("imageproxy_trace_spans_dropped", "total", "Finished spans dropped because the trace exporter's queue was full."))
        traceExportFailures = registry.makeCounter(
            descriptor: name("imageproxy_trace_export_failures", "total", "Span batches the trace collector did not accept (down, slow or failing)."))
        openFileDescriptors = registry.makeGauge(descriptor: name("process_open", "fds", "Number of open file descriptors."))
        startTime = registry.makeGauge(
            descriptor: name("process_start_time", "seconds", "Start time of the process since unix epoch in seconds."))
        for reason in Self.knownRejectionReasons { _ = rejectionCounter(reason) }
    }

    /// The metric object under `key`, created on first use (label values come from bounded sets, so
    /// each family holds a bounded number of series).
    private func series<Metric>(_ key: String, in cache: borrowing Mutex<[String: Metric]>, make: () -> Metric) -> Metric {
        cache.withLock { existing in
            if let metric = existing[key] { return metric }
            let created = make()
            existing[key] = created
            return created
        }
    }

    /// One answered HTTP request.
    public func recordRequest(route: String, status: Int, cache: String, duration: Duration) {
        requestSeries(route: route, status: status, cache: cache).record(duration)
    }

    /// The request counter and duration histogram of one route, status and cache tier, looked up once
    /// by a hot path (the memory-hit handler) instead of per request.
    public struct RequestSeries: Sendable {
        let counter: Counter
        let durations: DurationHistogram

        /// One answered request that took `duration`.
        public func record(_ duration: Duration) {
            counter.increment()
            durations.record(duration)
        }
    }

    /// The series of requests of `route` answered with `status` from `cache` (created on first use).
    public func requestSeries(route: String, status: Int, cache: String) -> RequestSeries {
        let counter = series("\(route)|\(status)", in: requestCounters) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    metricName: "imageproxy_http_requests", unitName: "total", helpText: "HTTP requests answered, by route and status."),
                labels: [("route", route), ("status", String(status))])
        }
        let durations = series(route + "|" + cache, in: requestDurations) {
            registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(
                    metricName: "imageproxy_http_request_duration", unitName: "seconds",
                    helpText: "Time to answer HTTP requests, by route and the cache tier that answered (memory, disk, miss, none)."),
                labels: [("route", route), ("cache", cache)], buckets: Self.durationBuckets)
        }
        return RequestSeries(counter: counter, durations: durations)
    }

    /// A cache lookup in a tier (memory or disk).
    public func recordLookup(tier: String, hit: Bool) {
        cacheLookups["\(tier)|\(hit ? "hit" : "miss")"]?.increment()
    }

    /// A request refused or failed with a public error reason.
    public func recordRejection(reason: String) {
        rejectionCounter(reason).increment()
    }

    private func rejectionCounter(_ reason: String) -> Counter {
        series(reason, in: rejections) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    metricName: "imageproxy_rejected", unitName: "total", helpText: "Requests answered with an error, by reason."),
                labels: [("reason", reason)])
        }
    }

    /// The rejection reasons every instance exports from its start, at zero: the alert rules and the
    /// dashboard read `imageproxy_rejected_total` (a family that appears only after its first error
    /// shows "no data" on a fresh instance). Other reasons appear when they first happen.
    static let knownRejectionReasons = [
        "bad_overlay", "bad_request", "bad_signature", "client_closed", "crop_outside", "deadline", "faces_unavailable",
        "memory_budget_busy", "not_cached", "origin_failure", "origin_timeout", "output_too_large", "overloaded", "processing_failed",
        "source_not_found", "source_refused", "source_too_large", "too_expensive", "too_many_frames", "too_many_pixels", "too_many_scans",
        "transform_timeout", "undecodable", "unsafe_svg", "unsupported_format",
    ]

    /// One origin download (result: ok, not_modified, or an error reason).
    public func recordOrigin(result: String, duration: Duration, bytes: Int) {
        series(result, in: originResults) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    metricName: "imageproxy_origin_requests", unitName: "total", helpText: "Origin downloads by result."),
                labels: [("result", result)])
        }.increment()
        originDuration.record(duration)
        if bytes > 0 { originBytes.increment(by: Int64(bytes)) }
    }

    /// One transform, by output format, with its encoded size.
    public func recordTransform(format: String, duration: Duration, outputBytes size: Int) {
        series(format, in: transformDurations) {
            registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(
                    metricName: "imageproxy_transform_duration", unitName: "seconds",
                    helpText: "Time to decode, resize, filter and encode, by output format."),
                labels: [("format", format)], buckets: Self.durationBuckets)
        }.record(duration)
        outputBytes.record(Double(size))
    }

    /// A stage's queue changed: `waiting` jobs wait for a slot, `running` hold one; `waited` is the
    /// queue wait of a job that just started, if one did.
    public func recordStage(_ stage: Stage, waiting: Int, running: Int, waited: Duration?) {
        queueDepth[stage]?.set(Int64(waiting))
        inflight[stage]?.set(Int64(running))
        if let waited { queueWait[stage]?.record(waited) }
        stageCounts.withLock { $0[stage] = (waiting, running) }
    }

    /// A request joined identical work under way.
    public func recordDedupJoin(_ stage: Stage) {
        dedupJoins[stage]?.increment()
    }

    /// A kept whole decode was used, kept or dropped (``DecodedSourceCache``).
    public func recordDecodedSource(_ event: DecodedSourceCache.Event) {
        decodedSourceEvents[event]?.increment()
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> String {
        registry.emitToString()
    }
}
