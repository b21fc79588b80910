import Testing
import TestSupport

@testable import ImageCore

/// A watermark image's share of a transform's memory reservation (issue #63): an animated one reserved
/// nothing, because its header was read with a limit of one frame.
@Suite struct OverlayWorkingSetTests {
    @Test func anAnimatedWatermarkReservesItsDecodedFrameAndTheLoadersCanvas() throws {
        let still = try TestImages.solid(width: 120, height: 80, red: 255, green: 0, blue: 0).encoded(as: .gif).bytes
        let animated = try TestImages.animation(width: 120, height: 80, frames: 6).encoded(as: .gif).bytes
        let stillBytes = OverlayStep.workingSetBytes(of: still)
        let animatedBytes = OverlayStep.workingSetBytes(of: animated)
        #expect(stillBytes == 120 * 80 * 8, "a decoded and a prepared copy of the frame")
        #expect(animatedBytes == 120 * 80 * 12, "the frame drawn, its prepared copy and the loader's canvas: \(animatedBytes)")
        // Through the plan: a transform drawing the animated watermark reserves more than one without.
        let source = try TestImages.solid(width: 400, height: 300, red: 9, green: 9, blue: 9).encoded(as: .png).bytes
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())
        var request = try ImageRequest(query: [("url", "https://example.com/a.png"), ("w", "200")], limits: .init(maxDimension: 4096))
        let without = try transformer.plan(source, request: request, choice: .fixed(.png)).fullReservation
        request.watermark = Watermark(source: try SourceURL(parsing: "https://example.com/logo.gif"), placement: OverlayPlacement())
        let with = try transformer.plan(source, request: request, choice: .fixed(.png), overlay: animated).fullReservation
        #expect(with - without == animatedBytes)
    }
}
