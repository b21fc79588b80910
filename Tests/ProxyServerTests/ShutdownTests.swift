import Foundation
import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
import TestSupport
@testable import ImageCore
@testable import ProxyEngine
#endif

/// Graceful shutdown of the real executable.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ShutdownTests {
    private func environment(cache: String, drainMs: Int, graceMs: Int) -> [String: String] {
        [
            "IMAGEPROXY_CACHE_DIR": cache, "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true",
            "IMAGEPROXY_FETCH_TIMEOUT_MS": "10000", "IMAGEPROXY_SHUTDOWN_DRAIN_DELAY_MS": "\(drainMs)",
            "IMAGEPROXY_SHUTDOWN_GRACE_PERIOD_MS": "\(graceMs)", "IMAGEPROXY_LOG_LEVEL": "info",
        ]
    }

    @Test func sigtermDrainsInFlightRequestsThenExitsZero() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-shutdown-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await TestOrigin().makeApplication().test(.live) { origin in
            let service = try await ServiceProcess(environment: environment(cache: cache, drainMs: 1000, graceMs: 15000))
            let port = service.port
            #expect(try await httpGet(port: port, path: "/ready").status == 200)

            let slowPath = "/img?url=http://127.0.0.1:\(origin.port!)/slow&w="
            let slow = (1...3).map { index in
                Task { try await httpGet(port: port, path: slowPath + "\(100 + index)") }
            }
            try await Task.sleep(for: .milliseconds(500))
            let signalled = ContinuousClock.now
            service.signal(SIGTERM)
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await httpGet(port: port, path: "/ready").status == 503, "/ready turns 503 at once")

            try await Task.sleep(for: .milliseconds(1500))
            #expect(!canConnect(port: port), "the listener is closed after the drain delay")

            for request in slow {
                let (status, body) = try await request.value
                #expect(status == 200)
                #expect(SourceFormat(sniffing: [UInt8](body)) == .jpeg)
            }
            let status = await service.waitForExit(timeout: .seconds(15))
            #expect(status == 0)
            #expect(ContinuousClock.now - signalled < .seconds(15))
        }
    }

    @Test func secondSigtermExitsAtOnce() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-shutdown-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await TestOrigin().makeApplication().test(.live) { origin in
            let service = try await ServiceProcess(environment: environment(cache: cache, drainMs: 5000, graceMs: 60000))
            let slow = Task { try? await httpGet(port: service.port, path: "/img?url=http://127.0.0.1:\(origin.port!)/slow&w=10") }
            try await Task.sleep(for: .milliseconds(300))
            service.signal(SIGTERM)
            try await Task.sleep(for: .milliseconds(200))
            service.signal(SIGTERM)
            let status = await service.waitForExit(timeout: .seconds(2))
            #expect(status == ShutdownSignalService.forcedExitStatus)
            _ = await slow.value  // the connection dies with the process (URLSession task cancel can deadlock)
        }
    }

    @Test func gracePeriodBoundsTheDrain() async throws {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-shutdown-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await TestOrigin().makeApplication().test(.live) { origin in
            let service = try await ServiceProcess(environment: environment(cache: cache, drainMs: 0, graceMs: 500))
            let slow = Task { try? await httpGet(port: service.port, path: "/img?url=http://127.0.0.1:\(origin.port!)/slow&w=10") }
            try await Task.sleep(for: .milliseconds(300))
            service.signal(SIGTERM)
            let status = await service.waitForExit(timeout: .seconds(2))
            #expect(status == ShutdownSignalService.forcedExitStatus)
            _ = await slow.value  // the connection dies with the process (URLSession task cancel can deadlock)
        }
    }

    @Test func malformedConfigurationFailsAtStartWithItsName() async throws {
        do {
            _ = try await ServiceProcess(environment: ["IMAGEPROXY_FETCH_TIMEOUT_MS": "soon"])
            Issue.record("the service started with a malformed setting")
        } catch ServiceProcessError.didNotStart(let output) {
            #expect(output.contains("fetch.timeoutMs"))
            #expect(output.contains("IMAGEPROXY_FETCH_TIMEOUT_MS"))
        }
    }
}
