import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer

/// SVG sources through the real server and a real origin (issue #62): off by default (415 naming the key),
/// drawn into PNG or WebP at any width when on, never answered as SVG (`format=svg` is a 400), `/info` says
/// `svg`, and an SVG naming another URL on the origin is refused without that URL being asked for.
@Suite(.timeLimit(.minutes(2))) struct SVGSourceServingTests {
    static let logo = Array("""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 60">
          <rect width="120" height="60" rx="12" fill="#1d4ed8"/><circle cx="90" cy="30" r="20" fill="#fff"/>
        </svg>
        """.utf8)

    static func svgFile(_ bytes: [UInt8]) -> TestOrigin.File { TestOrigin.File(bytes: bytes, contentType: "image/svg+xml") }

    @Test func svgSourcesAreOffByDefault() async throws {
        try await withFixtures(["/logo.svg": Self.svgFile(Self.logo)]) { proxy, base, _ in
            let refused = try await proxy.image([("url", base + "/logo.svg"), ("w", "64")])
            #expect(refused.status.code == 415 && refused.text.contains("image.allowSVGInput"), "\(refused.text)")
        }
    }

    @Test func aLogoComesOutAsPNGOrWebPAtAnyWidthAndNeverAsSVG() async throws {
        let pointing = Array("""
            <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image width="10" height="10" href="/secret.png"/></svg>
            """.utf8)
        let files = ["/logo.svg": Self.svgFile(Self.logo), "/pointing.svg": Self.svgFile(pointing)]
        try await withFixtures(files, configure: { $0.image.transformer.allowSVGInput = true }) { proxy, base, origin in
            let url = ("url", base + "/logo.svg")
            for width in [64, 1200, 3000] {
                let png = try await proxy.image([url, ("w", "\(width)")])
                #expect(png.status == .ok && png.headers[.contentType] == "image/png", "\(width): \(png.text)")
                let image = try ImageCore.VipsImage.decode(png.bytes)
                #expect(image.width == width && image.height == width / 2 && image.hasAlpha, "\(width): \(image.width)x\(image.height)")
            }
            let webp = try await proxy.image([url, ("w", "300")], headers: [.accept: "image/avif,image/webp,*/*"])
            #expect(webp.headers[.contentType] == "image/webp", "format=auto picks WebP for an SVG")
            let svg = try await proxy.image([url, ("w", "300"), ("format", "svg")])
            #expect(svg.status.code == 400 && svg.text.contains("format"), "\(svg.text)")
            let info = try await proxy.execute(
                uri: "/info?url=\((base + "/logo.svg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", method: .get)
            #expect(info.text.contains("\"format\":\"svg\"") && info.text.contains("\"width\":120"), "\(info.text)")
            let refused = try await proxy.image([("url", base + "/pointing.svg"), ("w", "64")])
            #expect(refused.status.code == 422 && refused.text.contains("outside itself"), "\(refused.text)")
            #expect(origin.hits.count("/secret.png") == 0, "the origin was never asked for what the SVG names")
        }
    }
}
