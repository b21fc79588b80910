import CCurlShim
import Foundation
import Testing
import TestSupport

@testable import ProxyEngine

/// A download's body through real libcurl against a local origin, as `OriginTransfer` sets it up: libcurl's
/// thread writes it straight into the array it is kept in (`DownloadedBody`), allocated at the declared
/// length when there is one; byte for byte either way.
@Suite(.timeLimit(.minutes(1))) struct OriginTransferBufferTests {
    /// Downloads `url` through the shim's transfer into a ``DownloadedBody``: the body, and whether the
    /// transfer stopped at the limit.
    static func download(_ url: String, maxBody: Int = 8 << 20) throws -> (body: [UInt8], tooLarge: Bool) {
        _ = ipx_curl_global_init()
        let handle = try #require(curl_easy_init())
        defer { curl_easy_cleanup(handle) }
        let transfer = try #require(ipx_transfer_new(maxBody))
        defer { ipx_transfer_free(transfer) }
        let body = DownloadedBody(limit: maxBody)
        transfer.pointee.sink = DownloadedBody.sink
        transfer.pointee.sink_context = body.context
        #expect(ipx_transfer_attach(handle, transfer, nil, nil) == CURLE_OK)
        #expect(ipx_curl_set_string(handle, CURLOPT_URL, url) == CURLE_OK)
        #expect(ipx_curl_set_string(handle, CURLOPT_PROXY, "") == CURLE_OK)
        _ = curl_easy_perform(handle)
        #expect(transfer.pointee.body_length == body.bytes.count)
        return (body.bytes, transfer.pointee.body_too_large != 0)
    }

    @Test func aBodyOfDeclaredLengthLandsInOneAllocationOfThatLength() async throws {
        let bytes = (0..<300_001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let origin = TestOrigin(["/a.bin": .init(bytes: bytes, contentType: "application/octet-stream")])
        try await origin.run { base in
            let (body, _) = try Self.download(base + "/a.bin")
            #expect(body == bytes)
            // Allocated once at Content-Length (malloc rounds up to its page); grown from the first
            // chunk, an array would have doubled to 393 216 bytes or more.
            #expect(body.capacity >= bytes.count && body.capacity < bytes.count + 8192, "capacity \(body.capacity)")
        }
    }

    @Test func aBodyWithoutADeclaredLengthArrivesWhole() async throws {
        try await TestOrigin().run { base in
            let (body, _) = try Self.download(base + "/chunked/300000")
            #expect(body == (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        }
    }

    @Test func aBodyOverTheLimitStopsAtTheLimit() async throws {
        let bytes = [UInt8](repeating: 9, count: 100_000)
        let origin = TestOrigin(["/big.bin": .init(bytes: bytes, contentType: "application/octet-stream")])
        try await origin.run { base in
            // OriginTransfer also sets CURLOPT_MAXFILESIZE_LARGE (refused before any byte); without it the
            // first bytes past the limit stop the transfer, and the declared length is reserved only up to it.
            let (body, tooLarge) = try Self.download(base + "/big.bin", maxBody: 50_000)
            #expect(tooLarge)
            #expect(body.count <= 50_000 && body.capacity < 50_000 + 8192)
        }
    }
}
