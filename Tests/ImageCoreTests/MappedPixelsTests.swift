import CVipsShim
import Foundation
import Testing
import TestSupport

@testable import ImageCore

/// Large decode and reduce buffers on mappings of their own (`mapped_pixels.c`): at a 2 MiB boundary, so
/// that the kernel can back them with huge pages, holding what is written, and unmapped when the image
/// closes.
@Suite struct MappedPixelsTests {
    /// The mappings of this process that start at `address` (`/proc/self/maps`).
    private func mappings(startingAt address: UInt) throws -> [String] {
        let prefix = String(address, radix: 16) + "-"
        return try String(contentsOfFile: "/proc/self/maps", encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix(prefix) }.map(String.init)
    }

    @Test func aLargeImageIsMappedAtAHugePageBoundaryAndUnmappedWhenClosed() throws {
        Vips.start()
        let (width, height, bands) = (3001, 2000, 3)
        var image: ImageCore.VipsImage? = ImageCore.VipsImage(
            taking: try #require(ipx_pixel_image(Int32(width), Int32(height), Int32(bands), VIPS_INTERPRETATION_sRGB)))
        let address = UInt(bitPattern: try #require(ipx_vips_image_address(image!.pointer)))
        #expect(address % (2 << 20) == 0)
        let mapped = try mappings(startingAt: address)
        #expect(mapped.count == 1, "\(mapped)")
        // Mapped for the rounded size: the slack before the boundary and after the image went back.
        if let range = mapped.first?.split(separator: " ").first?.split(separator: "-"), range.count == 2,
            let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16)
        {
            let bytes = UInt(width * height * bands)
            #expect(end - start >= bytes && end - start < bytes + (2 << 20))
        }
        // What is written is what the image holds.
        let pattern = (0..<(width * height * bands)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
        pattern.withUnsafeBytes { UnsafeMutableRawPointer(bitPattern: address)!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        #expect(image!.width == width && image!.height == height && image!.bands == bands)
        #expect(try image!.pixels() == pattern)
        image = nil
        #expect(try mappings(startingAt: address).isEmpty, "unmapped when the image closed")
    }

    /// A PNG decoded whole (``DecodedSource``) is written by libvips straight into such a mapping, with
    /// the pixels libvips' own copy into memory makes; a 16-bit one keeps libvips' memory.
    @Test func aWholeDecodeIsWrittenIntoAMapping() throws {
        let png = try TestImages.noise(width: 2000, height: 1200, bands: 3).encoded(as: .png).bytes
        let decoded = try DecodedSource.decoding(png, deadline: nil)
        let address = UInt(bitPattern: try #require(ipx_vips_image_address(decoded.image.pointer)))
        let mapped = try mappings(startingAt: address)
        #expect(address % (2 << 20) == 0 && mapped.count == 1)
        #expect(decoded.bytes == 2000 * 1200 * 3)
        #expect(try decoded.image.pixels() == (try ImageCore.VipsImage.decode(png).pixels()))
    }

    /// A WebP decoded whole to be kept (``DecodedSource``) is on a mapping of its own, not the thread's
    /// reused buffer: the next decodes on the same thread (into that buffer) never write into it.
    @Test func aKeptWebPDecodeIsNotOverwrittenByTheNextDecodeOnItsThread() throws {
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())
        func request(_ width: String) throws -> ImageRequest {
            try ImageRequest(query: [("url", "http://example.com/a.webp"), ("w", width)], limits: .init(maxDimension: 4096))
        }
        let first = try TestImages.noise(width: 1500, height: 1000, bands: 3, seed: 1).encoded(as: .webp).bytes
        let second = try TestImages.noise(width: 1500, height: 1000, bands: 3, seed: 2).encoded(as: .webp).bytes
        let plan = try transformer.plan(first, request: request("1000"), choice: .fixed(.jpeg))
        guard case .encoded(_, let kept?) = try transformer.run(plan, source: first, overlay: nil, reserved: 0, grow: { _ in true }) else {
            Issue.record("no decode handed back")
            return
        }
        let address = UInt(bitPattern: try #require(ipx_vips_image_address(kept.image.pointer)))
        let mapped = try mappings(startingAt: address)
        #expect(address % (2 << 20) == 0 && mapped.count == 1, "a mapping of its own")
        let before = try kept.image.pixels()
        #expect(before == (try ImageCore.VipsImage.decode(first).pixels()))
        for width in ["300", "200", "100"] {
            let other = try transformer.plan(second, request: request(width), choice: .fixed(.jpeg))
            #expect(!other.decodesWhole, "scaled by libwebp into the thread's buffer")
            _ = try transformer.run(other, source: second, overlay: nil, reserved: 0, grow: { _ in true })
        }
        #expect(ipx_thread_buffer_address() != nil && UInt(bitPattern: ipx_thread_buffer_address()) != address)
        #expect(try kept.image.pixels() == before)
    }
}
