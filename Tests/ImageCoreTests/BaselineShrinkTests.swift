import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

/// Baseline JPEGs: the shrink-on-load factor chosen per source, and what it costs in quality.
@Suite struct BaselineShrinkTests {
    private func large() throws -> ImageCore.VipsImage { try TestImages.gradient(width: 2400, height: 1600) }

    private func transform(_ bytes: [UInt8], width: Int) throws -> ImageCore.VipsImage {
        let request = try ImageRequest(
            query: [("url", "http://example.com/a.jpg"), ("w", String(width)), ("format", "png")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, maxFrames: 1, maxTransformMilliseconds: 0, encoding: EncodingSettings())
        return try ImageCore.VipsImage.decode(transformer.transform(bytes, request: request, choice: .fixed(.png)).bytes)
    }

    /// Mean absolute difference of two images of the same size and bands.
    private func difference(_ first: ImageCore.VipsImage, _ second: ImageCore.VipsImage) throws -> Double {
        let (a, b) = (try first.pixels(), try second.pixels())
        #expect(a.count == b.count)
        return zip(a, b).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(1, a.count))
    }

    @Test func baselineJPEGsShrinkOnLoadAsFarAsTheOutputIsCovered() throws {
        let header = SourceHeader(width: 3840, height: 2160, frames: 1, orientation: 1, colourManaged: false)
        for (width, expected) in [(300, 8), (384, 8), (385, 4), (768, 4), (769, 2), (1536, 2), (1537, 1), (3840, 1)] {
            #expect(ResizeBox(width: width, height: nil, fit: .contain).jpegShrink(for: header) == expected, "w=\(width)")
        }
        // A cover box needs the shorter side covered: 400x400 from 3840x2160 is a 5.4x reduction.
        #expect(ResizeBox(width: 400, height: 400, fit: .cover).jpegShrink(for: header) == 4)
        // Barely 8x smaller (2560 to 300): 1/4, not 1/8.
        let smaller = SourceHeader(width: 2560, height: 1600, frames: 1, orientation: 1, colourManaged: false)
        #expect(ResizeBox(width: 300, height: nil, fit: .contain).jpegShrink(for: smaller) == 4)

        // Decoded at 1/8 then reduced with Lanczos3, the result stays close to a reduce of the full decode.
        let baseline = try large().encoded(as: .jpeg, quality: 90).bytes
        let shrunk = try transform(baseline, width: 240)
        // thumbnail_image of a decoded image has no shrink-on-load: a Lanczos3 reduce of every pixel.
        let reference = try ImageCore.VipsImage.decode(baseline).producing { ipx_vips_thumbnail_image($0, $1, 240, 10_000_000, 2, -1, 0) }
        #expect(shrunk.width == reference.width && shrunk.height == reference.height)
        #expect(try difference(shrunk, reference) < 2.0)
    }

    /// Issue #34: a JPEG that keeps its full size (a 1920 px variant of a 3840 px photograph) is decoded
    /// on the transform's thread and reduced by `reduce_across.c` as its rows arrive: within a level or two
    /// of what libvips' loader and `thumbnail` make of it.
    @Test(arguments: [1920, 1537])
    func anUnshrunkJPEGIsReducedAsLibvipsDoes(width: Int) throws {
        let bytes = try TestImages.noise(width: 3840, height: 2160, bands: 3).encoded(as: .jpeg, quality: 90).bytes
        let header = try SourceHeader(reading: bytes)
        let box = ResizeBox(width: width, height: nil, fit: .contain).coverBoxFitted(to: header)
        #expect(box.jpegShrink(for: header) == 1)
        let loaded = try ScaleOnLoadStep(box: box).apply(to: bytes, header: header, deadline: nil)
        guard case .reduced = loaded else {
            Issue.record("decoded and reduced here, not left to libvips' loader")
            return
        }
        let mine = try ResizeStep(box: box).apply(to: loaded, bytes: bytes, header: header, deadline: nil)
        let libvips = try ResizeStep(box: box).apply(to: .toLoader(shrink: 1), bytes: bytes, header: header, deadline: nil)
        #expect(mine.width == width && mine.width == libvips.width && mine.height == libvips.height)
        let (a, b) = (try mine.pixels(), try libvips.pixels())
        let worst = zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
        let mean = try difference(mine, libvips)
        #expect(worst <= 2 && mean < 0.3, "w=\(width): largest difference \(worst), mean \(mean)")
    }

    @Test func reductionsIntoABoxAreForcedToTheRoundedSize() throws {
        // 1600 rows / 8.533 = 187.5: forced to 188 rows, each axis reduced by its own exact factor.
        let header = SourceHeader(width: 2560, height: 1600, frames: 1, orientation: 1, colourManaged: false)
        let oneSide = ResizeBox(width: 300, height: nil, fit: .contain).thumbnailArguments(for: header)
        #expect(oneSide.width == 300 && oneSide.height == 188 && oneSide.size == 3, "force")
        let box = ResizeBox(width: 400, height: 200, fit: .contain).thumbnailArguments(for: header)
        #expect(box.width == 320 && box.height == 200 && box.size == 3)
        // Nothing to reduce (the source fits): libvips' own arguments, which keep the source's size.
        let fits = ResizeBox(width: 4000, height: nil, fit: .contain).thumbnailArguments(for: header)
        #expect(fits.width == 4000 && fits.size == 2)
        // Rotated by EXIF: the box applies to the upright image.
        let turned = SourceHeader(width: 2560, height: 1600, frames: 1, orientation: 6, colourManaged: false)
        let upright = ResizeBox(width: 300, height: nil, fit: .contain).thumbnailArguments(for: turned)
        #expect(upright.width == 300 && upright.height == 480)
        // And the image made has exactly that size.
        let image = try transform(try large().encoded(as: .jpeg, quality: 90).bytes, width: 301)
        #expect(image.width == 301 && image.height == 201, "1600 / (2400 / 301) = 200.67")
    }
}
