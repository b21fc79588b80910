import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

/// The JPEG header read by libjpeg and libexif (`jpeg_header.c`) against libvips' own header read
/// (`ipx_vips_header`), which it replaces for JPEGs: the same figures for every kind of JPEG the service
/// meets, and libvips' answer for anything it declines.
@Suite struct JPEGHeaderTests {
    private struct Figures: Equatable, CustomStringConvertible {
        var width: Int32 = 0, height: Int32 = 0, orientation: Int32 = 0, bands: Int32 = 0, colourManaged: Int32 = 0
        var description: String { "\(width)x\(height) orientation \(orientation) bands \(bands) managed \(colourManaged)" }
    }

    /// libjpeg's reading, nil when it declines.
    private func libjpeg(_ bytes: [UInt8]) -> Figures? {
        var figures = Figures()
        let status = bytes.withUnsafeBytes { raw in
            ipx_jpeg_header(
                raw.baseAddress, raw.count, &figures.width, &figures.height, &figures.orientation, &figures.bands,
                &figures.colourManaged)
        }
        return status == 0 ? figures : nil
    }

    /// libvips' reading, nil when it fails.
    private func libvips(_ bytes: [UInt8]) -> Figures? {
        var figures = Figures()
        var pages: Int32 = 0, pixelBytes: Int32 = 0
        let status = bytes.withUnsafeBytes { raw in
            ipx_vips_header(
                raw.baseAddress, raw.count, &figures.width, &figures.height, &pages, &figures.orientation, &figures.bands,
                &figures.colourManaged, &pixelBytes)
        }
        _ = Vips.takeError()
        return status == 0 ? figures : nil
    }

    private static let adobeRGB = "/usr/share/color/icc/ghostscript/a98.icc"
    private static let grey = "/usr/share/color/icc/ghostscript/sgray.icc"

    /// JPEGs of every colour kind, sampling, layout, profile and orientation, each with the figures
    /// it must have (so that a reading both sides get wrong alike still fails).
    private func sources() throws -> [(name: String, bytes: [UInt8], expected: Figures)] {
        let photo = try TestImages.photo(width: 301, height: 203)
        let greyImage = try TestImages.noise(width: 120, height: 90, bands: 1)
        var list: [(String, [UInt8], Figures)] = [
            ("rgb 4:2:0", try TestImages.jpeg(photo, subsample: true), Figures(width: 301, height: 203, orientation: 1, bands: 3)),
            ("rgb 4:4:4 progressive", try TestImages.jpeg(photo, progressive: true, subsample: false),
             Figures(width: 301, height: 203, orientation: 1, bands: 3)),
            ("grey", try TestImages.jpeg(greyImage), Figures(width: 120, height: 90, orientation: 1, bands: 1)),
            ("camera metadata, no orientation",
             try TestImages.jpeg(try TestImages.withCameraMetadata(photo), keepMetadata: true),
             Figures(width: 301, height: 203, orientation: 1, bands: 3)),
            ("srgb profile", try TestImages.jpeg(try TestImages.solid(red: 200, green: 60, blue: 40, width: 64, height: 48, profile: "srgb"),
                                                keepMetadata: true), Figures(width: 64, height: 48, orientation: 1, bands: 3)),
            ("p3 profile", try TestImages.jpeg(try TestImages.solid(red: 200, green: 60, blue: 40, width: 64, height: 48, profile: "p3"),
                                              keepMetadata: true),
             Figures(width: 64, height: 48, orientation: 1, bands: 3, colourManaged: 2)),
            ("adobe rgb profile",
             try TestImages.jpeg(try TestImages.solid(red: 40, green: 180, blue: 60, width: 64, height: 48, profile: Self.adobeRGB),
                                 keepMetadata: true),
             Figures(width: 64, height: 48, orientation: 1, bands: 3, colourManaged: 2)),
            ("cmyk", try TestImages.jpeg(try TestImages.solid(red: 200, green: 60, blue: 40, width: 64, height: 48, profile: "cmyk"),
                                        subsample: false, keepMetadata: true),
             Figures(width: 64, height: 48, orientation: 1, bands: 4, colourManaged: 1)),
            ("grey profile",
             try TestImages.jpeg(try TestImages.solid(red: 90, green: 90, blue: 90, width: 64, height: 48, profile: Self.grey),
                                 keepMetadata: true),
             Figures(width: 64, height: 48, orientation: 1, bands: 1, colourManaged: 1)),
        ]
        for orientation in 1...8 {
            list.append((
                "orientation \(orientation)", try photo.withOrientation(orientation).encoded(as: .jpeg, keepJPEGMetadata: true).bytes,
                Figures(width: 301, height: 203, orientation: Int32(orientation), bands: 3)
            ))
        }
        return list
    }

    @Test func everyKindOfJPEGReadsAsLibvipsReadsIt() throws {
        for source in try sources() {
            let ours = libjpeg(source.bytes), theirs = libvips(source.bytes)
            #expect(ours == source.expected, "\(source.name): \(String(describing: ours))")
            #expect(ours == theirs, "\(source.name): libvips says \(String(describing: theirs))")
        }
    }

    @Test func aSourceHeaderOfAJPEGHasLibjpegsFigures() throws {
        let bytes = try TestImages.rotatedJPEG(width: 200, height: 100)
        let header = try SourceHeader(reading: bytes)
        #expect(header.width == 200 && header.height == 100 && header.orientation == 6 && header.frames == 1)
        #expect(header.decodedPixelBytes == 3 && !header.hasAlpha && !header.colourManaged)
    }

    /// An orientation outside 1-8 in the EXIF block counts as 1, as libvips counts it.
    @Test func anOrientationOutOfRangeIsOne() throws {
        let bytes = try TestImages.photo(width: 40, height: 30).withOrientation(1).encoded(as: .jpeg, keepJPEGMetadata: true).bytes
        // The IFD entry 0x0112 (SHORT, count 1) holds 1; make it 9, in either byte order.
        var changed = bytes
        let patterns: [([UInt8], Int)] = [([0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00], 8),
                                         ([0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01], 9)]
        var patched = false
        for (pattern, valueOffset) in patterns {
            if let start = (0...(changed.count - pattern.count)).first(where: { Array(changed[$0..<($0 + pattern.count)]) == pattern }) {
                changed[start + valueOffset] = 9
                patched = true
            }
        }
        try #require(patched, "no orientation entry found")
        let ours = libjpeg(changed), theirs = libvips(changed)
        #expect(ours?.orientation == 1)
        #expect(ours == theirs)
    }

    /// What libjpeg cannot read cleanly is left to libvips: cut headers, damaged markers, other formats.
    @Test func whatLibjpegCannotReadIsLeftToLibvips() throws {
        let bytes = try TestImages.jpeg(try TestImages.photo(width: 64, height: 48))
        #expect(libjpeg(Array(bytes.prefix(40))) == nil)
        #expect(libjpeg(Array(bytes.prefix(2))) == nil)
        #expect(libjpeg([]) == nil)
        let png = try TestImages.photo(width: 8, height: 8).encoded(as: .png).bytes
        #expect(libjpeg(png) == nil)
        // A marker segment whose length runs past the file: libjpeg errors, and SourceHeader throws
        // the error libvips' reading gives.
        var damaged = Array(bytes.prefix(20))
        damaged += [0xFF, 0xE5, 0xFF, 0xF0, 0x00]
        #expect(libjpeg(damaged) == nil)
        #expect(throws: ImagingError.self) { try SourceHeader(reading: damaged) }
    }
}
