import CVipsShim
import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Small hostile files that would buy seconds of CPU or gigabytes of memory: each is refused (4xx)
/// before any decoder spends on it, with RSS growth well under 50 MB.
@Suite(.timeLimit(.minutes(2))) struct HostileSourceTests {
    /// A progressive grey JPEG whose first DC scan header is repeated `copies` times with no data after
    /// each (every copy would make a decoder walk the whole frame again, fed zeros).
    static func repeatedDCScans(copies: Int) throws -> [UInt8] {
        let grey = try TestImages.photo(width: 2048, height: 2048).producingForTests { ipx_vips_to_greyscale($0, $1) }
        let bytes = try TestImages.jpeg(grey, progressive: true, subsample: false, keepMetadata: false)
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
        var files: [String: TestOrigin.File] = ["/scans.jpg": .image(try Self.repeatedDCScans(copies: 9_000))]
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

    /// `bytes` with `insert` placed before its first SOS marker, or before every one.
    static func inserting(_ insert: [UInt8], beforeScansOf bytes: [UInt8], everyScan: Bool) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + insert.count)
        var inserted = false
        for index in bytes.indices {
            if bytes[index] == 0xFF, index + 1 < bytes.count, bytes[index + 1] == 0xDA, everyScan || !inserted {
                output += insert
                inserted = true
            }
            output.append(bytes[index])
        }
        return output
    }

    /// Process CPU time (user + system), in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }

    /// Issue #29: bytes libjpeg merely skips or warns about (a stray byte between segments, a lone restart
    /// marker before the first scan) hid thousands of scans from the count, and libjpeg then walked every
    /// one (about 30 s of CPU for a 280 KB file). Each trick is now answered within 1 s of CPU, at every
    /// width (1/8 DC path, libjpeg's scaled decode, libvips' loader).
    @Test func scanTricksAreAnsweredWithinASecondOfCPU() async throws {
        let scans = try Self.repeatedDCScans(copies: 9_000)
        let files: [String: TestOrigin.File] = [
            "/stray.jpg": .image(Self.inserting([0x00], beforeScansOf: scans, everyScan: false)),
            "/stray-every.jpg": .image(Self.inserting([0x00], beforeScansOf: scans, everyScan: true)),
            "/restart.jpg": .image(Self.inserting([0xFF, 0xD0], beforeScansOf: scans, everyScan: false)),
            "/fill.jpg": .image(Self.inserting([0xFF, 0xFF, 0xFF], beforeScansOf: scans, everyScan: true)),
        ]
        try await withFixtures(files, configure: { $0.image.transformer.maxTransformMilliseconds = 10_000 }) { proxy, base, _ in
            for path in files.keys.sorted() {
                for query in [[("w", "64")], [("w", "600")], [("w", "1200")], [("w", "2048")], [("lqip", "1")]] {
                    let before = Self.processCPUSeconds()
                    let response = try await proxy.image([("url", base + path)] + query)
                    let cpu = Self.processCPUSeconds() - before
                    #expect([.unprocessableContent, .ok].contains(response.status), "\(path) \(query): \(response.status)")
                    #expect(response.text.contains("more than 64 scans") || response.status == .ok, "\(path): \(response.text)")
                    #expect(cpu < 1, "\(path) \(query) took \(cpu) s of CPU")
                }
            }
        }
    }

    @Test func theJPEGEighthDecoderStopsAtTheDeadline() throws {
        // A valid progressive file whose DC scans take a while at 1/8: a deadline already passed stops it.
        let grey = try TestImages.photo(width: 1024, height: 1024).producingForTests { ipx_vips_to_greyscale($0, $1) }
        let bytes = try TestImages.jpeg(grey, progressive: true, subsample: false, keepMetadata: false)
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
