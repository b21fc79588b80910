import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// `/info` reads frames and dimensions from the container and header, whatever the frame count, and
/// decodes no more than a 32 px thumbnail; sources over `image.maxSourceFrames` are refused before any
/// decode, by `/info` and `/img` alike.
@Suite(.timeLimit(.minutes(3))) struct InfoConformanceTests {
    /// `frames` 1x1 frames alternating between two colours (identical frames would be merged).
    static func manyFrames(_ frames: Int) throws -> ImageCore.VipsImage {
        let pixels = (0..<frames).flatMap { frame -> [UInt8] in frame % 2 == 0 ? [200, 20, 20] : [20, 20, 200] }
        return try ImageCore.VipsImage.fromPixels(pixels, width: 1, height: frames, bands: 3).asAnimation(frameHeight: 1)
    }

    static let webp10k = try! manyFrames(10_000).encoded(as: .webp).bytes
    static let gif10k = try! manyFrames(10_000).encoded(as: .gif).bytes

    private func info(_ proxy: any TestClientProtocol, _ url: String) async throws -> (TestResponse, ImageInfo?) {
        let response = try await proxy.execute(uri: "/info?url=\(url)", method: .get, headers: [:], body: nil)
        return (response, try? JSONDecoder().decode(ImageInfo.self, from: Data(response.bytes)))
    }

    @Test func framesComeFromTheContainer() async throws {
        #expect(try SourceHeader(reading: Self.webp10k).frames == 10_000)
        #expect(try SourceHeader(reading: Self.gif10k).frames == 10_000, "libvips' GIF count stops at 4097")
        let files: [String: TestOrigin.File] = ["/10k.webp": .image(Self.webp10k), "/10k.gif": .image(Self.gif10k)]
        try await withFixtures(files, configure: { $0.image.transformer.maxSourceFrames = 20_000 }) { proxy, base, _ in
            for name in ["/10k.webp", "/10k.gif"] {
                let (response, info) = try await info(proxy, base + name)
                #expect(response.status == .ok, "\(name): \(response.text)")
                #expect(info?.frames == 10_000, "\(name): \(info.map { "\($0.frames)" } ?? response.text)")
                #expect(info?.width == 1 && info?.height == 1)
            }
        }
    }

    @Test func framesOverTheLimitAreRefusedBeforeDecoding() async throws {
        let files: [String: TestOrigin.File] = ["/10k.webp": .image(Self.webp10k), "/10k.gif": .image(Self.gif10k)]
        try await withFixtures(files) { proxy, base, _ in
            for name in ["/10k.webp", "/10k.gif"] {
                let (response, _) = try await info(proxy, base + name)
                #expect(response.status == .unprocessableContent)
                #expect(response.text.contains("more than 1000 frames"), "\(response.text)")
                let image = try await proxy.image([("url", base + name), ("w", "10")])
                #expect(image.status == .unprocessableContent && image.text.contains("frames"))
            }
        }
    }

    @Test func infoOfAnAnimationMatchesItsFirstFrameAndHeader() async throws {
        let animation = try TestImages.animation(width: 120, height: 80, frames: 6)
        let files: [String: TestOrigin.File] = [
            "/a.webp": .image(try animation.encoded(as: .webp).bytes), "/a.gif": .image(try animation.encoded(as: .gif).bytes),
        ]
        try await withFixtures(files) { proxy, base, _ in
            for name in ["/a.webp", "/a.gif"] {
                let (response, info) = try await info(proxy, base + name)
                #expect(response.status == .ok)
                #expect(info?.frames == 6 && info?.width == 120 && info?.height == 80, "\(name): \(response.text)")
            }
        }
    }
}
