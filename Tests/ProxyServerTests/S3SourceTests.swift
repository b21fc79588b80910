import Foundation
import HTTPTypes
import Logging
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// `url=s3://BUCKET/KEY` against a real object store (SeaweedFS on 127.0.0.1, SigV4 required): fetched
/// signed by libcurl, conditional GETs, 404, refused buckets, wrong credentials, bad URLs (issue #30).
@Suite(.timeLimit(.minutes(3))) struct S3SourceTests {
    static let photo: [UInt8] = try! TestImages.jpeg(width: 640, height: 480)

    /// The proxy's configuration for `store`: its endpoint, the `images` bucket listed, its credentials,
    /// and loopback sources refused (the endpoint is the operator's: the address policy does not judge it).
    static func configuration(for store: ObjectStore, secret: String = ObjectStore.secretKey) -> ProxyConfiguration {
        var configuration = testConfiguration()
        configuration.fetch.policy.allowLoopback = false
        configuration.fetch.s3.endpoint.endpoint = store.endpoint
        configuration.fetch.s3.endpoint.accessKeyId = ObjectStore.accessKey
        configuration.fetch.s3.endpoint.secretAccessKey = secret
        configuration.fetch.s3.buckets = ["images"]
        return configuration
    }

    static func url(_ key: String, bucket: String = "images") -> (String, String) { ("url", "s3://\(bucket)/\(key)") }

    @Test func objectsAreFetchedSignedAndRevalidatedWithConditionalRequests() async throws {
        try await withObjectStore(buckets: ["images", "other"]) { store in
            #expect(try store.put(Self.photo, bucket: "images", key: "photos/a%20b.jpg", contentType: "image/jpeg") == 200)
            var configuration = Self.configuration(for: store)
            configuration.cache.freshness.defaultTTL = 1  // the object has no Cache-Control: fresh for 1 s
            configuration.cache.storeOriginals = .always
            let final = configuration
            defer { try? FileManager.default.removeItem(atPath: final.cache.disk.directory) }
            try await withProxy(final) { proxy, _ in
                let response = try await proxy.image([Self.url("photos/a%20b.jpg"), ("w", "100"), ("format", "png")])
                #expect(response.status == .ok, "\(response.text)")
                #expect(try VipsImage.decode(response.bytes).width == 100)
                let etag = try #require(response.headers[.eTag])
                let again = try await proxy.image(
                    [Self.url("photos/a%20b.jpg"), ("w", "100"), ("format", "png")], headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified)
                // Past its freshness a new variant revalidates the stored original: the store answers 304.
                try await Task.sleep(for: .milliseconds(1_200))
                let revalidated = try await proxy.image([Self.url("photos/a%20b.jpg"), ("w", "120"), ("format", "png")])
                #expect(revalidated.status == .ok)
                #expect(try VipsImage.decode(revalidated.bytes).width == 120)
                let metrics = try await proxy.execute(uri: "/metrics", method: .get, headers: [:], body: nil).text
                #expect(metrics.contains("imageproxy_origin_requests_total{result=\"not_modified\"} 1"), "\(metrics.split(separator: "\n").filter { $0.contains("origin_requests") })")
            }
        }
    }

    @Test func aWatermarkImageMayBeAnObject() async throws {
        try await withObjectStore(buckets: ["images"]) { store in
            let red = try TestImages.solid(width: 40, height: 20, red: 255, green: 0, blue: 0).encoded(as: .png).bytes
            #expect(try store.put(Self.photo, bucket: "images", key: "base.jpg", contentType: "image/jpeg") == 200)
            #expect(try store.put(red, bucket: "images", key: "brand/logo.png", contentType: "image/png") == 200)
            var configuration = Self.configuration(for: store)
            configuration.overlays.definitions = [
                "logo": .init(source: try SourceURL(parsing: "s3://images/brand/logo.png"), placement: OverlayPlacement())
            ]
            let final = configuration
            defer { try? FileManager.default.removeItem(atPath: final.cache.disk.directory) }
            try await withProxy(final) { proxy, _ in
                let response = try await proxy.image([Self.url("base.jpg"), ("w", "320"), ("format", "png"), ("wm", "logo")])
                #expect(response.status == .ok, "\(response.text)")
                let image = try VipsImage.decode(response.bytes)
                let corner = try image.pixel(x: image.width - 5, y: image.height - 5).prefix(3).map { Int($0.rounded()) }
                #expect(corner == [255, 0, 0], "the object's red overlay in the bottom-right corner: \(corner)")
            }
        }
    }

    @Test func missingObjectsRefusedBucketsAndBadURLsAreClear4xx() async throws {
        try await withObjectStore(buckets: ["images", "other"]) { store in
            try store.put(Self.photo, bucket: "other", key: "secret.jpg")
            let configuration = Self.configuration(for: store)
            defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
            try await withProxy(configuration) { proxy, _ in
                let missing = try await proxy.image([Self.url("nope.jpg"), ("w", "100")])
                #expect(missing.status == .notFound, "\(missing.text)")
                let refused = try await proxy.image([Self.url("secret.jpg", bucket: "other"), ("w", "100")])
                #expect(refused.status == .forbidden && refused.text.contains("bucket is not listed"), "\(refused.text)")
                let cases: [(String, String)] = [
                    ("s3://Images/a.jpg", "bucket"), ("s3://images/", "no object key"), ("s3://images/a/../b.jpg", ".."),
                    ("s3://images/a/%2E%2E/b.jpg", ".."), ("s3://images:9000/a.jpg", "port"), ("s3://ab/a.jpg", "bucket"),
                    ("s3://user@images/a.jpg", "user info"), ("s3://images/a.jpg?x=1", "query"),
                ]
                for (url, problem) in cases {
                    let response = try await proxy.image([("url", url), ("w", "100")])
                    #expect(response.status == .badRequest, "\(url): \(response.status)")
                    #expect(response.text.contains("url") && response.text.contains(problem), "\(url): \(response.text)")
                }
            }
            // No bucket listed: every s3:// URL is refused.
            var closed = Self.configuration(for: store)
            closed.fetch.s3.buckets = []
            let final = closed
            defer { try? FileManager.default.removeItem(atPath: final.cache.disk.directory) }
            try await withProxy(final) { proxy, _ in
                let response = try await proxy.image([Self.url("a.jpg"), ("w", "100")])
                #expect(response.status == .forbidden && response.text.contains("sources.s3.buckets"), "\(response.text)")
            }
        }
    }

    @Test func wrongCredentialsAre502WithALogLineNamingTheBucketOnly() async throws {
        try await withObjectStore(buckets: ["images"]) { store in
            try store.put(Self.photo, bucket: "images", key: "a.jpg")
            let logs = RecordingLogHandler.Store()
            let logger = Logger(label: "proxy", factory: { _ in RecordingLogHandler(store: logs) })
            let configuration = Self.configuration(for: store, secret: "not-the-secret")
            defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
            try await withProxy(configuration, logger: logger) { proxy, _ in
                let response = try await proxy.image([Self.url("a.jpg"), ("w", "100")])
                #expect(response.status == .badGateway, "\(response.text)")
                #expect(response.text.contains("denied access"))
                #expect(!response.text.contains(ObjectStore.accessKey) && !response.text.contains("not-the-secret"))
            }
            let lines = logs.entries.filter { $0["message"] == "s3 access denied" }
            #expect(lines.count == 1 && lines.first?["bucket"] == "images", "\(lines)")
            let everything = logs.entries.map { $0.values.joined(separator: " ") }.joined(separator: "\n")
            #expect(!everything.contains("not-the-secret") && !everything.contains(ObjectStore.accessKey))
        }
    }
}
