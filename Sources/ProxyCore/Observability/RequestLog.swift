import Foundation
import ImageCore
import ProxyEngine
import Synchronization

/// A rolling record of recent requests for the status page: rate and latency percentiles over the last
/// minutes, and the last errors. Bounded: at most `capacity` samples and `errorCapacity` errors.
public final class RequestLog: Sendable {
    /// One answered request.
    public struct Sample: Sendable {
        public var time: Double
        public var route: String
        public var status: Int
        public var duration: Double
    }

    /// One error answer.
    public struct ErrorRecord: Sendable {
        public var time: Double
        public var route: String
        public var status: Int
        public var reason: String
        public var requestID: String
    }

    private struct State {
        var samples: [Sample] = []
        var next = 0
        var errors: [ErrorRecord] = []
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let errorCapacity: Int

    public init(capacity: Int = 20_000, errorCapacity: Int = 20) {
        self.capacity = capacity
        self.errorCapacity = errorCapacity
    }

    public func record(_ sample: Sample) {
        state.withLock { state in
            if state.samples.count < capacity {
                state.samples.append(sample)
            } else {
                state.samples[state.next] = sample
                state.next = (state.next + 1) % capacity
            }
        }
    }

    public func recordError(_ error: ErrorRecord) {
        state.withLock { state in
            state.errors.append(error)
            if state.errors.count > errorCapacity { state.errors.removeFirst(state.errors.count - errorCapacity) }
        }
    }

    /// Request rate and latency percentiles over the last `window` seconds.
    public struct Summary: Sendable, Equatable {
        public var requests: Int
        public var perSecond: Double
        public var p50: Double
        public var p95: Double
        public var p99: Double
        public var errors: Int
    }

    public func summary(window: Double = 300, now: Double = Date().timeIntervalSince1970) -> Summary {
        let recent = state.withLock { $0.samples.filter { $0.time >= now - window } }
        let durations = recent.map(\.duration).sorted()
        func percentile(_ fraction: Double) -> Double {
            durations.isEmpty ? 0 : durations[min(durations.count - 1, Int(Double(durations.count) * fraction))]
        }
        return Summary(
            requests: recent.count, perSecond: Double(recent.count) / window, p50: percentile(0.5), p95: percentile(0.95),
            p99: percentile(0.99), errors: recent.filter { $0.status >= 400 }.count)
    }

    /// The last errors, newest first.
    public var lastErrors: [ErrorRecord] { state.withLock { $0.errors.reversed() } }
}
