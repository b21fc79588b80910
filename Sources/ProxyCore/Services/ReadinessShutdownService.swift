import ServiceLifecycle

/// Flips ``Readiness`` to "shutting down" the moment graceful shutdown begins.
///
/// Place it last in the service group, so that it is told first, before the HTTP server drains.
public struct ReadinessShutdownService: Service {
    let readiness: Readiness

    public init(readiness: Readiness) {
        self.readiness = readiness
    }

    public func run() async throws {
        try? await gracefulShutdown()
        readiness.markShuttingDown()
    }
}
