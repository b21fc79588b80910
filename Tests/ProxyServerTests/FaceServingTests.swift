import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine
@testable import ProxyServer

/// Faces through the real server and a real origin (issue #62): `g=face` keeps the face of a real portrait
/// in a strip where `g=smart` loses it, a srcset searches the source once, `filter=redact_faces` hides it,
/// `/info?faces=1` gives the box in source pixels, and thumbor's `smart/` crops around it too.
@Suite(.timeLimit(.minutes(2))) struct FaceServingTests {
    static func faces(in bytes: [UInt8]) throws -> Int { try FaceDetector.faces(in: ImageCore.VipsImage.decode(bytes)).count }

    @Test func aStripKeepsTheFaceAndTheSourceIsSearchedOnce() async throws {
        let files = ["/astronaut.jpg": TestOrigin.File(bytes: try Photographs.astronaut(), contentType: "image/jpeg")]
        try await withFixtureProxy(files, configure: {
            $0.compat.thumbor.enabled = true
            $0.compat.thumbor.allowUnsafe = true
        }) { proxy, runtime, base, _ in
            let url = ("url", base + "/astronaut.jpg")
            let smart = try await proxy.image([url, ("w", "400"), ("h", "100"), ("fit", "cover"), ("g", "smart"), ("format", "png")])
            let smartFaces = try Self.faces(in: smart.bytes)
            #expect(smart.status == .ok && smartFaces == 0, "attention crops the suit")
            for (width, height) in [(400, 100), (800, 200), (200, 50)] {
                let face = try await proxy.image([url, ("w", "\(width)"), ("h", "\(height)"), ("fit", "cover"), ("g", "face"), ("format", "png")])
                #expect(face.status == .ok, "\(face.text)")
                if width >= 400 { #expect(try Self.faces(in: face.bytes) == 1, "\(width)x\(height) keeps the face") }
            }
            #expect(runtime.pipeline.pool.faceSearches.count == 1, "three widths, one search")
            let redacted = try await proxy.image([url, ("w", "400"), ("filter", "redact_faces:pixelate"), ("format", "png")])
            let redactedFaces = try Self.faces(in: redacted.bytes)
            #expect(redacted.status == .ok && redactedFaces == 0, "\(redacted.text)")
            let info = try await proxy.execute(
                uri: "/info?url=\((base + "/astronaut.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&faces=1", method: .get)
            let decoded = try JSONDecoder().decode(ImageInfo.self, from: Data(info.bytes))
            let box = try #require(decoded.faces?.first, "\(info.text)")
            #expect(decoded.faces?.count == 1 && (175...270).contains(box.x + box.width / 2) && (75...185).contains(box.y + box.height / 2),
                "the astronaut's face: \(box)")
            let plain = try await proxy.execute(
                uri: "/info?url=\((base + "/astronaut.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", method: .get)
            #expect(!plain.text.contains("faces"), "faces only when asked for")
            // thumbor's smart/ looks for faces first, as thumbor's own detectors do.
            let image = base.replacingOccurrences(of: "http://", with: "") + "/astronaut.jpg"
            let thumbor = try await proxy.execute(uri: "/unsafe/400x100/smart/filters:format(png)/\(image)", method: .get)
            let thumborFaces = try Self.faces(in: thumbor.bytes)
            #expect(thumbor.status == .ok && thumborFaces == 1, "\(thumbor.text)")
        }
    }
}
