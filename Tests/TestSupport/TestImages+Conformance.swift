import CVipsShim
import Foundation

@testable import ImageCore

/// Sources for the conformance suite, generated with libvips: camera-style metadata, colour profiles,
/// EXIF orientations, damage.
extension TestImages {
    /// Strings planted in the metadata blocks: none may appear in any output.
    public static let artist = "ConformanceArtist-9f3a"
    public static let xmpCreator = "ConformanceXMP-7c1e"
    public static let iptcCaption = "ConformanceIPTC-51d2"
    public static let comment = "ConformanceComment-2b8e"
    /// Byte strings that only metadata blocks carry (EXIF header, XMP namespace, Photoshop IRB, ICC
    /// signature and the planted values).
    public static let forbiddenMarkers: [(String, [UInt8])] = [
        ("artist", Array(artist.utf8)), ("xmp creator", Array(xmpCreator.utf8)), ("iptc caption", Array(iptcCaption.utf8)),
        ("comment", Array(comment.utf8)), ("Exif header", Array("Exif\0\0".utf8)),
        ("XMP namespace", Array("http://ns.adobe.com/xap/1.0/".utf8)), ("Photoshop IRB", Array("Photoshop 3.0".utf8)),
        ("ICC signature", Array("acsp".utf8)), ("ICC_PROFILE", Array("ICC_PROFILE".utf8)),
    ]

    /// An EXIF block (with its `Exif\0\0` header): IFD0 with Artist and a GPS IFD with a latitude.
    public static func exifBlob() -> [UInt8] {
        var tiff: [UInt8] = Array("II".utf8) + le16(42) + le32(8)
        let artistBytes = Array(artist.utf8) + [0]
        let ifd0 = 8, gpsIFD = ifd0 + 2 + 2 * 12 + 4, artistOffset = gpsIFD + 2 + 2 * 12 + 4
        let rationalOffset = (artistOffset + artistBytes.count + 1) & ~1
        // IFD0: Artist (ASCII), GPSInfo (LONG offset).
        tiff += le16(2)
        tiff += le16(0x013B) + le16(2) + le32(UInt32(artistBytes.count)) + le32(UInt32(artistOffset))
        tiff += le16(0x8825) + le16(4) + le32(1) + le32(UInt32(gpsIFD))
        tiff += le32(0)
        // GPS IFD: GPSLatitudeRef "N", GPSLatitude 47/1 22/1 1234/100.
        tiff += le16(2)
        tiff += le16(0x0001) + le16(2) + le32(2) + [UInt8(ascii: "N"), 0, 0, 0]
        tiff += le16(0x0002) + le16(5) + le32(3) + le32(UInt32(rationalOffset))
        tiff += le32(0)
        tiff += artistBytes
        while tiff.count < rationalOffset { tiff.append(0) }
        for (numerator, denominator) in [(47, 1), (22, 1), (1234, 100)] as [(UInt32, UInt32)] {
            tiff += le32(numerator) + le32(denominator)
        }
        return Array("Exif\0\0".utf8) + tiff
    }

    public static func xmpPacket() -> [UInt8] {
        Array(("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description xmlns:dc=\"http://purl.org/dc/elements/1.1/\" dc:creator=\"\(xmpCreator)\"/>"
            + "</rdf:RDF></x:xmpmeta>").utf8)
    }

    /// A Photoshop IRB holding one IPTC record (2:120 caption).
    public static func iptcBlob() -> [UInt8] {
        let caption = Array(iptcCaption.utf8)
        var record: [UInt8] = [0x1C, 0x02, 0x78] + be16(UInt16(caption.count)) + caption
        if record.count % 2 == 1 { record.append(0) }
        return Array("Photoshop 3.0\0".utf8) + Array("8BIM".utf8) + be16(0x0404) + [0, 0] + be32(UInt32(record.count)) + record
    }

    /// `image` with EXIF (Artist, GPS), XMP, IPTC and a comment attached (written by the savers).
    public static func withCameraMetadata(_ image: ImageCore.VipsImage) throws -> ImageCore.VipsImage {
        var result = try image.settingBlob("exif-data", exifBlob())
        result = try result.settingBlob("xmp-data", xmpPacket())
        result = try result.settingBlob("iptc-data", iptcBlob())
        return try result.settingString("jpeg-comment", comment)
    }

