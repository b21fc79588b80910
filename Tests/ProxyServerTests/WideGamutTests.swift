import CVipsShim
import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// `colour=keep` through the real server (issue #33): a Display P3 or Adobe RGB source stays in its own
/// space with its profile embedded (the only metadata kept) in JPEG, WebP, AVIF, PNG and JPEG XL (HEIC
/// sources too), and
/// converted with libvips' `icc_transform` it gives the colours the default (sRGB) output has; sRGB sources
/// are unchanged; the default stays sRGB with no profile.
@Suite(.timeLimit(.minutes(3))) struct WideGamutTests {
    static let adobeRGB = "/usr/share/color/icc/ghostscript/a98.icc"

    /// The EXIF fields libvips 8.14's AVIF writer makes itself when it does not strip.
    static let avifWriterExif: Set<String> = [
        "exif-data", "exif-ifd0-XResolution", "exif-ifd0-YResolution", "exif-ifd0-ResolutionUnit", "exif-ifd0-YCbCrPositioning",
        "exif-ifd2-ExifVersion", "exif-ifd2-ComponentsConfiguration", "exif-ifd2-FlashpixVersion", "exif-ifd2-ColorSpace",
        "exif-ifd2-PixelXDimension", "exif-ifd2-PixelYDimension",
    ]

    static func hasProfile(_ bytes: [UInt8]) throws -> Bool {
        try TestImages.metadataFields(of: bytes).contains { $0.lowercased().contains("icc") }
    }

    @Test func keepEmbedsTheSourceProfileAndItsColoursMatchIccTransform() async throws {
        ImageCore.Vips.allowJXLInput()  // this test reads the JPEG XL it gets back
        let p3 = try TestImages.solid(red: 200, green: 60, blue: 40, width: 600, height: 400, profile: "p3")
        let adobe = try TestImages.solid(red: 40, green: 180, blue: 60, width: 600, height: 400, profile: Self.adobeRGB)
        let srgb = try TestImages.solid(width: 600, height: 400, red: 200, green: 60, blue: 40)
        let files: [String: TestOrigin.File] = [
            // With camera metadata (EXIF with GPS, XMP, IPTC, a comment): none of it may be kept.
            "/p3.jpg": .image(try TestImages.jpeg(TestImages.withCameraMetadata(p3), progressive: false, subsample: true, keepMetadata: true)),
            "/p3.heic": .image(try TestImages.heic(p3)),
            "/p3-progressive.jpg": .image(try TestImages.jpeg(p3, progressive: true, subsample: false, keepMetadata: true)),
            "/adobe.png": .image(try TestImages.encodedKeepingMetadata(adobe, as: .png)),
            "/srgb.jpg": .image(try srgb.encoded(as: .jpeg, quality: 95).bytes),
        ]
        try await withFixtures(files) { proxy, base, _ in
            for name in ["p3.jpg", "p3-progressive.jpg", "adobe.png", "p3.heic"] {
                let reference = try TestImages.referenceColour(of: files["/" + name]!.bytes)
                for (format, width) in [("jpeg", "300"), ("webp", "300"), ("avif", "120"), ("png", "300"), ("jxl", "120"), ("png", "50")] {
                    let query = [("url", base + "/" + name), ("w", width), ("format", format)]
                    let kept = try await proxy.image(query + [("colour", "keep")])
                    #expect(kept.status == .ok, "\(name) \(format): \(kept.text)")
                    #expect(try Self.hasProfile(kept.bytes), "\(name) \(format): the profile is embedded")
                    // (libvips' JPEG XL loader adds an orientation field of its own.)
                    // (libvips 8.14's AVIF writer adds an EXIF block of its own when it keeps a profile: the
                    // output's resolution, size and colour space, nothing from the source.)
                    let fields = try TestImages.metadataFields(of: kept.bytes)
                        .filter { !$0.lowercased().contains("icc") && !(format == "jxl" && $0 == "orientation") }
                        .filter { !(format == "avif" && Self.avifWriterExif.contains($0)) }
                    #expect(fields.isEmpty, "\(name) \(format): only the profile is kept, not \(fields)")
                    let raw = try TestImages.meanColour(ImageCore.VipsImage.decode(kept.bytes))
                    let converted = try TestImages.referenceColour(of: kept.bytes)
                    #expect(zip(converted, reference).allSatisfy { abs($0 - $1) <= 5 }, "\(name) \(format): \(converted) vs \(reference)")
                    #expect(zip(raw, reference).contains { abs($0 - $1) > 5 }, "\(name) \(format): the numbers stay in the source's space")
                    let converting = try await proxy.image(query)
                    let convertedDefault = try TestImages.meanColour(ImageCore.VipsImage.decode(converting.bytes))
                    #expect(zip(convertedDefault, reference).allSatisfy { abs($0 - $1) <= 5 }, "\(name) \(format): the default is sRGB")
                    // (libvips' JPEG XL loader always attaches a profile, sRGB here.)
                    if format != "jxl" { #expect(try !Self.hasProfile(converting.bytes), "\(name) \(format): the default output has no profile") }
                    #expect(converting.headers[.eTag] != kept.headers[.eTag], "colour=keep is its own variant")
                }
                // Cropped first (the source decoded, then cut): the profile survives that path too.
                let cropped = try await proxy.image([("url", base + "/" + name), ("crop", "0.1,0.1,0.5,0.5"), ("w", "100"), ("format", "png"), ("colour", "keep")])
                let croppedColour = try TestImages.referenceColour(of: cropped.bytes)
                #expect(try Self.hasProfile(cropped.bytes) && zip(croppedColour, reference).allSatisfy { abs($0 - $1) <= 5 }, "\(name) crop: \(croppedColour)")
                // GIF has no profiles: it stays sRGB even with colour=keep.
                for (format, width) in [("gif", "120")] {
                    let kept = try await proxy.image([("url", base + "/" + name), ("w", width), ("format", format), ("colour", "keep")])
                    #expect(try !Self.hasProfile(kept.bytes), "\(name) \(format)")
                    let colour = try TestImages.meanColour(ImageCore.VipsImage.decode(kept.bytes))
                    #expect(zip(colour, reference).allSatisfy { abs($0 - $1) <= 6 }, "\(name) \(format): \(colour) vs \(reference)")
                }
            }
            let plain = try await proxy.image([("url", base + "/srgb.jpg"), ("w", "300"), ("format", "png")])
            let kept = try await proxy.image([("url", base + "/srgb.jpg"), ("w", "300"), ("format", "png"), ("colour", "keep")])
            #expect(plain.bytes == kept.bytes, "an sRGB source is unchanged by colour=keep")
            let bad = try await proxy.image([("url", base + "/srgb.jpg"), ("colour", "p3")])
            #expect(bad.status == .badRequest && bad.text.contains("'colour'"))
        }
        // image.colour: keep makes it the default, colour=srgb still converts.
        try await withFixtures(files, configure: { $0.image.colour = .keep }) { proxy, base, _ in
            let kept = try await proxy.image([("url", base + "/p3.jpg"), ("w", "300"), ("format", "png")])
            #expect(try Self.hasProfile(kept.bytes))
            let converted = try await proxy.image([("url", base + "/p3.jpg"), ("w", "300"), ("format", "png"), ("colour", "srgb")])
            #expect(try !Self.hasProfile(converted.bytes))
        }
    }
}
