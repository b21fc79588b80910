import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

/// Issue #29: the scan limit holds whatever bytes libjpeg skips, and libjpeg itself is stopped from
/// inside (a progress monitor) rather than trusted to a count made beforehand.
@Suite struct JPEGScanLimitTests {
    /// A valid progressive grey JPEG of one 8×8 block with `1 + 13` DC scans and `14` scans for each of
    /// AC coefficients 1...`bands` (a first pass at Al=13, then 13 refinements), every scan one EOB or
    /// one zero bit: libjpeg reads it without a single warning (libvips' `fail_on=warning` loads it).
    static func manyValidScans(bands: Int) -> [UInt8] {
        func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        func scan(_ first: UInt8, _ last: UInt8, high: UInt8, low: UInt8) -> [UInt8] {
            // One block: a single 0 bit (DC difference 0, a refinement bit, or EOB), padded with 1s.
            segment(0xDA, [1, 1, 0x00, first, last, high << 4 | low]) + [0x7F]
        }
        let oneCode = [1] + [UInt8](repeating: 0, count: 15) + [0x00]
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
        bytes += segment(0xC2, [8, 0, 8, 0, 8, 1, 1, 0x11, 0])
        bytes += segment(0xC4, [0x00] + oneCode) + segment(0xC4, [0x10] + oneCode)
        bytes += scan(0, 0, high: 0, low: 13)
        for high in stride(from: UInt8(13), through: 1, by: -1) { bytes += scan(0, 0, high: high, low: high - 1) }
        for band in 1...UInt8(bands) {
            bytes += scan(band, band, high: 0, low: 13)
            for high in stride(from: UInt8(13), through: 1, by: -1) { bytes += scan(band, band, high: high, low: high - 1) }
        }
        return bytes + [0xFF, 0xD9]
    }

