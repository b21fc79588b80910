import CVipsShim
import Foundation
import HTTPTypes
import Testing

@testable import ImageCore
@testable import ProxyCore
@testable import ProxyEngine

/// Small hostile files that would buy seconds of CPU or gigabytes of memory: each is refused (4xx)
/// before any decoder spends on it, with RSS growth well under 50 MB.
@Suite(.timeLimit(.minutes(2))) struct HostileSourceTests {
    /// A progressive grey JPEG whose first DC scan header is repeated `copies` times with no data after
    /// each (every copy would make a decoder walk the whole frame again, fed zeros).
    static func repeatedDCScans(copies: Int) throws -> [UInt8] {
        let grey = try ConformanceImages.photo(width: 2048, height: 2048).producingForTests { ipx_vips_to_greyscale($0, $1) }
        let bytes = try ConformanceImages.jpeg(grey, progressive: true, subsample: false, keepMetadata: false)
        let sos = try #require((0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
        let header = Array(bytes[sos..<(sos + 2 + (Int(bytes[sos + 2]) << 8 | Int(bytes[sos + 3])))])
        return Array(bytes[..<sos]) + Array(repeating: header, count: copies).flatMap { $0 } + Array(bytes[sos...])
    }

    /// libpng's `contrib/testpngs/crashers/huge_<type>_chunk.png`: a valid header, then an ancillary chunk
    /// declaring about 1 GiB, of which a few bytes are present.
    static func hugeChunkPNG(_ type: String) -> [UInt8] {
        let valid = HostileImages.hugeDeclaredPNG(width: 1, height: 1)
        let afterIHDR = 8 + 12 + 13
        return Array(valid[..<afterIHDR]) + HostileImages.bigEndian(0x3FFF_FFF0) + Array(type.utf8) + Array("keyword\0text".utf8)
    }

    @Test func hostileFilesAreRefusedBeforeDecoding() async throws {
        var files: [String: FixtureOrigin.File] = ["/scans.jpg": .image(try Self.repeatedDCScans(copies: 9_000))]
        for type in ["iTXt", "tEXt", "pCAL", "sPLT", "sCAL", "zTXt", "iCCP"] {
            files["/huge-\(type).png"] = .image(Self.hugeChunkPNG(type))
        }
        files["/frames.webp"] = .image(try InfoConformanceTests.manyFrames(10_000).encoded(as: .webp).bytes)
        let expectations: [(String, String)] = [
            ("/scans.jpg", "more than 64 scans"), ("/frames.webp", "more than 1000 frames"),
        ] + ["iTXt", "tEXt", "pCAL", "sPLT", "sCAL", "zTXt", "iCCP"].map { ("/huge-\($0).png", "cannot be decoded") }
        try await withFixtures(files, configure: { $0.image.transformer.maxTransformMilliseconds = 10_000 }) { proxy, base, _ in
            let before = ProcessStatistics.current()?.residentMemoryBytes ?? 0
            for (path, message) in expectations {
                for query in [[("w", "64")], [("w", "64"), ("format", "webp")], [("lqip", "1")]] {
                    let started = ContinuousClock.now
                    let response = try await proxy.image([("url", base + path)] + query)
                    let elapsed = ContinuousClock.now - started
                    #expect(response.status == .unprocessableContent, "\(path): \(response.status) \(response.text)")
                    #expect(response.text.contains(message), "\(path): \(response.text)")
                    #expect(elapsed < .seconds(1), "\(path) answered in \(elapsed)")
                }
                let info = try await proxy.execute(uri: "/info?url=\(base)\(path)", method: .get, headers: [:], body: nil)
                #expect(info.status == .unprocessableContent, "/info \(path)")
            }
            let growth = (ProcessStatistics.current()?.residentMemoryBytes ?? 0) - before
            #expect(growth < 50_000_000, "RSS grew \(growth / 1_000_000) MB")
        }
    }

    @Test func theJPEGEighthDecoderStopsAtTheDeadline() throws {
        // A valid progressive file whose DC scans take a while at 1/8: a deadline already passed stops it.
        let grey = try ConformanceImages.photo(width: 1024, height: 1024).producingForTests { ipx_vips_to_greyscale($0, $1) }
        let bytes = try ConformanceImages.jpeg(grey, progressive: true, subsample: false, keepMetadata: false)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let past = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - 1
        guard case .pastDeadline = JPEGEighthDecoder.decode(bytes, deadlineNanoseconds: past) else {
            Issue.record("the decoder ignored its deadline")
            return
        }
        guard case .decoded = JPEGEighthDecoder.decode(bytes) else {
            Issue.record("without a deadline it decodes")
            return
        }
    }
}
