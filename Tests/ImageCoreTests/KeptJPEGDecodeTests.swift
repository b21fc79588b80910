import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

typealias KeptJPEGImage = ImageCore.VipsImage

/// One decode for a srcset of a progressive JPEG (#34): a wide width decodes the file at its own DCT scale
/// into memory of its own, holds it whole and hands it back to be kept (``DecodedSource/shrink``); a
/// narrower width whose own decode would be at that scale or the next one down is reduced from it, at
/// least as close to the ideal picture as its own decode, under a smaller reservation (no coefficient
/// buffer). Baseline files and thumbnails keep nothing, and a kept decode never takes a transform's kill flag.
@Suite struct KeptJPEGDecodeTests {
    let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())
    static let (sourceWidth, sourceHeight) = (2400, 1600)

    func request(_ width: Int) throws -> ImageRequest {
        try ImageRequest(query: [("url", "http://example.com/a.jpg"), ("w", String(width))], limits: .init(maxDimension: 4096))
    }

    /// A progressive 4:4:4 JPEG of `image` (libjpeg keeps a whole-image coefficient buffer for it).
    static func progressive(_ image: KeptJPEGImage) throws -> [UInt8] {
        try TestImages.jpeg(image, quality: 95, progressive: true, subsample: false)
    }

    func run(_ plan: TransformPlan, _ source: [UInt8]) throws -> (KeptJPEGImage, DecodedSource?) {
        guard case .encoded(let encoded, let kept) = try transformer.run(plan, source: source, overlay: nil, reserved: 0, grow: { _ in true })
        else { throw ImagingError.processingFailed }
        return (try KeptJPEGImage.decode(encoded.bytes), kept)
    }

    @Test func aWideWidthKeepsItsDecodeForTheNarrowerOnes() throws {
        let source = try Self.progressive(TestImages.noise(width: Self.sourceWidth, height: Self.sourceHeight, bands: 3))
        // 1200 px: 2x, decoded at 1/1 (2400x1600, 11.5 MB): held whole and kept.
        let wide = try transformer.plan(source, request: request(1200), choice: .fixed(.jpeg))
        #expect(wide.decodesWhole && wide.wholeJPEGShrink == 1)
        let (wideImage, keptDecode) = try run(wide, source)
        let kept = try #require(keptDecode)
        #expect(wideImage.width == 1200)
        #expect(kept.shrink == 1 && kept.width == Self.sourceWidth && kept.height == Self.sourceHeight)
        #expect(kept.bytes == Self.sourceWidth * Self.sourceHeight * 3)
        // 640 px decodes at 1/2 on its own: reduced from the kept 1/1 instead, without the coefficient buffer.
        let narrow = try request(640)
        let fromKept = try transformer.plan(source, request: narrow, choice: .fixed(.jpeg), decoded: kept)
        let own = try transformer.plan(source, request: narrow, choice: .fixed(.jpeg))
        #expect(fromKept.usesDecodedSource && !own.usesDecodedSource && !own.decodesWhole)
        #expect(fromKept.reservation < own.reservation, "\(fromKept.reservation) vs \(own.reservation)")
        let (fromKeptImage, handedBack) = try run(fromKept, source)
        #expect(handedBack == nil && fromKeptImage.width == 640 && fromKeptImage.height == 427)
        // 300 px (8x: the DC scans, or 1/4) is two scales down: decoded on its own.
        #expect(try !transformer.plan(source, request: request(300), choice: .fixed(.jpeg), decoded: kept).usesDecodedSource)
    }

    /// A decode kept at 1/2 serves a width whose own decode is at 1/4, never one that needs more pixels.
    @Test func aKeptHalfServesOnlyWidthsItCovers() throws {
        let source = try Self.progressive(TestImages.noise(width: Self.sourceWidth, height: Self.sourceHeight, bands: 3))
        let header = try SourceHeader(reading: source)
        let half = try #require(try DecodedSource.decodingJPEG(source, shrink: 2, header: header, deadline: nil))
        #expect(half.shrink == 2 && half.width == 1200 && half.height == 800 && half.decodeCost > .zero)
        let quarter = try transformer.plan(source, request: request(400), choice: .fixed(.jpeg), decoded: half)
        #expect(quarter.usesDecodedSource, "400 px: 6x, its own decode at 1/4")
        let (image, _) = try run(quarter, source)
        #expect(image.width == 400 && image.height == 267)
        #expect(try !transformer.plan(source, request: request(1000), choice: .fixed(.jpeg), decoded: half).usesDecodedSource)
        // A decode of other bytes' size is never used.
        let other = try Self.progressive(TestImages.noise(width: 2000, height: 1600, bands: 3))
        #expect(try !transformer.plan(other, request: request(400), choice: .fixed(.jpeg), decoded: half).usesDecodedSource)
    }

    /// The variant from a kept larger decode against the ideal picture: at least as close as the one the
    /// width's own (smaller) DCT-scaled decode makes.
    @Test(arguments: [640, 500, 400])
    func aNarrowerWidthFromAKeptDecodeIsAtLeastAsCloseToTheIdeal(width: Int) throws {
        let waves = WholeDecodeTests.Waves(outputNyquist: 0.5 * Double(width) / Double(Self.sourceWidth))
        let source = try Self.progressive(waves.image(width: Self.sourceWidth, height: Self.sourceHeight, scale: 1, keepingHigh: true))
        let header = try SourceHeader(reading: source)
        let own = try transformer.plan(source, request: request(width), choice: .fixed(.jpeg))
        let ownShrink = own.box.coverBoxFitted(to: header).jpegShrink(for: header)
        let kept = try #require(try DecodedSource.decodingJPEG(source, shrink: ownShrink / 2, header: header, deadline: nil))
        let fromKept = try transformer.plan(source, request: request(width), choice: .fixed(.jpeg), decoded: kept)
        #expect(fromKept.usesDecodedSource, "w=\(width): own decode at 1/\(ownShrink)")
        let (resized, _) = try run(fromKept, source)
        let (scaled, _) = try run(own, source)
        #expect(resized.width == scaled.width && resized.height == scaled.height)
        let ideal = try waves.image(
            width: resized.width, height: resized.height, scale: Double(Self.sourceWidth) / Double(resized.width), keepingHigh: false)
        let keptError = try WholeDecodeTests.meanSquaredError(resized, ideal)
        let ownError = try WholeDecodeTests.meanSquaredError(scaled, ideal)
        #expect(keptError <= ownError * 1.05 + 0.05, "w=\(width): from the kept decode \(keptError), own decode \(ownError)")
    }

    @Test func baselineFilesAndThumbnailsKeepNothing() throws {
        let image = try TestImages.noise(width: Self.sourceWidth, height: Self.sourceHeight, bands: 3)
        let baseline = try TestImages.jpeg(image, quality: 95)
        let plan = try transformer.plan(baseline, request: request(1200), choice: .fixed(.jpeg))
        #expect(!plan.decodesWhole && !transformer.looksUpKeptDecode(for: plan, source: baseline), "a baseline decode at scale is cheap")
        let progressive = try Self.progressive(image)
        let thumbnail = try transformer.plan(progressive, request: request(250), choice: .fixed(.jpeg))
        #expect(!thumbnail.decodesWhole && !transformer.looksUpKeptDecode(for: thumbnail, source: progressive))
        let wide = try transformer.plan(progressive, request: request(1200), choice: .fixed(.jpeg))
        #expect(transformer.looksUpKeptDecode(for: wide, source: progressive))
    }

    /// A width that is the kept decode as it is goes to the encoder through an image of its own: a
    /// deadline's kill flag on it leaves the kept decode readable by the next variants.
    @Test func theKillFlagOfAVariantNeverReachesTheKeptDecode() throws {
        let source = try Self.progressive(TestImages.noise(width: Self.sourceWidth, height: Self.sourceHeight, bands: 3))
        let header = try SourceHeader(reading: source)
        let kept = try #require(try DecodedSource.decodingJPEG(source, shrink: 1, header: header, deadline: nil))
        let plan = try transformer.plan(source, request: request(Self.sourceWidth), choice: .fixed(.jpeg), decoded: kept)
        #expect(plan.usesDecodedSource)
        let variant = try SourceSteps(box: plan.box).image(fromWhole: kept, header: header, deadline: nil)
        #expect(variant.pointer != kept.image.pointer && variant.width == Self.sourceWidth)
        vips_image_set_kill(variant.pointer, 1)
        let (next, _) = try run(try transformer.plan(source, request: request(1000), choice: .fixed(.jpeg), decoded: kept), source)
        #expect(next.width == 1000, "the kept decode still reads")
    }
}
