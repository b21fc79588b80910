import CCurlShim
import Foundation
import Testing
import TestSupport

/// The C side of a download (`curl_shim.c`) through real libcurl against a local origin: a body whose
/// length the origin declares lands in one buffer of exactly that length (no doubling, no copy on growth);
/// one without a declared length grows by doubling; both arrive byte for byte.
@Suite(.timeLimit(.minutes(1))) struct OriginTransferBufferTests {
    /// Downloads `url` with the shim's transfer (as `OriginTransfer` attaches it): the body and the
    /// capacity its buffer ended with.
    static func download(_ url: String, maxBody: Int = 8 << 20) throws -> (body: [UInt8], capacity: Int, tooLarge: Bool) {
        _ = ipx_curl_global_init()
        let handle = try #require(curl_easy_init())
        defer { curl_easy_cleanup(handle) }
        let transfer = try #require(ipx_transfer_new(maxBody))
        defer { ipx_transfer_free(transfer) }
        #expect(ipx_transfer_attach(handle, transfer, nil, nil) == CURLE_OK)
        #expect(ipx_curl_set_string(handle, CURLOPT_URL, url) == CURLE_OK)
        #expect(ipx_curl_set_string(handle, CURLOPT_PROXY, "") == CURLE_OK)
        _ = curl_easy_perform(handle)
        let body = Array(UnsafeBufferPointer(start: transfer.pointee.body, count: transfer.pointee.body_length))
        return (body, transfer.pointee.body_capacity, transfer.pointee.body_too_large != 0)
    }

    @Test func aBodyOfDeclaredLengthLandsInOneBufferOfThatLength() async throws {
        let bytes = (0..<300_001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let origin = TestOrigin(["/a.bin": .init(bytes: bytes, contentType: "application/octet-stream")])
        try await origin.run { base in
            let (body, capacity, _) = try Self.download(base + "/a.bin")
            #expect(body == bytes)
            #expect(capacity == bytes.count, "sized from Content-Length: \(capacity)")
        }
    }

    @Test func aBodyWithoutADeclaredLengthGrowsByDoubling() async throws {
        try await TestOrigin().run { base in
            let (body, capacity, _) = try Self.download(base + "/chunked/300000")
            #expect(body == (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            #expect(capacity == 512 * 1024, "64 KiB doubled to the first size that holds it")
        }
    }

    @Test func aDeclaredLengthAboveTheLimitIsRefusedAndNothingIsAllocatedForIt() async throws {
        let bytes = [UInt8](repeating: 9, count: 100_000)
        let origin = TestOrigin(["/big.bin": .init(bytes: bytes, contentType: "application/octet-stream")])
        try await origin.run { base in
            // OriginTransfer also sets CURLOPT_MAXFILESIZE_LARGE; without it the write callback refuses
            // the first bytes past the limit, and the declared length is not allocated.
            let (body, capacity, tooLarge) = try Self.download(base + "/big.bin", maxBody: 50_000)
            #expect(tooLarge)
            #expect(body.count <= 50_000 && capacity <= 64 * 1024)
        }
    }
}
