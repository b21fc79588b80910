import Foundation
import ImageCore
import NIOCore
import Testing

@testable import ProxyEngine

/// Where the shared tier keeps objects, and the metadata that proves an object whole.
@Suite struct SharedTierLayoutTests {
    @Test func variantsOfOneSourceShareAFolderAndPurgeKeysSortByTime() {
        let layout = SharedTierLayout(prefix: "p/")
        let a = layout.variantKey(sourceKey: "https://example.com/a.jpg", variant: "k1")
        let b = layout.variantKey(sourceKey: "https://example.com/a.jpg", variant: "k2")
        #expect(a.hasPrefix(layout.sourceFolder(sourceKey: "https://example.com/a.jpg")) && b.hasPrefix(layout.sourceFolder(sourceKey: "https://example.com/a.jpg")))
        #expect(layout.sourceFolder(sourceKey: "https://example.com/a.jpg") != layout.sourceFolder(sourceKey: "https://example.com/b.jpg"))
        #expect(a.hasPrefix("p/v1/") && a.hasSuffix("/k1"))
        let early = layout.purgeKey(at: 999.5, replica: "r")
        let late = layout.purgeKey(at: 1_700_000_000.25, replica: "r")
        #expect(early == "p/purges/0000000000999500-r" && early < late)
        #expect(layout.time(ofPurgeKey: early) == 999.5 && layout.time(ofPurgeKey: "p/v1/x") == nil)
    }

    @Test func metadataRoundTripsAndCatchesDamage() throws {
        let bytes = [UInt8](repeating: 9, count: 300)
        let variant = CachedVariant(
            body: ByteBuffer(bytes: bytes), contentType: "image/png", etag: "\"abc\"", expiresAt: 2_000, storable: true,
            revalidation: .whenStale, sourceKey: "s3://images/a.jpg",
            originValidators: OriginValidators(etag: "\"o1\"", lastModified: "Tue, 01 Jan 2030 00:00:00 GMT"), madeAt: 1_000)
        let metadata = SharedVariantMetadata(variant: variant, bytes: bytes, sourceFetchedAt: 900)
        let headers = Dictionary(uniqueKeysWithValues: metadata.headers.map { ("x-amz-meta-" + $0.key, $0.value) })
        let read = try #require(SharedVariantMetadata(headers: headers))
        #expect(read == metadata && read.describes(bytes) && read.sourceFetchedAt == 900)
        #expect(!read.describes(Array(bytes.dropLast())), "truncated")
        #expect(!read.describes(bytes.map { $0 ^ 1 }), "same length, other bytes")
        let back = read.variant(body: bytes)
        #expect(back.etag == "\"abc\"" && back.contentType == "image/png" && back.expiresAt == 2_000)
        #expect(back.revalidation == .whenStale && back.originValidators?.etag == "\"o1\"" && back.madeAt == 1_000)
        #expect(SharedVariantMetadata(headers: ["x-amz-meta-imageproxy": "not base64!"]) == nil)
        #expect(SharedVariantMetadata(headers: [:]) == nil)
    }

