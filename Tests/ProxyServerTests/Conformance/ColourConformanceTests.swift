import CVipsShim
import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Sources with an embedded profile (Display P3, Adobe RGB, CMYK, grey) come out as the sRGB colours a
/// libvips `icc_transform` gives, on every decode path, and `/info` reports the converted colour.
@Suite(.timeLimit(.minutes(3))) struct ColourConformanceTests {
    /// Within this many levels of the reference (JPEG quantisation and resampling included).
    static let tolerance = 4.0
    static let adobeRGB = "/usr/share/color/icc/ghostscript/a98.icc"
    static let grey = "/usr/share/color/icc/ghostscript/sgray.icc"

    /// The colour planted: a saturated red that every wide-gamut profile encodes differently.
    static func source(profile: String) throws -> ImageCore.VipsImage {
        try TestImages.solid(red: 200, green: 60, blue: 40, width: 800, height: 600, profile: profile)
    }

    /// Sources by name: (bytes, whether the 1/8 path decodes it).
    static func sources() throws -> [(name: String, bytes: [UInt8])] {
        let p3 = try source(profile: "p3"), adobe = try source(profile: adobeRGB), cmyk = try source(profile: "cmyk")
        let greyImage = try TestImages.solid(red: 90, green: 90, blue: 90, width: 800, height: 600, profile: grey)
        return [
            ("p3-baseline.jpg", try TestImages.jpeg(p3, progressive: false, subsample: true, keepMetadata: true)),
            ("p3-progressive.jpg", try TestImages.jpeg(p3, progressive: true, subsample: false, keepMetadata: true)),
            ("adobe-baseline.jpg", try TestImages.jpeg(adobe, progressive: false, subsample: true, keepMetadata: true)),
            ("adobe-progressive.jpg", try TestImages.jpeg(adobe, progressive: true, subsample: false, keepMetadata: true)),
            ("cmyk.jpg", try TestImages.jpeg(cmyk, progressive: false, subsample: false, keepMetadata: true)),
            ("grey-baseline.jpg", try TestImages.jpeg(greyImage, progressive: false, subsample: false, keepMetadata: true)),
            ("grey-progressive.jpg", try TestImages.jpeg(greyImage, progressive: true, subsample: false, keepMetadata: true)),
            ("p3.png", try TestImages.encodedKeepingMetadata(p3, as: .png)),
            ("adobe.png", try TestImages.encodedKeepingMetadata(adobe, as: .png)),
            ("p3.webp", try TestImages.encodedKeepingMetadata(p3, as: .webp)),
        ]
    }

    @Test func everyPathConvertsWithTheEmbeddedProfile() async throws {
        let sources = try Self.sources()
        var files: [String: TestOrigin.File] = [:]
        for source in sources { files["/" + source.name] = .image(source.bytes) }
        for name in ["p3-progressive.jpg", "adobe-progressive.jpg", "grey-progressive.jpg"] {
            let bytes = try #require(sources.first { $0.name == name }?.bytes)
            #expect(JPEGEighthDecoder.image(bytes) != nil, "\(name) takes the 1/8 path at w=50")
        }
        try await withFixtures(files) { proxy, base, _ in
            for source in sources {
                let reference = try TestImages.referenceColour(of: source.bytes)
                let raw = try TestImages.meanColour(ImageCore.VipsImage.decode(source.bytes))
                // w=50: 1/8 path (progressive 4:4:4, grey); w=300: shrink-on-load; every output format.
                for query in [[("w", "50"), ("format", "png")], [("w", "300"), ("format", "png")],
                              [("w", "300"), ("format", "webp")], [("w", "120"), ("format", "jpeg")],
                              [("w", "120"), ("format", "avif")], [("w", "120"), ("format", "gif")]] {
                    let response = try await proxy.image([("url", base + "/" + source.name)] + query)
                    try #require(response.status == .ok, "\(source.name) \(query): \(response.status) \(response.text)")
                    let output = try TestImages.meanColour(ImageCore.VipsImage.decode(response.bytes))
                    let worst = zip(output, reference).map { abs($0 - $1) }.max() ?? 0
                    #expect(worst <= Self.tolerance, "\(source.name) \(query): \(output) vs icc_transform \(reference) (raw numbers \(raw))")
                }
                let info = try await proxy.execute(uri: "/info?url=\(base)/\(source.name)", method: .get, headers: [:], body: nil)
                let decoded = try JSONDecoder().decode(ImageInfo.self, from: Data(info.bytes))
                let hex = decoded.dominantColor.dropFirst()
                let dominant = stride(from: 0, to: 6, by: 2).map { offset -> Double in
                    let start = hex.index(hex.startIndex, offsetBy: offset)
                    return Double(Int(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? -100)
                }
                let worst = zip(dominant, reference).map { abs($0 - $1) }.max() ?? 0
                #expect(worst <= Self.tolerance, "\(source.name) /info dominant colour \(decoded.dominantColor) vs \(reference)")
            }
        }
    }

    @Test func theFixturesNeedConverting() throws {
        // Without conversion the colours would be visibly wrong: the check above can fail.
        for source in try Self.sources() where !source.name.hasPrefix("grey") {
            let reference = try TestImages.referenceColour(of: source.bytes)
            let raw = try TestImages.meanColour(ImageCore.VipsImage.decode(source.bytes))
            let difference = zip(raw, reference).map { abs($0 - $1) }.max() ?? 0
            #expect(difference > 3 * Self.tolerance || source.name == "cmyk.jpg", "\(source.name): raw \(raw) vs \(reference)")
        }
    }

    /// Most web JPEGs carry an sRGB profile: their numbers are sRGB already, so the header says they need
    /// no conversion (no lcms transform is built per image) and the output keeps the numbers, which are
    /// the profile's colours. Other RGB profiles are still converted.
    @Test func sRGBProfilesAreNotConvertedThrough() async throws {
        let srgb = try TestImages.jpeg(Self.source(profile: "srgb"), progressive: false, subsample: true, keepMetadata: true)
        #expect(try TestImages.metadataFields(of: srgb).contains("icc-profile-data"), "the profile is attached")
        #expect(try SourceHeader(reading: srgb).colourManaged == false)
        for other in ["p3", Self.adobeRGB, "/usr/share/color/icc/ghostscript/srgb.icc"] {
            let bytes = try TestImages.jpeg(Self.source(profile: other), progressive: false, subsample: true, keepMetadata: true)
            #expect(try SourceHeader(reading: bytes).colourManaged, "\(other) is converted")
        }
        try await withFixtures(["/srgb.jpg": .image(srgb)]) { proxy, base, _ in
            let reference = try TestImages.referenceColour(of: srgb)
            for query in [[("w", "300"), ("format", "png")], [("w", "50"), ("format", "jpeg")]] {
                let response = try await proxy.image([("url", base + "/srgb.jpg")] + query)
                try #require(response.status == .ok, "\(query): \(response.status) \(response.text)")
                let output = try TestImages.meanColour(ImageCore.VipsImage.decode(response.bytes))
                let worst = zip(output, reference).map { abs($0 - $1) }.max() ?? 0
                #expect(worst <= Self.tolerance, "\(query): \(output) vs icc_transform \(reference)")
            }
        }
    }

    @Test func animatedWebPWithAProfileIsConvertedFrameByFrame() async throws {
        // Four frames of (200, 60 + 10 i, 40) in sRGB, stored as Display P3 numbers (frames must differ,
        // or the WebP encoder merges them).
        var pixels: [UInt8] = []
        for frame in 0..<4 {
            for _ in 0..<(64 * 48) { pixels += [200, UInt8(60 + 10 * frame), 40] }
        }
        let frames = try ImageCore.VipsImage.fromPixels(pixels, width: 64, height: 48 * 4, bands: 3)
            .producingForTests { ipx_vips_icc_export($0, $1, "p3") }
            .asAnimation(frameHeight: 48)
        let bytes = try TestImages.encodedKeepingMetadata(frames, as: .webp)
        #expect(try SourceHeader(reading: bytes).frames == 4)
        try await withFixtures(["/p3-animated.webp": .image(bytes)]) { proxy, base, _ in
            let response = try await proxy.image([("url", base + "/p3-animated.webp"), ("format", "webp"), ("w", "32")])
            #expect(response.status == .ok)
            let output = try ImageCore.VipsImage.decodeAllFrames(response.bytes)
            #expect(output.frames == 4, "stays animated")
            let mean = try TestImages.meanColour(output)
            let reference = try TestImages.meanColour(
                ImageCore.VipsImage.decodeAllFrames(bytes).producingForTests { ipx_vips_icc_to_srgb($0, $1) })
            let worst = zip(mean, reference).map { abs($0 - $1) }.max() ?? 0
            #expect(worst <= Self.tolerance, "\(mean) vs icc_transform \(reference)")
        }
    }
}
