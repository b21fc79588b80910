import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer

/// Sources of an extreme aspect ratio asked for the largest boxes with `enlarge=1` (issue #63): a
/// 600000×1 PNG of under 2 KB ended the process (a libvips assertion with the default gravity, an `Int32`
/// trap with `g=north`), and a side derived from the aspect ratio was never held to `image.maxDimension`.
/// Every route answers a 4xx or an image whose sides are within the limit, and the process lives on.
@Suite(.timeLimit(.minutes(4))) struct ExtremeAspectTests {
    static let limit = 4096

    /// PNGs whose one side reaches past 524,288 px (524,288 × 4096 ≥ 2^31), and a wide one whose derived
    /// side would be 819,200 px.
    static func files() throws -> [String: TestOrigin.File] {
        let wide = try TestImages.png(TestImages.solid(width: 600_000, height: 1, red: 200, green: 40, blue: 10))
        let tall = try TestImages.png(TestImages.solid(width: 1, height: 600_000, red: 10, green: 40, blue: 200))
        let strip = try TestImages.png(TestImages.gradient(width: 20_000, height: 100))
        return ["/wide.png": .image(wide), "/tall.png": .image(tall), "/strip.png": .image(strip)]
    }

    /// The queries that reached past the limit, in every fit and gravity that takes a different path.
    static let queries: [[(String, String)]] = [
        [("w", "4096"), ("h", "4096"), ("fit", "cover"), ("enlarge", "1")],
        [("w", "4096"), ("h", "4096"), ("fit", "cover"), ("enlarge", "1"), ("g", "north")],
        [("w", "4096"), ("h", "4096"), ("fit", "cover"), ("enlarge", "1"), ("g", "smart")],
        [("w", "4096"), ("h", "4096"), ("fit", "cover"), ("enlarge", "1"), ("fp", "0.9,0.1")],
        [("w", "4096"), ("h", "4096"), ("fit", "contain"), ("enlarge", "1")],
        [("w", "4096"), ("h", "4096"), ("fit", "pad"), ("enlarge", "1")],
        [("w", "4096"), ("h", "4096"), ("fit", "fill"), ("enlarge", "1")],
        [("h", "4096"), ("enlarge", "1")],
        [("w", "4096"), ("enlarge", "1")],
        [("w", "1024"), ("dpr", "4"), ("fit", "cover"), ("enlarge", "1")],
        [("h", "2048"), ("dpr", "2"), ("enlarge", "1"), ("format", "webp")],
        [("w", "4096"), ("h", "4096"), ("fit", "cover"), ("enlarge", "1"), ("crop", "0,0,1.0,1.0")],
        [("w", "4096")],
        [("h", "4096")],
    ]

    @Test func everyImageQueryAnswersWithinTheLimitAndTheProcessLives() async throws {
        try await withFixtures(try Self.files()) { proxy, base, _ in
            for path in ["/wide.png", "/tall.png", "/strip.png"] {
                for query in Self.queries {
                    let response = try await proxy.image([("url", base + path)] + query)
                    let described = "\(path) \(query.map { "\($0.0)=\($0.1)" }.joined(separator: "&"))"
                    if response.status == .ok {
                        guard let image = try? VipsImage.decode(response.bytes) else {
                            Issue.record("\(described): 200 but not an image: \(response.headers[.contentType] ?? "") \(response.bytes.count) bytes")
                            continue
                        }
                        #expect(image.width <= Self.limit && image.height <= Self.limit, "\(described): \(image.width)x\(image.height)")
                    } else {
                        #expect((400..<500).contains(response.status.code), "\(described): \(response.status) \(response.text)")
                    }
                }
            }
            // The derived side is clamped, the aspect kept: 20000x100 at h=4096&enlarge=1 is 4096x20.
            let strip = try await proxy.image([("url", base + "/strip.png"), ("h", "4096"), ("enlarge", "1"), ("format", "png")])
            #expect(strip.status == .ok, "\(strip.status) \(strip.text)")
            let image = try VipsImage.decode(strip.bytes)
            #expect(strip.status == .ok && image.width == 4096 && image.height == 20, "\(image.width)x\(image.height)")
            let health = try await proxy.execute(uri: "/health", method: .get, headers: [:], body: nil)
            #expect(health.status == .ok)
        }
    }

    @Test func prefetchAndInfoOfTheSameSourcesLeaveTheProcessAnswering() async throws {
        try await withFixtures(try Self.files()) { proxy, base, _ in
            let port = try #require(proxy.port)
            let urls = ["/wide.png", "/tall.png"].flatMap { path in
                Self.queries.map { query in
                    let source = (base + path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    return "/img?url=\(source)&" + query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
                }
            }
            let body = try JSONSerialization.data(withJSONObject: ["urls": urls])
            let accepted = try await httpRequest(port: port, path: "/prefetch", method: "POST", body: body)
            #expect(accepted.status == 202)
            // The prefetched transforms run in the background; once the last is cached (or refused), the
            // server still answers.
            let last = try #require(urls.last)
            let end = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < end {
                let probe = try await httpRequest(port: port, path: last, method: "GET", headers: ["Cache-Control": "only-if-cached"])
                if probe.status == 200 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            for path in ["/wide.png", "/tall.png", "/strip.png"] {
                let source = (base + path).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let info = try await httpRequest(port: port, path: "/info?url=\(source)", method: "GET")
                #expect(info.status == 200, "\(path): \(info.status)")
            }
            let health = try await httpRequest(port: port, path: "/health", method: "GET")
            #expect(health.status == 200)
        }
    }

    @Test func jpegXLSourcesOfAnExtremeAspectAreHeldToTheLimitToo() async throws {
        ImageCore.Vips.allowJXLInput()
        let wide = try TestImages.solid(width: 600_000, height: 1, red: 90, green: 90, blue: 90).encoded(as: .jxl, quality: 90).bytes
        try await withFixtures(["/wide.jxl": .image(wide)], configure: { $0.image.transformer.allowJXLInput = true }) { proxy, base, _ in
            for query in Self.queries.prefix(9) {
                let response = try await proxy.image([("url", base + "/wide.jxl")] + query)
                if response.status == .ok {
                    let image = try VipsImage.decode(response.bytes)
                    #expect(image.width <= Self.limit && image.height <= Self.limit, "\(query): \(image.width)x\(image.height)")
                } else {
                    #expect((400..<500).contains(response.status.code), "\(query): \(response.status) \(response.text)")
                }
            }
        }
    }
}
