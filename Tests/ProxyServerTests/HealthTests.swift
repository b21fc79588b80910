import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing

@testable import ImageCore
@testable import ProxyEngine

@Suite(.timeLimit(.minutes(2))) struct HealthTests {
    @Test func healthRunsTheLibvipsSelfCheckAndReadyReportsReadiness() async throws {
        try await withOriginAndProxy { proxy, _, _ in
            let health = try await proxy.execute(uri: "/health", method: .get, headers: [:], body: nil)
            #expect(health.status == .ok)
            #expect(health.text == "ok\n")
            let ready = try await proxy.execute(uri: "/ready", method: .get, headers: [:], body: nil)
            #expect(ready.status == .ok)
            let unknown = try await proxy.execute(uri: "/nope", method: .get, headers: [:], body: nil)
            #expect(unknown.status == .notFound)
        }
    }

    @Test func readinessTurnsOffAtShutdown() {
        let readiness = Readiness()
        #expect(!readiness.isReady)
        readiness.markCachesOpen()
        #expect(readiness.isReady)
        readiness.markShuttingDown()
        #expect(!readiness.isReady)
    }
}
