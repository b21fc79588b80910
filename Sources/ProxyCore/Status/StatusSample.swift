import ImageCore
import ProxyEngine

/// One interval of the status page's history: what was answered and how the process looked at its end.
public struct StatusSample: Sendable, Equatable {
    /// The end of the interval (seconds since 1970).
    public var time: Double
    /// The interval's length in seconds.
    public var interval: Double
    /// Answers per status class in the interval: index 0 is 1xx/2xx, then 3xx, 4xx, 5xx.
    public var answersByClass: [Int]
    /// Median and 99th percentile request duration (seconds); nil when nothing was answered.
    public var p50: Double?
    public var p99: Double?
    /// Image answers served from the memory or disk cache over those looked up; nil without lookups.
    public var hitRatio: Double?
    /// Jobs waiting in the download and transform queues when the interval closed.
    public var queueDepth: Int
    /// The process's resident memory when the interval closed.
    public var residentBytes: Double
    /// Every answer's duration in the interval (for percentiles over several intervals).
    public var latency = LatencyHistogram()

    /// The status classes' names, in the order of ``answersByClass``.
    public static let classNames = ["2xx", "3xx", "4xx", "5xx"]

    /// Answers per second of one class.
    public func rate(ofClass index: Int) -> Double {
        interval > 0 ? Double(answersByClass[index]) / interval : 0
    }

    /// The index into ``answersByClass`` for an HTTP status.
    public static func classIndex(of status: Int) -> Int {
        switch status {
        case ..<300: 0
        case 300..<400: 1
        case 400..<500: 2
        default: 3
        }
    }
}
