import Foundation
import ImageCore
import ProxyEngine

/// Request durations counted in logarithmic bins (four per doubling, 0.1 ms to ~90 s), so that an interval's
/// percentiles cost a fixed 80 counters however many requests it saw. A percentile is reported as the upper
/// bound of its bin: at most 19% above the true value, which is what a chart needs.
public struct LatencyHistogram: Sendable, Equatable {
    /// The upper bound of the first bin, in seconds.
    static let smallest = 0.000_1
    /// Bins per doubling of the duration.
    static let binsPerDoubling = 4.0
    static let binCount = 80

    private(set) var counts = [Int](repeating: 0, count: binCount)
    /// How many durations were recorded.
    public private(set) var total = 0

    public init() {}

    /// Counts one duration (seconds).
    public mutating func record(_ seconds: Double) {
        counts[Self.bin(of: seconds)] += 1
        total += 1
    }

    /// Adds another histogram's counts (several intervals seen as one).
    public mutating func merge(_ other: LatencyHistogram) {
        for bin in counts.indices { counts[bin] += other.counts[bin] }
        total += other.total
    }

    /// The duration below which `fraction` (0...1) of the recorded ones lie; nil when none was recorded.
    public func percentile(_ fraction: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = max(1, Int((Double(total) * fraction).rounded(.up)))
        var seen = 0
        for (bin, count) in counts.enumerated() {
            seen += count
            if seen >= rank { return Self.upperBound(of: bin) }
        }
        return Self.upperBound(of: Self.binCount - 1)
    }

    static func bin(of seconds: Double) -> Int {
        guard seconds > smallest else { return 0 }
        let bin = Int((log2(seconds / smallest) * binsPerDoubling).rounded(.up))
        return min(binCount - 1, bin)
    }

    static func upperBound(of bin: Int) -> Double {
        smallest * exp2(Double(bin) / binsPerDoubling)
    }
}
