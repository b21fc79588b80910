import CVipsShim
import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// One damaged source gets one answer for every variant, whichever decode path each variant takes:
/// damage that libjpeg/libvips tolerate is served, anything else is 422 for all.
@Suite(.timeLimit(.minutes(3))) struct DamageConformanceTests {
    /// Variants that take different decode paths: the 1/8 DC path (progressive 4:4:4/grey), libvips'
    /// shrink-on-load at 1/8 and 1/1, and a smart crop.
    static let variants: [[(String, String)]] = [
        [("w", "80")], [("w", "600")], [("w", "200"), ("h", "200"), ("fit", "cover"), ("g", "smart")], [("lqip", "1")],
    ]

    /// Damaged copies of a progressive JPEG: truncated at several points, only its EOI missing, bytes
    /// flipped in the entropy-coded data.
    static func damaged(_ bytes: [UInt8]) -> [(String, [UInt8])] {
        var cases: [(String, [UInt8])] = []
        for fraction in [0.3, 0.6, 0.9, 0.98] {
            cases.append(("cut at \(fraction)", Array(bytes.prefix(Int(Double(bytes.count) * fraction)))))
        }
        cases.append(("no EOI", Array(bytes.dropLast(2))))
        for (index, fraction) in [0.2, 0.45, 0.7, 0.85].enumerated() {
            var mutated = bytes
            let start = Int(Double(bytes.count) * fraction)
            for offset in 0..<(4 + index * 3) where mutated[start + offset * 7] != 0xFF {
                mutated[start + offset * 7] ^= 0x5A
                if mutated[start + offset * 7] == 0xFF { mutated[start + offset * 7] = 0x7F }
            }
            cases.append(("flipped at \(fraction)", mutated))
        }
        return cases
    }

    @Test(arguments: ["444", "420", "grey"])
    func damagedProgressiveJPEGsGetOneAnswerForEveryVariant(layout: String) async throws {
        var photo = try TestImages.photo(width: 960, height: 720)
        if layout == "grey" { photo = try photo.producingForTests { ipx_vips_to_greyscale($0, $1) } }
        let intact = try TestImages.jpeg(photo, progressive: true, subsample: layout == "420", keepMetadata: false)
        #expect((JPEGEighthDecoder.image(intact) != nil) == (layout != "420"), "the 1/8 path reads 4:4:4 and grey")
        let cases = Self.damaged(intact)
        var files: [String: TestOrigin.File] = ["/intact.jpg": .image(intact)]
        for (index, damaged) in cases.enumerated() { files["/damaged\(index).jpg"] = .image(damaged.1) }
        try await withFixtures(files) { proxy, base, _ in
            for variant in Self.variants {
                let response = try await proxy.image([("url", base + "/intact.jpg")] + variant)
                #expect(response.status == .ok, "intact \(layout) \(variant)")
            }
            for (index, damaged) in cases.enumerated() {
                var statuses: [Int] = []
                for variant in Self.variants {
                    let response = try await proxy.image([("url", "\(base)/damaged\(index).jpg")] + variant)
                    statuses.append(response.status.code)
                }
                #expect(Set(statuses).count == 1, "\(layout), \(damaged.0): \(statuses) for \(Self.variants)")
                #expect(statuses.allSatisfy { $0 == 200 || $0 == 422 }, "\(layout), \(damaged.0): \(statuses)")
                if damaged.0.hasPrefix("cut") || damaged.0 == "no EOI" {
                    #expect(statuses.first == 422, "\(layout), \(damaged.0): truncated files are refused")
                }
            }
        }
    }

    /// Offsets of the image descriptors (0x2C) of a GIF, found by walking its blocks.
    static func imageDescriptors(of gif: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var position = 13
        if gif[10] & 0x80 != 0 { position += 3 << ((Int(gif[10]) & 7) + 1) }
        func skipSubBlocks(_ start: Int) -> Int {
            var index = start
            while index < gif.count, gif[index] != 0 { index += Int(gif[index]) + 1 }
            return index + 1
        }
        while position < gif.count {
            switch gif[position] {
            case 0x21: position = skipSubBlocks(position + 2)
            case 0x2C:
                offsets.append(position)
                let flags = Int(gif[position + 9])
                position = skipSubBlocks(position + 11 + (flags & 0x80 != 0 ? 3 << ((flags & 7) + 1) : 0))
            default: return offsets
            }
        }
        return offsets
    }

    @Test func anAnimationWithABrokenLaterFrameGetsOneAnswerForEveryFormat() async throws {
        let animation = try TestImages.animation(width: 120, height: 80, frames: 6).encoded(as: .gif).bytes
        // The last frame's LZW data overwritten with garbage: that frame cannot be decoded (the first can).
        var broken = animation
        let lastFrame = try #require(Self.imageDescriptors(of: animation).last)
        let flags = Int(animation[lastFrame + 9])
        let codeSize = lastFrame + 10 + (flags & 0x80 != 0 ? 3 << ((flags & 7) + 1) : 0)
        for offset in (codeSize + 2)..<min(broken.count - 2, codeSize + 200) { broken[offset] = UInt8((offset * 37) & 0xFF) }
        var cut = Array(animation.prefix(animation.count - 40))
        cut.append(0x3B)
        try await withFixtures(["/broken.gif": .image(broken), "/cut.gif": .image(cut)]) { proxy, base, _ in
            // Served from the first frame (a still image) when a later frame cannot be decoded.
            let webp = try await proxy.image([("url", base + "/broken.gif"), ("w", "60"), ("format", "webp")])
            #expect(try VipsImage.decodeAllFrames(webp.bytes).frames == 1)
            for source in ["/broken.gif", "/cut.gif"] {
                var statuses: [Int] = []
                for format in ["jpeg", "png", "webp", "gif"] {
                    let response = try await proxy.image([("url", base + source), ("w", "60"), ("format", format)])
                    statuses.append(response.status.code)
                }
                #expect(statuses == [200, 200, 200, 200], "\(source): \(statuses) for jpeg, png, webp, gif")
            }
        }
    }
}
