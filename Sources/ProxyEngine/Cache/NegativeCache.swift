import Foundation
import ImageCore
import Synchronization

/// Remembers origin failures for a short while, so a missing or failing source is not fetched again
/// on every request: 404/410 for `negativeTTL`, other failures (after their retries) for `errorTTL`.
/// Bounded: when full, the entry closest to expiry gives way.
public final class NegativeCache: Sendable {
    private struct Remembered {
        var error: FetchError
        var expiresAt: Double
    }

    private let entries = Mutex<[String: Remembered]>([:])
    private let negativeTTL: Double
    private let errorTTL: Double
    private let capacity: Int

    /// How long failures are remembered, with the service's defaults.
    public struct Settings: Sendable, Equatable {
        /// Seconds an origin 404 or 410 is remembered. Default 60.
        public var negativeTTL = 60
        /// Seconds another origin failure (5xx, timeout, unreachable), after its retries, is remembered.
        /// Default 5.
        public var errorTTL = 5
        /// Sources remembered at most. Default 10000.
        public var capacity = 10_000

        /// The defaults.
        public init() {}
    }

    /// An empty memory of failures as `settings` say.
    public convenience init(settings: Settings) {
        self.init(negativeTTL: settings.negativeTTL, errorTTL: settings.errorTTL, capacity: settings.capacity)
    }

    /// An empty memory of failures.
    public init(negativeTTL: Int, errorTTL: Int, capacity: Int = 10_000) {
        self.negativeTTL = Double(negativeTTL)
        self.errorTTL = Double(errorTTL)
        self.capacity = capacity
    }

    /// Remembers `error` for `sourceKey` (client errors other than 404/410 are not remembered).
    public func remember(_ error: FetchError, for sourceKey: String, now: Double = Date().timeIntervalSince1970) {
        let ttl: Double
        switch error {
        case .notFound: ttl = negativeTTL
        case .originFailure, .originServerError, .originUnreachable, .timeout, .accessDenied: ttl = errorTTL
        case .refused, .tooLarge: return
        }
        guard ttl > 0 else { return }
        entries.withLock { entries in
            if entries.count >= capacity, entries[sourceKey] == nil,
                let soonest = entries.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key
            {
                entries.removeValue(forKey: soonest)
            }
            entries[sourceKey] = Remembered(error: error, expiresAt: now + ttl)
        }
    }

    /// The remembered error and its seconds left, if any.
    public func recall(_ sourceKey: String, now: Double = Date().timeIntervalSince1970) -> (error: FetchError, remaining: Int)? {
        entries.withLock { entries in
            guard let remembered = entries[sourceKey] else { return nil }
            guard remembered.expiresAt > now else {
                entries.removeValue(forKey: sourceKey)
                return nil
            }
            return (remembered.error, Int((remembered.expiresAt - now).rounded(.up)))
        }
    }

    /// Forgets every remembered failure (purge of everything).
    public func forgetAll() {
        entries.withLock { $0.removeAll() }
    }

    /// Forgets a source (purge).
    public func forget(_ sourceKey: String) {
        _ = entries.withLock { $0.removeValue(forKey: sourceKey) }
    }
}
