import CVipsShim
import Testing

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// The JPEG encoder that evaluates the pipeline on the calling thread (`jpeg_encode.c`) against libvips'
/// own saver: the same image, the same stream layout, and the failures a transform can meet.
@Suite struct CallingThreadJPEGEncoderTests {
    /// A smooth gradient with a sharp square (edges where a wrong colour order or row stride shows).
    private func picture(width: Int, height: Int, bands: Int) throws -> Image {
        let pixels = (0..<(width * height * bands)).map { index -> UInt8 in
            let band = index % bands, x = (index / bands) % width, y = (index / bands) / width
            let inSquare = x > width / 4 && x < width / 2 && y > height / 4 && y < height / 2
            return UInt8(inSquare ? 230 - band * 50 : 20 + (x * 150 / width + y * 50 / height + band * 30) % 200)
        }
        return try Image.fromPixels(pixels, width: width, height: height, bands: bands)
    }

    private func viaLibvips(_ image: Image, quality: Int, progressive: Bool) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        try #require(ipx_vips_jpegsave(image.pointer, &buffer, &length, Int32(quality), progressive ? 1 : 0, 1) == 0)
        defer { g_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: try #require(buffer), count: length))
    }

    private func layout(_ bytes: [UInt8]) -> ipx_jpeg_layout {
        var layout = ipx_jpeg_layout()
        _ = bytes.withUnsafeBytes { ipx_jpeg_read_layout($0.baseAddress, $0.count, 64, &layout) }
        return layout
    }

    @Test(arguments: [
        (bands: 3, quality: 80, progressive: false), (bands: 3, quality: 92, progressive: false),
        (bands: 3, quality: 75, progressive: true), (bands: 1, quality: 80, progressive: false),
    ])
    func writesWhatLibvipsSaverWrites(case: (bands: Int, quality: Int, progressive: Bool)) throws {
        // Heights that are not a multiple of the strip (64 rows) nor of the MCU.
        let image = try picture(width: 301, height: 203, bands: `case`.bands)
        let mine = try #require(try image.jpegOnCallingThread(quality: `case`.quality, progressive: `case`.progressive, deadlineNanoseconds: 0))
        let theirs = try viaLibvips(image, quality: `case`.quality, progressive: `case`.progressive)
        let (a, b) = (try Image.decode(mine), try Image.decode(theirs))
        #expect(a.width == 301 && a.height == 203 && a.bands == `case`.bands)
        let (pa, pb) = (try a.pixels(), try b.pixels())
        try #require(pa.count == pb.count)
        let worst = zip(pa, pb).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 2, "largest difference from libvips' encode: \(worst) \(`case`)")
        // Same stream layout: progressive or not, chroma subsampled below quality 90 only, no metadata.
        let (mineLayout, theirLayout) = (layout(mine), layout(theirs))
        #expect(mineLayout.progressive == theirLayout.progressive && mineLayout.progressive == (`case`.progressive ? 1 : 0))
        #expect(mineLayout.uniform_sampling == theirLayout.uniform_sampling)
        #expect(mineLayout.components == Int32(`case`.bands))
        #expect(!mine.containsMarker(0xE1) && !mine.containsMarker(0xE2), "no EXIF or ICC segment")
        // Within a few percent of libvips' size (same tables, same optimised Huffman coding).
        #expect(abs(mine.count - theirs.count) * 100 / theirs.count <= 3, "\(mine.count) vs \(theirs.count) bytes")
    }

    @Test func leavesOtherImagesToLibvips() throws {
        let rgba = try picture(width: 40, height: 30, bands: 4)
        #expect(try rgba.jpegOnCallingThread(quality: 80, progressive: false, deadlineNanoseconds: 0) == nil)
        // The public path still encodes it (flattened, through libvips).
        let encoded = try rgba.encoded(as: .jpeg)
        #expect(try Image.decode(encoded.bytes).bands == 3)
    }

    @Test func evaluatesTheWholePipelineOnTheCallingThread() throws {
        // A lazy pipeline (a PNG's decode, then a resize) is evaluated by the encoder itself.
        let source = try picture(width: 640, height: 480, bands: 3).encoded(as: .png).bytes
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = source.withUnsafeBytes {
            ipx_vips_thumbnail_buffer_pages($0.baseAddress, $0.count, &output, 320, 240, Int32(VIPS_SIZE_FORCE.rawValue), -1, 1, 0)
        }
        try #require(status == 0)
        let shrunk = Image(taking: try #require(output))
        let bytes = try #require(try shrunk.jpegOnCallingThread(quality: 80, progressive: false, deadlineNanoseconds: 0))
        let decoded = try Image.decode(bytes)
        #expect(decoded.width == 320 && decoded.height == 240)
    }

    @Test func stopsAtItsDeadlineOrTheKillFlag() throws {
        let image = try picture(width: 200, height: 200, bands: 3)
        // A deadline already past (1 ns after the clock's origin).
        #expect(throws: ImagingError.processingFailed) {
            try image.jpegOnCallingThread(quality: 80, progressive: false, deadlineNanoseconds: 1)
        }
        let resized = try image.producing { ipx_vips_thumbnail_image($0, $1, 100, 100, Int32(VIPS_SIZE_FORCE.rawValue), -1, 0) }
        vips_image_set_kill(resized.pointer, 1)
        #expect(throws: ImagingError.processingFailed) {
            try resized.jpegOnCallingThread(quality: 80, progressive: false, deadlineNanoseconds: 0)
        }
    }
}

extension [UInt8] {
    /// Whether a marker segment `0xFF marker` appears before the first scan.
    fileprivate func containsMarker(_ marker: UInt8) -> Bool {
        var index = 2
        while index + 4 <= count, self[index] == 0xFF {
            if self[index + 1] == marker { return true }
            if self[index + 1] == 0xDA { return false }
            index += 2 + Int(self[index + 2]) << 8 + Int(self[index + 3])
        }
        return false
    }
}
