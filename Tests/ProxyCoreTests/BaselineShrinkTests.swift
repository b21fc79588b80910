import CVipsShim
import ProxyCore
import Testing

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
        for (width, expected) in [(300, 8), (480, 8), (481, 4), (960, 4), (961, 2), (1920, 2), (1921, 1), (3840, 1)] {
            #expect(ResizeStep(width: width, height: nil, fit: .contain).jpegShrink(for: header) == expected, "w=\(width)")
        }
        // A cover box needs the shorter side covered: 400x400 from 3840x2160 is a 5.4x reduction.
        #expect(ResizeStep(width: 400, height: 400, fit: .cover).jpegShrink(for: header) == 4)

        // Decoded at 1/8 then reduced with Lanczos3, the result stays close to a reduce of the full decode.
        let baseline = try large().encoded(as: .jpeg, quality: 90).bytes
        let shrunk = try transform(baseline, width: 300)
        // thumbnail_image of a decoded image has no shrink-on-load: a Lanczos3 reduce of every pixel.
        let reference = try ImageCore.VipsImage.decode(baseline).producing { ipx_vips_thumbnail_image($0, $1, 300, 10_000_000, 2, -1, 0) }
        #expect(shrunk.width == reference.width && shrunk.height == reference.height)
        #expect(try difference(shrunk, reference) < 2.0)
    }
}
