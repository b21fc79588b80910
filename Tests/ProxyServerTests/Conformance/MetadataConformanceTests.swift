import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// No output carries the source's metadata: EXIF (GPS included), XMP, IPTC, ICC or comments, for every
/// output format and every decode path.
@Suite(.timeLimit(.minutes(3))) struct MetadataConformanceTests {
    private static func photo() throws -> VipsImage {
        try TestImages.withCameraMetadata(TestImages.photo(width: 1600, height: 1200))
    }
    private static func animation() throws -> VipsImage {
        try TestImages.withCameraMetadata(TestImages.animation(width: 96, height: 64, frames: 5))
    }
    /// Baseline 4:2:0, the web's usual JPEG: libvips' shrink-on-load path.
    static let baseline = try! TestImages.jpeg(photo(), progressive: false, subsample: true, keepMetadata: true)
    /// Progressive 4:4:4: the DC-only 1/8 path whenever 1/8 covers the output.
    static let progressive = try! TestImages.jpeg(photo(), progressive: true, subsample: false, keepMetadata: true)
    static let stillWebP = try! TestImages.encodedKeepingMetadata(photo(), as: .webp)
    static let animatedWebP = try! TestImages.encodedKeepingMetadata(animation(), as: .webp)
    static let animatedGIF = try! animation().encoded(as: .gif).bytes

    static let files: [String: TestOrigin.File] = [
        "/baseline.jpg": .jpeg(baseline), "/progressive.jpg": .jpeg(progressive), "/still.webp": .image(stillWebP),
        "/animated.webp": .image(animatedWebP), "/animated.gif": .image(animatedGIF),
    ]

    @Test func theFixturesCarryEveryBlock() throws {
        for (name, bytes) in [("baseline", Self.baseline), ("progressive", Self.progressive), ("webp", Self.stillWebP)] {
            let exif = TestImages.contains(bytes, Array(TestImages.artist.utf8))
            #expect(exif, "\(name): EXIF planted")
            #expect(TestImages.contains(bytes, Array(TestImages.xmpCreator.utf8)), "\(name): XMP planted")
        }
        #expect(TestImages.contains(Self.baseline, Array(TestImages.iptcCaption.utf8)), "IPTC planted")
        #expect(TestImages.contains(Self.animatedWebP, Array(TestImages.artist.utf8)), "animated WebP EXIF planted")
        #expect(JPEGEighthDecoder.image(Self.progressive) != nil, "the progressive source takes the 1/8 path")
        #expect(try SourceHeader(reading: Self.animatedWebP).frames == 5)
    }

    @Test(arguments: ["/baseline.jpg", "/progressive.jpg", "/still.webp"])
    func stillOutputsCarryNoMetadata(source: String) async throws {
        try await withFixtures(Self.files) { proxy, base, _ in
            // 300 wide: shrink-on-load; 150 wide: the 1/8 path for the progressive source.
            var queries: [[(String, String)]] = []
            for format in ["jpeg", "png", "webp", "avif", "gif"] {
                queries.append([("w", "300"), ("format", format)])
                queries.append([("w", "150"), ("format", format)])
            }
            queries.append([("lqip", "1"), ("format", "webp")])
            queries.append([("lqip", "1"), ("format", "jpeg")])
            queries.append([("w", "200"), ("h", "200"), ("fit", "cover"), ("g", "smart"), ("format", "webp")])
            for query in queries {
                let response = try await proxy.image([("url", base + source)] + query)
                #expect(response.status == .ok, "\(source) \(query): \(response.status) \(response.text)")
                guard response.status == .ok else { continue }
                let marker = TestImages.metadataMarker(in: response.bytes)
                #expect(marker == nil, "\(source) \(query): output carries \(marker ?? "")")
                let fields = try TestImages.metadataFields(of: response.bytes)
                #expect(fields.isEmpty, "\(source) \(query): decoded output has \(fields)")
            }
            // The placeholder is a few hundred bytes, not kilobytes of EXIF.
            let placeholder = try await proxy.image([("url", base + source), ("lqip", "1"), ("format", "webp")])
            #expect(placeholder.bytes.count < 1_000, "\(source): LQIP of \(placeholder.bytes.count) bytes")
        }
    }

    @Test func animatedOutputsCarryNoMetadata() async throws {
        try await withFixtures(Self.files) { proxy, base, _ in
            for (source, format) in [("/animated.webp", "webp"), ("/animated.webp", "gif"), ("/animated.gif", "webp"), ("/animated.gif", "gif")] {
                let response = try await proxy.image([("url", base + source), ("w", "48"), ("format", format)])
                #expect(response.status == .ok, "\(source) as \(format)")
                #expect(try VipsImage.decodeAllFrames(response.bytes).frames == 5, "\(source) as \(format) stays animated")
                let marker = TestImages.metadataMarker(in: response.bytes)
                #expect(marker == nil, "\(source) as \(format): output carries \(marker ?? "")")
            }
        }
    }
}
