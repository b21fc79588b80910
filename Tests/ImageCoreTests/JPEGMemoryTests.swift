import CVipsShim
import Foundation
import Testing
import TestSupport

@testable import ImageCore

/// libjpeg's large blocks (`jpeg_memory.c`): from 4 MiB on a mapping of their own at a 2 MiB boundary
/// (huge pages where the kernel has them), unmapped when libjpeg frees them; and libjpeg really asks
/// here, for the whole-image coefficient buffer of an optimised encode and of a progressive decode.
@Suite struct JPEGMemoryTests {
    private static let header = 64

    /// The mappings of this process that start at `address` (`/proc/self/maps`), as (start, end).
    private func mappings(startingAt address: UInt) throws -> [(UInt, UInt)] {
        let prefix = String(address, radix: 16) + "-"
        return try String(contentsOfFile: "/proc/self/maps", encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix(prefix) }
            .compactMap { line in
                let range = line.split(separator: " ")[0].split(separator: "-")
                guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16) else { return nil }
                return (start, end)
            }
    }

    @Test func aLargeBlockIsMappedAtAHugePageBoundaryAndUnmappedWhenFreed() throws {
        let bytes = 5 << 20
        let before = ipx_jpeg_mapped_blocks_total()
        let block = try #require(jpeg_get_large(nil, bytes))
        #expect(ipx_jpeg_mapped_blocks_total() == before + 1)
        let base = UInt(bitPattern: block) - UInt(Self.header)
        #expect(base % (2 << 20) == 0)
        let mapped = try mappings(startingAt: base)
        #expect(mapped.count == 1)
        if let (start, end) = mapped.first {
            #expect(end - start >= UInt(bytes + Self.header) && end - start < UInt(bytes + Self.header + (2 << 20)))
        }
        // Every byte asked for is there to write and read back.
        let raw = UnsafeMutableRawBufferPointer(start: block, count: bytes)
        for index in stride(from: 0, to: bytes, by: 4093) { raw[index] = UInt8(truncatingIfNeeded: index / 4093) }
        raw[bytes - 1] = 0xA5
        #expect(stride(from: 0, to: bytes, by: 4093).allSatisfy { raw[$0] == UInt8(truncatingIfNeeded: $0 / 4093) })
        #expect(raw[bytes - 1] == 0xA5)
        // libjpeg passes back a size that need not be the one it asked for: freeing does not depend on it.
        jpeg_free_large(nil, block, bytes - 31)
        #expect(try mappings(startingAt: base).isEmpty, "unmapped when freed")
    }

    @Test func aSmallBlockComesFromMalloc() throws {
        let before = ipx_jpeg_mapped_blocks_total()
        let block = try #require(jpeg_get_large(nil, 100_000))
        #expect(ipx_jpeg_mapped_blocks_total() == before, "no mapping of its own below 4 MiB")
        UnsafeMutableRawBufferPointer(start: block, count: 100_000).initializeMemory(as: UInt8.self, repeating: 7)
        jpeg_free_large(nil, block, 100_000)
    }

    /// A header reserves each coefficient array's rounding up to a huge page once the buffer is mapped
    /// (4 MiB and more): 2 MiB a component on top of libjpeg's own figure; below that, libjpeg's figure.
    @Test func theHeaderCountsEachMappedArraysRounding() throws {
        let large = try TestImages.jpeg(TestImages.noise(width: 2400, height: 1600, bands: 3), progressive: true, subsample: false)
        var layout = ipx_jpeg_layout()
        _ = large.withUnsafeBytes { ipx_jpeg_read_layout($0.baseAddress, $0.count, IPX_JPEG_MAX_SCANS, &layout) }
        #expect(layout.coefficient_bytes == 3 * 300 * 200 * 128)
        #expect(try SourceHeader(reading: large).jpegCoefficientBytes == 3 * 300 * 200 * 128 + 3 * (2 << 20))
        let small = try TestImages.jpeg(TestImages.noise(width: 400, height: 300, bands: 3), progressive: true, subsample: false)
        #expect(try SourceHeader(reading: small).jpegCoefficientBytes == 3 * 50 * 38 * 128)
    }

    /// Mean absolute difference of two images of the same size and bands.
    private func difference(_ first: ImageCore.VipsImage, _ second: ImageCore.VipsImage) throws -> Double {
        let (a, b) = (try first.pixels(), try second.pixels())
        try #require(a.count == b.count)
        return zip(a, b).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(1, a.count))
    }

    /// An optimised encode of 2400x1600 at quality 95 (no chroma subsampling: a 22 MiB coefficient buffer)
    /// and a progressive decode of the result (the same buffer on the way in) take their buffers from
    /// here, and the pixels come through both as a JPEG at quality 95 keeps them.
    @Test func libjpegsWholeImageBuffersAreMappedHere() throws {
        Vips.start()
        let source = try TestImages.photo(width: 2400, height: 1600)
        let before = ipx_jpeg_mapped_blocks_total()
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        try #require(ipx_jpeg_encode_memory(source.pointer, 95, 1, 0, &buffer, &length) == 0)
        let encoded = Array(UnsafeRawBufferPointer(start: try #require(buffer), count: length))
        g_free(buffer)
        let afterEncode = ipx_jpeg_mapped_blocks_total()
        #expect(afterEncode > before, "the encoder's coefficient buffer")
        var decoded: UnsafeMutablePointer<_VipsImage>?
        let status = encoded.withUnsafeBytes { ipx_jpeg_decode_scaled($0.baseAddress, $0.count, 1, 1, 1 << 26, 0, &decoded) }
        try #require(status == 0)
        let image = ImageCore.VipsImage(taking: try #require(decoded))
        #expect(ipx_jpeg_mapped_blocks_total() > afterEncode, "the progressive decoder's coefficient buffer")
        #expect(image.width == 2400 && image.height == 1600)
        #expect(try difference(image, source) < 2.5)
    }
}
