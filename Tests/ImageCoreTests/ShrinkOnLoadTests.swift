import Testing
import TestSupport

@testable import ImageCore

/// JPEG shrink-on-load: the factor chosen, and the DC-only decode of progressive JPEGs.
@Suite struct ShrinkOnLoadTests {
    private func large() throws -> VipsImage { try TestImages.gradient(width: 2400, height: 1600) }

    /// Mean absolute difference of two images of the same size and bands.
    private func difference(_ first: VipsImage, _ second: VipsImage) throws -> Double {
        let (a, b) = (try first.pixels(), try second.pixels())
        #expect(a.count == b.count)
        return zip(a, b).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(1, a.count))
    }

    private func transform(_ bytes: [UInt8], width: Int) throws -> VipsImage {
        let request = try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", String(width)), ("format", "png")], limits: .init(maxDimension: 4096))
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, maxFrames: 1, maxTransformMilliseconds: 0, encoding: EncodingSettings())
        return try VipsImage.decode(transformer.transform(bytes, request: request, choice: .fixed(.png)).bytes)
    }

    @Test func progressiveJPEGsDecodeAtAnEighthFromTheirDCScans() throws {
        let progressive = try large().encoded(as: .jpeg, quality: 90, progressive: true).bytes
        let baseline = try large().encoded(as: .jpeg, quality: 90).bytes
        let eighth = try #require(JPEGEighthDecoder.image(progressive))
        #expect(eighth.width == 300 && eighth.height == 200)
        #expect(JPEGEighthDecoder.image(baseline) == nil, "baseline files take libvips' path")
        #expect(JPEGEighthDecoder.image(Array(progressive.prefix(600))) == nil, "cut before the DC scans end")

        // The 300-wide result from the DC scans matches the one from the whole baseline file.
        let fromDC = try transform(progressive, width: 300)
        let fromWhole = try transform(baseline, width: 300)
        #expect(fromDC.width == 300 && fromDC.height == 200)
        #expect(try difference(fromDC, fromWhole) < 2.5)
        // And it is the gradient: red grows to the right, green downwards.
        let left = try fromDC.pixel(x: 5, y: 100), right = try fromDC.pixel(x: 294, y: 100)
        let top = try fromDC.pixel(x: 150, y: 5), bottom = try fromDC.pixel(x: 150, y: 194)
        #expect(left[0] < 20 && right[0] > 235)
        #expect(top[1] < 20 && bottom[1] > 235)
    }

    @Test func theDCDecodeKeepsTheEXIFOrientation() throws {
        let rotated = try large().withOrientation(6).encoded(as: .jpeg, quality: 90, progressive: true, keepJPEGMetadata: true).bytes
        let image = try transform(rotated, width: 300)
        #expect(image.width == 300 && image.height == 450, "displayed upright: 1600x2400 scaled to width 300")
    }
}
