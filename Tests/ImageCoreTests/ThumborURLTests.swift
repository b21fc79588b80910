import Foundation
import Testing

@testable import ImageCore

/// thumbor URLs turned into native requests: the grammar's parts in order, each URL parsing into the
/// request its native twin parses into, and what the engine cannot honour refused by name.
@Suite struct ThumborURLTests {
    private let limits = ImageRequest.Limits(maxDimension: 4096)
    private static let image = "127.0.0.1:8/photos/cat.jpg"
    private static let source = "http://" + image

    private func request(_ target: String) throws -> ImageRequest {
        try ThumborURL(target: target).translated().parsed(limits: limits)
    }

    private func native(_ pairs: [(String, String)]) throws -> ImageRequest {
        try nativeTwin(of: Self.source, pairs, limits: limits)
    }

    @Test func everyPartOfTheGrammarInItsOrder() throws {
        let url = try ThumborURL(
            target: "/unsafe/meta/trim/10x20:110x220/fit-in/-300x-200/left/top/smart/filters:quality(80):format(webp)/\(Self.image)")
        #expect(url.signature == "unsafe" && url.metadata && url.trim == "trim" && url.fitIn == "fit-in")
        #expect(url.crop! == (10, 20, 110, 220))
        #expect(url.width == "300" && url.height == "200" && url.flipHorizontally && url.flipVertically)
        #expect(url.horizontalAlign == "left" && url.verticalAlign == "top" && url.smart)
        #expect(url.filters.map(\.name) == ["quality", "format"] && url.filters[0].arguments == ["80"])
        #expect(url.image == Self.source)
        #expect(url.signedPath.hasPrefix("meta/trim/"))
        let plain = try ThumborURL(target: "/unsafe/\(Self.image)")
        #expect(plain.width == nil && plain.filters.isEmpty && plain.image == Self.source)
        let encoded = try ThumborURL(target: "/unsafe/300x0/" + Self.source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        #expect(encoded.image == Self.source && encoded.width == "300" && encoded.height == "0")
    }

    @Test func partsAndFiltersMeanTheirNativeTwins() throws {
        let cases: [(String, [(String, String)])] = [
            ("300x200", [("w", "300"), ("h", "200"), ("fit", "cover"), ("enlarge", "1")]),
            ("300x0", [("w", "300"), ("enlarge", "1")]),
            ("fit-in/300x200", [("w", "300"), ("h", "200")]),
            ("fit-in/300x200/filters:upscale()", [("w", "300"), ("h", "200"), ("enlarge", "1")]),
            ("300x200/filters:no_upscale()", [("w", "300"), ("h", "200"), ("fit", "cover")]),
            ("300x200/smart", [("w", "300"), ("h", "200"), ("fit", "cover"), ("enlarge", "1"), ("g", "face")]),
            ("300x200/right/bottom", [("w", "300"), ("h", "200"), ("fit", "cover"), ("enlarge", "1"), ("g", "southeast")]),
            ("300x200/top", [("w", "300"), ("h", "200"), ("fit", "cover"), ("enlarge", "1"), ("g", "north")]),
            ("300x200/center/middle", [("w", "300"), ("h", "200"), ("fit", "cover"), ("enlarge", "1")]),
            ("-300x200", [("w", "300"), ("h", "200"), ("fit", "cover"), ("enlarge", "1"), ("filter", "flop")]),
            ("10x20:110x220/fit-in/50x50", [("w", "50"), ("h", "50"), ("crop", "10,20,100,200")]),
            ("fit-in/300x200/filters:fill(ff0000)", [("w", "300"), ("h", "200"), ("fit", "pad"), ("bg", "ff0000")]),
            ("fit-in/300x200/filters:fill(white):quality(70):format(jpeg)", [("w", "300"), ("h", "200"), ("fit", "pad"), ("bg", "ffffff"), ("q", "70"), ("format", "jpeg")]),
            ("filters:blur(3):grayscale():rotate(90):brightness(10):contrast(-20)", [("filter", "blur:2.21,grayscale:601,rotate:270,lighten:25,contrast:0.64")]),
            ("filters:sharpen(2,1.5,true):round_corner(20,255,0,0)", [("filter", "sharpen:1.5,round:20"), ("bg", "ff0000")]),
            ("filters:max_bytes(20000):strip_icc():strip_exif():background_color(0f0)", [("max_bytes", "20000"), ("bg", "00ff00")]),
            ("trim/filters:blur(0)", [("filter", "trim")]),
        ]
        for (parts, pairs) in cases {
            #expect(try request("/unsafe/\(parts)/\(Self.image)") == native(pairs), "\(parts)")
        }
    }

    /// thumbor's kernel ends at its radius, one sigma by default: the native sigma has the same variance, so it is
    /// below the radius, lower again for a smaller sigma, the same beyond thumbor's largest radius, and none for 0.
    @Test func blurMeansThumborsCutOffKernel() throws {
        let three = try #require(ThumborBlur.nativeSigma(radius: 3, sigma: 0))
        #expect(three > 2 && three < 2.5)
        let narrow = try #require(ThumborBlur.nativeSigma(radius: 4, sigma: 1))
        let wide = try #require(ThumborBlur.nativeSigma(radius: 4, sigma: 0))
        #expect(narrow < wide && wide < 4)
        // sigma 1 cut at 4 is almost the whole Gaussian: its variance is 1, so the native sigma is 1/sqrt(0.689).
        #expect(abs(narrow - (1 / 0.689).squareRoot()) < 0.01)
        #expect(ThumborBlur.nativeSigma(radius: 500, sigma: 0) == ThumborBlur.nativeSigma(radius: 150, sigma: 0))
        #expect(ThumborBlur.nativeSigma(radius: 0, sigma: 0) == nil)
        #expect(try request("/unsafe/filters:blur(3,1)/\(Self.image)") == native([("filter", "blur:1.2")]))
    }

    @Test func whatTheEngineCannotHonourIsRefusedByName() {
        let refusals: [(String, String)] = [
            ("adaptive-fit-in/300x200", "adaptive-fit-in"), ("full-fit-in/300x200", "full-fit-in"), ("origx100", "width"),
            ("trim:bottom-right", "trim"), ("110x220:10x20", "crop"), ("300x200/filters:fill(auto)", "filters:fill"),
            ("300x200/filters:fill(ff0000)", "filters:fill"), ("filters:focal(1x1:2x2)", "filters:focal"),
            ("filters:proportion(0.5)", "filters:proportion"), ("filters:rotate(45)", "filters:rotate"),
            ("filters:watermark(http://127.0.0.1:8/w.png,10,10,50)", "filters:watermark"), ("filters:quality(500)", "filters:quality"),
            ("filters:brightness(300)", "filters:brightness"), ("filters:round_corner(10|20,0,0,0)", "filters:round_corner"),
            ("filters:nope()", "filters:nope"), ("fit-in/90x90/filters:rotate(90):upscale()", "filters:upscale"), ("5000x10", "width"), ("filters:format(tiff)", "filters:format"),
        ]
        for (parts, name) in refusals {
            do {
                _ = try request("/unsafe/\(parts)/\(Self.image)")
                Issue.record("\(parts) was accepted")
            } catch let error as RequestError {
                #expect(error.parameter == name, "\(parts): \(error.publicMessage)")
            } catch {
                Issue.record("\(parts): \(error)")
            }
        }
        for malformed in ["", "/", "/unsafe", "/unsafe/", "/unsafe/filters:quality(80/a.jpg", "/unsafe/debug/a.jpg"] {
            #expect(throws: RequestError.self, "\(malformed)") { try ThumborURL(target: malformed) }
        }
    }

    @Test func randomTargetsNeverTrap() {
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("/:x-()fit-inmetatrimsmartfilters,0123456789abc.%")
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...60, using: &random)
            let target = "/unsafe/" + String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            if let url = try? ThumborURL(target: target), let dialect = try? url.translated() {
                _ = try? ImageRequest(query: dialect.query, limits: limits)
            }
        }
    }
}
