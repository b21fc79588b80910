import CVipsShim
import Foundation
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// A whole decode whose alpha is 255 everywhere (most RGBA PNGs) is held without its alpha band
/// (`opaque_alpha.c`): a quarter less memory kept for a srcset and resized, and every output the one the
/// same picture without an alpha band gives, byte for byte. A real alpha is kept as it is.
@Suite struct OpaqueAlphaTests {
    let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())

    /// `colour` with an alpha band of `alpha` everywhere after it, as one image.
    private func withAlpha(_ colour: Image, _ alpha: UInt8) throws -> Image {
        let pixels = try colour.pixels()
        let bands = colour.bands
        var joined = [UInt8]()
        joined.reserveCapacity(pixels.count / bands * (bands + 1))
        for start in stride(from: 0, to: pixels.count, by: bands) {
            joined.append(contentsOf: pixels[start..<start + bands])
            joined.append(alpha)
        }
        return try Image.fromPixels(joined, width: colour.width, height: colour.height, bands: bands + 1)
    }

    /// Large enough for a mapping of its own (from 4 MiB, whose alpha pages go back to the kernel), and
    /// smaller (libvips' own memory); colour and grey.
    @Test(arguments: [(1400, 900, 3), (300, 200, 3), (1200, 1000, 1), (90, 70, 1), (91, 71, 1)])
    func anOpaqueAlphaIsDroppedFromAWholeDecode(width: Int, height: Int, colourBands: Int) throws {
        let colour = try TestImages.noise(width: width, height: height, bands: colourBands)
        let png = try withAlpha(colour, 255).encoded(as: .png).bytes
        #expect(try Image.decode(png).bands == colourBands + 1, "the file has an alpha band")
        let decoded = try DecodedSource.decoding(png, deadline: nil)
        #expect(decoded.image.bands == colourBands)
        #expect(decoded.bytes == width * height * colourBands)
        #expect(!decoded.hasRealAlpha)
        #expect(try decoded.image.pixels() == colour.pixels(), "the colour bands, moved down in place")
    }

    /// One pixel not opaque (the last one, after every other has been looked at; for grey with an odd
    /// number of pixels, the one outside the words) keeps the alpha.
    @Test(arguments: [(800, 600, 3), (91, 71, 1), (90, 70, 1)])
    func aRealAlphaIsKept(width: Int, height: Int, colourBands: Int) throws {
        let colour = try TestImages.noise(width: width, height: height, bands: colourBands)
        var pixels = try withAlpha(colour, 255).pixels()
        pixels[pixels.count - 1] = 254
        let bands = colourBands + 1
        let png = try Image.fromPixels(pixels, width: width, height: height, bands: bands).encoded(as: .png).bytes
        let decoded = try DecodedSource.decoding(png, deadline: nil)
        #expect(decoded.image.bands == bands && decoded.bytes == width * height * bands && decoded.hasRealAlpha)
        #expect(try decoded.image.pixels() == pixels)
    }

    /// The decode's metadata stays with it: a profile (Adobe RGB) still converts the colours to sRGB.
    @Test func theProfileStaysWithTheDecode() throws {
        let profile = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/ghostscript/a98.icc")))
        let colour = try TestImages.noise(width: 1400, height: 900, bands: 3)
        let png = try TestImages.encodedKeepingMetadata(withAlpha(colour, 255).settingBlob("icc-profile-data", profile), as: .png)
        let decoded = try DecodedSource.decoding(png, deadline: nil)
        #expect(decoded.image.bands == 3)
        #expect(vips_image_get_typeof(decoded.image.pointer, "icc-profile-data") != 0)
        let rgb = try TestImages.encodedKeepingMetadata(colour.settingBlob("icc-profile-data", profile), as: .png)
        let converted = try output(png, [("w", "500"), ("format", "jpeg")])
        #expect(converted == (try output(rgb, [("w", "500"), ("format", "jpeg")])))
        let plain = try output(withAlpha(colour, 255).encoded(as: .png).bytes, [("w", "500"), ("format", "jpeg")])
        #expect(converted != plain, "the profile changed the colours")
    }

    /// The variant of an RGBA PNG with an opaque alpha is the variant of the same picture saved without
    /// alpha, byte for byte, in every output format and for a cover crop; a variant from the kept decode
    /// too.
    @Test(arguments: ["jpeg", "png", "webp"])
    func theOutputIsThatOfThePictureWithoutAlpha(format: String) throws {
        let colour = try TestImages.noise(width: 1600, height: 1000, bands: 3)
        let rgba = try withAlpha(colour, 255).encoded(as: .png).bytes
        let rgb = try colour.encoded(as: .png).bytes
        for parameters in [[("w", "640")], [("w", "1600")], [("w", "300"), ("h", "300"), ("fit", "cover")]] {
            let asked = parameters + [("format", format)]
            #expect(try output(rgba, asked) == output(rgb, asked), "\(asked)")
        }
        let kept = try DecodedSource.decoding(rgba, deadline: nil)
        let fromKept = try transformer.plan(rgba, request: request([("w", "500"), ("format", format)]), choice: .fixed(try #require(OutputFormat(rawValue: format))), decoded: kept)
        #expect(fromKept.usesDecodedSource)
        guard case .encoded(let encoded, _) = try transformer.run(fromKept, source: rgba, overlay: nil, reserved: 0, grow: { _ in true }) else {
            Issue.record("no variant")
            return
        }
        #expect(encoded.bytes == (try output(rgb, [("w", "500"), ("format", format)])))
    }

    private func request(_ parameters: [(String, String)]) throws -> ImageRequest {
        try ImageRequest(query: [("url", "http://example.com/a.png")] + parameters, limits: .init(maxDimension: 4096))
    }

    /// The encoded variant the transformer makes of `source` (decoded whole, as a PNG is).
    private func output(_ source: [UInt8], _ parameters: [(String, String)]) throws -> [UInt8] {
        let format = try #require(OutputFormat(rawValue: parameters.last { $0.0 == "format" }?.1 ?? "png"))
        let plan = try transformer.plan(source, request: request(parameters), choice: .fixed(format))
        #expect(plan.decodesWhole)
        guard case .encoded(let encoded, _) = try transformer.run(plan, source: source, overlay: nil, reserved: 0, grow: { _ in true }) else {
            throw ImagingError.processingFailed
        }
        return encoded.bytes
    }
}
