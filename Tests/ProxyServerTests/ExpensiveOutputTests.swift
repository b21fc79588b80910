import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer

/// Issue #56's table through the real server: one large JPEG, the expensive outputs an attacker would ask
/// for, one at a time. Each answers a 422 before any work or within the per-request CPU budget, and none is
/// a 503 after the work.
@Suite(.timeLimit(.minutes(3))) struct ExpensiveOutputTests {
    static let source = try! TestImages.jpeg(TestImages.photo(width: 4096, height: 4096), progressive: false, subsample: true, keepMetadata: false)

    @Test func everyExpensiveRowAnswersWithinTheBudgetOrBeforeTheWork() async throws {
        try await withFixtures(["/big.jpg": .jpeg(Self.source)], configure: {
            $0.image.transformer.maxTransformMilliseconds = 20_000
            $0.fetch.maxSourceBytes = 32 << 20
        }) { proxy, base, _ in
            // The source downloaded once, so that the rows time only their transforms.
            #expect(try await proxy.image([("url", base + "/big.jpg"), ("w", "64")]).status == .ok)
            let limit = ImageTransformer.Settings().maxTransformCpuMilliseconds
            let rows: [(query: [(String, String)], refused: String?)] = [
                ([("w", "4096"), ("format", "avif")], "at most 4194304 pixels"),
                ([("w", "4096"), ("format", "avif"), ("max_bytes", "1024")], "at most 4194304 pixels"),
                ([("w", "4096"), ("format", "webp"), ("max_bytes", "1024")], "image.maxTransformCpuMs"),
                ([("w", "2048"), ("format", "jxl"), ("max_bytes", "1024")], nil),
                ([("w", "4096"), ("format", "jpeg"), ("max_bytes", "1024")], nil),
            ]
            for row in rows {
                let described = row.query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
                let cpuBefore = HostileSourceTests.processCPUSeconds()
                let started = ContinuousClock.now
                let response = try await proxy.image([("url", base + "/big.jpg")] + row.query)
                let elapsed = ContinuousClock.now - started
                let cpu = HostileSourceTests.processCPUSeconds() - cpuBefore
                if let refused = row.refused {
                    #expect(response.status == .unprocessableContent && response.text.contains(refused), "\(described): \(response.status) \(response.text)")
                    #expect(elapsed < .seconds(1), "\(described): refused after \(elapsed), not before the work")
                } else {
                    #expect(response.status == .ok, "\(described): \(response.status) \(response.text)")
                    let timing = response.headers[.serverTiming] ?? ""
                    #expect(timing.contains("over-max-bytes"), "\(described): the smallest encoding, marked: \(timing)")
                    #expect(cpu * 1000 < Double(limit), "\(described): \(cpu) CPU-s")
                }
            }
        }
    }

    /// A variant that failed for a limit is remembered: its replay costs no transform (issue #56), and a
    /// purge of the source forgets it.
    @Test func aReplayOfAVariantThatFailedForALimitCostsNoWork() async throws {
        try await withFixturesAndRuntime(["/big.jpg": .jpeg(Self.source)], configure: {
            $0.image.transformer.maxTransformMilliseconds = 1
            $0.fetch.maxSourceBytes = 32 << 20
            $0.cache.adminToken = "failures"
        }) { runtime, base in
            let port = try #require(runtime.listeningPort.value)
            let source = (base + "/big.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let path = "/img?url=\(source)&w=3000&format=webp"
            let first = try await httpRequest(port: port, path: path)
            #expect(first.status == 503, "the 1 ms deadline stops the transform: \(first.status)")
            #expect(runtime.pipeline.transformFailures.count == 1)
            let cpuBefore = HostileSourceTests.processCPUSeconds()
            let started = ContinuousClock.now
            let replay = try await httpRequest(port: port, path: path)
            #expect(replay.status == 503 && String(decoding: replay.body, as: UTF8.self).contains("longer than 1 ms"))
            #expect(ContinuousClock.now - started < .milliseconds(500), "answered from memory")
            #expect(HostileSourceTests.processCPUSeconds() - cpuBefore < 0.2, "no transform ran again")
            let purge = try await httpRequest(port: port, path: "/cache?url=\(source)", method: "DELETE", headers: ["Authorization": "Bearer failures"])
            #expect(purge.status == 200)
            #expect(runtime.pipeline.transformFailures.count == 0, "a purge of the source forgets its failures")
        }
    }
}
