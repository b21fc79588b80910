import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// `crop=x,y,w,h` through the server, pipeline and libvips: cut from the upright source before the resize.
@Suite(.timeLimit(.minutes(2))) struct CropTests {
    /// 800×600: top-left red, top-right green, bottom-left blue, bottom-right white.
    static func quadrants() throws -> VipsImage {
        let (width, height) = (800, 600)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let colour: [UInt8] = switch (x < width / 2, y < height / 2) {
                case (true, true): [255, 0, 0]
                case (false, true): [0, 255, 0]
                case (true, false): [0, 0, 255]
                case (false, false): [255, 255, 255]
                }
                pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: colour)
            }
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    static func centre(_ response: TestResponse) throws -> [Double] {
        let image = try VipsImage.decode(Array(response.body.readableBytesView))
        return try image.pixel(x: image.width / 2, y: image.height / 2)
    }

    static func near(_ colour: [Double], _ expected: [Double]) -> Bool {
        zip(colour, expected).allSatisfy { abs($0 - $1) < 40 }
    }

    @Test func pixelsAndFractionsCutBeforeTheResize() async throws {
        let source = try Self.quadrants().encoded(as: .jpeg, quality: 95).bytes
        try await withFixtures(["/q.jpg": .jpeg(source)]) { proxy, base, _ in
            let url = ("url", base + "/q.jpg")
            let white = try await proxy.image([url, ("crop", "400,300,400,300"), ("w", "100"), ("format", "png")])
            #expect(white.status == .ok)
            let whiteImage = try VipsImage.decode(Array(white.body.readableBytesView))
            #expect(whiteImage.width == 100 && whiteImage.height == 75, "the rectangle's aspect")
            #expect(Self.near(try Self.centre(white), [255, 255, 255]))
            let blue = try await proxy.image([url, ("crop", "0.0,0.5,0.5,0.5"), ("format", "png")])
            let blueImage = try VipsImage.decode(Array(blue.body.readableBytesView))
            #expect(blueImage.width == 400 && blueImage.height == 300, "without a box: the rectangle's size")
            #expect(Self.near(try Self.centre(blue), [0, 0, 255]))
            // A rectangle reaching past the edge is cut to the source; cover fills the box from it.
            let green = try await proxy.image([url, ("crop", "500,0,900,250"), ("w", "60"), ("h", "60"), ("fit", "cover"), ("format", "png")])
            let greenImage = try VipsImage.decode(Array(green.body.readableBytesView))
            #expect(greenImage.width == 60 && greenImage.height == 60)
            #expect(Self.near(try Self.centre(green), [0, 255, 0]))
            #expect(white.headers[.eTag] != blue.headers[.eTag])
        }
    }

    @Test func theRectangleIsOfTheUprightImage() async throws {
        // Stored 800×600 with orientation 6: shown 600×800, the stored top-left (red) now top-right.
        let source = try Self.quadrants().withOrientation(6).encoded(as: .jpeg, keepJPEGMetadata: true).bytes
        try await withFixtures(["/r.jpg": .jpeg(source)]) { proxy, base, _ in
            let red = try await proxy.image([("url", base + "/r.jpg"), ("crop", "300,0,300,400"), ("format", "png")])
            #expect(red.status == .ok)
            let image = try VipsImage.decode(Array(red.body.readableBytesView))
            #expect(image.width == 300 && image.height == 400)
            let centre = try Self.centre(red)
            #expect(Self.near(centre, [255, 0, 0]), "\(centre)")
        }
    }

    @Test func badRectanglesAreNamed() async throws {
        let source = try Self.quadrants().encoded(as: .jpeg, quality: 80).bytes
        try await withFixtures(["/q.jpg": .jpeg(source)]) { proxy, base, _ in
            let url = ("url", base + "/q.jpg")
            for bad in ["1,2,3", "0,0,0,10", "0,0,1.5,1.0", "-1,0,10,10", "a,b,c,d", "0,0,10,10,10"] {
                let response = try await proxy.image([url, ("crop", bad)])
                #expect(response.status == .badRequest, "\(bad)")
                #expect(String(buffer: response.body).contains("'crop': must be x,y,w,h"), "\(bad)")
            }
            let outside = try await proxy.image([url, ("crop", "800,0,10,10")])
            #expect(outside.status == .unprocessableContent)
            #expect(String(buffer: outside.body).contains("crop 800,0,10,10 lies outside the source (800x600 upright)"))
        }
    }

    @Test func keysWithoutCropStayAsTheyWere() throws {
        var request = ImageRequest(source: try SourceURL(parsing: "https://example.com/a.jpg"))
        request.width = 300
        let canonical = "v1|https://example.com/a.jpg|w=300|h=|fit=contain|enlarge=0|format=jpeg|png|q=|filter="
            + "|g=|bg=\(request.background)|progressive=0|lqip=0"
        #expect(request.variantKey(choice: .jpegOrPNG) == VariantKey(hashing: canonical), "cached variants keep their keys")
        request.crop = CropRectangle(parameter: "0,0,10,10")
        #expect(request.variantKey(choice: .jpegOrPNG) != VariantKey(hashing: canonical))
        #expect(CropRectangle(parameter: "0.25,0,1,1.0")?.description == "0.25,0,1,1.0")
        let cut = try #require(CropRectangle(parameter: "10,10,100,100")?.resolved(width: 50, height: 200))
        #expect(cut == (10, 10, 40, 100))
    }
}
