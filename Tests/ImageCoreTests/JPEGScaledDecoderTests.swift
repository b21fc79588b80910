import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// libjpeg's scaled decode on the calling thread (`jpeg_scaled.c`) against libvips' jpegload at the same
/// shrink.
@Suite struct JPEGScaledDecoderTests {
    private func noise(width: Int, height: Int, bands: Int) throws -> Image {
        try TestImages.noise(width: width, height: height, bands: bands, seed: 2_463_534_242)
    }

    private func jpeg(_ image: Image, progressive: Bool = false, subsample: Bool, restartInterval: Int = 0) throws -> [UInt8] {
        try TestImages.jpeg(image, quality: 85, progressive: progressive, subsample: subsample, restartInterval: restartInterval)
    }

    /// libvips' jpegload at `shrink`, materialised by libvips (the path the scaled decoder replaces).
    private func libvipsShrunk(_ bytes: [UInt8], shrink: Int) throws -> Image {
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { ipx_vips_jpegload_shrunk($0.baseAddress, $0.count, Int32(shrink), &output) }
        try #require(status == 0)
        return Image(taking: try #require(output))
    }

    private func decode(_ bytes: [UInt8], shrink: Int, orientation: Int = 1, deadline: TransformDeadline? = nil) throws -> Image? {
        let header = try SourceHeader(reading: bytes)
        var oriented = header
        oriented.orientation = orientation
        return try ScaleOnLoadStep.decodeScaled(bytes, shrink: shrink, header: oriented, deadline: deadline)
    }

    private func fields(_ image: Image) -> String {
        var names = [CChar](repeating: 0, count: 4096)
        _ = ipx_vips_metadata_fields(image.pointer, &names, names.count)
        return String(cString: names)
    }

    @Test(arguments: [
        (bands: 3, subsample: true, progressive: false, restart: 0, shrink: 8),
        (bands: 3, subsample: true, progressive: false, restart: 3, shrink: 4),
        (bands: 3, subsample: false, progressive: false, restart: 0, shrink: 2),
        (bands: 1, subsample: false, progressive: false, restart: 0, shrink: 8),
        (bands: 3, subsample: true, progressive: true, restart: 0, shrink: 4),
    ])
    func decodesAsLibvipsJpegloadDoes(layout: (bands: Int, subsample: Bool, progressive: Bool, restart: Int, shrink: Int)) throws {
        // Not a multiple of the MCU or of any shrink: the partial blocks at the edges are covered too.
        let (width, height) = (1001, 643)
        let bytes = try jpeg(
            noise(width: width, height: height, bands: layout.bands), progressive: layout.progressive, subsample: layout.subsample,
            restartInterval: layout.restart)
        let mine = try #require(try decode(bytes, shrink: layout.shrink), "\(layout)")
        let expected = (width: (width + layout.shrink - 1) / layout.shrink, height: (height + layout.shrink - 1) / layout.shrink)
        #expect(mine.width == expected.width && mine.height == expected.height && mine.bands == layout.bands)
        // libvips crops libjpeg's partial last column and row (1001 / 8 = 125 columns, libjpeg makes 126):
        // everything it keeps must be the same samples.
        let reference = try libvipsShrunk(bytes, shrink: layout.shrink)
        #expect(reference.width == width / layout.shrink && reference.height == height / layout.shrink)
        let (a, b) = (try mine.pixels(), try reference.pixels())
        var worst = 0
        for y in 0..<reference.height {
            for x in 0..<(reference.width * layout.bands) {
                worst = max(worst, abs(Int(a[y * mine.width * layout.bands + x]) - Int(b[y * reference.width * layout.bands + x])))
            }
        }
        #expect(worst == 0, "largest difference from libvips' jpegload: \(worst) (\(layout))")
    }

    @Test func carriesTheProfileAndTheOrientation() throws {
        let p3 = try noise(width: 640, height: 480, bands: 3).producing { ipx_vips_icc_export($0, $1, "p3") }
        let bytes = try TestImages.jpeg(p3, quality: 85, progressive: false, subsample: true, keepMetadata: true)
        let decoded = try #require(try decode(bytes, shrink: 4, orientation: 6))
        #expect(fields(decoded).contains("icc-profile-data"), "the source's profile, for the conversion to sRGB")
        #expect(vips_image_get_orientation(decoded.pointer) == 6)
        let plain = try #require(try decode(try jpeg(noise(width: 64, height: 64, bands: 3), subsample: true), shrink: 2))
        #expect(!fields(plain).contains("icc-profile-data"))
    }

    @Test func leavesDamagedAndOtherFilesToLibvips() throws {
        let bytes = try jpeg(noise(width: 800, height: 600, bands: 3), subsample: true)
        #expect(try decode(bytes, shrink: 4) != nil)
        // Cut short (libjpeg warns of a premature end and would fill the rest grey), cut before EOI.
        #expect(try decode(Array(bytes.prefix(bytes.count * 2 / 3)), shrink: 4) == nil)
        #expect(try decode(Array(bytes.dropLast(2)), shrink: 4) == nil)
        // Damage in the entropy-coded data (a byte that is not a valid marker after 0xFF).
        var damaged = bytes
        damaged[bytes.count / 2] = 0xFF
        damaged[bytes.count / 2 + 1] = 0x01
        #expect(try decode(damaged, shrink: 4) == nil)
        // CMYK: libvips converts it; a frame larger than the header the caller checked; not a JPEG at all.
        let cmyk = try noise(width: 200, height: 100, bands: 3).producing { ipx_vips_icc_export($0, $1, "cmyk") }
        #expect(cmyk.bands == 4)
        let cmykBytes = try TestImages.jpeg(cmyk, quality: 85, progressive: false, subsample: true)
        #expect(try decode(cmykBytes, shrink: 2) == nil)
        let small = SourceHeader(width: 80, height: 60)
        #expect(try ScaleOnLoadStep.decodeScaled(bytes, shrink: 4, header: small, deadline: nil) == nil)
        #expect(try ScaleOnLoadStep.decodeScaled([0xFF, 0xD8, 0xFF, 0xC0, 0, 2], shrink: 2, header: small, deadline: nil) == nil)
    }

    @Test func stopsAtItsDeadline() throws {
        let bytes = try jpeg(noise(width: 400, height: 400, bands: 3), subsample: true)
        let deadline = TransformDeadline(limitMilliseconds: 1)
        usleep(5_000)
        #expect(throws: ImagingError.undecodable) { try decode(bytes, shrink: 2, deadline: deadline) }
        #expect(deadline.hasExpired, "the deadline is marked expired, so the transform answers 'too slow'")
    }

    @Test func aTransformPastItsTimeLimitIsTooSlow() throws {
        // The scaled decode notices the clock itself: the answer is "too slow", not a failed transform.
        let bytes = try jpeg(noise(width: 2400, height: 1600, bands: 3), subsample: true)
        let request = try ImageRequest(
            query: [("url", "http://example.com/a.jpg"), ("w", "300"), ("format", "jpeg")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, maxTransformMilliseconds: 1, encoding: EncodingSettings())
        #expect(throws: ImagingError.tooSlow(limitMilliseconds: 1)) {
            try transformer.transform(bytes, request: request, choice: .fixed(.jpeg))
        }
    }

    /// The address of a memory image's pixels.
    private func pixelAddress(_ image: Image) -> UnsafeRawPointer? {
        UnsafeRawPointer(image.pointer.pointee.data)
    }

    /// Decodes reuse the thread's buffer (thread_buffer.c), and a reused buffer never shows an earlier
    /// image's pixels: a smaller, different image decoded into the memory a bright one just left is
    /// sample for sample libvips' own decode of it, and so is one decoded after a damaged file stopped
    /// part-way through the same memory.
    @Test func aReusedBufferNeverShowsAnEarlierImagesPixels() throws {
        let white = try TestImages.solid(width: 1600, height: 1200, red: 255, green: 255, blue: 255)
        let bright = try jpeg(white, subsample: true)
        let other = try jpeg(noise(width: 1001, height: 643, bands: 3), subsample: true)
        let reference = try libvipsShrunk(other, shrink: 4)
        func sameAsReference(_ decoded: Image) throws -> Bool {
            let (a, b) = (try decoded.pixels(), try reference.pixels())
            for y in 0..<reference.height {
                for x in 0..<(reference.width * 3) where a[y * decoded.width * 3 + x] != b[y * reference.width * 3 + x] {
                    return false
                }
            }
            return true
        }
        var first: Image? = try #require(try decode(bright, shrink: 2))
        let firstAddress = pixelAddress(first!)
        #expect(firstAddress != nil && firstAddress == ipx_thread_buffer_address(), "decoded into the thread's buffer")
        #expect(try first!.pixels().allSatisfy { $0 >= 250 })
        first = nil
        // The buffer is free again: the next decode writes over the bright pixels.
        let second = try #require(try decode(other, shrink: 4))
        #expect(pixelAddress(second) == firstAddress, "the same memory, reused")
        #expect(try sameAsReference(second))
        // While an image still holds the buffer, the next decode gets other memory and leaves it alone.
        let third = try #require(try decode(bright, shrink: 2))
        #expect(pixelAddress(third) != pixelAddress(second))
        #expect(try sameAsReference(second), "the held image's pixels are untouched")
        // A damaged file stops part-way in the thread's buffer and hands nothing out; the next decode is whole.
        var damaged = bright
        damaged[bright.count / 2] = 0xFF
        damaged[bright.count / 2 + 1] = 0x01
        withExtendedLifetime(third) {}
        #expect(try decode(damaged, shrink: 2) == nil)
        #expect(try sameAsReference(try #require(try decode(other, shrink: 4))))
        // A decode over the thread buffer's limit allocates its own memory.
        let large = try jpeg(try TestImages.solid(width: 2000, height: 1500, red: 10, green: 20, blue: 30), subsample: true)
        let big = try #require(try decode(large, shrink: 1))
        #expect(big.width * big.height * 3 > Int(IPX_THREAD_BUFFER_MAX_BYTES))
        #expect(pixelAddress(big) != ipx_thread_buffer_address())
    }

    /// The DC-only decoder of progressive files (jpeg_dc.c) writes into the same reused buffer: an image
    /// decoded into memory a bright one just left equals the same file decoded into fresh memory.
    @Test func theDCDecoderReusesTheBufferWithoutShowingEarlierPixels() throws {
        let bright = try jpeg(try TestImages.solid(width: 1600, height: 1200, red: 255, green: 255, blue: 255), progressive: true, subsample: false)
        let other = try jpeg(noise(width: 1001, height: 643, bands: 3), progressive: true, subsample: false)
        // Decoded while another image holds the thread's buffer: fresh memory of its own.
        let holder = try #require(JPEGEighthDecoder.image(bright))
        let fresh = try #require(JPEGEighthDecoder.image(other))
        #expect(pixelAddress(fresh) != pixelAddress(holder))
        let expected = try fresh.pixels()
        withExtendedLifetime(holder) {}
        // A bright decode into the thread's buffer, released, then the other file into the same memory.
        var first: Image? = try #require(JPEGEighthDecoder.image(bright))
        let address = pixelAddress(first!)
        #expect(address == ipx_thread_buffer_address(), "decoded into the thread's buffer")
        first = nil
        let reused = try #require(JPEGEighthDecoder.image(other))
        #expect(pixelAddress(reused) == address, "the same memory, reused")
        #expect(reused.width == fresh.width && reused.height == fresh.height)
        #expect(try reused.pixels() == expected)
    }
}
