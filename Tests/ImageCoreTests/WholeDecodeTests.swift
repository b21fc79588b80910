import Foundation
import Testing
import TestSupport

@testable import ImageCore

/// One decode for a srcset (#34): a still PNG or GIF is decoded whole into memory (``DecodedSource``,
/// kept for the next variants) and resized by Lanczos3 alone below a 7x reduction. The variants have
/// the sizes libvips' `thumbnail` gives, are as close to the ideal picture as its variants or closer,
/// keep alpha edges clean, and a variant made from a decode kept by an earlier transform is byte for
/// byte the one a fresh whole decode makes.
@Suite struct WholeDecodeTests {
    let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())

    func request(_ parameters: [(String, String)]) throws -> ImageRequest {
        try ImageRequest(query: [("url", "http://example.com/a.png")] + parameters, limits: .init(maxDimension: 4096))
    }

    /// The variant two ways: libvips' own `thumbnail` from the bytes (the path these sources took before,
    /// still the loader path of other formats), and the transform's (decoded whole); and the decode the
    /// transform hands back to be kept.
    func bothWays(_ source: [UInt8], _ parameters: [(String, String)]) throws -> (thumbnail: VipsImage, whole: VipsImage, decoded: DecodedSource) {
        let request = try request(parameters)
        let plan = try transformer.plan(source, request: request, choice: .fixed(.png))
        #expect(plan.decodesWhole, "\(parameters)")
        guard case .encoded(let whole, let kept?) = try transformer.run(plan, source: source, overlay: nil, reserved: 0, grow: { _ in true })
        else {
            Issue.record("no variant, or no decode handed back")
            throw ImagingError.processingFailed
        }
        let thumbnail = try ResizeStep(box: plan.box.coverBoxFitted(to: plan.header))
            .apply(to: .toLoader(shrink: 1), bytes: source, header: plan.header, deadline: nil)
        return (thumbnail, try VipsImage.decode(whole.bytes), kept)
    }

    @Test(arguments: [
        [("w", "640")], [("w", "333")], [("h", "197")], [("w", "300"), ("h", "300")], [("w", "300"), ("h", "300"), ("fit", "cover")],
        [("w", "200"), ("h", "300"), ("fit", "cover"), ("g", "north")], [("w", "500"), ("h", "200"), ("fit", "fill")], [("w", "1700")],
    ])
    func theSizesAreTheLoaderPathsSizes(parameters: [(String, String)]) throws {
        let source = try TestImages.noise(width: 1600, height: 1067, bands: 3).encoded(as: .png).bytes
        let (thumbnail, whole, decoded) = try bothWays(source, parameters)
        #expect(decoded.width == 1600 && decoded.height == 1067 && decoded.bytes == 1600 * 1067 * 3)
        #expect(whole.width == thumbnail.width && whole.height == thumbnail.height, "\(parameters)")
    }

    /// A picture whose ideal downscale is known: a sum of sinusoids across and down, some well below the
    /// output's Nyquist frequency (which the ideal downscale keeps) and some well above it (which it
    /// removes), rendered at the source's size; the ideal is the first group alone at the output's size.
    /// The whole decode's output must be at least as close to it as the loader path's.
    @Test(arguments: [640, 480, 400, 343])
    func aWholeDecodeIsAtLeastAsCloseToTheIdealAsTheLoaderPath(width: Int) throws {
        let (sourceWidth, sourceHeight) = (2400, 1600)
        let scale = Double(sourceWidth) / Double(width)
        let waves = Waves(outputNyquist: 0.5 / scale)
        let source = try waves.image(width: sourceWidth, height: sourceHeight, scale: 1, keepingHigh: true).encoded(as: .png).bytes
        let (loader, whole, _) = try bothWays(source, [("w", String(width))])
        let ideal = try waves.image(width: whole.width, height: whole.height, scale: Double(sourceWidth) / Double(whole.width), keepingHigh: false)
        let loaderError = try Self.meanSquaredError(loader, ideal)
        let wholeError = try Self.meanSquaredError(whole, ideal)
        #expect(wholeError <= loaderError * 1.05 + 0.05, "w=\(width): whole decode \(wholeError), loader \(loaderError)")
    }

    /// Sinusoids across and down in source pixels' frequencies: below 0.6 of the output's Nyquist frequency
    /// (kept by an ideal downscale) and between 1.5 times it and 0.9 of the source's (removed by it).
    struct Waves {
        let low: [(frequency: Double, amplitude: Double, phase: Double)]
        let high: [(frequency: Double, amplitude: Double, phase: Double)]

        init(outputNyquist: Double) {
            var generator = SplitMix(seed: 7)
            func wave(_ range: ClosedRange<Double>, amplitude: Double) -> (Double, Double, Double) {
                let frequency = range.lowerBound + (range.upperBound - range.lowerBound) * generator.unit()
                return (frequency, amplitude * (0.5 + generator.unit()), 2 * .pi * generator.unit())
            }
            low = (0..<8).map { _ in wave(0.02 * outputNyquist...0.6 * outputNyquist, amplitude: 8) }
            high = (0..<8).map { _ in wave(1.5 * outputNyquist...0.45, amplitude: 5) }
        }

        /// The picture at `scale` source pixels a pixel, sampled at each pixel's centre; grey (every band
        /// the same).
        func image(width: Int, height: Int, scale: Double, keepingHigh: Bool) throws -> VipsImage {
            func profile(_ count: Int, _ offset: Double) -> [Double] {
                (0..<count).map { index in
                    let position = (Double(index) + 0.5) * scale - 0.5
                    let waves = keepingHigh ? low + high : low
                    return waves.reduce(0) { $0 + $1.amplitude * sin(2 * .pi * $1.frequency * position + $1.phase + offset) }
                }
            }
            let across = profile(width, 0), down = profile(height, 1.3)
            var pixels = [UInt8](repeating: 0, count: width * height * 3)
            for y in 0..<height {
                for x in 0..<width {
                    let value = UInt8(max(0, min(255, (128 + across[x] + down[y]).rounded())))
                    let offset = (y * width + x) * 3
                    pixels[offset] = value
                    pixels[offset + 1] = value
                    pixels[offset + 2] = value
                }
            }
            return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
        }
    }

    /// A small deterministic generator (SplitMix64).
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func unit() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
    }

    /// Transparent pixels' colour must not bleed into the opaque ones at an edge (the reduce is
    /// premultiplied when the alpha is real), as in the loader path.
    @Test func transparentColourDoesNotBleedIntoEdges() throws {
        var pixels = [UInt8](repeating: 0, count: 1200 * 800 * 4)
        for y in 0..<800 {
            for x in 0..<1200 {
                let offset = (y * 1200 + x) * 4
                if x < 600 {
                    pixels[offset] = 255  // opaque red
                    pixels[offset + 3] = 255
                } else {
                    pixels[offset + 1] = 255  // transparent green
                }
            }
        }
        let source = try VipsImage.fromPixels(pixels, width: 1200, height: 800, bands: 4).encoded(as: .png).bytes
        let (loader, whole, _) = try bothWays(source, [("w", "200")])
        #expect(whole.bands == 4)
        for x in 95..<105 {
            let pixel = try whole.pixel(x: x, y: 50)
            if pixel[3] > 16 { #expect(pixel[1] < 8, "x=\(x): green bled into \(pixel)") }
            let reference = try loader.pixel(x: x, y: 50)
            #expect(abs(pixel[3] - reference[3]) <= 8, "x=\(x): alpha \(pixel[3]) vs \(reference[3])")
        }
    }

    /// A decode kept by one transform and used by the next makes exactly what a fresh whole decode makes,
    /// and the plan that uses it reserves only the resize and the encoder.
    /// A reduce with a real alpha that is itself the variant (no profile, no turn: no `thumbnail` after it)
    /// is still evaluated under the transform's deadline: in time it is the variant, past the deadline it
    /// stops.
    @Test func aDeadlineStopsTheReduceThatIsTheVariant() throws {
        let source = try TestImages.noise(width: 1600, height: 1067, bands: 4).encoded(as: .png).bytes
        let plan = try transformer.plan(source, request: request([("w", "640")]), choice: .fixed(.png))
        #expect(!plan.header.colourManaged && plan.header.orientation <= 1)
        let decoded = try DecodedSource.decoding(source, deadline: nil)
        #expect(decoded.hasRealAlpha)
        let steps = SourceSteps(box: plan.box)
        let inTime = try steps.image(fromWhole: decoded, header: plan.header, deadline: TransformDeadline(limitMilliseconds: 0))
        #expect(inTime.width == 640 && inTime.height == 427 && inTime.bands == 4)
        let passed = TransformDeadline(limitMilliseconds: 0)
        passed.expireNow()
        #expect(throws: ImagingError.self) {
            _ = try steps.image(fromWhole: decoded, header: plan.header, deadline: passed)
        }
    }

    @Test func aKeptDecodeMakesTheSameBytesAsAFreshOne() throws {
        let source = try TestImages.noise(width: 1500, height: 1000, bands: 3).encoded(as: .png).bytes
        let (_, _, decoded) = try bothWays(source, [("w", "900")])
        let request = try request([("w", "300")])
        let fresh = try transformer.plan(source, request: request, choice: .fixed(.webp))
        let reuse = try transformer.plan(source, request: request, choice: .fixed(.webp), decoded: decoded)
        #expect(reuse.usesDecodedSource && !reuse.decodesWhole)
        #expect(reuse.reservation <= fresh.reservation - decoded.bytes, "the decode is not reserved again: \(reuse.reservation) vs \(fresh.reservation)")
        guard case .encoded(let first, _) = try transformer.run(fresh, source: source, overlay: nil, reserved: 0, grow: { _ in true }),
            case .encoded(let second, nil) = try transformer.run(reuse, source: source, overlay: nil, reserved: 0, grow: { _ in true })
        else { throw ImagingError.processingFailed }
        #expect(first.bytes == second.bytes)
        // A decode of other dimensions is never used for this source.
        let other = try DecodedSource.decoding(TestImages.gradient(width: 300, height: 200).encoded(as: .png).bytes, deadline: nil)
        #expect(try !transformer.plan(source, request: request, choice: .fixed(.webp), decoded: other).usesDecodedSource)
    }

    @Test func stillPNGGIFAndWebPWithoutACropAreDecodedWhole() throws {
        let png = try TestImages.gradient(width: 400, height: 300).encoded(as: .png).bytes
        let jpeg = try TestImages.jpeg(width: 400, height: 300)
        let webp = try TestImages.gradient(width: 400, height: 300).encoded(as: .webp).bytes
        let still = try TestImages.gradient(width: 400, height: 300).encoded(as: .gif).bytes
        let animated = try TestImages.animation(width: 120, height: 80, frames: 3).encoded(as: .gif).bytes
        func whole(_ bytes: [UInt8], _ parameters: [(String, String)] = [("w", "100")]) throws -> Bool {
            try transformer.plan(bytes, request: request(parameters), choice: .fixed(.png)).decodesWhole
        }
        #expect(try whole(png) && whole(still))
        #expect(try !whole(jpeg) && !whole(animated))
        #expect(try whole(webp, [("w", "200")]), "a WebP within 3x: libwebp decodes it whole anyway")
        #expect(try !whole(webp), "a WebP reduced 4x: libwebp scales it while it decodes")
        #expect(try !whole(png, [("w", "100"), ("crop", "10,10,200,100")]))
        #expect(try !whole(png, [("w", "40")]), "7x or more: thumbnail reads the file as it decodes")
        // A decode larger than 64 MiB (a hostile 50 MP PNG would be 200–400 MB) is resized as it is read.
        let box = ResizeBox(width: 300, height: nil, fit: .contain)
        var header = SourceHeader(width: 4096, height: 4096)
        header.decodedPixelBytes = 4
        #expect(transformer.keepsWholeDecode(of: header, box: box, format: .png), "64 MiB exactly")
        header.height = 4097
        #expect(!transformer.keepsWholeDecode(of: header, box: box, format: .png))
        header.decodedPixelBytes = 8
        header.height = 2049
        #expect(!transformer.keepsWholeDecode(of: header, box: box, format: .png), "16-bit RGBA: 8 bytes a pixel")
    }

    /// A decode kept by a wide width (a still WebP within 3x, which libwebp decodes whole into memory of
    /// its own: the pixels libvips' webpload gives; a PNG below 7x) makes a narrower width at least as
    /// close to the ideal picture as that width's own decode: a WebP's scaled by libwebp to three times
    /// the output, then `thumbnail`; a PNG's read by `thumbnail` from 7x on.
    @Test(arguments: [(OutputFormat.webp, 400), (.webp, 300), (.png, 300), (.png, 200)])
    func aNarrowerWidthFromAKeptDecodeIsAtLeastAsCloseToTheIdeal(format: OutputFormat, width: Int) throws {
        let (sourceWidth, sourceHeight) = (2400, 1600)
        let waves = Waves(outputNyquist: 0.5 * Double(width) / Double(sourceWidth))
        let source = try waves.image(width: sourceWidth, height: sourceHeight, scale: 1, keepingHigh: true)
            .encoded(as: format, quality: format == .webp ? 95 : nil).bytes
        let wide = try transformer.plan(source, request: request([("w", "1000")]), choice: .fixed(.png))
        #expect(wide.decodesWhole)
        guard case .encoded(_, let kept?) = try transformer.run(wide, source: source, overlay: nil, reserved: 0, grow: { _ in true }) else {
            Issue.record("no decode handed back")
            return
        }
        #expect(kept.width == sourceWidth && kept.height == sourceHeight && kept.bytes == sourceWidth * sourceHeight * 3)
        #expect(try kept.image.pixels() == VipsImage.decode(source).pixels(), "libvips' loader's pixels")
        let small = try request([("w", String(width))])
        let fromKept = try transformer.plan(source, request: small, choice: .fixed(.png), decoded: kept)
        let own = try transformer.plan(source, request: small, choice: .fixed(.png))
        #expect(fromKept.usesDecodedSource && !own.decodesWhole && !own.usesDecodedSource)
        func variant(_ plan: TransformPlan) throws -> VipsImage {
            guard case .encoded(let encoded, _) = try transformer.run(plan, source: source, overlay: nil, reserved: 0, grow: { _ in true })
            else { throw ImagingError.processingFailed }
            return try VipsImage.decode(encoded.bytes)
        }
        let (resized, scaled) = (try variant(fromKept), try variant(own))
        #expect(resized.width == scaled.width && resized.height == scaled.height)
        let ideal = try waves.image(
            width: resized.width, height: resized.height, scale: Double(sourceWidth) / Double(resized.width), keepingHigh: false)
        let keptError = try Self.meanSquaredError(resized, ideal)
        let ownError = try Self.meanSquaredError(scaled, ideal)
        #expect(keptError <= ownError * 1.05 + 0.05, "\(format) w=\(width): from the kept decode \(keptError), own decode \(ownError)")
    }

    /// Mean squared difference of two images of the same size (every band).
    static func meanSquaredError(_ first: VipsImage, _ second: VipsImage) throws -> Double {
        let (a, b) = (try first.pixels(), try second.pixels())
        try #require(a.count == b.count)
        var sum = 0.0
        for index in a.indices {
            let difference = Double(a[index]) - Double(b[index])
            sum += difference * difference
        }
        return sum / Double(max(1, a.count))
    }
}
