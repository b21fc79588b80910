import ImageCore
import ProxyEngine
import Synchronization

/// Whether the service should receive traffic: caches open and not shutting down.
public final class Readiness: Sendable {
    private let shuttingDown = Atomic<Bool>(false)
    private let cachesOpen = Atomic<Bool>(false)

    public init() {}

    /// Called once the caches are usable.
    public func markCachesOpen() { cachesOpen.store(true, ordering: .releasing) }
    /// Called as soon as shutdown begins; `/ready` answers 503 from then on.
    public func markShuttingDown() { shuttingDown.store(true, ordering: .releasing) }

    /// True when `/ready` should answer 200.
    public var isReady: Bool {
        cachesOpen.load(ordering: .acquiring) && !shuttingDown.load(ordering: .acquiring)
    }
}
