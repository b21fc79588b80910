import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

/// The common PNG decoded whole by libdeflate and our own unfilter (`png_decode.c`, #34): libvips' own
/// pixels and resolution for every row filter, RGB and RGBA, in one IDAT chunk or many, in malloc'd and in
/// mapped memory; every other kind of PNG, and any damage, declined to libvips' loader.
@Suite struct PNGDecodeTests {
    /// Our decode of `bytes`: the status (0 decoded, 1 declined, -1 no memory) and the image.
    static func ours(_ bytes: [UInt8], maxBytes: Int = 64 << 20) -> (status: Int32, image: ImageCore.VipsImage?) {
        Vips.start()
        var out: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { ipx_png_decode_whole($0.baseAddress, $0.count, maxBytes, &out) }
        return (status, out.map { ImageCore.VipsImage(taking: $0) })
    }

    /// The chunk types of a PNG in order.
    static func chunkTypes(_ png: [UInt8]) -> [String] {
        var types: [String] = []
        var offset = 8
        while offset + 12 <= png.count {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            types.append(String(decoding: png[offset + 4..<offset + 8], as: UTF8.self))
            offset += 12 + length
        }
        return types
    }

    /// Ours against libvips' loader: the same size, bands, pixels and resolution.
    static func expectLibvipsPixels(_ png: [UInt8], _ label: String) throws {
        let (status, decoded) = ours(png)
        #expect(status == 0, "\(label): decoded, not declined")
        let image = try #require(decoded)
        let reference = try ImageCore.VipsImage.decode(png)
        #expect(image.width == reference.width && image.height == reference.height && image.bands == reference.bands, "\(label)")
        #expect(try image.pixels() == reference.pixels(), "\(label): libvips' pixels")
        #expect(vips_image_get_xres(image.pointer) == vips_image_get_xres(reference.pointer), "\(label): resolution")
        #expect(vips_image_get_yres(image.pointer) == vips_image_get_yres(reference.pointer), "\(label): resolution")
    }

    /// Each PNG row filter (0-4 on every row, and libpng's choice per row), with an odd width so that a
    /// row's last pixel ends on the row's last byte.
    @Test(arguments: [3, 4], 0...5)
    func everyRowFilterGivesLibvipsPixels(bands: Int, filter: Int) throws {
        let png = try TestImages.png(TestImages.noise(width: 301, height: 97, bands: bands), filter: filter)
        #expect(Self.chunkTypes(png).filter { $0 == "IDAT" }.count > 1, "the image data is split over chunks")
        try Self.expectLibvipsPixels(png, "\(bands) bands, filter \(filter)")
    }

    @Test func oneIDATChunkAndAResolutionGiveLibvipsPixels() throws {
        let small = try TestImages.png(TestImages.noise(width: 7, height: 5, bands: 3), filter: 4)
        #expect(Self.chunkTypes(small).filter { $0 == "IDAT" }.count == 1)
        try Self.expectLibvipsPixels(small, "one IDAT")
        // A pHYs chunk (libvips writes one from the image's resolution): pixels per metre read as libvips does.
        let withResolution = try TestImages.noise(width: 64, height: 48, bands: 4)
        withResolution.pointer.pointee.Xres = 11.811  // 300 pixels per inch
        withResolution.pointer.pointee.Yres = 5.0
        let png = try TestImages.png(withResolution, filter: 5)
        #expect(Self.chunkTypes(png).contains("pHYs"))
        try Self.expectLibvipsPixels(png, "pHYs")
    }

    /// sRGB, gAMA and cHRM chunks (common on the web) change nothing in libvips 8.14's decode: passed over.
    @Test func colourSpaceChunksArePassedOverAsLibvipsDoes() throws {
        let png = try TestImages.png(TestImages.noise(width: 90, height: 60, bands: 3), filter: 5)
        let chunks: [(String, [UInt8])] = [
            ("sRGB", [0]), ("gAMA", Self.bigEndian([100_000])), ("cHRM", Self.bigEndian([31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000])),
        ]
        let tagged = try Self.inserting(chunks, beforeFirst: "IDAT", in: png)
        #expect(["sRGB", "gAMA", "cHRM"].allSatisfy(Self.chunkTypes(tagged).contains))
        try Self.expectLibvipsPixels(tagged, "sRGB, gAMA 1.0, cHRM")
        #expect(try ImageCore.VipsImage.decode(tagged).pixels() == ImageCore.VipsImage.decode(png).pixels(), "libvips applies none of them")
        // A background colour is a field libvips sets: declined.
        let background = try Self.inserting([("bKGD", [0, 10, 0, 20, 0, 30])], beforeFirst: "IDAT", in: png)
        #expect(Self.ours(background).status == 1)
    }

