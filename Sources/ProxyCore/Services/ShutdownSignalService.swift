import Foundation
import ImageCore
import Logging
import ProxyEngine
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Owns SIGTERM/SIGINT: the first marks the service not ready at once, waits the drain delay, then
/// shuts the service group down gracefully (the HTTP server stops accepting and drains); a second
/// signal, or the end of the grace period, exits the process at once with status 143.
///
/// List it first in the group, so that it is stopped last.
public final class ShutdownSignalService: Service, Sendable {
    private let readiness: Readiness
    private let settings: ProxyConfiguration.Shutdown
    private let logger: Logger
    private let group = Mutex<ServiceGroup?>(nil)

    /// Exit status when shutdown is forced (128 + SIGTERM).
    public static let forcedExitStatus: Int32 = 143

    public init(readiness: Readiness, settings: ProxyConfiguration.Shutdown, logger: Logger) {
        self.readiness = readiness
        self.settings = settings
        self.logger = logger
    }

    /// The group to shut down on the first signal.
    public func attach(to group: ServiceGroup) {
        self.group.withLock { $0 = group }
    }

    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        await cancelWhenGracefulShutdown {
            var received = 0
            for await signal in signals {
                received += 1
                if received == 1 {
                    self.beginShutdown(signal: signal)
                } else {
                    self.logger.warning("second shutdown signal, exiting now", metadata: ["signal": "\(signal)"])
                    _exit(Self.forcedExitStatus)
                }
            }
        }
    }

    private func beginShutdown(signal: UnixSignal) {
        readiness.markShuttingDown()
        logger.info(
            "shutdown signal, draining",
            metadata: [
                "signal": "\(signal)", "drain_delay_ms": "\(settings.drainDelayMilliseconds)",
                "grace_period_ms": "\(settings.gracePeriodMilliseconds)",
            ])
        let grace = settings.gracePeriodMilliseconds
        let logger = self.logger
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: Double(grace) / 1000)
            logger.warning("grace period over, exiting now")
            _exit(Self.forcedExitStatus)
        }
        let drain = settings.drainDelayMilliseconds
        let group = self.group.withLock { $0 }
        Task {
            try? await Task.sleep(for: .milliseconds(drain))
            await group?.triggerGracefulShutdown()
        }
    }
}
