import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// The DC-only decoder against libjpeg's own 1/8-scale decode, layout by layout.
@Suite struct JPEGEighthDecoderTests {
    private func noise(width: Int, height: Int, bands: Int) throws -> Image {
        try TestImages.noise(width: width, height: height, bands: bands)
    }

    private func jpeg(
        _ image: Image, subsample: Bool, restartInterval: Int, progressive: Bool = true, quality: Int = 85
    ) throws -> [UInt8] {
        try TestImages.jpeg(image, quality: quality, progressive: progressive, subsample: subsample, restartInterval: restartInterval)
    }

    /// libjpeg's decode at 1/8 (through libvips), at its own size.
    private func libjpegEighth(_ bytes: [UInt8], width: Int, height: Int) throws -> Image {
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes {
            ipx_vips_thumbnail_jpeg_shrunk($0.baseAddress, $0.count, &output, Int32(width), Int32(height), Int32(VIPS_SIZE_FORCE.rawValue), -1, 8, 0)
        }
        try #require(status == 0)
        return Image(taking: try #require(output))
    }

    /// Progressive files from their DC scans; baseline (sequential) files from the DC coefficients of
    /// their one scan, every AC coefficient stepped over: with optimised Huffman tables (no restart
    /// markers) and libjpeg's standard ones (restart markers), and at quality 100, whose many large
    /// coefficients take the long codes and runs of zeros.
    @Test(arguments: [
        (bands: 3, restart: 0, progressive: true, quality: 85), (bands: 3, restart: 5, progressive: true, quality: 85),
        (bands: 1, restart: 0, progressive: true, quality: 85), (bands: 1, restart: 7, progressive: true, quality: 85),
        (bands: 3, restart: 0, progressive: false, quality: 85), (bands: 3, restart: 5, progressive: false, quality: 85),
        (bands: 1, restart: 0, progressive: false, quality: 85), (bands: 1, restart: 7, progressive: false, quality: 85),
        (bands: 3, restart: 0, progressive: false, quality: 100), (bands: 3, restart: 3, progressive: false, quality: 100),
    ])
    func matchesLibjpegsEighthDecode(layout: (bands: Int, restart: Int, progressive: Bool, quality: Int)) throws {
        // Not a multiple of the MCU size, so the partial blocks at the edges are covered too.
        let (width, height) = (1008, 640)
        let bytes = try jpeg(
            noise(width: width, height: height, bands: layout.bands), subsample: false, restartInterval: layout.restart,
            progressive: layout.progressive, quality: layout.quality)
        let mine = try #require(JPEGEighthDecoder.image(bytes), "\(layout)")
        #expect(mine.width == 126 && mine.height == 80 && mine.bands == layout.bands)
        let reference = try libjpegEighth(bytes, width: mine.width, height: mine.height)
        let (a, b) = (try mine.pixels(), try reference.pixels())
        try #require(a.count == b.count)
        let worst = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst == 0, "largest difference from libjpeg's 1/8 decode: \(worst) (\(layout))")
    }

    /// Near-white and near-black blocks with a little colour, coarsely quantised: their DC terms land
    /// outside 0...255 and are clamped before the colour conversion, as libjpeg's range-limit table does
    /// (clamped after it, three levels differed).
    @Test(arguments: [false, true])
    func samplesBeyondTheRangeAreClampedAsLibjpegDoes(progressive: Bool) throws {
        let colours: [[UInt8]] = [
            [255, 255, 240], [240, 255, 255], [255, 240, 255], [0, 0, 20], [20, 0, 0], [0, 20, 0], [255, 250, 230], [10, 0, 30],
        ]
        let (width, height) = (256, 192)
        var state: UInt32 = 5
        var blocks: [[UInt8]] = []
        for _ in 0..<((width / 16) * (height / 16)) {
            state = state &* 1_103_515_245 &+ 12345
            blocks.append(colours[Int(state >> 16) % colours.count])
        }
        let pixels = (0..<(width * height)).flatMap { index -> [UInt8] in
            blocks[(index / width / 16) * (width / 16) + (index % width) / 16]
        }
        let image = try Image.fromPixels(pixels, width: width, height: height, bands: 3)
        let bytes = try jpeg(image, subsample: false, restartInterval: 0, progressive: progressive, quality: 10)
        let mine = try #require(JPEGEighthDecoder.image(bytes))
        let reference = try libjpegEighth(bytes, width: mine.width, height: mine.height)
        #expect(try mine.pixels() == reference.pixels())
    }

