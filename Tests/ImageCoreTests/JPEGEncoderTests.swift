import CVipsShim
import Foundation
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// libjpeg's encode on the calling thread (`jpeg_encode.c`) against libvips' jpegsave with metadata
/// stripped: the same bytes, or libvips' own encode where it declines.
@Suite struct JPEGEncoderTests {
    /// libvips' jpegsave_buffer, stripped, optimised coding (the saver the transform used for every JPEG).
    private func libvipsJPEG(_ image: Image, quality: Int, progressive: Bool) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = ipx_vips_jpegsave(image.pointer, &buffer, &length, Int32(quality), progressive ? 1 : 0, 1)
        try #require(status == 0)
        let bytes = try #require(buffer)
        defer { g_free(bytes) }
        return Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }

    /// The encoder's status and bytes.
    private func encode(_ image: Image, quality: Int, progressive: Bool, deadline: Int64 = 0) -> (Int32, [UInt8]) {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = ipx_jpeg_encode_memory(image.pointer, Int32(quality), progressive ? 1 : 0, deadline, &buffer, &length)
        guard status == 0, let buffer else { return (status, []) }
        defer { g_free(buffer) }
        return (status, Array(UnsafeRawBufferPointer(start: buffer, count: length)))
    }

    /// Colour and grey, below and from quality 90 (where libvips stops subsampling chroma), baseline and
    /// progressive, sizes that are no multiple of an MCU, one row and one column, smooth and noisy content
    /// (whose output outgrows the first buffer several times).
    @Test(arguments: [
        (bands: 3, quality: 80, progressive: false, width: 301, height: 203),
        (bands: 3, quality: 90, progressive: false, width: 640, height: 427),
        (bands: 3, quality: 75, progressive: true, width: 333, height: 1000),
        (bands: 1, quality: 85, progressive: false, width: 257, height: 129),
        (bands: 1, quality: 95, progressive: true, width: 97, height: 61),
        (bands: 3, quality: 1, progressive: false, width: 1, height: 1),
        (bands: 3, quality: 100, progressive: false, width: 1200, height: 1),
        (bands: 3, quality: 60, progressive: false, width: 1, height: 900),
    ])
    func writesTheBytesLibvipsWrites(layout: (bands: Int, quality: Int, progressive: Bool, width: Int, height: Int)) throws {
        let image = try TestImages.noise(width: layout.width, height: layout.height, bands: layout.bands)
        let (status, mine) = encode(image, quality: layout.quality, progressive: layout.progressive)
        #expect(status == 0, "\(layout)")
        let reference = try libvipsJPEG(image, quality: layout.quality, progressive: layout.progressive)
        #expect(mine.count > 100 && mine == reference, "\(layout): \(mine.count) bytes against \(reference.count)")
        let smooth = try TestImages.gradient(width: layout.width, height: layout.height)
        if layout.bands == 3, smooth.bands == 3 {
            let (_, mineSmooth) = encode(smooth, quality: layout.quality, progressive: layout.progressive)
            #expect(mineSmooth == (try libvipsJPEG(smooth, quality: layout.quality, progressive: layout.progressive)), "\(layout), smooth")
        }
    }

    /// Images it does not take are declined untouched, and `encoded(as:)` still makes libvips' bytes: a
    /// lazy image (not in memory), alpha, a quality out of range.
    @Test func declinesWhatIsNotAnOpaqueImageInMemory() throws {
        let image = try TestImages.noise(width: 320, height: 200, bands: 3)
        let lazy = try image.producingForTests { ipx_vips_mirror($0, $1, 1) }
        #expect(encode(lazy, quality: 80, progressive: false).0 == 1)
        let lazyEncoded = try lazy.encoded(as: .jpeg, quality: 80)
        #expect(lazyEncoded.bytes == (try libvipsJPEG(lazy, quality: 80, progressive: false)))
        let alpha = try TestImages.noise(width: 320, height: 200, bands: 3)
            .producingForTests { ipx_vips_add_alpha($0, $1) }
            .producingForTests { ipx_vips_copy_memory($0, $1) }
        #expect(alpha.hasAlpha)
        #expect(encode(alpha, quality: 80, progressive: false).0 == 1)
        #expect(encode(image, quality: 0, progressive: false).0 == 1)
        #expect(encode(image, quality: 101, progressive: false).0 == 1)
    }

    /// The transform's own encode of an image in memory is this encoder's: the same bytes as libvips'.
    @Test func theEncodeStepMakesLibvipsBytes() throws {
        let image = try TestImages.noise(width: 500, height: 300, bands: 3)
        let encoded = try image.encoded(as: .jpeg, quality: 82, progressive: true)
        #expect(encoded.bytes == (try libvipsJPEG(image, quality: 82, progressive: true)))
        #expect(encoded.width == 500 && encoded.height == 300)
    }

    /// The common miss, a JPEG, a PNG or a WebP resized to a width (and a grey JPEG), reaches the encoder
    /// as an image in memory, so that it is encoded on the transform's thread: nothing between the resize
    /// and the encoder wraps it (``ColourspaceStep`` keeps an 8-bit sRGB image as it is).
    @Test(arguments: [("jpeg", 3, "300"), ("jpeg", 3, "1100"), ("png", 3, "640"), ("webp", 3, "500"), ("jpeg", 1, "300")])
    func aPlainResizeReachesTheEncoderInMemory(format: String, bands: Int, width: String) throws {
        let picture = try TestImages.noise(width: 2000, height: 1300, bands: bands)
        let source: [UInt8] = switch format {
        case "png": try picture.encoded(as: .png).bytes
        case "webp": try picture.encoded(as: .webp, quality: 90).bytes
        default: try TestImages.jpeg(picture, quality: 85)
        }
        let transformer = ImageTransformer(maxSourcePixels: 40_000_000, encoding: EncodingSettings())
        let request = try ImageRequest(query: [("url", "http://example.com/a"), ("w", width)], limits: .init(maxDimension: 4096))
        let plan = try transformer.plan(source, request: request, choice: .fixed(.jpeg))
        var image = try SourceSteps(box: plan.box).image(from: source, header: plan.header, deadline: nil)
        for step in transformer.imageSteps(for: plan.request, overlay: nil) {
            image = try step.apply(to: image)
        }
        #expect(image.width == Int(width))
        let (status, bytes) = encode(image, quality: 80, progressive: false)
        #expect(status == (bands == 3 ? 0 : 1), "\(format), \(bands) bands to \(width)")
        if bands == 3 { #expect(bytes == (try libvipsJPEG(image, quality: 80, progressive: false))) }
    }

    /// ``ColourspaceStep`` hands an 8-bit sRGB image back as it is and converts anything else.
    @Test func onlyWhatIsNotEightBitSRGBIsConverted() throws {
        let colour = try TestImages.noise(width: 64, height: 48, bands: 3)
        #expect(try ColourspaceStep().apply(to: colour) === colour)
        let grey = try TestImages.noise(width: 64, height: 48, bands: 1)
        let converted = try ColourspaceStep().apply(to: grey)
        #expect(converted !== grey && converted.bands == 3 && converted.isEightBitSRGB)
        #expect(try converted.pixels() == (try grey.pixels()).flatMap { [$0, $0, $0] })
    }

    /// A deadline that passed stops the encode: no bytes, and the transform's deadline is marked expired
    /// (the transform then answers "too slow").
    @Test func aPassedDeadlineStopsTheEncode() throws {
        let image = try TestImages.noise(width: 800, height: 600, bands: 3)
        #expect(encode(image, quality: 80, progressive: false, deadline: 1).0 == 2)
        let deadline = TransformDeadline(limitMilliseconds: 1)
        Thread.sleep(forTimeInterval: 0.02)
        #expect(throws: ImagingError.processingFailed) {
            _ = try image.encoded(
                as: .jpeg, quality: 80, settings: EncodingSettings(), background: .white, progressive: false, keepJPEGMetadata: false,
                keepProfile: false, deadline: deadline)
        }
        #expect(deadline.hasExpired)
    }
}
