import CVipsShim
import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// JPEG XL out and in through the real server (issue #33): `format=jxl` decodes to the same pixels within
/// the encoder's loss, `Accept: image/jxl` negotiates it only when `image.autoJXL` is on, its output size
/// is capped, JXL sources are refused unless `image.allowJXLInput`, and a huge declared size is refused
/// from the header.
@Suite(.timeLimit(.minutes(3))) struct JPEGXLTests {
    static let photo: [UInt8] = try! TestImages.jpeg(TestImages.photo(width: 640, height: 480), progressive: false, subsample: true, keepMetadata: true)

    static func meanDifference(_ a: ImageCore.VipsImage, _ b: ImageCore.VipsImage) throws -> Double {
        let (left, right) = (try a.pixels(), try b.pixels())
        guard left.count == right.count, !left.isEmpty else { return .infinity }
        return Double(zip(left, right).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(left.count)
    }

    @Test func jxlOutputDecodesToTheSamePixelsWithinTheEncodersLoss() async throws {
        ImageCore.Vips.allowJXLInput()  // this test reads the JPEG XL it gets back
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)]) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let jxl = try await proxy.image([url, ("w", "320"), ("format", "jxl")])
            #expect(jxl.status == .ok && jxl.headers[.contentType] == "image/jxl", "\(jxl.text)")
            #expect(Array(jxl.bytes.prefix(2)) == [0xFF, 0x0A] || Array(jxl.bytes.prefix(4)) == [0, 0, 0, 0x0C], "a JPEG XL file")
            let lossless = try await proxy.image([url, ("w", "320"), ("format", "png")])
            let decoded = try ImageCore.VipsImage.decode(jxl.bytes), reference = try ImageCore.VipsImage.decode(lossless.bytes)
            #expect(decoded.width == 320 && decoded.height == 240)
            // Within a lossy encoder's loss: no further from the lossless pixels than JPEG at its default quality.
            let difference = try Self.meanDifference(decoded, reference)
            let jpeg = try ImageCore.VipsImage.decode(try await proxy.image([url, ("w", "320"), ("format", "jpeg")]).bytes)
            let jpegDifference = try Self.meanDifference(jpeg, reference)
            #expect(difference < 8 && difference <= jpegDifference * 1.25, "mean difference \(difference) levels (JPEG: \(jpegDifference))")
            let smaller = try await proxy.image([url, ("w", "320"), ("format", "jxl"), ("q", "30")])
            #expect(smaller.bytes.count < jxl.bytes.count, "q lowers the quality")
            let fitted = try await proxy.image([url, ("w", "320"), ("format", "jxl"), ("max_bytes", "\(jxl.bytes.count / 2)")])
            #expect(fitted.bytes.count <= jxl.bytes.count / 2, "max_bytes applies to JPEG XL")
        }
    }

    @Test func acceptNegotiatesJXLOnlyWhenEnabledAndItsSizeIsCapped() async throws {
        let accept: HTTPFields = [.accept: "image/jxl,image/avif,image/webp,*/*"]
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)]) { proxy, base, _ in
            let off = try await proxy.image([("url", base + "/p.jpg"), ("w", "200")], headers: accept)
            #expect(off.headers[.contentType] == "image/webp", "image.autoJXL is off by default")
        }
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)], configure: {
            $0.image.autoJXL = true
            $0.image.autoAVIF = true
            $0.image.transformer.encoding.jxlMaxPixels = 40_000
        }) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let on = try await proxy.image([url, ("w", "200")], headers: accept)
            #expect(on.headers[.contentType] == "image/jxl" && on.headers[.vary]?.contains("Accept") == true, "ahead of AVIF")
            let avif = try await proxy.image([url, ("w", "200")], headers: [.accept: "image/avif,image/webp"])
            #expect(avif.headers[.contentType] == "image/avif")
            // 320x240 = 76800 pixels, over the 40000 cap: asked for, a 422; negotiated, WebP.
            let large = try await proxy.image([url, ("w", "320"), ("format", "jxl")])
            #expect(large.status.code == 422 && large.text.contains("at most 40000 pixels"), "\(large.text)")
            let negotiated = try await proxy.image([url, ("w", "320")], headers: accept)
            #expect(negotiated.status == .ok && negotiated.headers[.contentType] == "image/webp")
        }
    }

    @Test func jxlSourcesAreRefusedUnlessEnabledAndBoundedByTheirHeader() async throws {
        let source = try TestImages.photo(width: 400, height: 300).encoded(as: .jxl, quality: 90).bytes
        let flat = try ImageCore.VipsImage.fromPixels([UInt8](repeating: 90, count: 4000 * 4000 * 3), width: 4000, height: 4000, bands: 3)
        // A 4000x4000 file cut to its first 64 bytes: the header (the size) is whole, the pixels are not there.
        let headerOnly = Array(try flat.encoded(as: .jxl).bytes.prefix(64))
        let files: [String: TestOrigin.File] = ["/s.jxl": .image(source), "/huge.jxl": .image(headerOnly)]
        try await withFixtures(files) { proxy, base, _ in
            let refused = try await proxy.image([("url", base + "/s.jxl"), ("w", "100")])
            #expect(refused.status.code == 415 && refused.text.contains("image.allowJXLInput"), "\(refused.text)")
            let info = try await proxy.execute(uri: "/info?url=\((base + "/s.jxl").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", method: .get)
            #expect(info.status.code == 415)
        }
        try await withFixtures(files, configure: {
            $0.image.transformer.allowJXLInput = true
            $0.image.transformer.maxSourcePixels = 10_000_000
        }) { proxy, base, _ in
            let answer = try await proxy.image([("url", base + "/s.jxl"), ("w", "100"), ("format", "png")])
            #expect(answer.status == .ok, "\(answer.text)")
            let image = try ImageCore.VipsImage.decode(answer.bytes)
            #expect(image.width == 100 && image.height == 75)
            let reference = try TestImages.meanColour(ImageCore.VipsImage.decode(source))
            let colour = try TestImages.meanColour(image)
            #expect(zip(colour, reference).allSatisfy { abs($0 - $1) < 4 }, "\(colour) vs \(reference)")
            let info = try await proxy.execute(uri: "/info?url=\((base + "/s.jxl").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", method: .get)
            #expect(info.text.contains("\"format\":\"jxl\"") && info.text.contains("\"width\":400"), "\(info.text)")
            let huge = try await proxy.image([("url", base + "/huge.jxl"), ("w", "100")])
            #expect(huge.status.code == 422 && huge.text.contains("more than 10000000 pixels"), "from the header: \(huge.text)")
        }
    }
}
