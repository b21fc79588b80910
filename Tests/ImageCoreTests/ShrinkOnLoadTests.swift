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
        let baseline = try large().encoded(as: .jpeg, quality: 90).bytes  // 4:4:4 at quality 90
        let subsampled = try large().encoded(as: .jpeg, quality: 80).bytes  // 4:2:0 below 90
        let eighth = try #require(JPEGEighthDecoder.image(progressive))
        #expect(eighth.width == 300 && eighth.height == 200)
        let fromBaseline = try #require(JPEGEighthDecoder.image(baseline), "a baseline 4:4:4 file's DC coefficients")
        #expect(try fromBaseline.pixels() == eighth.pixels(), "the same DC coefficients")
        #expect(JPEGEighthDecoder.image(subsampled) == nil, "4:2:0 files take libjpeg's path")
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

    /// A baseline file takes our decoder only at the scale libjpeg's scaled decode would have taken
    /// (``ResizeBox/jpegShrinkMargin`` above the output): at 1/8 its output is what it was, at 1/4 it is
    /// made from the first terms of each block; a progressive file takes it from a reduction of 8 on, at
    /// 1/8 only.
    @Test func aBaselineFileIsDecodedByOurDecoderOnlyAtTheScaleLibjpegWouldTake() throws {
        // Noise, so that decoding at 1/4 and reducing gives other samples than the blocks' means.
        let image = try TestImages.noise(width: 2400, height: 1600, bands: 3)
        let baseline = try image.encoded(as: .jpeg, quality: 90).bytes
        let progressive = try image.encoded(as: .jpeg, quality: 90, progressive: true).bytes
        let header = try SourceHeader(reading: baseline), progressiveHeader = try SourceHeader(reading: progressive)
        #expect(header.jpegSequential && header.jpegEighthDecodable)
        #expect(!progressiveHeader.jpegSequential && progressiveHeader.jpegEighthDecodable)
        // With restart markers our decoder makes the 1/4 image; without them (as libvips writes it) libjpeg-turbo does.
        let restarted = try SourceHeader(
            reading: TestImages.jpeg(image, quality: 90, progressive: false, subsample: false, restartInterval: 4))
        for (width, shrink) in [(600, nil), (480, 4), (300, 4), (240, 8), (200, 8)] as [(Int, Int?)] {
            let box = ResizeBox(width: width, height: nil, fit: .contain)
            #expect(box.ownDecoderShrink(restarted) == shrink, "w=\(width)")
            #expect(box.ownDecoderShrink(header) == (shrink == 4 ? nil : shrink), "w=\(width), no restart markers")
            #expect(box.mayDecodeEighth(for: restarted, format: .jpeg) == (shrink != nil), "w=\(width)")
            #expect(box.jpegShrink(for: header) == shrink ?? 2, "w=\(width)")
            #expect(box.ownDecoderShrink(progressiveHeader) == (width <= 300 ? 8 : nil), "w=\(width), progressive")
        }
        // End to end: where both take the DC decoder the outputs are the same bytes (the same DC
        // coefficients); at a reduction of 8 the baseline file is decoded at 1/4 instead.
        let request = { (width: Int) in
            try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", String(width))], limits: .init(maxDimension: 4096))
        }
        let transformer = ImageTransformer(maxSourcePixels: 50_000_000, maxFrames: 1, maxTransformMilliseconds: 0, encoding: EncodingSettings())
        let small = try request(200)
        #expect(try transformer.transform(baseline, request: small, choice: .fixed(.jpeg)).bytes
            == transformer.transform(progressive, request: small, choice: .fixed(.jpeg)).bytes)
        let eight = try request(300)
        #expect(try transformer.transform(baseline, request: eight, choice: .fixed(.jpeg)).bytes
            != transformer.transform(progressive, request: eight, choice: .fixed(.jpeg)).bytes)
    }

    @Test func theDCDecodeKeepsTheEXIFOrientation() throws {
        let rotated = try large().withOrientation(6).encoded(as: .jpeg, quality: 90, progressive: true, keepJPEGMetadata: true).bytes
        let image = try transform(rotated, width: 300)
        #expect(image.width == 300 && image.height == 450, "displayed upright: 1600x2400 scaled to width 300")
    }
}
