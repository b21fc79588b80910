import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// `max_bytes` through the real server and libvips (issue #32, size targets): JPEG, WebP and AVIF fit
/// the budget at the highest quality the bounded search tried, PNG and GIF ignore it, the chosen quality
/// is in `Server-Timing`, and a budget is part of the variant.
@Suite(.timeLimit(.minutes(3))) struct SizeTargetTests {
    /// A detailed photo-like source (noise compresses badly, so quality matters for size).
    static let photo: [UInt8] = try! TestImages.noiseJPEG(width: 900, height: 600)

    static func quality(_ response: TestResponse) -> String? {
        let timing = response.headers[.serverTiming] ?? ""
        guard let range = timing.range(of: #"quality;desc=[A-Za-z0-9.\-]+"#, options: .regularExpression) else { return nil }
        return String(timing[range].dropFirst("quality;desc=".count))
    }

    @Test(arguments: [OutputFormat.jpeg, .webp, .avif])
    func lossyFormatsFitTheBudgetAtTheHighestQualityTried(format: OutputFormat) async throws {
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)]) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            let free = try await proxy.image([url, ("w", "600"), ("format", format.rawValue)])
            #expect(free.status == .ok && Self.quality(free) == nil, "no budget, no search")
            let budget = max(1_024, free.bytes.count / 3)
            let fitted = try await proxy.image([url, ("w", "600"), ("format", format.rawValue), ("max_bytes", "\(budget)")])
            #expect(fitted.status == .ok)
            #expect(fitted.bytes.count <= budget, "\(format): \(fitted.bytes.count) > \(budget)")
            #expect(try VipsImage.decode(fitted.bytes).width == 600)
            let chosen = try #require(Self.quality(fitted).flatMap { Int($0) }, "\(fitted.headers[.serverTiming] ?? "")")
            #expect(chosen < EncodingSettings().defaultQuality(for: format))
            #expect(fitted.headers[.eTag] != free.headers[.eTag], "a budget is its own variant")
            // The highest that fits within the search's steps: a few qualities higher no longer fits.
            let higher = try await proxy.image([url, ("w", "600"), ("format", format.rawValue), ("q", "\(min(100, chosen + 6))")])
            #expect(higher.bytes.count > budget || chosen + 6 > 100, "\(format): q=\(chosen + 6) is \(higher.bytes.count) bytes")
            // A budget the requested quality meets: one encode, at that quality.
            let generous = try await proxy.image(
                [url, ("w", "600"), ("format", format.rawValue), ("q", "40"), ("max_bytes", "10485760")])
            #expect(Self.quality(generous) == "40")
        }
    }

    @Test func pngAndGIFIgnoreItAndAnUnreachableBudgetIsMarked() async throws {
        try await withFixtures(["/p.jpg": .jpeg(Self.photo)]) { proxy, base, _ in
            let url = ("url", base + "/p.jpg")
            for format in ["png", "gif"] {
                let response = try await proxy.image([url, ("w", "300"), ("format", format), ("max_bytes", "1024")])
                #expect(response.status == .ok && response.bytes.count > 1_024 && Self.quality(response) == nil, "\(format)")
            }
            let impossible = try await proxy.image([url, ("w", "900"), ("format", "jpeg"), ("max_bytes", "1024")])
            #expect(impossible.status == .ok)
            #expect(Self.quality(impossible)?.hasSuffix("-over-max-bytes") == true, "\(impossible.headers[.serverTiming] ?? "")")
            for bad in ["10", "abc", "10485761", "-5", "99999999999999999999"] {
                let response = try await proxy.image([url, ("w", "300"), ("max_bytes", bad)])
                #expect(response.status == .badRequest && response.text.contains("max_bytes"), "\(bad): \(response.text)")
            }
        }
    }
}
