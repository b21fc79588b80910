import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer

/// Malformed PNGs aimed at the own PNG decoder (issue #56, item 5), the files the fuzz target replays from
/// `fuzz/regressions/jpeg_dc/png-*.png`: a wrong IDAT length, bad filter bytes, a bad CRC, 500 IDAT chunks,
/// 60000×1, 1×1000000, a declared 20000², a zero width. Every srcset width answers 200 or 422, in little CPU.
@Suite(.timeLimit(.minutes(3))) struct MalformedPNGTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz/regressions/jpeg_dc")

    @Test func everyMalformedPNGAnswers200Or422AtEverySrcsetWidth() async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasPrefix("png-") }.sorted()
        #expect(names.count >= 8, "\(names)")
        var files: [String: TestOrigin.File] = [:]
        for name in names {
            files["/" + name] = .image(Array(try Data(contentsOf: Self.folder.appendingPathComponent(name))))
        }
        try await withFixtures(files) { proxy, base, _ in
            for name in names {
                for width in ["320", "640", "1280", "1920"] {
                    let cpuBefore = HostileSourceTests.processCPUSeconds()
                    let response = try await proxy.image([("url", base + "/" + name), ("w", width), ("format", "webp")])
                    let cpu = HostileSourceTests.processCPUSeconds() - cpuBefore
                    #expect(response.status == .ok || response.status == .unprocessableContent, "\(name) w=\(width): \(response.status) \(response.text)")
                    // 0.3 CPU-s in the release build (issue #56); the debug build's own C is unoptimised.
                    #expect(cpu < 1.5, "\(name) w=\(width): \(cpu) CPU-s")
                }
            }
        }
    }
}
