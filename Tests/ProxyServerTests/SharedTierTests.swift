import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// The shared result tier against a real object store (SeaweedFS on 127.0.0.1): a fleet of replicas
/// sharing one bucket transforms each variant once, a purge through one reaches all, a replica with an
/// empty disk answers from the bucket, and faults of the store (killed, damaged objects) cost nothing
/// but the tier's benefit (issue #30).
@Suite(.timeLimit(.minutes(4))) struct SharedTierTests {
    static let sources: [String: [UInt8]] = Dictionary(uniqueKeysWithValues: (0..<10).map { index in
        ("photos/\(index).jpg", try! TestImages.jpeg(width: 400 + 16 * index, height: 300))
    })
    static let widths = [40, 60, 80, 100, 120]

    /// A replica: S3 sources from `images`, the shared tier in `cache`, its own cache folder.
    static func replica(_ store: ObjectStore, prefix: String = "fleet/") -> ProxyConfiguration {
        var configuration = testConfiguration()
        configuration.fetch.s3.endpoint.endpoint = store.endpoint
        configuration.fetch.s3.endpoint.accessKeyId = ObjectStore.accessKey
        configuration.fetch.s3.endpoint.secretAccessKey = ObjectStore.secretKey
        configuration.fetch.s3.buckets = ["images"]
        configuration.cache.shared.endpoint = configuration.fetch.s3.endpoint
        configuration.cache.shared.bucket = "cache"
        configuration.cache.shared.prefix = prefix
        configuration.cache.shared.purgePollMilliseconds = 500
        configuration.cache.shared.timeoutMilliseconds = 1_000
        configuration.cache.adminToken = "fleet-admin"
        return configuration
    }

    /// Runs `body` with one live proxy per configuration (nested), removing their cache folders after.
    static func withFleet<Value: Sendable>(
        _ configurations: [ProxyConfiguration],
        _ body: @Sendable ([any TestClientProtocol], [ProxyRuntime]) async throws -> Value
    ) async throws -> Value {
        guard let first = configurations.first else { return try await body([], []) }
        defer { try? FileManager.default.removeItem(atPath: first.cache.disk.directory) }
        return try await withProxy(first) { proxy, runtime in
            try await withFleet(Array(configurations.dropFirst())) { proxies, runtimes in
                try await body([proxy] + proxies, [runtime] + runtimes)
            }
        }
    }

    static func metrics(_ runtime: ProxyRuntime) -> PrometheusText {
        try! PrometheusText(runtime.metrics.registry.emitToString())
    }

    /// Transforms a replica ran (every one records its output size).
    static func transforms(_ runtime: ProxyRuntime) -> Double {
        metrics(runtime).samples["imageproxy_output_bytes_count"] ?? 0
    }

    static func sharedWrites(_ runtime: ProxyRuntime, _ result: String) -> Double {
        metrics(runtime).samples["imageproxy_shared_tier_writes_total{result=\"\(result)\"}"] ?? 0
    }

    static func variants() -> [[(String, String)]] {
        Self.sources.keys.sorted().flatMap { key in
            Self.widths.map { [("url", "s3://images/\(key)"), ("w", "\($0)"), ("format", "png")] }
        }
    }

    static func upload(_ store: ObjectStore) throws {
        for (key, bytes) in Self.sources { #expect(try store.put(bytes, bucket: "images", key: key) == 200) }
    }

    /// Waits until `condition` holds (at most `seconds`).
    static func eventually(_ seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    /// The environment of a replica process: S3 sources and the shared tier on `store`, credentials from
    /// the standard AWS variables, its own empty cache folder.
    static func replicaEnvironment(_ store: ObjectStore, cache: String) -> [String: String] {
        [
            "IMAGEPROXY_CACHE_DIR": cache, "IMAGEPROXY_SOURCES_S3_ENDPOINT": store.endpoint,
            "IMAGEPROXY_SOURCES_S3_BUCKETS": "images", "AWS_ACCESS_KEY_ID": ObjectStore.accessKey,
            "AWS_SECRET_ACCESS_KEY": ObjectStore.secretKey, "IMAGEPROXY_CACHE_SHARED_ENDPOINT": store.endpoint,
            "IMAGEPROXY_CACHE_SHARED_BUCKET": "cache", "IMAGEPROXY_CACHE_SHARED_PREFIX": "processes/",
            "IMAGEPROXY_CACHE_SHARED_TIMEOUT_MS": "1000",
        ]
    }

    static func path(_ variant: [(String, String)]) -> String {
        "/img?" + variant.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }.joined(separator: "&")
    }

    static func processMetrics(_ replica: ServiceProcess) async throws -> PrometheusText {
        try PrometheusText(String(decoding: try await httpGet(port: replica.port, path: "/metrics").body, as: UTF8.self))
    }

    /// Three ImageProxy processes sharing one bucket, requests round-robin: each of 50 variants is
    /// transformed once across the fleet, every later request is a hit somewhere, and a replica restarted
    /// with an empty disk answers from the bucket without a download or a transform.
    @Test func aFleetTransformsEachVariantOnceAndARestartedReplicaAnswersFromTheBucket() async throws {
        try await withObjectStore(buckets: ["images", "cache"]) { store in
            try Self.upload(store)
            let folders = (0..<4).map { _ in FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)").path }
            defer { folders.forEach { try? FileManager.default.removeItem(atPath: $0) } }
            var replicas: [ServiceProcess] = []
            for folder in folders.prefix(3) {
                replicas.append(try await ServiceProcess(environment: Self.replicaEnvironment(store, cache: folder)))
            }
            defer { replicas.forEach { $0.signal(SIGKILL) } }
            let variants = Self.variants()
            #expect(variants.count == 50)
            func ask(_ replica: ServiceProcess, _ variant: [(String, String)]) async throws -> (Int, String, Data) {
                let (status, body, headers) = try await httpRequest(port: replica.port, path: Self.path(variant))
                return (status, headers["x-cache"] ?? "", body)
            }
            for (index, variant) in variants.enumerated() {
                let (status, tier, _) = try await ask(replicas[index % 3], variant)
                #expect(status == 200 && tier == "miss", "\(variant): \(status) \(tier)")
            }
            #expect(try await Self.eventually(15) {
                var written = 0.0
                for replica in replicas {
                    written += try await Self.processMetrics(replica).samples["imageproxy_shared_tier_writes_total{result=\"ok\"}"] ?? 0
                }
                return written == 50
            })
            // Shifted by one: each variant asked of a replica that never made it.
            for (index, variant) in variants.enumerated() {
                let (status, tier, body) = try await ask(replicas[(index + 1) % 3], variant)
                #expect(status == 200 && tier == "shared", "\(variant): \(tier)")
                #expect(try VipsImage.decode([UInt8](body)).width == Int(variant[1].1))
            }
            for (index, variant) in variants.enumerated() {
                let (_, tier, _) = try await ask(replicas[(index + 2) % 3], variant)
                #expect(["memory", "disk", "shared"].contains(tier), "\(variant): \(tier)")
            }
            var transforms = 0.0
            for replica in replicas { transforms += try await Self.processMetrics(replica).samples["imageproxy_output_bytes_count"] ?? 0 }
            #expect(transforms == 50, "each variant transformed once across the fleet")

            // Replica 2 restarted with an empty disk: it answers from the bucket, no download, no transform.
            replicas[2].signal(SIGTERM)
            _ = await replicas[2].waitForExit(timeout: .seconds(30))
            replicas[2] = try await ServiceProcess(environment: Self.replicaEnvironment(store, cache: folders[3]))
            for variant in variants.prefix(10) {
                let (status, tier, _) = try await ask(replicas[2], variant)
                #expect(status == 200 && tier == "shared", "\(variant): \(tier)")
            }
            let restarted = try await Self.processMetrics(replicas[2]).samples
            #expect((restarted["imageproxy_output_bytes_count"] ?? 0) == 0)
            #expect(restarted.filter { $0.key.hasPrefix("imageproxy_origin_requests_total") }.values.reduce(0, +) == 0)
            let status = String(decoding: try await httpGet(port: replicas[1].port, path: "/status/live").body, as: UTF8.self)
            #expect(status.contains("<h2>Shared tier</h2>") && status.contains("in use"), "the status page shows the tier")
        }
    }

    @Test func withStoredOriginalsAReplicaTransformsANewVariantWithoutDownloading() async throws {
        try await withObjectStore(buckets: ["images", "cache"]) { store in
            try Self.upload(store)
            var first = Self.replica(store, prefix: "originals/")
            first.cache.shared.storeOriginals = true
            var second = Self.replica(store, prefix: "originals/")
            second.cache.shared.storeOriginals = true
            try await Self.withFleet([first, second]) { proxies, runtimes in
                let made = try await proxies[0].image([("url", "s3://images/photos/5.jpg"), ("w", "100"), ("format", "png")])
                #expect(made.status == .ok && made.headers[.xCacheTier] == "miss")
                #expect(try await Self.eventually(10) { Self.sharedWrites(runtimes[0], "ok") == 2 }, "the variant and the original")
                let other = try await proxies[1].image([("url", "s3://images/photos/5.jpg"), ("w", "130"), ("format", "png")])
                #expect(other.status == .ok && other.headers[.xCacheTier] == "miss")
                #expect(try VipsImage.decode(other.bytes).width == 130)
                let samples = Self.metrics(runtimes[1]).samples
                #expect(samples.filter { $0.key.hasPrefix("imageproxy_origin_requests_total") }.values.reduce(0, +) == 0,
                        "the second replica took the original from the bucket")
                #expect(Self.transforms(runtimes[1]) == 1)
            }
        }
    }

    @Test func aPurgeThroughOneReplicaReachesEveryReplicaWithinTenSeconds() async throws {
        try await withObjectStore(buckets: ["images", "cache"]) { store in
            try Self.upload(store)
            let configurations = (0..<3).map { _ in Self.replica(store, prefix: "purge/") }
            try await Self.withFleet(configurations) { proxies, runtimes in
                let variant: [(String, String)] = [("url", "s3://images/photos/3.jpg"), ("w", "80"), ("format", "png")]
                var before: [String] = []
                for proxy in proxies {
                    let response = try await proxy.image(variant)
                    #expect(response.status == .ok)
                    before.append(response.headers[.eTag] ?? "")
                }
                #expect(Set(before).count == 1, "one variant everywhere")
                // The source changes; the purge goes through replica 0 only.
                #expect(try store.put(TestImages.jpeg(width: 500, height: 500), bucket: "images", key: "photos/3.jpg") == 200)
                let purge = try await proxies[0].execute(
                    uri: "/cache?url=\("s3://images/photos/3.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                    method: .delete, headers: [.authorization: "Bearer fleet-admin"], body: nil)
                #expect(purge.status == .ok, "\(purge.text)")
                let started = ContinuousClock.now
                for proxy in proxies {
                    #expect(try await Self.eventually(10) {
                        let response = try await proxy.image(variant)
                        return response.status == .ok && response.headers[.eTag] != before[0]
                    }, "a replica kept serving the purged variant")
                }
                #expect(ContinuousClock.now - started < .seconds(10))
                _ = runtimes
            }
        }
    }

    @Test func aKilledOrDamagedStoreCostsNothingButTheTier() async throws {
        try await withObjectStore(buckets: ["images", "cache"]) { store in
            try Self.upload(store)
            // The sources come from a second, healthy path: a TestOrigin, so that only the tier dies.
            let files = Dictionary(uniqueKeysWithValues: Self.sources.map { ("/" + $0.key, TestOrigin.File.jpeg($0.value)) })
            let origin = TestOrigin(files)
            try await origin.run { base in
                var configuration = Self.replica(store, prefix: "faults/")
                configuration.cache.shared.timeoutMilliseconds = 200
                let final = configuration
                try await Self.withFleet([final]) { proxies, runtimes in
                    let proxy = proxies[0]
                    let first: [(String, String)] = [("url", base + "/photos/1.jpg"), ("w", "90"), ("format", "png")]
                    #expect(try await proxy.image(first).status == .ok)
                    #expect(try await Self.eventually(10) { Self.sharedWrites(runtimes[0], "ok") == 1 })
                    // Damage the object in the bucket (same metadata, other bytes): never served.
                    let keys = try await runtimes[0].sharedTier!.client.list(prefix: "faults/v1/", timeoutMilliseconds: 5_000).get()
                    #expect(keys.count == 1)
                    let key = try #require(keys.first)
                    let head = try store.curl(["-s", "-D", "-", "-o", "/dev/null", "\(store.endpoint)/cache/\(key)"]).output
                    let metadata = try #require(head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("x-amz-meta-imageproxy:") })
                    let damaged = store.directory.appendingPathComponent("damaged")
                    try Data(repeating: 7, count: 500).write(to: damaged)
                    try store.curl([
                        "-o", "/dev/null", "-H", String(metadata), "-H", "Content-Type: image/png", "-T", damaged.path,
                        "\(store.endpoint)/cache/\(key)",
                    ])
                    _ = await runtimes[0].purgeLocally(sourceKey: SharedTier.everything)  // local tiers only
                    let afterDamage = try await proxy.image(first)
                    #expect(afterDamage.status == .ok && afterDamage.headers[.xCacheTier] == "miss", "the damaged object was not served")
                    #expect(try VipsImage.decode(afterDamage.bytes).width == 90)
                    #expect((Self.metrics(runtimes[0]).samples["imageproxy_shared_tier_reads_total{result=\"error\"}"] ?? 0) >= 1)

                    // The store killed (SIGKILL) mid-run: every answer still correct, none a 5xx.
                    store.stop(kill: true)
                    var slowest = Duration.zero
                    for (index, width) in [50, 51, 52, 53, 54, 55, 56, 57, 58, 59].enumerated() {
                        let started = ContinuousClock.now
                        let response = try await proxy.image(
                            [("url", base + "/photos/\(index).jpg"), ("w", "\(width)"), ("format", "png")])
                        slowest = max(slowest, ContinuousClock.now - started)
                        #expect(response.status == .ok, "\(response.status) \(response.text)")
                        #expect(try VipsImage.decode(response.bytes).width == width)
                    }
                    let samples = Self.metrics(runtimes[0]).samples
                    #expect((samples["imageproxy_shared_tier_reads_total{result=\"skipped\"}"] ?? 0) >= 1, "the breaker opened")
                    #expect(slowest < .seconds(2), "a dead tier adds at most its read deadline: \(slowest)")
                }
            }
        }
    }

    /// Keys under the purge log and metadata on objects are written by whoever holds the bucket's
    /// credentials (issue #63): a key with a space, `?`, a bad `%` escape, a body that is no source key, or
    /// a key that is not a purge at all is stepped over and counted, and the purges after it still reach
    /// every replica; a variant object whose metadata was made up (a time past the year 9999, a header
    /// break in its type) is a miss, never an answer.
    @Test func hostileKeysAndMetadataInTheBucketStopNothing() async throws {
        try await withObjectStore(buckets: ["images", "cache"]) { store in
            try Self.upload(store)
            let configurations = (0..<2).map { _ in Self.replica(store, prefix: "hostile/") }
            try await Self.withFleet(configurations) { proxies, runtimes in
                let variant: [(String, String)] = [("url", "s3://images/photos/4.jpg"), ("w", "70"), ("format", "png")]
                let before = try await proxies[1].image(variant)
                #expect(before.status == .ok)
                #expect(try await Self.eventually(10) { Self.sharedWrites(runtimes[1], "ok") == 1 })

                // Hostile purge-log keys, written after the replicas' start and before the real purge.
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                func digits(_ milliseconds: Int64) -> String {
                    let text = String(milliseconds)
                    return String(repeating: "0", count: 16 - text.count) + text
                }
                let hostile: [(String, [UInt8])] = [
                    (digits(now - 9_000) + "-a%20b", Array("s3://images/photos/none.jpg".utf8)),
                    (digits(now - 8_000) + "-q%3Fx%25zz", Array("s3://images/photos/none2.jpg".utf8)),
                    (digits(now - 7_000) + "-binary", [0xFF, 0x00, 0xFE]),
                    (String(digits(now - 6_000).prefix(15)) + "%20not-a-purge", Array("*".utf8)),
                ]
                for (key, body) in hostile {
                    #expect(try store.put(body, bucket: "cache", key: "hostile/purges/" + key) == 200, "\(key)")
                }
                // A made-up copy of the variant's object: metadata no replica wrote.
                let keys = try await runtimes[1].sharedTier!.client.list(prefix: "hostile/v1/", timeoutMilliseconds: 5_000).get()
                let objectKey = try #require(keys.first)
                let made = #"{"version":1,"sourceKey":"s3://images/photos/4.jpg","contentType":"image/png\r\nX-Evil: 1","etag":"\"x\"","expiresAt":1e300,"madeAt":1,"revalidation":"whenStale","sourceFetchedAt":1e300,"length":3,"sha256":"039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81"}"#
                let forged = store.directory.appendingPathComponent("forged")
                try Data([1, 2, 3]).write(to: forged)
                try store.curl([
                    "-o", "/dev/null", "-H", "x-amz-meta-imageproxy: \(Data(made.utf8).base64EncodedString())",
                    "-H", "Content-Type: image/png", "-T", forged.path, "\(store.endpoint)/cache/\(objectKey)",
                ])
                let fromForged = try await proxies[0].image(variant)
                #expect(fromForged.status == .ok && fromForged.headers[.xCacheTier] == "miss", "the forged object was not served")
                #expect(try VipsImage.decode(fromForged.bytes).width == 70)

                // The source changes and is purged through replica 0: replica 1 reads past the hostile keys.
                #expect(try store.put(TestImages.jpeg(width: 300, height: 300), bucket: "images", key: "photos/4.jpg") == 200)
                let purge = try await proxies[0].execute(
                    uri: "/cache?url=\("s3://images/photos/4.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                    method: .delete, headers: [.authorization: "Bearer fleet-admin"], body: nil)
                #expect(purge.status == .ok)
                #expect(try await Self.eventually(10) {
                    let response = try await proxies[1].image(variant)
                    return response.status == .ok && response.headers[.eTag] != before.headers[.eTag]
                }, "replica 1 applied the purge after the hostile keys")
                let skipped = Self.metrics(runtimes[1]).samples["imageproxy_shared_tier_purge_keys_skipped_total"] ?? 0
                #expect(skipped >= 2, "the binary body and the key that is no purge were counted: \(skipped)")
                #expect(try await proxies[1].execute(uri: "/health", method: .get, headers: [:], body: nil).status == .ok)
            }
        }
    }

    /// A purge of a watermark image's URL through one replica reaches the other (issue #63): it drops the
    /// image it holds and the variants that drew it, and draws the new image at once, though the old one
    /// was fresh for a day.
    @Test func aPurgeOfAWatermarkImageReachesEveryReplica() async throws {
        try await withObjectStore(buckets: ["images", "cache"]) { store in
            try Self.upload(store)
            let red = try TestImages.solid(width: 40, height: 20, red: 255, green: 0, blue: 0).encoded(as: .png).bytes
            let blue = try TestImages.solid(width: 40, height: 20, red: 0, green: 0, blue: 255).encoded(as: .png).bytes
            #expect(try store.put(red, bucket: "images", key: "logo.png", contentType: "image/png") == 200)
            let configurations = (0..<2).map { _ in
                var configuration = Self.replica(store, prefix: "overlay/")
                var placement = OverlayPlacement()
                placement.gravity = .northwest
                configuration.overlays.definitions = ["logo": .init(source: try! SourceURL(parsing: "s3://images/logo.png"), placement: placement)]
                return configuration
            }
            try await Self.withFleet(configurations) { proxies, runtimes in
                let variant: [(String, String)] = [("url", "s3://images/photos/5.jpg"), ("w", "200"), ("format", "png"), ("wm", "logo")]
                let before = try await proxies[1].image(variant)
                #expect(before.status == .ok, "\(before.text)")
                #expect(try VipsImage.decode(before.bytes).pixel(x: 3, y: 3).prefix(3).map { Int($0.rounded()) } == [255, 0, 0])
                #expect(try store.put(blue, bucket: "images", key: "logo.png", contentType: "image/png") == 200)
                let purge = try await proxies[0].execute(
                    uri: "/cache?url=\("s3://images/logo.png".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                    method: .delete, headers: [.authorization: "Bearer fleet-admin"], body: nil)
                #expect(purge.status == .ok)
                #expect(try await Self.eventually(10) {
                    let response = try await proxies[1].image(variant)
                    guard response.status == .ok, let image = try? VipsImage.decode(response.bytes) else { return false }
                    return try image.pixel(x: 3, y: 3).prefix(3).map { Int($0.rounded()) } == [0, 0, 255]
                }, "replica 1 draws the new watermark image after a purge through replica 0")
                _ = runtimes
            }
        }
    }
}
