import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// EXIF orientations 1–8 are applied on every decode path: each output equals the upright one; and
/// alpha survives where the format has it and is flattened onto `bg` where it has not.
@Suite(.timeLimit(.minutes(3))) struct OrientationConformanceTests {
    /// 640x400, four quadrants of distinct colours: a wrong turn or mirror moves them.
    static func upright() throws -> ImageCore.VipsImage {
        let (width, height) = (640, 400)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let colours: [[UInt8]] = [[220, 30, 30], [30, 200, 40], [40, 60, 220], [230, 220, 40]]
        for y in 0..<height {
            for x in 0..<width {
                let quadrant = (y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)
                let offset = (y * width + x) * 3
                pixels.replaceSubrange(offset..<(offset + 3), with: colours[quadrant])
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// The stored pixels that display as `upright` under EXIF `orientation`, with the tag attached.
    static func stored(_ upright: ImageCore.VipsImage, orientation: Int) throws -> ImageCore.VipsImage {
        let stored: ImageCore.VipsImage = switch orientation {
        case 2: try upright.mirrored()
        case 3: try upright.rotated(quarterTurns: 2)
        case 4: try upright.rotated(quarterTurns: 2).mirrored()
        case 5: try upright.mirrored().rotated(quarterTurns: 3)
        case 6: try upright.rotated(quarterTurns: 3)
        case 7: try upright.mirrored().rotated(quarterTurns: 1)
        case 8: try upright.rotated(quarterTurns: 1)
        default: upright
        }
        return try stored.withOrientation(orientation)
    }

    @Test func everyOrientationOnEveryPathDisplaysUpright() async throws {
        let upright = try Self.upright()
        var files: [String: TestOrigin.File] = [:]
        for orientation in 1...8 {
            let image = try Self.stored(upright, orientation: orientation)
            files["/o\(orientation)-baseline.jpg"] = .image(try TestImages.jpeg(image, progressive: false, subsample: true, keepMetadata: true))
            let progressive = try TestImages.jpeg(image, progressive: true, subsample: false, keepMetadata: true)
            #expect(JPEGEighthDecoder.image(progressive) != nil)
            files["/o\(orientation)-progressive.jpg"] = .image(progressive)
        }
        try await withFixtures(files) { proxy, base, _ in
            // w=64: the 1/8 path for progressive files; w=320: shrink-on-load; cover crops after turning.
            let queries: [[(String, String)]] = [
                [("w", "64"), ("format", "png")], [("w", "320"), ("format", "png")],
                [("w", "100"), ("h", "100"), ("fit", "cover"), ("format", "webp")],
            ]
            for query in queries {
                var reference: [UInt8]?
                for orientation in 1...8 {
                    for layout in ["baseline", "progressive"] {
                        let response = try await proxy.image([("url", "\(base)/o\(orientation)-\(layout).jpg")] + query)
                        try #require(response.status == .ok)
                        let image = try ImageCore.VipsImage.decode(response.bytes)
                        let pixels = try image.pixels()
                        if let reference {
                            #expect(pixels.count == reference.count, "orientation \(orientation) \(layout) \(query): size")
                            let difference = zip(pixels, reference).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(1, pixels.count))
                            #expect(difference < 8, "orientation \(orientation) \(layout) \(query): mean difference \(difference)")
                        } else {
                            reference = pixels
                            // Upright: red top-left, yellow bottom-right.
                            let topLeft = try image.pixel(x: 2, y: 2), bottomRight = try image.pixel(x: image.width - 3, y: image.height - 3)
                            #expect(topLeft[0] > 180 && topLeft[1] < 80, "\(topLeft)")
                            #expect(bottomRight[0] > 180 && bottomRight[1] > 180, "\(bottomRight)")
                        }
                        if query.contains(where: { $0 == ("w", "320") }) {
                            #expect(image.width == 320 && image.height == 200, "orientation \(orientation) \(layout): \(image.width)x\(image.height)")
                        }
                    }
                }
            }
        }
    }

    @Test func alphaIsKeptOrFlattenedOntoTheBackground() async throws {
        let half = try TestImages.halfTransparent(width: 400, height: 300).encoded(as: .png).bytes
        try await withFixtures(["/alpha.png": .image(half)]) { proxy, base, _ in
            for format in ["png", "webp", "avif", "gif"] {
                let response = try await proxy.image([("url", base + "/alpha.png"), ("w", "100"), ("format", format)])
                #expect(response.status == .ok)
                let image = try ImageCore.VipsImage.decode(response.bytes)
                #expect(image.hasAlpha, "\(format) keeps alpha")
                #expect(try image.pixel(x: 90, y: 40).last! < 30, "\(format): the right half stays transparent")
            }
            let jpeg = try await proxy.image([("url", base + "/alpha.png"), ("w", "100"), ("format", "jpeg"), ("bg", "0000ff")])
            let flattened = try ImageCore.VipsImage.decode(jpeg.bytes)
            #expect(!flattened.hasAlpha)
            let right = try flattened.pixel(x: 90, y: 40)
            #expect(right[2] > 200 && right[0] < 50, "transparency flattened onto bg=0000ff: \(right)")
            let auto = try await proxy.image([("url", base + "/alpha.png"), ("w", "100")])
            #expect(auto.headers[.contentType] == "image/png", "format=auto without WebP/AVIF: PNG for alpha")
        }
    }
}
