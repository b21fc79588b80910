import Foundation
import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// `/img` end to end: a live origin, the live proxy, real libcurl and libvips; results decoded with libvips.
@Suite(.timeLimit(.minutes(2))) struct ImageEndpointTests {
    @Test func jpegThumbnailHasRequestedWidth() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let response = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "300")])
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "image/jpeg")
            #expect(response.headers[.contentLength] == String(response.body.readableBytes))
            let cacheControl = try #require(response.headers[.cacheControl])
            #expect(cacheControl.hasPrefix("public, max-age="))
            let maxAge = try #require(Int(cacheControl.dropFirst("public, max-age=".count)))
            #expect((86_390...86_400).contains(maxAge))
            let etag = try #require(response.headers[.eTag])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
            #expect(SourceFormat(sniffing: response.bytes) == .jpeg)
            let image = try VipsImage.decode(response.bytes)
            #expect(image.width == 300)
            #expect(image.height == 225)
        }
    }

    @Test func pngWithAlphaStaysPNGAndKeepsTransparency() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let response = try await proxy.image([("url", "\(origin)/alpha.png"), ("w", "100")], headers: [.accept: "image/png,*/*"])
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "image/png")
            #expect(response.headers[.vary] == "Accept")
            let image = try VipsImage.decode(response.bytes)
            #expect(image.width == 100 && image.height == 75)
            #expect(image.hasAlpha)
            #expect(try image.pixel(x: 10, y: 30)[3] == 255)
            #expect(try image.pixel(x: 90, y: 30)[3] == 0)
        }
    }

    @Test func autoPicksWebPWhenAccepted() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let response = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "120")], headers: [.accept: "image/avif,image/webp,*/*"])
            #expect(response.headers[.contentType] == "image/webp")
            #expect(response.headers[.vary] == "Accept")
            #expect(SourceFormat(sniffing: response.bytes) == .webp)
            #expect(try VipsImage.decode(response.bytes).width == 120)
        }
    }

    @Test func explicitFormatsAreHonouredWithoutVary() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            for (format, expected) in [("png", SourceFormat.png), ("jpeg", .jpeg), ("webp", .webp), ("gif", .gif), ("avif", .avif)] {
                let response = try await proxy.image([("url", "\(origin)/photo.webp"), ("w", "64"), ("format", format)])
                #expect(response.status == .ok, "format \(format)")
                #expect(response.headers[.vary] == nil)
                #expect(SourceFormat(sniffing: response.bytes) == expected, "format \(format)")
                #expect(try VipsImage.decode(response.bytes).width == 64, "format \(format)")
            }
        }
    }

    @Test func exifOrientationIsAppliedAndStripped() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let response = try await proxy.image([("url", "\(origin)/rotated.jpg"), ("w", "50"), ("format", "jpeg")])
            #expect(response.status == .ok)
            let image = try VipsImage.decode(response.bytes)
            #expect(image.width == 50)
            #expect(image.height == 100)
            #expect(try SourceHeader(reading: response.bytes).orientation == 1)
        }
    }

    @Test func fitModesProduceExpectedDimensions() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let cases: [([(String, String)], Int, Int)] = [
                ([("w", "100"), ("h", "100")], 100, 75),
                ([("w", "100"), ("h", "100"), ("fit", "contain")], 100, 75),
                ([("w", "100"), ("h", "100"), ("fit", "cover")], 100, 100),
                ([("w", "100"), ("h", "20"), ("fit", "fill")], 100, 20),
                ([("h", "60")], 80, 60),
                ([], 800, 600),
                ([("w", "2000")], 800, 600),
                ([("w", "1000"), ("enlarge", "1")], 1000, 750),
                ([("w", "100"), ("dpr", "2")], 200, 150),
                ([("w", "1600"), ("h", "1600"), ("fit", "fill")], 600, 600),
            ]
            for (options, width, height) in cases {
                let response = try await proxy.image([("url", "\(origin)/photo.jpg")] + options)
                #expect(response.status == .ok, "\(options)")
                let image = try VipsImage.decode(response.bytes)
                #expect(image.width == width && image.height == height, "\(options): \(image.width)x\(image.height)")
            }
        }
    }

    @Test func filtersChangePixels() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let plain = try VipsImage.decode(try await proxy.image([("url", "\(origin)/edge.png"), ("format", "png")]).bytes)
            let blurred = try VipsImage.decode(
                try await proxy.image([("url", "\(origin)/edge.png"), ("format", "png"), ("filter", "blur:4")]).bytes)
            #expect(try plain.pixel(x: 98, y: 50)[0] == 0)
            let nearEdge = try blurred.pixel(x: 98, y: 50)[0]
            #expect(nearEdge > 20 && nearEdge < 235)

            let grey = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "100"), ("filter", "grayscale"), ("format", "png")])
            let greyImage = try VipsImage.decode(grey.bytes)
            let pixel = try greyImage.pixel(x: 90, y: 10)
            #expect(pixel.count == 1 || (pixel[0] == pixel[1] && pixel[1] == pixel[2]))

            let sharpened = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "100"), ("filter", "sharpen,blur:1")])
            #expect(sharpened.status == .ok)
        }
    }

    @Test func redirectsAreFollowed() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let response = try await proxy.image([("url", "\(origin)/redirect"), ("w", "40")])
            #expect(response.status == .ok)
            #expect(try VipsImage.decode(response.bytes).width == 40)
        }
    }

    @Test func contentTypeIsSniffedNotTrusted() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let mislabelled = try await proxy.image([("url", "\(origin)/mislabelled"), ("w", "40")])
            #expect(mislabelled.status == .ok)
            let text = try await proxy.image([("url", "\(origin)/text.txt"), ("w", "40")])
            #expect(text.status == .unsupportedMediaType)
        }
    }

    @Test func secondRequestIsServedFromMemoryAndRevalidates() async throws {
        try await withOriginAndProxy { proxy, origin, hits in
            let first = try await proxy.image([("url", "\(origin)/counted.jpg"), ("w", "90")])
            #expect(first.headers[.init("X-Cache")!] == "miss")
            let second = try await proxy.image([("url", "\(origin)/counted.jpg"), ("w", "90")])
            #expect(second.headers[.init("X-Cache")!] == "memory")
            #expect(second.bytes == first.bytes)
            #expect(hits.count("/counted.jpg") == 1)
            let etag = try #require(first.headers[.eTag])
            let conditional = try await proxy.image([("url", "\(origin)/counted.jpg"), ("w", "90")], headers: [.ifNoneMatch: etag])
            #expect(conditional.status == .notModified)
            #expect(conditional.body.readableBytes == 0)
            #expect(conditional.headers[.eTag] == etag)
            let other = try await proxy.image([("url", "\(origin)/counted.jpg"), ("w", "90")], headers: [.ifNoneMatch: "\"nope\""])
            #expect(other.status == .ok)
        }
    }
}
