import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// Fits, gravities, filters, formats, animation, placeholders and `/info`, decoded with libvips.
@Suite(.timeLimit(.minutes(2))) struct TransformationTests {
    /// Mean of one band over the whole image.
    private func mean(_ image: VipsImage, band: Int) throws -> Double {
        let pixels = try image.pixels()
        let bands = image.bands
        var total = 0.0
        for offset in stride(from: band, to: pixels.count, by: bands) { total += Double(pixels[offset]) }
        return total / Double(pixels.count / bands)
    }

    /// Standard deviation of band 0: how much detail there is.
    private func detail(_ image: VipsImage) throws -> Double {
        let pixels = try image.pixels()
        let bands = image.bands
        let values = stride(from: 0, to: pixels.count, by: bands).map { Double(pixels[$0]) }
        let average = values.reduce(0, +) / Double(values.count)
        return (values.map { ($0 - average) * ($0 - average) }.reduce(0, +) / Double(values.count)).squareRoot()
    }

    private func decoded(_ proxy: any TestClientProtocol, _ parameters: [(String, String)]) async throws -> VipsImage {
        let response = try await proxy.image(parameters)
        #expect(response.status == .ok, "\(parameters): \(response.text.prefix(120))")
        return try VipsImage.decode(response.bytes)
    }

    @Test func everyGravityGivesTheBoxAndCropsTowardsIt() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let source = "\(origin)/gradient.png"
            for gravity in Gravity.allCases {
                let image = try await decoded(proxy, [("url", source), ("w", "120"), ("h", "90"), ("fit", "cover"), ("g", gravity.rawValue), ("format", "png")])
                #expect(image.width == 120 && image.height == 90, "\(gravity)")
            }
            // Gradient: red grows to the right, green grows downwards.
            let box: [(String, String)] = [("url", source), ("w", "100"), ("h", "300"), ("fit", "cover"), ("format", "png")]
            let west = try await decoded(proxy, box + [("g", "west")])
            let east = try await decoded(proxy, box + [("g", "east")])
            #expect(try mean(west, band: 0) < 40 && mean(east, band: 0) > 215)
            let wide: [(String, String)] = [("url", source), ("w", "400"), ("h", "100"), ("fit", "cover"), ("format", "png")]
            let north = try await decoded(proxy, wide + [("g", "north")])
            let south = try await decoded(proxy, wide + [("g", "south")])
            #expect(try mean(north, band: 1) < mean(south, band: 1) - 150)
        }
    }

    @Test func focalPointMovesTheCropAndSmartFindsTheDetail() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let box: [(String, String)] = [("url", "\(origin)/gradient.png"), ("w", "100"), ("h", "300"), ("fit", "cover"), ("format", "png")]
            let left = try await decoded(proxy, box + [("fp", "0.1,0.5")])
            let right = try await decoded(proxy, box + [("fp", "0.9,0.5")])
            #expect(left.width == 100 && left.height == 300)
            #expect(try mean(left, band: 0) + 100 < mean(right, band: 0))
            // fp overrides g.
            let overridden = try await decoded(proxy, box + [("fp", "0.9,0.5"), ("g", "west")])
            #expect(try abs(mean(overridden, band: 0) - mean(right, band: 0)) < 2)

            let smart = try await decoded(proxy, [("url", "\(origin)/busy.png"), ("w", "150"), ("h", "200"), ("fit", "cover"), ("g", "smart"), ("format", "png")])
            let centre = try await decoded(proxy, [("url", "\(origin)/busy.png"), ("w", "150"), ("h", "200"), ("fit", "cover"), ("g", "west"), ("format", "png")])
            #expect(smart.width == 150 && smart.height == 200)
            #expect(try detail(smart) > 50, "smart keeps the noisy side")
            #expect(try detail(centre) < 5, "west keeps the flat side")
        }
    }

    @Test func padFillsTheBoxWithTheBackground() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let padded = try await decoded(proxy, [("url", "\(origin)/photo.jpg"), ("w", "200"), ("h", "200"), ("fit", "pad"), ("bg", "ff0000"), ("format", "png")])
            #expect(padded.width == 200 && padded.height == 200)
            #expect(try padded.pixel(x: 100, y: 5).prefix(3) == [255, 0, 0])
            #expect(try padded.pixel(x: 100, y: 100)[2] > 100, "the image sits in the middle (blue 128 in the gradient)")
            let clear = try await decoded(proxy, [("url", "\(origin)/photo.jpg"), ("w", "200"), ("h", "200"), ("fit", "pad"), ("bg", "00000000"), ("format", "png")])
            let clearPixel = try clear.pixel(x: 100, y: 5)
            #expect(clear.hasAlpha && clearPixel[3] == 0)
            // bg also flattens alpha for JPEG output.
            let flattened = try await decoded(proxy, [("url", "\(origin)/alpha.png"), ("w", "100"), ("bg", "0000ff"), ("format", "jpeg")])
            let outside = try flattened.pixel(x: 90, y: 30)
            #expect(outside[2] > 200 && outside[0] < 60, "transparent area becomes the blue background")
        }
    }

    @Test func filtersChangeRealPixels() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let photo: [(String, String)] = [("url", "\(origin)/photo.jpg"), ("w", "160"), ("format", "png")]
            let grey = try await decoded(proxy, photo + [("filter", "grayscale")])
            let greyPixel = try grey.pixel(x: 120, y: 30)
            #expect(greyPixel.count == 1 || (greyPixel[0] == greyPixel[1] && greyPixel[1] == greyPixel[2]))

            let sepia = try await decoded(proxy, photo + [("filter", "sepia")])
            let sepiaPixel = try sepia.pixel(x: 80, y: 60)
            #expect(sepiaPixel[0] >= sepiaPixel[1] && sepiaPixel[1] >= sepiaPixel[2], "sepia is warm: R ≥ G ≥ B")

            let plain = try await decoded(proxy, photo)
            let brighter = try await decoded(proxy, photo + [("filter", "brightness:1.5")])
            #expect(try mean(brighter, band: 2) > mean(plain, band: 2) * 1.3)
            let flat = try await decoded(proxy, photo + [("filter", "contrast:0")])
            #expect(try detail(flat) < 1, "contrast 0 is uniform grey")

            let rotated = try await decoded(proxy, photo + [("filter", "rotate:90")])
            #expect(rotated.width == 120 && rotated.height == 160)
            let flipped = try await decoded(proxy, photo + [("filter", "flip")])
            #expect(try flipped.pixel(x: 80, y: 0)[1] > plain.pixel(x: 80, y: 0)[1] + 150, "flip puts the bottom (green) on top")
            let flopped = try await decoded(proxy, photo + [("filter", "flop")])
            #expect(try flopped.pixel(x: 0, y: 60)[0] > plain.pixel(x: 0, y: 60)[0] + 150, "flop puts the right (red) on the left")

            for filter in ["circle", "round:30"] {
                let masked = try await decoded(proxy, photo + [("filter", filter)])
                #expect(masked.hasAlpha, "\(filter)")
                #expect(try masked.pixel(x: 0, y: 0).last == 0, "\(filter): corner transparent")
                #expect(try masked.pixel(x: 159, y: 119).last == 0, "\(filter): corner transparent")
                #expect(try masked.pixel(x: 80, y: 60).last == 255, "\(filter): centre opaque")
            }
            let auto = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "60"), ("filter", "circle")])
            #expect(auto.headers[.contentType] == "image/png", "alpha from a mask makes format=auto choose PNG")

            let trimmed = try await decoded(proxy, [("url", "\(origin)/bordered.png"), ("filter", "trim"), ("format", "png")])
            #expect(trimmed.width == 100 && trimmed.height == 60)
        }
    }

    @Test func formatsProgressiveAVIFAndAnimation() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let progressive = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "100"), ("format", "jpeg"), ("progressive", "1")])
            let baseline = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "100"), ("format", "jpeg")])
            func hasMarker(_ bytes: [UInt8], _ marker: UInt8) -> Bool {
                zip(bytes, bytes.dropFirst()).contains { $0 == 0xFF && $1 == marker }
            }
            #expect(hasMarker(progressive.bytes, 0xC2), "SOF2: progressive")
            #expect(!hasMarker(baseline.bytes, 0xC2))

            let avif = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "90"), ("format", "avif")])
            #expect(avif.headers[.contentType] == "image/avif")
            #expect(try VipsImage.decode(avif.bytes).width == 90)

            for format in ["gif", "webp"] {
                let response = try await proxy.image([("url", "\(origin)/animated.gif"), ("w", "60"), ("format", format)])
                #expect(response.status == .ok, "\(format): \(response.text.prefix(100))")
                let frames = try VipsImage.decodeAllFrames(response.bytes)
                #expect(frames.frames == 6, "\(format) keeps 6 frames")
                #expect(frames.width == 60 && frames.frameHeight == 40, "\(format) resized frame by frame")
                #expect(try frames.pixel(x: 30, y: 20)[0] < frames.pixel(x: 30, y: 5 * 40 + 20)[0], "frames differ")
            }
            let still = try VipsImage.decodeAllFrames(try await proxy.image([("url", "\(origin)/animated.gif"), ("w", "60"), ("format", "png")]).bytes)
            #expect(still.frames == 1 && still.height == 40, "PNG output takes the first frame")
        }
    }

    @Test func placeholdersAreTinyAndBlurred() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            for format in ["webp", "jpeg", "png"] {
                let response = try await proxy.image([("url", "\(origin)/photo.jpg"), ("lqip", "1"), ("format", format)])
                #expect(response.status == .ok)
                let image = try VipsImage.decode(response.bytes)
                #expect(max(image.width, image.height) <= 32, "\(format)")
                // A few hundred bytes for JPEG and WebP; PNG is lossless and larger.
                #expect(response.bytes.count < (format == "png" ? 3_000 : 800), "\(format): \(response.bytes.count) bytes")
            }
        }
    }

    @Test func infoDescribesTheSource() async throws {
        try await withOriginAndProxy { proxy, origin, hits in
            func info(_ path: String) async throws -> [String: Any] {
                let encoded = "\(origin)\(path)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let response = try await proxy.execute(uri: "/info?url=\(encoded)", method: .get, headers: [:], body: nil)
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                return try JSONSerialization.jsonObject(with: Data(response.bytes)) as! [String: Any]
            }
            let rotated = try await info("/rotated.jpg")
            #expect(rotated["width"] as? Int == 100 && rotated["height"] as? Int == 200, "after EXIF orientation")
            #expect(rotated["format"] as? String == "jpeg")
            #expect(rotated["bytes"] as? Int == TestOrigin.rotatedJPEG.count)

            let alpha = try await info("/alpha.png")
            #expect(alpha["has_alpha"] as? Bool == true && alpha["format"] as? String == "png")
            #expect(try await info("/animated.gif")["frames"] as? Int == 6)

            let solid = try await info("/solid.png")
            #expect(solid["has_alpha"] as? Bool == false)
            let colour = try #require(solid["dominant_color"] as? String)
            let red = Int(colour.dropFirst().prefix(2), radix: 16) ?? 0
            let green = Int(colour.dropFirst(3).prefix(2), radix: 16) ?? 255
            #expect(abs(red - 220) <= 4 && abs(green - 40) <= 4, "\(colour)")
            let hash = try #require(solid["blurhash"] as? String)
            let decoded = try #require(BlurHashDecoder.decode(hash, width: 40, height: 20))
            #expect(decoded.componentsX == 4 && decoded.componentsY == 3, "landscape: 4x3 components")
            #expect(decoded.rgb.count == 40 * 20 * 3)
            #expect(abs(Int(decoded.rgb[(10 * 40 + 20) * 3]) - 220) <= 6, "decodes to the source colour")

            _ = try await info("/solid.png")
            #expect(hits.count("/solid.png") == 1, "served from the caches the second time")
            let missing = try await proxy.execute(uri: "/info?url=\(origin)/missing", method: .get, headers: [:], body: nil)
            #expect(missing.status == .notFound)
            let bad = try await proxy.execute(uri: "/info?url=\(origin)/solid.png&w=3", method: .get, headers: [:], body: nil)
            #expect(bad.status == .badRequest)
        }
    }

    @Test func equivalentSpellingsShareAKeyAndDifferentTransformsNever() throws {
        let limits = ImageRequest.Limits(maxDimension: 4096)
        func key(_ query: String) throws -> VariantKey {
            let pairs = query.split(separator: "&").map { item -> (name: String, value: String) in
                let parts = item.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }
            return try ImageRequest(query: pairs, limits: limits).variantKey(choice: .jpegOrPNG)
        }
        let base = "url=http://a.example/x.jpg"
        let same: [(String, String)] = [
            ("\(base)&w=100&h=50", "h=50&w=100&\(base)"),
            ("\(base)&w=100", "\(base)&w=100&fit=contain&enlarge=0&progressive=0&lqip=0&format=auto"),
            ("\(base)&w=100&g=north", "\(base)&w=100"),
            ("\(base)&w=100&h=50&fit=cover", "\(base)&w=100&h=50&fit=cover&g=centre"),
            ("\(base)&w=100&h=50&fit=cover&g=center", "\(base)&w=100&h=50&fit=cover&g=centre"),
            ("\(base)&w=100&filter=sharpen", "\(base)&w=100&filter=sharpen:1"),
            ("\(base)&w=100&bg=FFFFFF", "\(base)&w=100"),
            ("\(base)&w=50&dpr=2", "\(base)&w=100"),
        ]
        for (a, b) in same { #expect(try key(a) == key(b), "\(a) ~ \(b)") }
        let different = [
            "\(base)&w=100&h=50", "\(base)&w=100&h=50&fit=cover", "\(base)&w=100&h=50&fit=pad", "\(base)&w=100&h=50&fit=fill",
            "\(base)&w=100&h=50&fit=cover&g=north", "\(base)&w=100&h=50&fit=cover&g=smart", "\(base)&w=100&h=50&fit=cover&fp=0.2,0.2",
            "\(base)&w=100&h=50&fit=pad&bg=000000", "\(base)&w=100&h=50&filter=blur:2", "\(base)&w=100&h=50&filter=blur:3",
            "\(base)&w=100&h=50&filter=rotate:90,flip", "\(base)&w=100&h=50&filter=flip,rotate:90", "\(base)&w=100&h=50&progressive=1",
            "\(base)&w=100&h=50&lqip=1", "\(base)&w=100&h=50&q=50", "\(base)&w=100&h=50&enlarge=1",
        ]
        let keys = try different.map(key)
        #expect(Set(keys).count == different.count)
    }
}
