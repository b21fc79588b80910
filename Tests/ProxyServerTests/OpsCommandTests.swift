import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import TestSupport

@testable import ProxyServer
@testable import ImageCore
@testable import ProxyEngine

/// The ops commands of the real binary against a real running instance: `cache stats`, `cache purge`,
/// `status` and `probe`, with clear errors for a stopped instance and a missing or wrong token.
@Suite(.timeLimit(.minutes(2))) struct OpsCommandTests {
    /// Runs the executable with `arguments`; returns its exit status and everything it printed.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        try runToCompletion(ServiceProcess.executableURL, arguments, environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
    }

    @Test func aStoppedInstanceIsNamedAsSuch() async throws {
        let status = try await Self.run(["status", "--server", "http://127.0.0.1:1"])
        #expect(status.status != 0)
        #expect(status.output.contains("cannot reach ImageProxy at http://127.0.0.1:1 (connection refused)"), "\(status.output)")
        let probe = try await Self.run(["probe", "http://127.0.0.1:1/health"])
        #expect(probe.status != 0)
        #expect(probe.output.contains("cannot reach ImageProxy") && !probe.output.contains("origin"), "\(probe.output)")
        let stats = try await Self.run(["cache", "stats", "--server", "http://127.0.0.1:1"], environment: ["IMAGEPROXY_CACHE_ADMIN_TOKEN": "x"])
        #expect(stats.status != 0 && stats.output.contains("cannot reach ImageProxy"), "\(stats.output)")
    }

    @Test func cacheStatsPurgeAndStatusAgainstARunningInstance() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imageproxy-ops-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let service = try await ServiceProcess(environment: ["IMAGEPROXY_CACHE_ADMIN_TOKEN": "t0k", "IMAGEPROXY_CACHE_DIR": folder])
        let server = "http://127.0.0.1:\(service.port)"
        let token = ["IMAGEPROXY_CACHE_ADMIN_TOKEN": "t0k"]

        let stats = try await Self.run(["cache", "stats", "--server", server], environment: token)
        #expect(stats.status == 0, "\(stats.output)")
        #expect(stats.output.contains("memory") && stats.output.contains("disk") && stats.output.contains("MiB"), "\(stats.output)")

        let wrong = try await Self.run(["cache", "stats", "--server", server], environment: ["IMAGEPROXY_CACHE_ADMIN_TOKEN": "nope"])
        #expect(wrong.status != 0 && wrong.output.contains("refused the admin token (401)"), "\(wrong.output)")
        let missing = try await Self.run(["cache", "stats", "--server", server])
        #expect(missing.status != 0 && missing.output.contains("set IMAGEPROXY_CACHE_ADMIN_TOKEN"), "\(missing.output)")

        let purge = try await Self.run(["cache", "purge", "--server", server, "--url", "https://example.com/a.jpg"], environment: token)
        #expect(purge.status == 0 && purge.output.contains("purged 0 entries"), "\(purge.output)")
        let all = try await Self.run(["cache", "purge", "--server", server, "--all"], environment: token)
        #expect(all.status == 0 && all.output.contains("purged"), "\(all.output)")
        let neither = try await Self.run(["cache", "purge", "--server", server], environment: token)
        #expect(neither.status != 0 && neither.output.contains("--url SOURCE or --all"), "\(neither.output)")

        let status = try await Self.run(["status", "--server", server], environment: token)
        #expect(status.status == 0, "\(status.output)")
        for line in ["health     ok", "ready      yes", "requests", "RSS", "memory"] {
            #expect(status.output.contains(line), "\(line) in \(status.output)")
        }
        let probe = try await Self.run(["probe", server + "/health"])
        #expect(probe.status == 0 && probe.output.contains("ok"))
        service.signal(SIGTERM)
        _ = await service.waitForExit(timeout: .seconds(10))
    }
}

@Suite(.timeLimit(.minutes(1))) struct PurgeAllTests {
    @Test func purgeAllEmptiesBothTiers() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        try await withFixturesAndRuntime(["/p.jpg": .image(photo)], configure: { $0.cache.adminToken = "t" }) { runtime, base in
            let port = runtime.listeningPort.value
            let path = "/img?url=\(StatusPage.percentEncode(base + "/p.jpg"))"
            for width in [40, 60] { _ = try await httpRequest(port: port, path: path + "&w=\(width)") }
            await runtime.diskCache.waitForPendingWrites()
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/cache?all=1")!)
            request.httpMethod = "DELETE"
            request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
            let (data, _) = try await URLSession.shared.data(for: request)
            let purged = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Int])["purged"] ?? 0
            #expect(purged >= 4, "two variants in memory and on disk: \(purged)")
            #expect(runtime.memoryCache.usage.entries == 0)
            #expect(await runtime.diskCache.usage().entries == 0)
            let again = try await httpRequest(port: port, path: path + "&w=40")
            #expect(again.headers["x-cache"] == "miss")
        }
    }
}
