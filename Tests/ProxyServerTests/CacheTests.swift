import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import ProxyServer
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// The memory and disk tiers and the HTTP caching rules, against a live counting origin, real SQLite and files.
@Suite(.timeLimit(.minutes(2))) struct CacheTests {
    private let xCache = HTTPField.Name("X-Cache")!

    @Test func restartServesFromDiskAndNewWidthsFromTheStoredOriginal() async throws {
        let configuration = {
            var configuration = testConfiguration()
            configuration.cache.storeOriginals = .always
            return configuration
        }()
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        let origin = TestOrigin()
        try await origin.makeApplication().test(.live) { originClient in
            let url = "http://127.0.0.1:\(originClient.port!)/counted.jpg"
            let first = try await withProxy(configuration) { proxy, _ in
                try await proxy.image([("url", url), ("w", "120")])
            }
            #expect(first.status == .ok)
            #expect(origin.hits.count("/counted.jpg") == 1)

            try await withProxy(configuration) { proxy, runtime in
                let again = try await proxy.image([("url", url), ("w", "120")])
                #expect(again.headers[xCache] == "disk")
                #expect(again.bytes == first.bytes)
                #expect(again.headers[.eTag] == first.headers[.eTag])
                let conditional = try await proxy.image([("url", url), ("w", "120")], headers: [.ifNoneMatch: first.headers[.eTag]!])
                #expect(conditional.status == .notModified)

                let newWidth = try await proxy.image([("url", url), ("w", "64")])
                #expect(newWidth.status == .ok)
                #expect(try VipsImage.decode(newWidth.bytes).width == 64)
                #expect(origin.hits.count("/counted.jpg") == 1, "no origin GET after the restart")
                await runtime.diskCache.waitForPendingWrites()
                let usage = await runtime.diskCache.usage()
                #expect(usage.entries == 3, "one original and two variants")
            }
            // The folder and the index agree: a fresh open finds nothing to repair.
            let reopened = try DiskCache(
                directory: configuration.cache.disk.directory, capacityBytes: 1 << 30, staleRetention: 0,
                logger: .init(label: "t", factory: { _ in SwiftLogNoOpLogHandler() }))
            #expect(reopened.recoveryReport == .init())
            await reopened.shutdown()
        }
    }

    @Test func originalsAreAdmittedToDiskOnTheirSecondDownloadUnderRepeat() async throws {
        try await withOriginAndRuntime(configure: { $0.cache.storeOriginals = .repeat }) { proxy, origin, hits, runtime in
            let url = "\(origin)/counted.jpg"
            let width120 = try await proxy.image([("url", url), ("w", "120")])
            #expect(width120.status == .ok)
            await runtime.diskCache.waitForPendingWrites()
            #expect(await runtime.diskCache.usage().entries == 1, "a first download stores the variant only")
            let width64 = try await proxy.image([("url", url), ("w", "64")])
            #expect(width64.status == .ok)
            #expect(hits.count("/counted.jpg") == 2)
            await runtime.diskCache.waitForPendingWrites()
            #expect(await runtime.diskCache.usage().entries == 3, "the second download stores the original too")
            let width32 = try await proxy.image([("url", url), ("w", "32")])
            #expect(width32.status == .ok)
            #expect(hits.count("/counted.jpg") == 2, "later variants come from the stored original")
        }
        let never = OriginalAdmission(policy: .never)
        #expect(!never.admits("a") && !never.admits("a"))
        let repeating = OriginalAdmission(policy: .repeat, window: 2)
        #expect(!repeating.admits("a") && repeating.admits("a"))
        #expect(!repeating.admits("b") && !repeating.admits("c"), "a full window is forgotten at once")
        #expect(!repeating.admits("a"))
    }

    @Test func originMaxAgeIsHonouredAndRevalidatedWith304() async throws {
        try await withOriginAndProxy { proxy, origin, hits in
            let url = "\(origin)/fresh.jpg"
            let first = try await proxy.image([("url", url), ("w", "80")])
            let maxAge = Int(first.headers[.cacheControl]!.split(separator: "=").last!)!
            #expect(first.headers[.cacheControl]!.hasPrefix("public, max-age="))
            #expect(maxAge <= 2)
            try await Task.sleep(for: .milliseconds(2200))
            let second = try await proxy.image([("url", url), ("w", "80")])
            #expect(second.status == .ok)
            #expect(second.bytes == first.bytes)
            #expect(hits.count("/fresh.jpg") == 2, "one full GET, then one conditional GET")
            #expect(hits.count("conditional:/fresh.jpg") == 1)
            let refreshed = Int(second.headers[.cacheControl]!.split(separator: "=").last!)!
            #expect(refreshed >= 1 && refreshed <= 2, "the 304 refreshed the freshness")
        }
    }

    @Test func staleVariantsWithoutAStoredOriginalAreRevalidatedWithTheirOwnValidators() async throws {
        try await withOriginAndRuntime(configure: { $0.cache.storeOriginals = .repeat }) { proxy, origin, hits, runtime in
            let url = "\(origin)/fresh.jpg"
            let first = try await proxy.image([("url", url), ("w", "80")])
            #expect(first.status == .ok)
            await runtime.diskCache.waitForPendingWrites()
            #expect(await runtime.diskCache.usage().entries == 1, "the variant only: no original is stored")
            try await Task.sleep(for: .milliseconds(2200))

            let revalidated = try await proxy.image([("url", url), ("w", "80")])
            let other = try await proxy.image([("url", url), ("w", "40")])
            #expect(revalidated.status == .ok)
            #expect(revalidated.bytes == first.bytes)
            #expect(revalidated.headers[.eTag] == first.headers[.eTag])
            let maxAge = Int(revalidated.headers[.cacheControl]!.split(separator: "=").last!)!
            #expect(maxAge >= 1 && maxAge <= 2, "the 304 refreshed the variant")
            #expect(other.status == .ok)
            #expect(try VipsImage.decode(other.bytes).width == 40)
            #expect(hits.count("conditional:/fresh.jpg") == 1, "the stale variant's validators made the GET conditional")
            #expect(hits.count("/fresh.jpg") == 3)
            let metrics = try PrometheusText(runtime.metrics.exposition())
            let transforms = metrics.value("imageproxy_transform_duration_seconds_count", ["format": "jpeg"])
            #expect(transforms == 2, "width 80 once and width 40 once: the 304 needed no transform")
        }
    }

    @Test func aNewWidthNeverJoinsAStaleVariantsConditionalRequest() async throws {
        try await withOriginAndRuntime(configure: { $0.cache.storeOriginals = .repeat }) { proxy, origin, hits, runtime in
            let port = runtime.listeningPort.value
            let url = "\(origin)/fresh-slow.jpg"
            #expect(try await proxy.image([("url", url), ("w", "80")]).status == .ok)
            await runtime.diskCache.waitForPendingWrites()
            try await Task.sleep(for: .milliseconds(2200))
            // The stale width-80 variant's conditional GET is in flight (its 304 carries no bytes) ...
            let stale = Task { try await httpGet(port: port, path: "/img?url=\(url)&w=80") }
            #expect(try await eventually { hits.count("conditional:/fresh-slow.jpg") == 1 })
            // ... when a new width of the same source arrives: it needs the bytes, so it downloads them.
            let newWidth = try await proxy.image([("url", url), ("w", "40")])
            #expect(newWidth.status == .ok)
            #expect(try VipsImage.decode(newWidth.bytes).width == 40)
            #expect(try await stale.value.status == 200)
            #expect(hits.count("/fresh-slow.jpg") == 3, "the first GET, the conditional one, and the new width's own")
        }
    }

    @Test func noStoreSourcesAreNotStored() async throws {
        try await withOriginAndProxy { proxy, origin, hits in
            let url = "\(origin)/nostore.jpg"
            let first = try await proxy.image([("url", url), ("w", "50")])
            #expect(first.status == .ok)
            #expect(first.headers[.cacheControl] == "no-store")
            _ = try await proxy.image([("url", url), ("w", "50")])
            #expect(hits.count("/nostore.jpg") == 2)
        }
    }

    @Test func ignoredParametersShareOneEntryAndOnlyIfCachedNeverReachesTheOrigin() async throws {
        try await withOriginAndProxy { proxy, origin, hits in
            let signedA = "\(origin)/presigned.jpg?id=7&X-Amz-Signature=aaa&X-Amz-Date=1"
            let signedB = "\(origin)/presigned.jpg?id=7&X-Amz-Signature=bbb&X-Amz-Date=2"
            let uncached = try await proxy.image([("url", signedA), ("w", "70")], headers: [.cacheControl: "only-if-cached"])
            #expect(uncached.status == .gatewayTimeout)
            #expect(hits.count("/presigned.jpg") == 0)
            let a = try await proxy.image([("url", signedA), ("w", "70")])
            let b = try await proxy.image([("url", signedB), ("w", "70")])
            #expect(a.status == .ok && b.status == .ok)
            #expect(b.headers[xCache] == "memory")
            #expect(hits.count("/presigned.jpg") == 1)
            let cached = try await proxy.image([("url", signedB), ("w", "70")], headers: [.cacheControl: "only-if-cached"])
            #expect(cached.status == .ok)
            let otherId = try await proxy.image(
                [("url", "\(origin)/presigned.jpg?id=8&X-Amz-Signature=aaa"), ("w", "70")], headers: [.cacheControl: "only-if-cached"])
            #expect(otherId.status == .gatewayTimeout, "parameters that are not ignored stay in the key")
            #expect(hits.count("/presigned.jpg") == 1)
        }
    }

    @Test func notFoundIsRememberedAndFailuresAreRetried() async throws {
        try await withOriginAndProxy(configure: { $0.cache.negative.negativeTTL = 30; $0.fetch.retries = 2; $0.fetch.retryBackoffMilliseconds = 10 }) {
            proxy, origin, hits in
            let missing = try await proxy.image([("url", "\(origin)/missing"), ("w", "50")])
            #expect(missing.status == .notFound)
            #expect(missing.headers[.cacheControl] == "public, max-age=30")
            let again = try await proxy.image([("url", "\(origin)/missing"), ("w", "60")])
            #expect(again.status == .notFound)
            #expect(hits.count("/missing") == 1, "the 404 is remembered")
            let maxAge = Int(again.headers[.cacheControl]!.split(separator: "=").last!)!
            #expect(maxAge <= 30 && maxAge > 0)

            let flaky = try await proxy.image([("url", "\(origin)/flaky.jpg"), ("w", "50")])
            #expect(flaky.status == .ok, "two 503s, then success on the last retry")
            #expect(hits.count("/flaky.jpg") == 3)

            let failing = try await proxy.image([("url", "\(origin)/error"), ("w", "50")])
            #expect(failing.status == .badGateway)
            #expect(failing.headers[.cacheControl] == "no-store")
            #expect(hits.count("/error") == 3)
        }
    }

    @Test func purgeAndStatsNeedTheAdminToken() async throws {
        try await withOriginAndProxy(configure: { $0.cache.adminToken = "s3cret"; $0.cache.storeOriginals = .always }) { proxy, origin, hits in
            let url = "\(origin)/counted.jpg"
            _ = try await proxy.image([("url", url), ("w", "40")])
            _ = try await proxy.image([("url", url), ("w", "41")])
            let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let anonymous = try await proxy.execute(uri: "/cache?url=\(encoded)", method: .delete, headers: [:], body: nil)
            #expect(anonymous.status == .unauthorized)
            let wrong = try await proxy.execute(uri: "/cache/stats", method: .get, headers: [.authorization: "Bearer nope"], body: nil)
            #expect(wrong.status == .unauthorized)

            let auth: HTTPFields = [.authorization: "Bearer s3cret"]
            let stats = try await proxy.execute(uri: "/cache/stats", method: .get, headers: auth, body: nil)
            #expect(stats.status == .ok)
            let decoded = try JSONDecoder().decode([String: ProxyRuntime.TierStatistics].self, from: Data(stats.bytes))
            #expect(decoded["memory"]?.entries == 2)
            #expect(decoded["memory"]?.misses == 2)

            let purge = try await proxy.execute(uri: "/cache?url=\(encoded)", method: .delete, headers: auth, body: nil)
            #expect(purge.status == .ok)
            #expect(purge.text.contains("\"purged\""))
            _ = try await proxy.image([("url", url), ("w", "40")])
            #expect(hits.count("/counted.jpg") == 2, "after the purge the source is fetched again")
        }
        try await withOriginAndProxy { proxy, _, _ in
            let off = try await proxy.execute(uri: "/cache/stats", method: .get, headers: [.authorization: "Bearer x"], body: nil)
            #expect(off.status == .notFound)
        }
    }

    @Test func failingDiskWritesDoNotStopServing() async throws {
        var configuration = testConfiguration()
        configuration.cache.memory.capacityBytes = 0  // every request needs the disk or the origin
        configuration.cache.disk.inlineBytes = 0  // every entry a file, written through the folder broken below
        let finalConfiguration = configuration
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        let origin = TestOrigin()
        try await origin.makeApplication().test(.live) { originClient in
            try await withProxy(finalConfiguration) { proxy, runtime in
                // Break the temporary folder: every write now fails, as on a full or read-only disk.
                let temporary = finalConfiguration.cache.disk.directory + "/tmp"
                try FileManager.default.removeItem(atPath: temporary)
                FileManager.default.createFile(atPath: temporary, contents: Data("not a folder".utf8))
                for width in [30, 31] {
                    let response = try await proxy.image([("url", "http://127.0.0.1:\(originClient.port!)/photo.jpg"), ("w", "\(width)")])
                    #expect(response.status == .ok)
                    #expect(try VipsImage.decode(response.bytes).width == width)
                }
                await runtime.diskCache.waitForPendingWrites()
                #expect(runtime.diskCache.writeFailures >= 2)
                #expect(await runtime.diskCache.usage().entries == 0)
            }
        }
    }
}