    /// Metadata a bucket writer made up is not believed (issue #63): each field out of what this
    /// service writes makes the whole object a miss.
    @Test func metadataFromTheBucketIsValidatedBeforeItIsBelieved() throws {
        let bytes = [UInt8](repeating: 7, count: 64)
        let variant = CachedVariant(
            body: ByteBuffer(bytes: bytes), contentType: "image/webp", etag: "\"e\"", expiresAt: 2_000, storable: true,
            revalidation: .whenStale, sourceKey: "https://example.com/a.jpg", originValidators: nil, madeAt: 1_000)
        let good = SharedVariantMetadata(variant: variant, bytes: bytes, sourceFetchedAt: 900)
        func read(_ change: (inout SharedVariantMetadata) -> Void) -> SharedVariantMetadata? {
            var metadata = good
            change(&metadata)
            let encoded = try! JSONEncoder().encode(metadata).base64EncodedString()
            return SharedVariantMetadata(headers: ["x-amz-meta-imageproxy": encoded])
        }
        #expect(read { _ in } == good)
        let hostile: [(String, (inout SharedVariantMetadata) -> Void)] = [
            ("expiry past the year 9999", { $0.expiresAt = 1e300 }), ("negative time", { $0.madeAt = -1 }),
            ("fetched in 1e20", { $0.sourceFetchedAt = 1e20 }), ("negative length", { $0.length = -5 }),
            ("huge length", { $0.length = Int.max }), ("short digest", { $0.sha256 = "abc" }),
            ("digest not hex", { $0.sha256 = String(repeating: "z", count: 64) }),
            ("header injection in the type", { $0.contentType = "image/png\r\nSet-Cookie: a=b" }),
            ("empty type", { $0.contentType = "" }), ("type without a slash", { $0.contentType = "png" }),
            ("newline in the ETag", { $0.etag = "\"a\"\n" }), ("non-ASCII ETag", { $0.etag = "\"é\"" }),
            ("huge ETag", { $0.etag = String(repeating: "a", count: 5_000) }),
            ("control in the origin's ETag", { $0.originETag = "\u{7}" }),
            ("control in the source key", { $0.sourceKey = "https://a/\u{0}" }), ("empty source key", { $0.sourceKey = "" }),
        ]
        for (name, change) in hostile {
            #expect(read(change) == nil, "\(name) was believed")
        }
    }

    /// Purge-log keys and bodies as a bucket listing may hand them over.
    @Test func purgeKeysAndBodiesAreReadAsUntrusted() {
        let layout = SharedTierLayout(prefix: "p/")
        #expect(layout.time(ofPurgeKey: layout.purgeKey(at: 1_700_000_000, replica: "r")) == 1_700_000_000)
        for key in ["p/purges/+000000000000001-r", "p/purges/ 000000000000001", "p/purges/12", "p/other/0000000000000001-r", "p/purges/a b?c%zz"] {
            #expect(layout.time(ofPurgeKey: key) == nil, "\(key)")
        }
        #expect(SharedTierLayout.sourceKey(ofPurgeBody: Array("s3://images/a b.jpg".utf8)) == "s3://images/a b.jpg")
        #expect(SharedTierLayout.sourceKey(ofPurgeBody: Array("*".utf8)) == "*")
        for body: [UInt8] in [[], [0xFF, 0xFE], Array("a\nb".utf8), [UInt8](repeating: 0x61, count: 16_385)] {
            #expect(SharedTierLayout.sourceKey(ofPurgeBody: body) == nil)
        }
        // A listed key with a space, `?`, `#` or a bad escape is sent as its own characters, and a
        // virtual-hosted URL is made without Foundation's trapping path setter.
        #expect(ObjectStoreClient.pathEncoded("p/purges/a b?c#d%zz") == "p/purges/a%20b%3Fc%23d%25zz")
        var endpoint = S3Endpoint()
        endpoint.endpoint = "https://store.internal"
        endpoint.pathStyle = .false
        #expect(endpoint.url(bucket: "cache", encodedKey: "p/%zz bad") == "https://cache.store.internal/p/%zz bad")
    }

    @Test func listingPagesAreReadWithTheirContinuation() {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><IsTruncated>true</IsTruncated>\
            <Contents><Key>p/v1/a/k1</Key></Contents><Contents><Key>p/v1/a/k&amp;2</Key></Contents>\
            <NextContinuationToken>tok</NextContinuationToken></ListBucketResult>
            """
        let page = ListBucketPage(parsing: Array(xml.utf8))
        #expect(page.keys == ["p/v1/a/k1", "p/v1/a/k&2"] && page.isTruncated && page.nextToken == "tok")
        #expect(ListBucketPage(parsing: Array("garbage".utf8)).keys.isEmpty)
    }
}
