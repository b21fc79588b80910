import CVipsShim
import Testing

@testable import ProxyCore

private typealias Image = ProxyCore.VipsImage

/// The DC-only decoder against libjpeg's own 1/8-scale decode, layout by layout.
@Suite struct JPEGEighthDecoderTests {
    /// Pseudo-random noise (`bands` 1 or 3): every block differs, so every DC value is checked.
    private func noise(width: Int, height: Int, bands: Int) throws -> Image {
        var state: UInt32 = 88_172_645
        let pixels = (0..<(width * height * bands)).map { index -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            // Smooth structure plus noise within 30...225 (no clipping in the colour conversions).
            let x = (index / bands) % width, y = (index / bands) / width
            return UInt8(30 + x * 100 / width + y * 60 / height + Int(state % 36))
        }
        return try Image.fromPixels(pixels, width: width, height: height, bands: bands)
    }

    private func jpeg(_ image: Image, subsample: Bool, restartInterval: Int) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = ipx_vips_jpegsave_layout(image.pointer, &buffer, &length, 85, 1, subsample ? 1 : 0, Int32(restartInterval))
        try #require(status == 0 && buffer != nil)
        defer { g_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// libjpeg's decode at 1/8 (through libvips), at its own size.
    private func libjpegEighth(_ bytes: [UInt8], width: Int, height: Int) throws -> Image {
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes {
            ipx_vips_thumbnail_jpeg_shrunk($0.baseAddress, $0.count, &output, Int32(width), Int32(height), Int32(VIPS_SIZE_FORCE.rawValue), -1, 8)
        }
        try #require(status == 0)
        return Image(taking: try #require(output))
    }

    @Test(arguments: [
        (bands: 3, subsample: true, restart: 0), (bands: 3, subsample: false, restart: 0),
        (bands: 3, subsample: true, restart: 5), (bands: 1, subsample: false, restart: 7),
    ])
    func matchesLibjpegsEighthDecode(layout: (bands: Int, subsample: Bool, restart: Int)) throws {
        // Not a multiple of the MCU size, so the partial blocks at the edges are covered too.
        let (width, height) = (1008, 640)
        let bytes = try jpeg(noise(width: width, height: height, bands: layout.bands), subsample: layout.subsample, restartInterval: layout.restart)
        let mine = try #require(JPEGEighthDecoder.decode(bytes), "\(layout)")
        #expect(mine.width == 126 && mine.height == 80 && mine.bands == layout.bands)
        let reference = try libjpegEighth(bytes, width: mine.width, height: mine.height)
        let (a, b) = (try mine.pixels(), try reference.pixels())
        try #require(a.count == b.count)
        // With 4:2:0 chroma libjpeg's 1/8 decode uses a 2x2 IDCT for chroma (its AC terms included), so
        // only luma is the same there; otherwise every sample is.
        let compared = layout.subsample ? luma(a) : a.map(Int.init)
        let expected = layout.subsample ? luma(b) : b.map(Int.init)
        let worst = zip(compared, expected).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= 1, "largest difference from libjpeg's 1/8 decode: \(worst) (\(layout))")
    }

    @Test func partialBlocksAtTheEdgesAreTheirBlocksMeans() throws {
        // 1003x645 in 4:2:0: the last MCU column and row are partial, and restart markers every 3 MCUs.
        // Blocks of 16x16 alternate between dark and light, so a block taken from the wrong place shows.
        let (width, height) = (1003, 645)
        let pixels = (0..<(width * height * 3)).map { index -> UInt8 in
            let x = (index / 3) % width, y = (index / 3) / width
            return (x / 16 + y / 16) % 2 == 0 ? 60 : 190
        }
        let bytes = try jpeg(Image.fromPixels(pixels, width: width, height: height, bands: 3), subsample: true, restartInterval: 3)
        let mine = try #require(JPEGEighthDecoder.decode(bytes))
        #expect(mine.width == 126 && mine.height == 81)
        let whole = try Image.decode(bytes)
        let (small, full) = (luma(try mine.pixels()), luma(try whole.pixels()))
        var worst = 0
        for by in 0..<81 {
            for bx in 0..<126 {
                let xs = (bx * 8)..<min(width, bx * 8 + 8), ys = (by * 8)..<min(height, by * 8 + 8)
                let sum = ys.reduce(0) { total, y in xs.reduce(total) { $0 + full[y * width + $1] } }
                worst = max(worst, abs(small[by * 126 + bx] - sum / (xs.count * ys.count)))
            }
        }
        // The encoder pads partial blocks with copies of the edge, so their mean is the visible pixels' mean.
        #expect(worst <= 6, "largest difference from the decoded blocks' means: \(worst)")
    }

    /// BT.601 luma of interleaved RGB samples.
    private func luma(_ rgb: [UInt8]) -> [Int] {
        stride(from: 0, to: rgb.count - 2, by: 3).map { index in
            (299 * Int(rgb[index]) + 587 * Int(rgb[index + 1]) + 114 * Int(rgb[index + 2]) + 500) / 1000
        }
    }

    @Test func damagedOrUnsupportedFilesAreLeftToLibvips() throws {
        let image = try noise(width: 400, height: 300, bands: 3)
        let progressive = try jpeg(image, subsample: true, restartInterval: 0)
        #expect(JPEGEighthDecoder.decode(progressive) != nil)
        var baselineBuffer: UnsafeMutableRawPointer?
        var length = 0
        try #require(ipx_vips_jpegsave_layout(image.pointer, &baselineBuffer, &length, 85, 0, 1, 0) == 0)
        let baseline = [UInt8](UnsafeRawBufferPointer(start: baselineBuffer, count: length))
        g_free(baselineBuffer)
        #expect(JPEGEighthDecoder.decode(baseline) == nil, "baseline: the DC values are interleaved with AC")
        // Cut inside the DC scan, a corrupted Huffman table, random bytes after the header.
        #expect(JPEGEighthDecoder.decode(Array(progressive.prefix(progressive.count / 20))) == nil)
        var corrupt = progressive
        if let dht = (0..<(corrupt.count - 1)).first(where: { corrupt[$0] == 0xFF && corrupt[$0 + 1] == 0xC4 }) {
            for offset in (dht + 5)..<(dht + 21) { corrupt[offset] = 0xFF }
        }
        #expect(JPEGEighthDecoder.decode(corrupt) == nil, "an impossible Huffman table")
        var garbage = Array(progressive.prefix(600))
        var state: UInt32 = 7
        for _ in 0..<20_000 {
            state = state &* 1_103_515_245 &+ 12345
            garbage.append(UInt8(truncatingIfNeeded: state >> 16))
        }
        _ = JPEGEighthDecoder.decode(garbage)  // any answer but a crash
        #expect(JPEGEighthDecoder.decode([0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x02]) == nil)
    }
}