    /// `bytes` with `insert` before every SOS marker (and, with `beforeFirstOnly`, only the first).
    static func inserting(_ insert: [UInt8], beforeScansOf bytes: [UInt8], firstOnly: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        var inserted = false
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0xFF, index + 1 < bytes.count, bytes[index + 1] == 0xDA, !(firstOnly && inserted) {
                output += insert
                inserted = true
            }
            output.append(bytes[index])
            index += 1
        }
        return output
    }

    private static func layoutScans(_ bytes: [UInt8]) -> Int {
        var layout = ipx_jpeg_layout()
        return Int(bytes.withUnsafeBytes { ipx_jpeg_read_layout($0.baseAddress, $0.count, IPX_JPEG_MAX_SCANS, &layout) })
    }

    private static func decodeScaled(_ bytes: [UInt8], shrink: Int32 = 2, deadline: Int64 = 0) -> Int32 {
        var image: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes {
            ipx_jpeg_decode_scaled($0.baseAddress, $0.count, shrink, 1, 1 << 24, deadline, &image)
        }
        if let image { g_object_unref(image) }
        return status
    }

    @Test func theFixtureIsValidAndFewScansDecode() throws {
        #expect(Vips.start())
        let few = Self.manyValidScans(bands: 3)  // 14 + 3 × 14 = 56 scans
        #expect(Self.layoutScans(few) == 56)
        #expect(Self.decodeScaled(few) == 0, "56 valid scans decode without a warning")
        #expect(try SourceHeader(reading: few).width == 8)
    }

    @Test func theLayoutReaderCountsScansBehindBytesLibjpegSkips() {
        let many = Self.manyValidScans(bands: 10)  // 154 scans
        let limit = Int(IPX_JPEG_MAX_SCANS)
        #expect(Self.layoutScans(many) == limit + 1, "counting stops one past the limit")
        let tricks: [(String, [UInt8])] = [
            ("a stray byte before every scan", Self.inserting([0x00], beforeScansOf: many)),
            ("stray bytes and fill bytes", Self.inserting([0x12, 0x34, 0xFF, 0xFF], beforeScansOf: many)),
            ("a lone restart marker before the first scan", Self.inserting([0xFF, 0xD0], beforeScansOf: many, firstOnly: true)),
            ("a TEM marker before every scan", Self.inserting([0xFF, 0x01], beforeScansOf: many)),
            ("stuffed zero before every scan", Self.inserting([0xFF, 0x00], beforeScansOf: many)),
        ]
        for (name, bytes) in tricks {
            #expect(Self.layoutScans(bytes) == limit + 1, "\(name)")
        }
    }

    /// `bytes` (ending in EOI) with `count` copies of its first SOS segment and one byte of data before EOI.
    static func appendingScans(_ count: Int, to bytes: [UInt8]) throws -> [UInt8] {
        let start = try #require((0..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
        let length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
        let scan = Array(bytes[start..<start + 2 + length]) + [0x00]
        #expect(bytes.suffix(2) == [0xFF, 0xD9])
        return Array(bytes.dropLast(2)) + Array([[UInt8]](repeating: scan, count: count).joined()) + [0xFF, 0xD9]
    }

    /// A sequential frame whose first scan holds every component is one scan to libjpeg (it stops at any
    /// further SOS), so the walk ends there instead of stepping through the whole entropy-coded data; SOS
    /// segments after it change nothing, and libjpeg does not read them either: the decode ends with the
    /// image's rows, and the transform answers the image.
    @Test func aBaselineFrameIsOneScanWhateverFollows() throws {
        #expect(Vips.start())
        for (name, image) in [("rgb", try TestImages.photo(width: 240, height: 160)), ("grey", try TestImages.noise(width: 64, height: 48, bands: 1))] {
            let baseline = try TestImages.jpeg(image, subsample: true)
            #expect(Self.layoutScans(baseline) == 1, "\(name)")
            let padded = try Self.appendingScans(200, to: baseline)
            #expect(Self.layoutScans(padded) == 1, "\(name): the scans after the first are never libjpeg's")
            #expect(try SourceHeader(reading: padded).width == image.width, "\(name)")
            // libjpeg stops at the second SOS (an error after the last row: libvips' case, 1) and never
            // decodes it; libvips then answers the rows it read.
            #expect(Self.decodeScaled(padded) == 1, "\(name)")
            let request = try ImageRequest(
                query: [("url", "http://example.com/a.jpg"), ("w", "60"), ("format", "png")], limits: .init(maxDimension: 4096))
            let transformer = ImageTransformer(maxSourcePixels: 50_000_000, maxFrames: 1, maxTransformMilliseconds: 0, encoding: EncodingSettings())
            let made = try VipsImage.decode(transformer.transform(padded, request: request, choice: .fixed(.png)).bytes)
            #expect(made.width == 60, "\(name)")
        }
    }

    /// A sequential frame scanned one component at a time is several scans to libjpeg: every SOS is counted,
    /// up to one past the limit, as for a progressive frame.
    @Test func aFrameScannedComponentByComponentCountsEveryScan() {
        func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += segment(0xC0, [8, 0, 16, 0, 16, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0])
        for index in 0..<100 { bytes += segment(0xDA, [1, UInt8(1 + index % 3), 0x00, 0, 63, 0]) + [0x00] }
        bytes += [0xFF, 0xD9]
        #expect(Self.layoutScans(bytes) == Int(IPX_JPEG_MAX_SCANS) + 1)
    }

    @Test func libjpegIsStoppedFromInsideAtTheScanLimit() {
        #expect(Vips.start())
        let many = Self.manyValidScans(bands: 10)
        // No warning anywhere: only the progress monitor can stop this one (3: too many scans).
        #expect(Self.decodeScaled(many) == 3)
        #expect(Self.decodeScaled(Self.inserting([0xFF, 0xD0], beforeScansOf: many, firstOnly: true)) == 3)
        // A stray byte makes libjpeg warn: the decode stops at that first warning (1: libvips' case).
        #expect(Self.decodeScaled(Self.inserting([0x00], beforeScansOf: many)) == 1)
    }

    @Test func libjpegIsStoppedFromInsideAtTheDeadline() {
        #expect(Vips.start())
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let past = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - 1
        // A deadline already passed stops it inside jpeg_start_decompress, before any row is written.
        #expect(Self.decodeScaled(Self.manyValidScans(bands: 3), deadline: past) == 2)
    }
}
