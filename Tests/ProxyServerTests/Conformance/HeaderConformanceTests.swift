import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// `Vary`, `Cache-Control`, `ETag` and `Content-Type` are the same from every tier (miss, memory hit,
/// disk hit, after a restart, 304), and follow the request and the origin, not the stored entry.
@Suite(.timeLimit(.minutes(3))) struct HeaderConformanceTests {
    static let photo = try! TestImages.jpeg(width: 640, height: 480)

    /// Runs `body` twice against one cache folder: `restart` false, then true (a new process's view).
    private func withRestart(
        _ files: [String: TestOrigin.File], configure: (inout ProxyConfiguration) -> Void = { _ in },
        _ body: @Sendable (_ proxy: any TestClientProtocol, _ base: String, _ origin: TestOrigin, _ restarted: Bool) async throws -> Void
    ) async throws {
        var configuration = testConfiguration()
        configure(&configuration)
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        let origin = TestOrigin(files)
        let final = configuration
        try await origin.run { base in
            try await withProxy(final) { proxy, runtime in
                try await body(proxy, base, origin, false)
                await runtime.diskCache.waitForPendingWrites()
            }
            try await withProxy(final) { proxy, _ in try await body(proxy, base, origin, true) }
        }
    }

    @Test func varyFollowsTheRequestFromEveryTier() async throws {
        try await withRestart(["/photo.jpg": .jpeg(Self.photo)]) { proxy, base, _, restarted in
            let url = base + "/photo.jpg"
            let webp: HTTPFields = [.accept: "image/avif,image/webp,*/*"]
            // Fixed format first (no Vary), then the negotiated request served from the same entry.
            let fixed = try await proxy.image([("url", url), ("w", "211"), ("format", "webp")])
            let negotiated = try await proxy.image([("url", url), ("w", "211")], headers: webp)
            let tier = restarted ? "disk" : "memory"
            #expect(fixed.status == .ok && negotiated.status == .ok)
            #expect(fixed.headers[.vary] == nil, "format=webp does not vary (restarted: \(restarted))")
            #expect(negotiated.headers[.vary] == "Accept", "format=auto varies on Accept from the \(negotiated.headers[.xCacheTier] ?? "?") tier")
            #expect(negotiated.headers[.xCacheTier] == (restarted ? "memory" : "memory"), "one entry for both")
            #expect(fixed.headers[.eTag] == negotiated.headers[.eTag])
            #expect(fixed.headers[.contentType] == "image/webp" && negotiated.headers[.contentType] == "image/webp")
            if restarted { #expect(fixed.headers[.xCacheTier] == tier) }
            // 304s carry Vary too, and the same ETag.
            let etag = try #require(negotiated.headers[.eTag])
            var conditional = webp
            conditional[.ifNoneMatch] = etag
            let notModified = try await proxy.image([("url", url), ("w", "211")], headers: conditional)
            #expect(notModified.status == .notModified)
            #expect(notModified.headers[.vary] == "Accept")
            #expect(notModified.headers[.eTag] == etag)
            let fixedNotModified = try await proxy.image([("url", url), ("w", "211"), ("format", "webp")], headers: [.ifNoneMatch: etag])
            #expect(fixedNotModified.status == .notModified && fixedNotModified.headers[.vary] == nil)
            // Cache-Control from every tier: public with the remaining freshness.
            for response in [fixed, negotiated, notModified] {
                let cacheControl = response.headers[.cacheControl] ?? ""
                #expect(cacheControl.hasPrefix("public, max-age="), "\(cacheControl)")
            }
        }
    }

    @Test func aNegotiatedFirstRequestStillAnswersFixedOnesWithoutVary() async throws {
        try await withRestart(["/photo.jpg": .jpeg(Self.photo)]) { proxy, base, _, restarted in
            let url = base + "/photo.jpg"
            let negotiated = try await proxy.image([("url", url), ("w", "212")], headers: [.accept: "image/webp"])
            let fixed = try await proxy.image([("url", url), ("w", "212"), ("format", "webp")])
            #expect(negotiated.headers[.vary] == "Accept" && fixed.headers[.vary] == nil, "restarted: \(restarted)")
            let plain = try await proxy.image([("url", url), ("w", "212")])
            #expect(plain.headers[.vary] == "Accept" && plain.headers[.contentType] == "image/jpeg")
        }
    }

    @Test func originNoCacheIsRevalidatedBeforeEveryReuse() async throws {
        let files: [String: TestOrigin.File] = [
            "/no-cache.jpg": .image(Self.photo, headers: [("Cache-Control", "no-cache")], etag: "\"v1\""),
            "/no-cache-no-etag.jpg": .image(Self.photo, headers: [("Cache-Control", "public, no-cache")]),
        ]
        try await withFixtures(files, configure: { $0.cache.freshness.minTTL = 60; $0.http.staleWhileRevalidate = 30 }) { proxy, base, origin in
            let url = base + "/no-cache.jpg"
            let first = try await proxy.image([("url", url), ("w", "100")])
            #expect(first.status == .ok)
            #expect(first.headers[.cacheControl] == "public, no-cache", "passed on to clients and CDNs")
            for _ in 0..<3 {
                let again = try await proxy.image([("url", url), ("w", "100")])
                #expect(again.status == .ok && again.headers[.eTag] == first.headers[.eTag])
                #expect(again.headers[.cacheControl] == "public, no-cache")
            }
            #expect(origin.hits.count("conditional:/no-cache.jpg") == 3, "the origin was asked before each reuse")
            #expect(origin.hits.count("/no-cache.jpg") == 1, "and answered 304: one download")
            let conditional = try await proxy.image([("url", url), ("w", "100")], headers: [.ifNoneMatch: first.headers[.eTag]!])
            #expect(conditional.status == .notModified && conditional.headers[.cacheControl] == "public, no-cache")
            #expect(origin.hits.count("conditional:/no-cache.jpg") == 4)

            // Without validators every reuse is a download.
            for _ in 0..<2 { _ = try await proxy.image([("url", base + "/no-cache-no-etag.jpg"), ("w", "100")]) }
            #expect(origin.hits.count("/no-cache-no-etag.jpg") == 2)
        }
    }

    @Test func mustRevalidateIsPassedOnAndNeverServedStale() async throws {
        let files: [String: TestOrigin.File] = [
            "/strict.jpg": .image(Self.photo, headers: [("Cache-Control", "max-age=1, must-revalidate")], etag: "\"s1\""),
            "/proxy-strict.jpg": .image(Self.photo, headers: [("Cache-Control", "max-age=300, proxy-revalidate")]),
        ]
        try await withFixtures(files, configure: { $0.cache.freshness.minTTL = 60; $0.http.staleWhileRevalidate = 30 }) { proxy, base, origin in
            let strict = try await proxy.image([("url", base + "/strict.jpg"), ("w", "100")])
            let cacheControl = strict.headers[.cacheControl] ?? ""
            #expect(cacheControl.hasSuffix(", must-revalidate") && !cacheControl.contains("stale-while-revalidate"), "\(cacheControl)")
            #expect(cacheControl.hasPrefix("public, max-age=0") || cacheControl.hasPrefix("public, max-age=1"), "minTtl does not lengthen it: \(cacheControl)")
            try await Task.sleep(for: .milliseconds(1_200))
            // Stale: only-if-cached may not have it; a normal request revalidates.
            let onlyIfCached = try await proxy.image([("url", base + "/strict.jpg"), ("w", "100")], headers: [.cacheControl: "only-if-cached"])
            #expect(onlyIfCached.status == .gatewayTimeout)
            let again = try await proxy.image([("url", base + "/strict.jpg"), ("w", "100")])
            #expect(again.status == .ok && origin.hits.count("conditional:/strict.jpg") == 1)
            let proxyStrict = try await proxy.image([("url", base + "/proxy-strict.jpg"), ("w", "100")])
            #expect(proxyStrict.headers[.cacheControl]?.hasSuffix("must-revalidate") == true)
        }
    }
}