    static func bigEndian(_ values: [UInt32]) -> [UInt8] {
        values.flatMap { value in (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
    }

    /// `png` with `chunks` (type, data) inserted before the first chunk of type `before`, each with its CRC.
    static func inserting(_ chunks: [(String, [UInt8])], beforeFirst before: String, in png: [UInt8]) throws -> [UInt8] {
        let offset = try #require(chunkOffset(of: before, in: png))
        let inserted = chunks.flatMap { type, data -> [UInt8] in
            let typed = Array(type.utf8) + data
            return bigEndian([UInt32(data.count)]) + typed + bigEndian([crc32(typed)])
        }
        return Array(png[..<offset]) + inserted + Array(png[offset...])
    }

    /// PNG's CRC-32 (ISO 3309), bit by bit.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A decode of 4 MiB and more goes to a mapping of its own (huge pages), inflated and unfiltered in place.
    @Test func aLargeDecodeInItsOwnMappingGivesLibvipsPixels() throws {
        let png = try TestImages.png(TestImages.noise(width: 1500, height: 1000, bands: 3), filter: 5)
        try Self.expectLibvipsPixels(png, "mapped")
    }

    /// Everything but 8-bit RGB or RGBA without a profile, and every damaged file, is libvips' to decode.
    @Test func otherPNGsAndDamageAreDeclined() throws {
        let rgb = try TestImages.noise(width: 40, height: 30, bands: 3)
        let good = try TestImages.png(rgb, filter: 4)
        #expect(Self.ours(good).status == 0)
        #expect(Self.ours(try TestImages.png(rgb, interlaced: true)).status == 1, "Adam7")
        #expect(Self.ours(try TestImages.png(rgb, bitDepth: 16)).status == 1, "16-bit")
        #expect(Self.ours(try TestImages.png(rgb, palette: true)).status == 1, "palette")
        #expect(Self.ours(try TestImages.png(TestImages.noise(width: 40, height: 30, bands: 1))).status == 1, "grey")
        let tagged = try TestImages.png(TestImages.solid(red: 200, green: 60, blue: 30, width: 40, height: 30, profile: "p3"))
        #expect(Self.chunkTypes(tagged).contains("iCCP"))
        #expect(Self.ours(tagged).status == 1, "an ICC profile")
        #expect(Self.ours(good, maxBytes: 40 * 30 * 3 - 1).status == 1, "more pixels than allowed")
        #expect(Self.ours(Array(good.dropLast(12))).status == 1, "no IEND")
        #expect(Self.ours(Array(good.prefix(good.count / 2))).status == 1, "cut short")
        #expect(Self.ours(Array("not a png at all, not a png at all".utf8)).status == 1, "not a PNG")
        // One byte of the image data changed: its chunk's CRC no longer matches.
        let idat = try #require(Self.chunkOffset(of: "IDAT", in: good))
        var damaged = good
        damaged[idat + 8 + 10] ^= 0x5A
        #expect(Self.ours(damaged).status == 1, "a CRC that does not match")
    }

    /// Where the first chunk of `type` starts (its length field).
    static func chunkOffset(of type: String, in png: [UInt8]) -> Int? {
        var offset = 8
        while offset + 12 <= png.count {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            if String(decoding: png[offset + 4..<offset + 8], as: UTF8.self) == type { return offset }
            offset += 12 + length
        }
        return nil
    }

    /// The kept decodes of a srcset come from this decoder: ``DecodedSource/decoding(_:header:deadline:)``
    /// gives libvips' pixels, an opaque alpha dropped as before.
    @Test func aWholeDecodeForASrcsetUsesIt() throws {
        let rgb = try TestImages.noise(width: 120, height: 80, bands: 3)
        let png = try TestImages.png(rgb, filter: 4)
        let decoded = try DecodedSource.decoding(png, deadline: nil)
        #expect(decoded.width == 120 && decoded.height == 80 && decoded.bytes == 120 * 80 * 3)
        #expect(try decoded.image.pixels() == ImageCore.VipsImage.decode(png).pixels())
        let opaque = try rgb.producingForTests { ipx_vips_add_alpha($0, $1) }
        let opaquePNG = try TestImages.png(opaque, filter: 2)
        #expect(Self.ours(opaquePNG).status == 0)
        let withoutAlpha = try DecodedSource.decoding(opaquePNG, deadline: nil)
        #expect(withoutAlpha.image.bands == 3 && !withoutAlpha.hasRealAlpha, "an alpha opaque everywhere is dropped")
        #expect(try withoutAlpha.image.pixels() == rgb.pixels())
    }
}
