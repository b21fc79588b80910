import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// The reduce and the JPEG encoder as one step (``ReducedJPEGEncoder``): each reduced row goes to libjpeg
/// as it is made and the reduced image is never held; the variant is byte for byte the one the reduce's
/// image encoded afterwards gives, on every path that takes it, and the reservation leaves the image out.
@Suite struct ReducedJPEGEncoderTests {
    let transformer = ImageTransformer(maxSourcePixels: 40_000_000, maxTransformMilliseconds: 10_000, encoding: EncodingSettings())

    private func request(_ parameters: [(String, String)]) throws -> ImageRequest {
        try ImageRequest(query: [("url", "http://example.com/a")] + parameters, limits: .init(maxDimension: 4096))
    }

    private func run(_ plan: TransformPlan, _ source: [UInt8]) throws -> (EncodedImage, DecodedSource?) {
        guard case .encoded(let encoded, let kept) = try transformer.run(plan, source: source, overlay: nil, reserved: 0, grow: { _ in true })
        else { throw ImagingError.processingFailed }
        return (encoded, kept)
    }

    /// The variant made with the reduce and the encoder as one step, and made the earlier way (the plan
    /// without the step: the reduced image, then the encoder).
    private func bothWays(_ source: [UInt8], _ parameters: [(String, String)], decoded: DecodedSource? = nil) throws
        -> (fused: EncodedImage, apart: EncodedImage)
    {
        let plan = try transformer.plan(source, request: request(parameters), choice: .fixed(.jpeg), decoded: decoded)
        #expect(plan.reduceEncoder != nil, "\(parameters)")
        var apart = plan
        apart.reduceEncoder = nil
        return (try run(plan, source).0, try run(apart, source).0)
    }

    /// `colour` with an alpha band opaque everywhere.
    private func opaque(_ colour: Image) throws -> Image {
        let pixels = try colour.pixels()
        var joined = [UInt8]()
        joined.reserveCapacity(pixels.count / 3 * 4)
        for start in stride(from: 0, to: pixels.count, by: 3) {
            joined.append(contentsOf: pixels[start..<start + 3])
            joined.append(255)
        }
        return try Image.fromPixels(joined, width: colour.width, height: colour.height, bands: 4)
    }

    private func noiseJPEG(width: Int, height: Int, bands: Int = 3) throws -> [UInt8] {
        try TestImages.jpeg(TestImages.noise(width: width, height: height, bands: bands), quality: 85, progressive: false, subsample: true)
    }

