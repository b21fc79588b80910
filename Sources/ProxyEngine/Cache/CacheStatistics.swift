import ImageCore
import Synchronization

/// Lookup counters per tier, for `GET /cache/stats` (and metrics).
public final class CacheStatistics: Sendable {
    private let memoryHits = Atomic<Int>(0)
    private let memoryMisses = Atomic<Int>(0)
    private let diskHits = Atomic<Int>(0)
    private let diskMisses = Atomic<Int>(0)

    public init() {}

    func record(tier: CacheTier, hit: Bool) {
        switch (tier, hit) {
        case (.memory, true): memoryHits.add(1, ordering: .relaxed)
        case (.memory, false): memoryMisses.add(1, ordering: .relaxed)
        case (.disk, true): diskHits.add(1, ordering: .relaxed)
        case (.disk, false): diskMisses.add(1, ordering: .relaxed)
        case (.shared, _), (.miss, _): break  // the shared tier counts in its own metrics
        }
    }

    /// Hits and misses of one tier.
    public func counts(_ tier: CacheTier) -> (hits: Int, misses: Int) {
        switch tier {
        case .memory: (memoryHits.load(ordering: .relaxed), memoryMisses.load(ordering: .relaxed))
        case .disk: (diskHits.load(ordering: .relaxed), diskMisses.load(ordering: .relaxed))
        case .shared, .miss: (0, 0)
        }
    }
}