    /// A detailed photo-like RGB image (gradient plus texture), `width`×`height`.
    public static func photo(width: Int, height: Int) throws -> ImageCore.VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 3
                let texture = ((x / 7 + y / 5) % 3) * 12
                pixels[offset] = UInt8(40 + x * 160 / max(1, width) + texture)
                pixels[offset + 1] = UInt8(30 + y * 150 / max(1, height) + texture)
                pixels[offset + 2] = UInt8(90 + texture * 2)
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// A still WebP or PNG keeping the image's metadata and profile.
    public static func encodedKeepingMetadata(_ image: ImageCore.VipsImage, as format: OutputFormat) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status: Int32 = switch format {
        case .webp: ipx_vips_webpsave_metadata(image.pointer, &buffer, &length)
        case .png: ipx_vips_pngsave_metadata(image.pointer, &buffer, &length)
        default: -1
        }
        guard status == 0, let buffer else { throw ImagingError.processingFailed }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// A lossless WebP of the image (libwebp's VP8L bitstream).
    public static func losslessWebP(_ image: ImageCore.VipsImage) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard ipx_vips_webpsave_lossless(image.pointer, &buffer, &length) == 0, let buffer else { throw ImagingError.processingFailed }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// A solid sRGB colour converted into `profile` (a file path or libvips' built-in `p3`, `cmyk`),
    /// the profile attached: its numbers are not sRGB any more.
    public static func solid(red: UInt8, green: UInt8, blue: UInt8, width: Int, height: Int, profile: String) throws -> ImageCore.VipsImage {
        let srgb = try TestImages.solid(width: width, height: height, red: red, green: green, blue: blue)
        return try srgb.producingForTests { ipx_vips_icc_export($0, $1, profile) }
    }

    /// The reference colour of a source with a profile: libvips' `icc_transform` to sRGB of the full
    /// decode, the mean of each band.
    public static func referenceColour(of bytes: [UInt8]) throws -> [Double] {
        let decoded = try ImageCore.VipsImage.decode(bytes)
        let srgb = try decoded.producingForTests { ipx_vips_icc_to_srgb($0, $1) }
        return try meanColour(srgb)
    }

    /// The mean of each of the first three bands (grey images repeated).
    public static func meanColour(_ image: ImageCore.VipsImage) throws -> [Double] {
        let pixels = try image.pixels()
        let bands = image.bands
        var sums = [Double](repeating: 0, count: bands)
        for (index, value) in pixels.enumerated() { sums[index % bands] += Double(value) }
        let means = sums.map { $0 / Double(max(1, pixels.count / bands)) }
        return bands >= 3 ? Array(means.prefix(3)) : [means[0], means[0], means[0]]
    }

    /// Metadata fields of a decoded output that carry metadata (EXIF, XMP, IPTC, ICC, comments).
    public static func metadataFields(of bytes: [UInt8]) throws -> [String] {
        let image = try ImageCore.VipsImage.decode(bytes)
        var names = [CChar](repeating: 0, count: 8192)
        _ = ipx_vips_metadata_fields(image.pointer, &names, names.count)
        let all = String(cString: names).split(separator: "\n").map(String.init)
        return all.filter { name in
            ["exif", "xmp", "iptc", "icc", "photoshop", "comment", "orientation"].contains { name.lowercased().contains($0) }
        }
    }

    /// The first metadata marker found in `bytes`, if any.
    public static func metadataMarker(in bytes: [UInt8]) -> String? {
        forbiddenMarkers.first { contains(bytes, $0.1) }?.0
    }

    public static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == first, Array(haystack[index..<(index + needle.count)]) == needle { return true }
            index += 1
        }
        return false
    }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    private static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    private static func be32(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) } }
}

extension ImageCore.VipsImage {
    /// A copy with a blob field set.
    public func settingBlob(_ name: String, _ bytes: [UInt8]) throws -> ImageCore.VipsImage {
        try producingForTests { input, output in
            bytes.withUnsafeBytes { ipx_vips_copy_with_blob(input, output, name, $0.baseAddress, $0.count) }
        }
    }

    /// A copy with a string field set.
    public func settingString(_ name: String, _ value: String) throws -> ImageCore.VipsImage {
        try producingForTests { ipx_vips_copy_with_string($0, $1, name, value) }
    }

    /// Rotated by quarter turns clockwise (1...3).
    public func rotated(quarterTurns: Int) throws -> ImageCore.VipsImage {
        try producingForTests { ipx_vips_rotate($0, $1, Int32(quarterTurns)) }
    }

    /// Mirrored left-right.
    public func mirrored() throws -> ImageCore.VipsImage {
        try producingForTests { ipx_vips_mirror($0, $1, 1) }
    }

    /// Runs a libvips operation producing a new image (for fixtures).
    public func producingForTests(
        _ operation: (UnsafeMutablePointer<_VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<_VipsImage>?>) -> Int32
    ) throws -> ImageCore.VipsImage {
        var output: UnsafeMutablePointer<_VipsImage>?
        guard operation(pointer, &output) == 0, let output else {
            let message = ipx_vips_take_error().map { pointer in
                defer { g_free(pointer) }
                return String(cString: pointer)
            } ?? ""
            throw FixtureError(message: message)
        }
        return ImageCore.VipsImage(taking: output)
    }
}

public struct FixtureError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "libvips: \(message)" }
}