    /// A JPEG whose decode is over the thread's 8 MiB buffer, reduced as libjpeg's rows arrive, at its
    /// full scale and at 1/2; 4:2:0 and 4:4:4 output, interlaced or not, a contain and a fill.
    @Test(arguments: [
        (2400, [("w", "1900")]), (2400, [("w", "1900"), ("q", "95")]), (2400, [("w", "1900"), ("progressive", "true")]),
        (2400, [("w", "1900"), ("h", "1500"), ("fit", "fill")]), (4200, [("w", "1500")]),
        (4200, [("w", "1500"), ("q", "92"), ("progressive", "true")]),
    ])
    func aJPEGsVariantIsTheReducedImageEncoded(width: Int, parameters: [(String, String)]) throws {
        let source = try noiseJPEG(width: width, height: width * 2 / 3)
        let (fused, apart) = try bothWays(source, parameters)
        #expect(fused.bytes == apart.bytes, "\(parameters)")
        #expect(fused.width == apart.width && fused.height == apart.height && fused.format == .jpeg)
        #expect(try Image.decode(fused.bytes).width == fused.width)
        // The step itself made it (it did not decline and leave it to the earlier way).
        let plan = try transformer.plan(source, request: request(parameters), choice: .fixed(.jpeg))
        let fitted = plan.box.coverBoxFitted(to: plan.header)
        let shrink = fitted.jpegShrink(for: plan.header)
        let reduce = try #require(ScaleOnLoadStep(box: fitted).reduceWhileDecoding(plan.header, shrink: shrink))
        let direct = try #require(
            try plan.reduceEncoder?.encoded(decoding: source, shrink: shrink, reduce: reduce, header: plan.header, deadline: nil))
        #expect(direct.bytes == apart.bytes)
    }

    /// A baseline 4:4:4 JPEG shrunk by 10 or more: the DC decoder's 1/8 image goes through the step (the
    /// plan tries the DC decoder first and carries the encoder), and the variant is byte for byte what
    /// libjpeg's own 1/8 decode made before the DC decoder took such files (the plan run with the DC
    /// decoder declined: libjpeg's scaled decode into memory, reduced, then encoded).
    @Test(arguments: [[("w", "300")], [("w", "240"), ("h", "160"), ("fit", "fill")], [("w", "200"), ("q", "92")]])
    func aBaselineFilesEighthFromItsDCCoefficientsIsReducedAndEncodedAsLibjpegsWas(parameters: [(String, String)]) throws {
        let source = try TestImages.jpeg(
            TestImages.noise(width: 3600, height: 2400, bands: 3), quality: 90, progressive: false, subsample: false)
        let (fused, apart) = try bothWays(source, parameters)
        #expect(fused.bytes == apart.bytes, "\(parameters)")
        let plan = try transformer.plan(source, request: request(parameters), choice: .fixed(.jpeg))
        #expect(plan.triesEighthFirst, "\(parameters)")
        #expect(plan.box.coverBoxFitted(to: plan.header).jpegShrink(for: plan.header) == 8, "\(parameters)")
        let libjpegs = try run(plan.withFullReservation, source).0
        #expect(fused.bytes == libjpegs.bytes, "\(parameters)")
    }

    /// A baseline 4:4:4 JPEG with restart markers shrunk by 5 to 10: the plan tries our decoder first, which makes the 1/4
    /// image from the first terms of each block, and carries the encoder; the variant is not libjpeg's
    /// 1/4 path's (the plan run with our decoder declined) but within a level of it on average.
    @Test(arguments: [[("w", "300")], [("w", "400"), ("h", "250"), ("fit", "fill")]])
    func aBaselineFilesQuarterFromItsFirstTermsIsReducedAndEncoded(parameters: [(String, String)]) throws {
        let source = try TestImages.jpeg(
            TestImages.photo(width: 2560, height: 1600), quality: 90, progressive: false, subsample: false, restartInterval: 8)
        let (fused, apart) = try bothWays(source, parameters)
        #expect(fused.bytes == apart.bytes, "\(parameters)")
        let plan = try transformer.plan(source, request: request(parameters), choice: .fixed(.jpeg))
        #expect(plan.triesEighthFirst, "\(parameters)")
        #expect(plan.box.coverBoxFitted(to: plan.header).ownDecoderShrink(plan.header) == 4, "\(parameters)")
        let libjpegs = try run(plan.withFullReservation, source).0
        #expect(fused.bytes != libjpegs.bytes, "\(parameters): made by libjpeg's 1/4 decode")
        let (mine, theirs) = (try Image.decode(fused.bytes).pixels(), try Image.decode(libjpegs.bytes).pixels())
        try #require(mine.count == theirs.count)
        let mean = Double(zip(mine, theirs).map { abs(Int($0) - Int($1)) }.reduce(0, +)) / Double(mine.count)
        #expect(mean < 1.0, "\(parameters): mean difference from libjpeg's 1/4 path \(mean)")
    }

    /// A PNG (RGB, and RGBA whose alpha is opaque everywhere) and a WebP decoded whole, then the next
    /// variant from the decode kept.
    @Test(arguments: [(format: OutputFormat.png, bands: 3), (.png, 4), (.webp, 3)])
    func aWholeDecodesVariantIsTheReducedImageEncoded(source format: OutputFormat, bands: Int) throws {
        var picture = try TestImages.noise(width: 1500, height: 1000, bands: 3)
        if bands == 4 { picture = try opaque(picture) }
        let source = try picture.encoded(as: format, quality: 90).bytes
        let plan = try transformer.plan(source, request: request([("w", "900")]), choice: .fixed(.jpeg))
        #expect(plan.decodesWhole && plan.reduceEncoder != nil)
        let (first, kept) = try run(plan, source)
        let decoded = try #require(kept)
        #expect(!decoded.hasRealAlpha)
        var apart = plan
        apart.reduceEncoder = nil
        #expect(first.bytes == (try run(apart, source).0.bytes))
        let fromKept = try bothWays(source, [("w", "640"), ("q", "95")], decoded: decoded)
        #expect(fromKept.fused.bytes == fromKept.apart.bytes)
        #expect(fromKept.fused.width == 640)
        // The step itself made it.
        let direct = try #require(
            try plan.reduceEncoder?.encoded(
                reducing: decoded.image, box: plan.box.coverBoxFitted(to: plan.header), header: plan.header, deadline: nil))
        #expect(direct.bytes == first.bytes)
    }

    /// What the step does not take is made the earlier way, with the same answer: a grey JPEG (its variant
    /// is made in colour), a real alpha, a damaged file (libjpeg warns: libvips decides).
    @Test func whatItDoesNotTakeIsMadeApart() throws {
        let grey = try noiseJPEG(width: 2400, height: 1600, bands: 1)
        #expect(try transformer.plan(grey, request: request([("w", "900")]), choice: .fixed(.jpeg)).reduceEncoder == nil,
                "a grey decode goes through the colour step")
        let translucent = try TestImages.noise(width: 1200, height: 800, bands: 4).encoded(as: .png).bytes
        let (variant, _) = try bothWays(translucent, [("w", "700")])
        #expect(try Image.decode(variant.bytes).bands == 3, "flattened, the earlier way")
        var damaged = try noiseJPEG(width: 2400, height: 1600)
        damaged[damaged.count / 2] = 0xFF
        damaged[damaged.count / 2 + 1] = 0x01
        let plan = try transformer.plan(damaged, request: request([("w", "1900")]), choice: .fixed(.jpeg))
        var apart = plan
        apart.reduceEncoder = nil
        let fused = Result { try run(plan, damaged).0.bytes }
        let earlier = Result { try run(apart, damaged).0.bytes }
        switch (fused, earlier) {
        case (.success(let one), .success(let other)): #expect(one == other, "the same variant")
        case (.failure(let one), .failure(let other)): #expect("\(one)" == "\(other)", "the same refusal")
        default: Issue.record("one way made a variant, the other refused: \(fused), \(earlier)")
        }
    }

    /// Anything between the reduce and the encoder keeps the reduced image.
    @Test(arguments: [
        [("w", "900"), ("format", "webp")], [("w", "900"), ("h", "900"), ("fit", "pad")], [("w", "900"), ("filter", "blur:2")],
        [("w", "900"), ("max_bytes", "20000")], [("w", "900"), ("lqip", "1")], [("crop", "0,0,800,800"), ("w", "400")],
        [("w", "900"), ("h", "300"), ("fit", "cover"), ("g", "north")],
    ])
    func aStepBetweenKeepsTheImage(parameters: [(String, String)]) throws {
        let source = try noiseJPEG(width: 2400, height: 1600)
        let request = try request(parameters)
        let choice: FormatChoice = parameters.contains { $0 == ("format", "webp") } ? .fixed(.webp) : .fixed(.jpeg)
        #expect(try transformer.plan(source, request: request, choice: choice).reduceEncoder == nil, "\(parameters)")
    }

    /// A turned or colour-managed source goes through `thumbnail` after the reduce.
    @Test func aTurnOrAProfileKeepsTheImage() throws {
        var header = try SourceHeader(reading: try noiseJPEG(width: 640, height: 480))
        let box = ResizeBox(request: try request([("w", "300")]))
        let steps: [any ImagingStep] = [ColourspaceStep()]
        let make = { (header: SourceHeader) in
            ReducedJPEGEncoder.forTransform(
                request: try self.request([("w", "300")]), choice: .fixed(.jpeg), header: header, box: box, keepProfile: false,
                steps: steps, settings: EncodingSettings())
        }
        #expect(try make(header) != nil)
        header.orientation = 6
        #expect(try make(header) == nil)
        header.orientation = 1
        header.colourManaged = true
        #expect(try make(header) == nil)
    }

    /// Only 8-bit samples are the step's: a 16-bit grey with alpha takes 4 bytes a pixel as an 8-bit RGBA
    /// does, and a 16-bit RGBA 8; the bands read from a file tell them apart.
    @Test func sixteenBitSamplesKeepTheImage() throws {
        let request = try request([("w", "300")])
        let make = { (header: SourceHeader) in
            ReducedJPEGEncoder.forTransform(
                request: request, choice: .fixed(.jpeg), header: header, box: ResizeBox(request: request), keepProfile: false,
                steps: [ColourspaceStep()], settings: EncodingSettings())
        }
        let rgba = try SourceHeader(reading: try TestImages.noise(width: 640, height: 480, bands: 4).encoded(as: .png).bytes)
        #expect(rgba.bands == 4 && rgba.decodedPixelBytes == 4 && rgba.hasAlpha)
        #expect(make(rgba) != nil)
        var greyAlpha16 = rgba
        greyAlpha16.bands = 2
        #expect(make(greyAlpha16) == nil, "16-bit grey with alpha")
        var rgba16 = rgba
        rgba16.decodedPixelBytes = 8
        #expect(make(rgba16) == nil, "16-bit RGBA")
        let grey = try SourceHeader(reading: try noiseJPEG(width: 640, height: 480, bands: 1))
        #expect(grey.bands == 1 && make(grey) == nil)
        #expect(SourceHeader(width: 640, height: 480).bands == 0, "not read from a file: not taken")
    }

    /// A `fill` that keeps one side at the source's size is not the step's (the row-by-row reduce takes a
    /// reduction of both sides): a JPEG's decode is held whole and reserved so, a whole PNG decode's
    /// reservation counts the reduced image, and both variants are made, the same as the earlier way.
    @Test func aSideKeptIsReducedIntoAnImage() throws {
        let jpeg = try noiseJPEG(width: 2400, height: 1600)
        let jpegRequest = try request([("w", "2400"), ("h", "1200"), ("fit", "fill")])
        let jpegPlan = try transformer.plan(jpeg, request: jpegRequest, choice: .fixed(.jpeg))
        let fitted = jpegPlan.box.coverBoxFitted(to: jpegPlan.header)
        #expect(fitted.jpegShrink(for: jpegPlan.header) == 1)
        #expect(ScaleOnLoadStep(box: fitted).reduceWhileDecoding(jpegPlan.header, shrink: 1) == nil)
        #expect(jpegPlan.reservation > 3 * 2400 * 1600 + (16 << 20), "the decode held whole is reserved")
        let (fromJPEG, _) = try run(jpegPlan, jpeg)
        #expect(fromJPEG.width == 2400 && fromJPEG.height == 1200)

        let png = try TestImages.noise(width: 1500, height: 1000, bands: 3).encoded(as: .png).bytes
        let pngRequest = try request([("w", "1500"), ("h", "700"), ("fit", "fill")])
        let pngPlan = try transformer.plan(png, request: pngRequest, choice: .fixed(.jpeg))
        #expect(pngPlan.decodesWhole)
        let output = pngPlan.box.estimatedOutputPixels(for: pngPlan.header)
        let intoAnImage = pngPlan.box.estimatedBytesDecodingWhole(for: pngPlan.header, format: .png, realAlpha: false)
        let decoder = ImageTransformer.wholePNGDecoderBytes(sourceBytes: png.count, header: pngPlan.header, format: .png)
        #expect(decoder == png.count + 1000, "the image data copied together, and a filter byte a row")
        #expect(pngPlan.reservation == intoAnImage + EncoderWorkingSet.bytes(for: .fixed(.jpeg), pixels: output) + decoder)
        let (fused, apart) = try bothWays(png, [("w", "1500"), ("h", "700"), ("fit", "fill")])
        #expect(fused.bytes == apart.bytes && fused.width == 1500 && fused.height == 700)
    }

    /// The reservation leaves the reduced image out: 3 bytes an output pixel less than the same transform
    /// reducing into an image (with 4 MiB more slack from a whole decode, as measured).
    @Test func theReservationLeavesTheImageOut() throws {
        let jpeg = try noiseJPEG(width: 2400, height: 1600)
        let png = try TestImages.noise(width: 1500, height: 1000, bands: 3).encoded(as: .png).bytes
        for (source, width) in [(jpeg, 1900), (png, 900)] {
            let request = try request([("w", "\(width)")])
            let header = try SourceHeader(reading: source)
            let box = ResizeBox(request: request)
            let plan = try transformer.plan(source, request: request, choice: .fixed(.jpeg))
            let output = box.estimatedOutputPixels(for: header)
            let apart: Int, fused: Int, margin: Int
            let decoder = ImageTransformer.wholePNGDecoderBytes(sourceBytes: source.count, header: header, format: SourceFormat(sniffing: source))
            if plan.decodesWhole {
                apart = box.estimatedBytesDecodingWhole(for: header, format: .png, realAlpha: false)
                fused = box.estimatedBytesDecodingWhole(for: header, format: .png, realAlpha: false, reduceEncoded: true)
                margin = 4 << 20  // measured: the whole decode's step keeps 4 MiB more slack
            } else {
                apart = box.estimatedBytesDecodingJPEGInMemory(for: header, encoderCoefficientBytes: 3)
                fused = box.estimatedBytesDecodingJPEGInMemory(for: header, encoderCoefficientBytes: 3, reduceEncoded: true)
                margin = 0
            }
            #expect(apart - fused == 3 * output - margin, "\(width)")
            #expect(plan.reservation == fused + EncoderWorkingSet.bytes(for: .fixed(.jpeg), pixels: output) + decoder, "\(width)")
        }
    }

    /// A deadline passed while the rows are reduced and encoded stops the step: the transform answers
    /// "too slow", on both paths.
    @Test func stopsAtItsDeadline() throws {
        let slow = ImageTransformer(maxSourcePixels: 40_000_000, maxTransformMilliseconds: 1, encoding: EncodingSettings())
        let jpeg = try noiseJPEG(width: 2400, height: 1600)
        let png = try TestImages.noise(width: 1500, height: 1000, bands: 3).encoded(as: .png).bytes
        for (source, width) in [(jpeg, 1900), (png, 900)] {
            let plan = try slow.plan(source, request: request([("w", "\(width)")]), choice: .fixed(.jpeg))
            let encoder = try #require(plan.reduceEncoder)
            let deadline = TransformDeadline(limitMilliseconds: 1)
            usleep(5_000)
            if plan.decodesWhole {
                let decoded = try DecodedSource.decoding(source, deadline: nil)
                let box = plan.box.coverBoxFitted(to: plan.header)
                #expect(throws: ImagingError.processingFailed) {
                    try encoder.encoded(reducing: decoded.image, box: box, header: plan.header, deadline: deadline)
                }
            } else {
                let fitted = plan.box.coverBoxFitted(to: plan.header)
                let reduce = try #require(ScaleOnLoadStep(box: fitted).reduceWhileDecoding(plan.header, shrink: 1))
                #expect(throws: ImagingError.processingFailed) {
                    try encoder.encoded(decoding: source, shrink: 1, reduce: reduce, header: plan.header, deadline: deadline)
                }
            }
            #expect(deadline.hasExpired, "marked expired, so the transform answers 'too slow'")
            #expect(throws: ImagingError.tooSlow(limitMilliseconds: 1)) {
                try slow.run(plan, source: source, overlay: nil, reserved: 0, grow: { _ in true })
            }
        }
    }
}
