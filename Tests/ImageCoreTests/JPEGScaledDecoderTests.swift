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
}