    /// What the service makes of a progressive file at exactly 1/8 against libjpeg's own 1/8 decode, per
    /// subsampling: 4:4:4 and grey through the DC path, 4:2:0 through libvips (libjpeg itself).
    @Test(arguments: ["444", "420", "grey"])
    func eighthScaleOutputMatchesLibjpegPerSubsampling(layout: String) throws {
        let (width, height) = (1200, 800)
        let image = try noise(width: width, height: height, bands: layout == "grey" ? 1 : 3)
        let bytes = try jpeg(image, subsample: layout == "420", restartInterval: 0)
        let request = try ImageRequest(
            query: [("url", "http://example.com/a.jpg"), ("w", "\(width / 8)"), ("h", "\(height / 8)"), ("fit", "fill"), ("format", "png")],
            limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        let mine = try Image.decode(transformer.transform(bytes, request: request, choice: .fixed(.png)).bytes)
        var reference = try libjpegEighth(bytes, width: width / 8, height: height / 8)
        if layout == "grey" { reference = try reference.producing { ipx_vips_to_srgb($0, $1) } }
        let (a, b) = (try mine.pixels(), try reference.pixels())
        try #require(a.count == b.count, "\(layout): \(mine.width)x\(mine.height)x\(mine.bands)")
        let worst = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
        // 4:2:0 is decoded by libjpeg at 1/4 and reduced by Lanczos (twice the output's pixels, for
        // quality), so it is a few levels from libjpeg's 1/8 decode rather than equal (34-37 levels when
        // the DC path repeated chroma).
        let bound = layout == "420" ? 5 : 2
        #expect(worst <= bound, "\(layout): largest difference from libjpeg's 1/8 decode \(worst)")
    }

    /// A baseline file and a progressive one of the same image and quality hold the same quantised DC
    /// coefficients, so their 1/8 images are the same, sample for sample.
    @Test func baselineAndProgressiveFilesOfOneImageGiveTheSameEighth() throws {
        let image = try noise(width: 803, height: 611, bands: 3)
        let progressive = try #require(JPEGEighthDecoder.image(try jpeg(image, subsample: false, restartInterval: 0)))
        for restart in [0, 4] {
            let baseline = try #require(JPEGEighthDecoder.image(
                try jpeg(image, subsample: false, restartInterval: restart, progressive: false)))
            #expect(try baseline.pixels() == progressive.pixels(), "restart interval \(restart)")
        }
    }

    /// libjpeg takes a component's quantisation table when its first scan starts; a table defined again
    /// after the scans (here every step 1, just before EOI) changes nothing, for a baseline file and a
    /// progressive one alike.
    @Test(arguments: [false, true])
    func aTableDefinedAfterTheScansChangesNothing(progressive: Bool) throws {
        let image = try noise(width: 320, height: 240, bands: 3)
        let bytes = try jpeg(image, subsample: false, restartInterval: 0, progressive: progressive)
        let redefined = Array(bytes.dropLast(2)) + [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64) + [0xFF, 0xD9]
        let original = try #require(JPEGEighthDecoder.image(bytes))
        let mine = try #require(JPEGEighthDecoder.image(redefined))
        #expect(try mine.pixels() == original.pixels())
        let reference = try libjpegEighth(redefined, width: mine.width, height: mine.height)
        #expect(try mine.pixels() == reference.pixels())
    }

    /// libjpeg's 1/8 decode of subsampled chroma uses a 2x2 IDCT with AC terms, which the DC scans
    /// cannot give: such files (4:2:0, and chroma sampled finer than luma) are left to libvips.
    @Test func subsampledChromaIsLeftToLibvips() throws {
        let colour = try noise(width: 400, height: 320, bands: 3)
        #expect(JPEGEighthDecoder.image(try jpeg(colour, subsample: true, restartInterval: 0)) == nil, "4:2:0")
        #expect(JPEGEighthDecoder.image(try jpeg(colour, subsample: true, restartInterval: 0, progressive: false)) == nil, "baseline 4:2:0")
        // Chroma finer than luma: the frame header of a 4:4:4 file rewritten to Y 1x1, Cb and Cr 2x2.
        var finer = try jpeg(colour, subsample: false, restartInterval: 0)
        let sof = try #require((0..<(finer.count - 1)).first { finer[$0] == 0xFF && finer[$0 + 1] == 0xC2 })
        finer[sof + 10 + 1 * 3 + 1] = 0x22
        finer[sof + 10 + 2 * 3 + 1] = 0x22
        #expect(JPEGEighthDecoder.image(finer) == nil, "chroma sampled finer than luma")
    }

    @Test func partialBlocksAtTheEdgesAreTheirBlocksMeans() throws {
        // 1003x645: the last block column and row are partial, and restart markers every 3 MCUs.
        // Blocks of 16x16 alternate between dark and light, so a block taken from the wrong place shows.
        let (width, height) = (1003, 645)
        let pixels = (0..<(width * height * 3)).map { index -> UInt8 in
            let x = (index / 3) % width, y = (index / 3) / width
            return (x / 16 + y / 16) % 2 == 0 ? 60 : 190
        }
        let bytes = try jpeg(Image.fromPixels(pixels, width: width, height: height, bands: 3), subsample: false, restartInterval: 3)
        let mine = try #require(JPEGEighthDecoder.image(bytes))
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
        let progressive = try jpeg(image, subsample: false, restartInterval: 0)
        #expect(JPEGEighthDecoder.image(progressive) != nil)
        #expect(JPEGEighthDecoder.image(Array(progressive.dropLast(2))) == nil, "no EOI: libvips decides")
        #expect(JPEGEighthDecoder.image(Array(progressive.prefix(progressive.count * 3 / 4))) == nil, "cut in an AC scan")
        // A baseline file cut inside its scan, with an impossible AC table, or with a code no table holds.
        let baseline = try TestImages.jpeg(image, quality: 85, progressive: false, subsample: false)
        #expect(JPEGEighthDecoder.image(baseline) != nil)
        #expect(JPEGEighthDecoder.image(Array(baseline.prefix(baseline.count / 2)) + [0xFF, 0xD9]) == nil, "cut in the scan")
        // The first AC table's code lengths redrawn, as many codes as before, so that they fill the code
        // space exactly: its last code is then all ones, which libjpeg refuses (JERR_BAD_HUFF_TABLE).
        var badAC = baseline
        let acTable = try #require((0..<(badAC.count - 5)).first {
            badAC[$0] == 0xFF && badAC[$0 + 1] == 0xC4 && badAC[$0 + 4] >> 4 == 1
        })
        let codes = (1...16).reduce(0) { $0 + Int(badAC[acTable + 4 + $1]) }
        var counts = [Int](repeating: 0, count: 17)
        counts[1] = 2
        for _ in 2..<codes {
            let shortest = try #require((1..<16).first { counts[$0] > 0 })
            counts[shortest] -= 1
            counts[shortest + 1] += 2
        }
        for length in 1...16 { badAC[acTable + 4 + length] = UInt8(counts[length]) }
        #expect(JPEGEighthDecoder.image(badAC) == nil, "an AC table with an all-ones code")
        var badCode = baseline
        let scan = try #require((0..<(badCode.count - 1)).first { badCode[$0] == 0xFF && badCode[$0 + 1] == 0xDA })
        let data = scan + 2 + (Int(badCode[scan + 2]) << 8 | Int(badCode[scan + 3]))
        for offset in (data + 40)..<(data + 48) { badCode[offset] = offset % 2 == 0 ? 0xFF : 0x00 }  // 0xFF00: sixteen ones
        #expect(JPEGEighthDecoder.image(badCode) == nil, "sixteen one bits: no code of any table")
        // Cut inside the DC scan, a corrupted Huffman table, random bytes after the header.
        #expect(JPEGEighthDecoder.image(Array(progressive.prefix(progressive.count / 20))) == nil)
        var corrupt = progressive
        if let dht = (0..<(corrupt.count - 1)).first(where: { corrupt[$0] == 0xFF && corrupt[$0 + 1] == 0xC4 }) {
            for offset in (dht + 5)..<(dht + 21) { corrupt[offset] = 0xFF }
        }
        #expect(JPEGEighthDecoder.image(corrupt) == nil, "an impossible Huffman table")
        var garbage = Array(progressive.prefix(600))
        var state: UInt32 = 7
        for _ in 0..<20_000 {
            state = state &* 1_103_515_245 &+ 12345
            garbage.append(UInt8(truncatingIfNeeded: state >> 16))
        }
        _ = JPEGEighthDecoder.image(garbage)  // any answer but a crash
        #expect(JPEGEighthDecoder.image([0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x02]) == nil)
    }
}
