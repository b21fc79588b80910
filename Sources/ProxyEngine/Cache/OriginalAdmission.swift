import ImageCore
import Synchronization

/// Which downloaded originals are written to the disk cache (`cache.storeOriginals`).
///
/// Originals let later variants of a source skip the origin, but they are large: under traffic where
/// most sources are asked for once (feeds, user uploads), writing each one costs disk bandwidth and
/// CPU and pushes useful entries out. `repeat` admits an original only when its source is downloaded a
/// second time within the recent past (a "doorkeeper" of the last `window` sources, as in TinyLFU).
public final class OriginalAdmission: Sendable {
    /// The policy, by configuration name.
    public enum Policy: String, Sendable, CaseIterable {
        /// Every storable original.
        case always
        /// Only originals of sources seen before (second download within the window).
        case `repeat`
        /// None: only variants are stored.
        case never
    }

    private let policy: Policy
    private let window: Int
    private let seen = Mutex<Set<Int>>([])

    /// - Parameter window: sources remembered at most (about 40 bytes each); forgotten all at once when full.
    public init(policy: Policy, window: Int = 100_000) {
        self.policy = policy
        self.window = max(1, window)
    }

    /// Whether the original of `sourceKey`, just downloaded, goes to disk; remembers the source.
    public func admits(_ sourceKey: String) -> Bool {
        switch policy {
        case .always: return true
        case .never: return false
        case .repeat:
            let hash = sourceKey.hashValue
            return seen.withLock { seen in
                if seen.contains(hash) { return true }
                if seen.count >= window { seen.removeAll(keepingCapacity: true) }
                seen.insert(hash)
                return false
            }
        }
    }
}
