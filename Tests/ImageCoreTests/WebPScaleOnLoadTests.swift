import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

/// Still WebPs are decoded by libwebp at three times the output's size and reduced the rest of the way by
/// Lanczos3 (issue #34): closer to a Lanczos3 reduce of the whole image than libwebp scaling all the way.
@Suite struct WebPScaleOnLoadTests {
    private let source = try! TestImages.noise(width: 2400, height: 1600, bands: 3).encoded(as: .webp, quality: 90).bytes

    /// Mean absolute difference of two images of the same size and bands.
    private func difference(_ first: ImageCore.VipsImage, _ second: ImageCore.VipsImage) throws -> Double {
        let (a, b) = (try first.pixels(), try second.pixels())
        try #require(a.count == b.count && first.width == second.width && first.height == second.height)
        return zip(a, b).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(1, a.count))
    }

    /// `image` reduced by libvips in one Lanczos3 step to `width` (the whole image as the reference).
    private func reduced(_ image: ImageCore.VipsImage, width: Int) throws -> ImageCore.VipsImage {
        try image.producingForTests { ipx_vips_thumbnail_image($0, $1, Int32(width), 10_000_000, 2, -1, 0) }
            .producingForTests { ipx_vips_copy_memory($0, $1) }
    }

    @Test func theScaleKeepsThreeTimesTheOutput() {
        let header = SourceHeader(width: 2400, height: 1600, frames: 1, orientation: 1, colourManaged: false)
        #expect(ResizeBox(width: 300, height: nil, fit: .contain).webpScale(for: header) == 0.375)
        #expect(ResizeBox(width: 800, height: nil, fit: .contain).webpScale(for: header) == 1, "3x or less: decoded whole")
        var animated = ResizeBox(width: 300, height: nil, fit: .contain)
        animated.frames = 4
        #expect(animated.webpScale(for: header) == 1, "animations keep libvips' own path")
    }

    @Test func aWebPThumbnailIsCloserToALanczosReduceOfTheWholeImage() throws {
        let request = try ImageRequest(
            query: [("url", "http://example.com/a.webp"), ("w", "300"), ("format", "png")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, encoding: EncodingSettings())
        let ours = try ImageCore.VipsImage.decode(transformer.transform(source, request: request, choice: .fixed(.png)).bytes)
        #expect(ours.width == 300 && ours.height == 200)
        let reference = try reduced(ImageCore.VipsImage.decode(source), width: 300)
        // libvips' own thumbnail: libwebp scales straight to the output.
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = source.withUnsafeBytes { ipx_vips_thumbnail_buffer_pages($0.baseAddress, $0.count, &output, 300, 10_000_000, 2, -1, 1, 0) }
        try #require(status == 0)
        let libwebpScaled = try ImageCore.VipsImage(taking: try #require(output)).producingForTests { ipx_vips_copy_memory($0, $1) }
        let ourError = try difference(ours, reference)
        let libwebpError = try difference(libwebpScaled, reference)
        #expect(ourError < libwebpError * 0.8, "ours \(ourError), libwebp's scaling \(libwebpError)")
    }
}
