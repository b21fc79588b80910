import Testing
import TestSupport

@testable import ImageCore

/// `image.maxTransformBytes` through the real server.
@Suite(.timeLimit(.minutes(1))) struct TransformMemoryBudgetServingTests {
    @Test func aSourceNeedingMoreThanTheBudgetIsServedAlone() async throws {
        let big = try TestImages.gradient(width: 1600, height: 1200).encoded(as: .png).bytes
        let small = try TestImages.gradient(width: 200, height: 150).encoded(as: .png).bytes
        let files: [String: TestOrigin.File] = ["/big.png": .image(big), "/small.png": .image(small)]
        try await withFixtures(files, configure: { $0.image.transformer.maxTransformBytes = 4 << 20 }) { proxy, base, _ in
            // 1600x1200 needs ~15 MB by its estimate, more than the 4 MiB budget: it runs alone and is served.
            let large = try await proxy.image([("url", base + "/big.png"), ("w", "100")])
            #expect(large.status == .ok)
            #expect(try VipsImage.decode(large.bytes).width == 100)
            let served = try await proxy.image([("url", base + "/small.png"), ("w", "100")])
            #expect(served.status == .ok)
        }
    }
}
