import CVipsShim
import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// HEIC (HEVC in HEIF) sources through the real server (issue #33), files made by libheif's own encoder
/// (libvips' `heifsave`): orientation from `irot`, the ICC profile, alpha, several images (the primary is
/// used), 10-bit depth, a 48 MP phone photo within the defaults, `/info`, and a size refused from the
/// header alone.
@Suite(.timeLimit(.minutes(4))) struct HEICSourceTests {
    /// 200x100: red on the left half, blue on the right.
    static func halves() throws -> ImageCore.VipsImage {
        var pixels = [UInt8](repeating: 0, count: 200 * 100 * 3)
        for y in 0..<100 {
            for x in 0..<200 {
                let offset = (y * 200 + x) * 3
                if x < 100 { pixels[offset] = 230 } else { pixels[offset + 2] = 230 }
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: 200, height: 100, bands: 3)
    }

    static func mean(_ bytes: [UInt8]) throws -> [Double] { try TestImages.meanColour(ImageCore.VipsImage.decode(bytes)) }
    static func close(_ a: [Double], _ b: [Double], within tolerance: Double = 6) -> Bool {
        zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
    }

    @Test func orientationProfileAlphaPrimaryImageAndDepth() async throws {
        let plain = try TestImages.heic(Self.halves())
        let rotated = try HEIFBoxes.rotated(plain, quarterTurns: 1)
        let mirrored = try HEIFBoxes.mirrored(plain, axis: 1)
        let mirrorReference = try ImageCore.VipsImage.decode(mirrored)
        // Whichever way the axis reads, libvips' decode and ours must agree, and differ from the plain file.
        let mirrorLeft = try mirrorReference.pixel(x: 20, y: 50)[0] > 200 ? "red" : "blue"
        #expect(mirrorReference.width == 200 && mirrorLeft == "blue", "imir: the halves swap")
        let p3 = try TestImages.solid(red: 200, green: 60, blue: 40, width: 320, height: 240, profile: "p3")
        let withProfile = try TestImages.heic(p3)
        let alpha = try TestImages.heic(TestImages.halfTransparent(width: 160, height: 120))
        let twoImages = try TestImages.heic(TestImages.animation(width: 160, height: 120, frames: 2))
        let deep = try TestImages.heic(p3, bitDepth: 10)
        let p3Reference = try TestImages.meanColour(p3.producingForTests { ipx_vips_icc_to_srgb($0, $1) })
        // libvips' own decode applies irot: 100x200, the right half (blue) turned to the top.
        let reference = try ImageCore.VipsImage.decode(rotated)
        #expect(reference.width == 100 && reference.height == 200)
        #expect(try reference.pixel(x: 50, y: 20)[2] > 200 && reference.pixel(x: 50, y: 180)[0] > 200)

        try await withFixtures([
            "/plain.heic": .image(plain), "/rotated.heic": .image(rotated), "/p3.heic": .image(withProfile),
            "/alpha.heic": .image(alpha), "/mirrored.heic": .image(mirrored), "/two.heic": .image(twoImages), "/deep.heic": .image(deep),
        ]) { proxy, base, _ in
            let upright = try await proxy.image([("url", base + "/rotated.heic"), ("w", "50"), ("format", "png")])
            #expect(upright.status == .ok, "\(upright.text)")
            let image = try ImageCore.VipsImage.decode(upright.bytes)
            #expect(image.width == 50 && image.height == 100, "irot applied: \(image.width)x\(image.height)")
            #expect(try image.pixel(x: 25, y: 10)[2] > 200 && image.pixel(x: 25, y: 90)[0] > 200, "blue on top, red below")
            let flipped = try ImageCore.VipsImage.decode(try await proxy.image([("url", base + "/mirrored.heic"), ("w", "50"), ("format", "png")]).bytes)
            #expect(try flipped.pixel(x: 5, y: 12)[2] > 200 && flipped.pixel(x: 45, y: 12)[0] > 200, "imir applied as libvips applies it")
            let unrotated = try ImageCore.VipsImage.decode(try await proxy.image([("url", base + "/plain.heic"), ("w", "50"), ("format", "png")]).bytes)
            #expect(unrotated.width == 50 && unrotated.height == 25)

            // The profile: the sRGB colours libvips' icc_transform gives for the source's pixels and profile.
            let reference = p3Reference
            for format in ["png", "jpeg", "webp"] {
                let converted = try await proxy.image([("url", base + "/p3.heic"), ("w", "100"), ("format", format)])
                let colour = try Self.mean(converted.bytes)
                #expect(Self.close(colour, reference), "\(format): \(colour) vs \(reference)")
            }
            let deepOutput = try await proxy.image([("url", base + "/deep.heic"), ("w", "100"), ("format", "png")])
            #expect(deepOutput.status == .ok, "\(deepOutput.text)")
            let deepImage = try ImageCore.VipsImage.decode(deepOutput.bytes)
            let deepColour = try TestImages.meanColour(deepImage)
            #expect(deepImage.bands == 3 && Self.close(deepColour, reference), "10-bit, to 8-bit sRGB: \(deepColour)")

            let transparent = try ImageCore.VipsImage.decode(try await proxy.image([("url", base + "/alpha.heic"), ("w", "80"), ("format", "png")]).bytes)
            #expect(transparent.hasAlpha && transparent.bands == 4, "alpha kept")
            #expect(try transparent.pixel(x: 5, y: 5)[3] < 250 || transparent.pixel(x: 75, y: 55)[3] < 250, "some of it is transparent")

            // Two images: the primary (the first, red-less frame 0: red 0, blue 255) is used, also for WebP.
            for format in ["png", "webp"] {
                let primary = try await proxy.image([("url", base + "/two.heic"), ("w", "80"), ("format", format)])
                let decoded = try ImageCore.VipsImage.decodeAllFrames(primary.bytes)
                #expect(decoded.frames == 1, "\(format): one image, not an animation")
                let colour = try TestImages.meanColour(decoded)
                #expect(colour[0] < 30 && colour[2] > 220, "\(format): the primary image: \(colour)")
            }
            let info = try await proxy.execute(uri: "/info?url=\((base + "/rotated.heic").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", method: .get)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(info.bytes)) as? [String: Any])
            #expect(json["format"] as? String == "heic" && json["width"] as? Int == 100 && json["height"] as? Int == 200, "\(json)")
            let twoInfo = try await proxy.execute(uri: "/info?url=\((base + "/two.heic").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", method: .get)
            #expect(twoInfo.text.contains("\"frames\":1"), "\(twoInfo.text)")
        }
    }

    @Test func a48MegapixelPhoneSizedHEICWithinTheDefaults() async throws {
        let black = try ImageCore.VipsImage.fromPixels(
            [UInt8](repeating: 20, count: 8064 * 6048 * 3), width: 8064, height: 6048, bands: 3)
        let photo = try TestImages.heic(black, quality: 50)
        #expect(8064 * 6048 <= ImageTransformer.Settings().maxSourcePixels, "48 MP pass the default limit")
        // A small file whose header declares 16000x16000 (256 MP, within libheif's own limit): refused from
        // the header, before any decoding (its data could not fill such an image).
        let declaredHuge = try Self.declaring(width: 16000, height: 16000, in: TestImages.heic(Self.halves()))
        try await withFixtures(["/phone.heic": .image(photo), "/huge.heic": .image(declaredHuge)], configure: {
            $0.fetch.maxSourceBytes = 16 << 20
        }) { proxy, base, _ in
            let answer = try await proxy.image([("url", base + "/phone.heic"), ("w", "300"), ("format", "jpeg")])
            #expect(answer.status == .ok, "\(answer.text)")
            let image = try ImageCore.VipsImage.decode(answer.bytes)
            #expect(image.width == 300 && image.height == 225)
            let refused = try await proxy.image([("url", base + "/huge.heic"), ("w", "300")])
            #expect(refused.status.code == 422 && refused.text.contains("more than 50000000 pixels"), "got: \(refused.text)")
        }
    }

    /// The file with every `ispe` (image spatial extent) property saying width x height.
    static func declaring(width: Int, height: Int, in file: [UInt8]) throws -> [UInt8] {
        var bytes = file
        let boxes = try HEIFBoxes.children(bytes, from: 0, to: bytes.count)
        let meta = try #require(boxes.first { $0.type == "meta" })
        let iprp = try #require(try HEIFBoxes.children(bytes, from: meta.payload, to: meta.end).first { $0.type == "iprp" })
        let ipco = try #require(try HEIFBoxes.children(bytes, from: iprp.payload, to: iprp.end).first { $0.type == "ipco" })
        for property in try HEIFBoxes.children(bytes, from: ipco.payload, to: ipco.end) where property.type == "ispe" {
            HEIFBoxes.put(width, into: &bytes, at: property.start + 12, count: 4)
            HEIFBoxes.put(height, into: &bytes, at: property.start + 16, count: 4)
        }
        return bytes
    }
}
