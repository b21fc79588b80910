import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// libjpeg's scaled decode reduced as its rows arrive (`ipx_jpeg_decode_reduced`, a ring of the rows the
/// reduce's taps span): the same bytes as the whole decode reduced in memory afterwards, without holding
/// the decode.
@Suite struct JPEGReducedDecodeTests {
    private func jpeg(width: Int, height: Int, bands: Int = 3, progressive: Bool = false, subsample: Bool = true, restart: Int = 0)
        throws -> [UInt8]
    {
        try TestImages.jpeg(
            TestImages.noise(width: width, height: height, bands: bands, seed: 88_172_645), quality: 85, progressive: progressive,
            subsample: subsample, restartInterval: restart)
    }

    private func header(_ bytes: [UInt8], orientation: Int = 1) throws -> SourceHeader {
        var header = try SourceHeader(reading: bytes)
        header.orientation = orientation
        return header
    }

    /// The whole decode at `shrink`, reduced in memory by the one-pass reduce (the path this replaces).
    private func decodedThenReduced(_ bytes: [UInt8], shrink: Int, across: Double, down: Double, orientation: Int = 1) throws -> Image {
        let decoded = try #require(try ScaleOnLoadStep.decodeScaled(bytes, shrink: shrink, header: header(bytes, orientation: orientation), deadline: nil))
        var output: UnsafeMutablePointer<_VipsImage>?
        try #require(ipx_reduce_lanczos3_in_memory(decoded.pointer, &output, across, down) == 0)
        return Image(taking: try #require(output))
    }

    private func reducedWhileDecoding(
        _ bytes: [UInt8], shrink: Int, across: Double, down: Double, orientation: Int = 1, deadline: TransformDeadline? = nil
    ) throws -> Image? {
        try ScaleOnLoadStep.decodeScaled(
            bytes, shrink: shrink, header: header(bytes, orientation: orientation), deadline: deadline, reducing: (across, down))
    }

    private func fields(_ image: Image) -> String {
        var names = [CChar](repeating: 0, count: 4096)
        _ = ipx_vips_metadata_fields(image.pointer, &names, names.count)
        return String(cString: names)
    }

    /// Sizes not a multiple of the MCU, every shrink, grey and colour, 4:2:0 and 4:4:4, restart markers and a
    /// progressive file; reductions from just above 1 (taps over 7 rows) to nearly 7 (42 rows), and a
    /// decode fewer rows high than the taps span (the ring holds all of it).
    @Test(arguments: [
        (width: 1001, height: 643, bands: 3, subsample: true, progressive: false, restart: 0, shrink: 1, across: 1.37, down: 1.41),
        (width: 1001, height: 643, bands: 3, subsample: true, progressive: false, restart: 3, shrink: 2, across: 2.2, down: 2.3),
        (width: 1001, height: 643, bands: 3, subsample: false, progressive: false, restart: 0, shrink: 4, across: 1.9, down: 1.8),
        (width: 1001, height: 643, bands: 1, subsample: false, progressive: false, restart: 0, shrink: 8, across: 1.3, down: 1.25),
        (width: 1001, height: 643, bands: 3, subsample: true, progressive: true, restart: 0, shrink: 2, across: 6.9, down: 6.7),
        (width: 2400, height: 36, bands: 3, subsample: true, progressive: false, restart: 0, shrink: 1, across: 4.0, down: 4.0),
        (width: 777, height: 5, bands: 3, subsample: true, progressive: false, restart: 0, shrink: 1, across: 1.5, down: 1.2),
    ])
    func isTheWholeDecodeReducedSampleForSample(
        layout: (width: Int, height: Int, bands: Int, subsample: Bool, progressive: Bool, restart: Int, shrink: Int, across: Double, down: Double)
    ) throws {
        let bytes = try jpeg(
            width: layout.width, height: layout.height, bands: layout.bands, progressive: layout.progressive, subsample: layout.subsample,
            restart: layout.restart)
        let expected = try decodedThenReduced(bytes, shrink: layout.shrink, across: layout.across, down: layout.down)
        let streamed = try #require(try reducedWhileDecoding(bytes, shrink: layout.shrink, across: layout.across, down: layout.down))
        #expect(streamed.width == expected.width && streamed.height == expected.height && streamed.bands == expected.bands, "\(layout)")
        #expect(streamed.width < (layout.width + layout.shrink - 1) / layout.shrink, "reduced, not the decode")
        #expect(vips_image_get_interpretation(streamed.pointer) == vips_image_get_interpretation(expected.pointer))
        #expect(try streamed.pixels() == expected.pixels(), "\(layout)")
    }

    @Test func carriesTheProfileAndTheOrientation() throws {
        let p3 = try TestImages.noise(width: 640, height: 480, bands: 3).producing { ipx_vips_icc_export($0, $1, "p3") }
        let bytes = try TestImages.jpeg(p3, quality: 85, progressive: false, subsample: true, keepMetadata: true)
        let streamed = try #require(try reducedWhileDecoding(bytes, shrink: 2, across: 1.6, down: 1.6, orientation: 6))
        let expected = try decodedThenReduced(bytes, shrink: 2, across: 1.6, down: 1.6, orientation: 6)
        #expect(fields(streamed).contains("icc-profile-data"), "the source's profile, for the conversion to sRGB")
        #expect(vips_image_get_orientation(streamed.pointer) == 6)
        #expect(fields(streamed) == fields(expected))
        #expect(try streamed.pixels() == expected.pixels())
        let plain = try #require(try reducedWhileDecoding(try jpeg(width: 64, height: 64), shrink: 1, across: 2, down: 2))
        #expect(!fields(plain).contains("icc-profile-data"))
    }

    @Test func leavesDamagedFilesAndOtherSizesToLibvips() throws {
        let bytes = try jpeg(width: 800, height: 600)
        #expect(try reducedWhileDecoding(bytes, shrink: 2, across: 2, down: 2) != nil)
        // Cut short (libjpeg warns of a premature end part-way through the rows), damaged entropy data.
        #expect(try reducedWhileDecoding(Array(bytes.prefix(bytes.count * 2 / 3)), shrink: 2, across: 2, down: 2) == nil)
        var damaged = bytes
        damaged[bytes.count / 2] = 0xFF
        damaged[bytes.count / 2 + 1] = 0x01
        #expect(try reducedWhileDecoding(damaged, shrink: 2, across: 2, down: 2) == nil)
        // The reduce was planned for another decode size than libjpeg makes.
        var status: Int32 = 0
        var output: UnsafeMutablePointer<_VipsImage>?
        status = bytes.withUnsafeBytes { ipx_jpeg_decode_reduced($0.baseAddress, $0.count, 2, 1, 480_000, 0, 401, 300, 2, 2, &output) }
        #expect(status == 1 && output == nil)
        // Not a reduce in both directions: the caller reduces otherwise.
        status = bytes.withUnsafeBytes { ipx_jpeg_decode_reduced($0.baseAddress, $0.count, 2, 1, 480_000, 0, 400, 300, 2, 1, &output) }
        #expect(status == 1 && output == nil)
    }

    @Test func stopsAtItsDeadline() throws {
        let bytes = try jpeg(width: 400, height: 400)
        let deadline = TransformDeadline(limitMilliseconds: 1)
        usleep(5_000)
        #expect(throws: ImagingError.undecodable) { try reducedWhileDecoding(bytes, shrink: 1, across: 2, down: 2, deadline: deadline) }
        #expect(deadline.hasExpired, "the deadline is marked expired, so the transform answers 'too slow'")
    }

    /// The ring lives in the thread's reused buffer (thread_buffer.c): rows of a bright image left there
    /// never show in the next reduce, also after a damaged file stopped part-way with its rows in the ring.
    @Test func aReusedRingNeverShowsAnEarlierImagesRows() throws {
        let bright = try TestImages.jpeg(
            TestImages.solid(width: 1600, height: 1200, red: 255, green: 255, blue: 255), quality: 85, progressive: false, subsample: true)
        let other = try jpeg(width: 1001, height: 643)
        let expected = try decodedThenReduced(other, shrink: 1, across: 3.1, down: 3.1)
        _ = try #require(try reducedWhileDecoding(bright, shrink: 1, across: 3.1, down: 3.1))
        #expect(try reducedWhileDecoding(other, shrink: 1, across: 3.1, down: 3.1)?.pixels() == expected.pixels())
        var damaged = bright
        damaged[bright.count / 2] = 0xFF
        damaged[bright.count / 2 + 1] = 0x01
        #expect(try reducedWhileDecoding(damaged, shrink: 1, across: 3.1, down: 3.1) == nil)
        #expect(try reducedWhileDecoding(other, shrink: 1, across: 3.1, down: 3.1)?.pixels() == expected.pixels())
        // While an image holds the thread's buffer the ring is memory of its own, and the image is untouched.
        let holder = try #require(try ScaleOnLoadStep.decodeScaled(bright, shrink: 4, header: header(bright), deadline: nil))
        #expect(UnsafeRawPointer(holder.pointer.pointee.data) == ipx_thread_buffer_address())
        #expect(try reducedWhileDecoding(other, shrink: 1, across: 3.1, down: 3.1)?.pixels() == expected.pixels())
        #expect(try holder.pixels().allSatisfy { $0 >= 250 })
    }

    /// A transform takes this path for a forced size from a decode larger than the thread's reused buffer
    /// (8 MiB: here 2400x1600 at scale 1, 11.5 MB), and the variant is the one the whole decode reduced in
    /// memory gives; a smaller decode (at 1/2 and 1/4) goes into that buffer and is reduced afterwards,
    /// with the same result.
    @Test(arguments: [(300, false), (700, false), (1500, true), (2000, true)])
    func aLargeDecodeIsReducedWhileDecoding(width: Int, streamed: Bool) throws {
        let bytes = try jpeg(width: 2400, height: 1600)
        let resized = try #require(try ResizedInMemory(bytes, width: width))
        #expect(resized.reducedWhileDecoding == streamed)
        let (decoded, arguments) = (resized.decoded, resized.arguments)
        let across = Double(decoded.width) / Double(arguments.width), down = Double(decoded.height) / Double(arguments.height)
        var output: UnsafeMutablePointer<_VipsImage>?
        try #require(ipx_reduce_lanczos3_in_memory(decoded.pointer, &output, across, down) == 0)
        #expect(try resized.variant.pixels() == Image(taking: try #require(output)).pixels())
    }
}
