import ImageCore
import ProxyEngine
import Synchronization

/// The last hour of answers for the status page, its charts and its five-minute figures: answers are
/// counted into the open interval as they complete (one short lock, fixed-size counters);
/// ``close(at:queueDepth:residentBytes:)`` (called by ``StatusSamplerService`` every
/// `status.sampleSeconds`) turns the interval into a ``StatusSample``.
public final class StatusHistory: Sendable {
    /// The open interval's counters.
    struct Accumulator {
        var answersByClass = [0, 0, 0, 0]
        var latency = LatencyHistogram()
        var cacheHits = 0
        var cacheLookups = 0
    }

    private struct State {
        var open = Accumulator()
        var openedAt: Double
        var ring: StatusSampleRing
    }

    private let state: Mutex<State>
    /// Seconds per sample.
    public let interval: Double

    /// - Parameters:
    ///   - interval: seconds per sample.
    ///   - span: how many seconds of samples are kept (an hour by default).
    ///   - now: the start of the first interval.
    public init(interval: Double, span: Double = 3600, now: Double) {
        self.interval = interval
        let capacity = max(1, Int((span / interval).rounded(.up)))
        state = Mutex(State(openedAt: now, ring: StatusSampleRing(capacity: capacity)))
    }

    /// Counts one answer. `cacheTier` is where an image answer came from (`memory`, `disk`, `miss`),
    /// anything else for answers that looked up no cache.
    public func record(status: Int, seconds: Double, cacheTier: String) {
        let classIndex = StatusSample.classIndex(of: status)
        let lookedUp = cacheTier == "memory" || cacheTier == "disk" || cacheTier == "miss"
        let hit = lookedUp && cacheTier != "miss"
        state.withLock { state in
            state.open.answersByClass[classIndex] += 1
            state.open.latency.record(seconds)
            if lookedUp { state.open.cacheLookups += 1 }
            if hit { state.open.cacheHits += 1 }
        }
    }

    /// Closes the open interval at `now` with the gauges read then; returns the sample.
    @discardableResult
    public func close(at now: Double, queueDepth: Int, residentBytes: Double) -> StatusSample {
        state.withLock { state in
            let open = state.open
            let sample = StatusSample(
                time: now, interval: max(0.001, now - state.openedAt), answersByClass: open.answersByClass,
                p50: open.latency.percentile(0.5), p99: open.latency.percentile(0.99),
                hitRatio: open.cacheLookups > 0 ? Double(open.cacheHits) / Double(open.cacheLookups) : nil,
                queueDepth: queueDepth, residentBytes: residentBytes, latency: open.latency)
            state.ring.append(sample)
            state.open = Accumulator()
            state.openedAt = now
            return sample
        }
    }

    /// The kept samples, oldest first.
    public var samples: [StatusSample] { state.withLock { $0.ring.samples } }

    /// Answers over the last `window` seconds (the samples that ended within it and the open interval).
    public struct Summary: Sendable, Equatable {
        public var requests: Int
        public var perSecond: Double
        /// Percentiles in seconds (upper bounds of ``LatencyHistogram`` bins), 0 without answers.
        public var p50: Double
        public var p95: Double
        public var p99: Double
        /// Answers with a status of 400 or more.
        public var errors: Int
    }

    public func summary(window: Double, now: Double) -> Summary {
        let (classes, latency) = state.withLock { state -> ([Int], LatencyHistogram) in
            var classes = state.open.answersByClass
            var latency = state.open.latency
            for sample in state.ring.samples where sample.time > now - window {
                for index in classes.indices { classes[index] += sample.answersByClass[index] }
                latency.merge(sample.latency)
            }
            return (classes, latency)
        }
        let requests = classes.reduce(0, +)
        return Summary(
            requests: requests, perSecond: Double(requests) / window, p50: latency.percentile(0.5) ?? 0,
            p95: latency.percentile(0.95) ?? 0, p99: latency.percentile(0.99) ?? 0, errors: classes[2] + classes[3])
    }
}
