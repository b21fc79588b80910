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
