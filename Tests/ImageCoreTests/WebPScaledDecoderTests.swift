import CVipsShim
import Foundation
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// libwebp's scaled decode on the calling thread into one memory image (`webp_scaled.c`) against libvips'
/// webpload at the same scale, and the variants made from it against libvips' own `thumbnail` path.
@Suite struct WebPScaledDecoderTests {
    /// libvips' webpload at `scale`, materialised by libvips (the path the decoder replaces).
    private func libvipsScaled(_ bytes: [UInt8], scale: Double) throws -> Image {
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { ipx_vips_webpload_scaled($0.baseAddress, $0.count, scale, &output) }
        try #require(status == 0)
        return Image(taking: try #require(output))
    }

    private func decode(_ bytes: [UInt8], scale: Double, deadline: TransformDeadline? = nil) throws -> Image? {
        try ScaleOnLoadStep.decodeWebP(bytes, scale: scale, header: SourceHeader(reading: bytes), deadline: deadline)
    }

    private func fields(_ image: Image) -> String {
        var names = [CChar](repeating: 0, count: 4096)
        _ = ipx_vips_metadata_fields(image.pointer, &names, names.count)
        return String(cString: names)
    }

    /// The largest difference between two images' samples (the same size and bands required).
    private func worstDifference(_ first: Image, _ second: Image) throws -> Int {
        try #require(first.width == second.width && first.height == second.height && first.bands == second.bands)
        let (a, b) = (try first.pixels(), try second.pixels())
        return zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    /// Lossy RGB, lossless RGBA with a real alpha, lossy RGBA (the alpha in its own chunk), at scales
    /// that round differently on each axis, and unscaled.
    @Test(arguments: [
        (bands: 3, lossless: false, scale: 0.375),
        (bands: 3, lossless: false, scale: 0.7913),
        (bands: 3, lossless: false, scale: 1.0),
        (bands: 4, lossless: true, scale: 0.5123),
        (bands: 4, lossless: false, scale: 0.29),
    ])
    func decodesAsLibvipsWebploadDoes(layout: (bands: Int, lossless: Bool, scale: Double)) throws {
        let source = try TestImages.noise(width: 1001, height: 643, bands: layout.bands)
        let bytes = try layout.lossless ? TestImages.losslessWebP(source) : source.encoded(as: .webp, quality: 85).bytes
        let mine = try #require(try decode(bytes, scale: layout.scale), "\(layout)")
        let reference = try libvipsScaled(bytes, scale: layout.scale)
        #expect(mine.bands == layout.bands, "RGB unless the file has alpha")
        #expect(try worstDifference(mine, reference) == 0, "\(layout)")
    }

    @Test func carriesTheProfileAndTheOrientation() throws {
        let p3 = try TestImages.noise(width: 640, height: 480, bands: 3).producing { ipx_vips_icc_export($0, $1, "p3") }
        let bytes = try TestImages.encodedKeepingMetadata(p3, as: .webp)
        var header = try SourceHeader(reading: bytes)
        header.orientation = 6
        let decoded = try #require(try ScaleOnLoadStep.decodeWebP(bytes, scale: 0.5, header: header, deadline: nil))
        #expect(fields(decoded).contains("icc-profile-data"), "the source's profile, for the conversion to sRGB")
        #expect(vips_image_get_orientation(decoded.pointer) == 6)
        let plain = try #require(try decode(try TestImages.noise(width: 64, height: 64, bands: 3).encoded(as: .webp).bytes, scale: 0.5))
        #expect(!fields(plain).contains("icc-profile-data"))
    }

    @Test func anAnimationIsLeftToLibvips() throws {
        let bytes = try TestImages.animation(width: 64, height: 64, frames: 3).encoded(as: .webp).bytes
        #expect(try decode(bytes, scale: 0.5) == nil)
    }

    @Test func aDamagedOrCutFileIsUndecodable() throws {
        let bytes = try TestImages.noise(width: 800, height: 600, bands: 3).encoded(as: .webp, quality: 85).bytes
        // Cut inside the bitstream, the RIFF size mended so the container still parses.
        var cut = Array(bytes.prefix(bytes.count * 2 / 3))
        let riff = UInt32(cut.count - 8)
        for index in 0..<4 { cut[4 + index] = UInt8(truncatingIfNeeded: riff >> (8 * UInt32(index))) }
        #expect(throws: ImagingError.undecodable) { _ = try decode(cut, scale: 0.5) }
        var damaged = bytes
        for index in stride(from: 40, to: damaged.count, by: 7) { damaged[index] ^= 0x5A }
        do {
            let image = try decode(damaged, scale: 0.5)
            // libwebp may read damaged lossy data as other pixels; then libvips must read it the same way.
            if let image { #expect(try worstDifference(image, try libvipsScaled(damaged, scale: 0.5)) == 0) }
        } catch {
            #expect(error as? ImagingError == .undecodable)
        }
    }

    @Test func aPassedDeadlineStopsTheDecode() throws {
        let bytes = try TestImages.noise(width: 2400, height: 1600, bands: 3).encoded(as: .webp, quality: 90).bytes
        try #require(bytes.count > 2 * 256 * 1024, "more than one step of the incremental decoder")
        let deadline = TransformDeadline(limitMilliseconds: 1)
        usleep(5_000)
        #expect(throws: ImagingError.undecodable) { _ = try decode(bytes, scale: 0.5, deadline: deadline) }
        #expect(deadline.hasExpired, "the deadline is marked expired, so the transform answers 'too slow'")
    }

    /// The decode lands in the thread's reused buffer when it fits, and a bright image decoded before
    /// never shows through: every sample equals libvips' decode of the second file.
    @Test func aReusedBufferNeverShowsAnEarlierImage() throws {
        let white = try TestImages.solid(width: 900, height: 900, red: 255, green: 255, blue: 255).encoded(as: .webp, quality: 90).bytes
        let noise = try TestImages.noise(width: 900, height: 900, bands: 3, seed: 99).encoded(as: .webp, quality: 90).bytes
        var first: Image? = try #require(try decode(white, scale: 0.8))
        let address = UnsafeRawPointer(first!.pointer.pointee.data)
        #expect(address != nil && address == ipx_thread_buffer_address(), "decoded into the thread's buffer")
        #expect(try first!.pixels().allSatisfy { $0 >= 250 })
        first = nil
        let second = try #require(try decode(noise, scale: 0.8))
        #expect(UnsafeRawPointer(second.pointer.pointee.data) == address, "the same memory again")
        #expect(try worstDifference(second, try libvipsScaled(noise, scale: 0.8)) == 0)
    }
}

/// A variant of a still WebP made from this decoder's image is, within a level, the one libvips makes:
/// from its loader at the same scale inside `thumbnail`, or from its whole decode within 3x.
@Suite struct WebPDecodedVariantTests {
    private func resized(_ bytes: [UInt8], box: ResizeBox, ownDecode: Bool) throws -> Image {
        let header = try SourceHeader(reading: bytes)
        let fitted = box.coverBoxFitted(to: header)
        let loaded: ScaleOnLoadStep.Loaded
        if ownDecode {
            loaded = try ScaleOnLoadStep(box: fitted).apply(to: bytes, header: header, deadline: nil)
            guard case .decoded = loaded else { throw ImagingError.processingFailed }
        } else {
            let scale = fitted.webpScale(for: header)
            var whole: UnsafeMutablePointer<_VipsImage>?
            if scale == 1 {
                let status = bytes.withUnsafeBytes { ipx_vips_webpload_scaled($0.baseAddress, $0.count, 1, &whole) }
                try #require(status == 0)
            }
            loaded = try whole.map { .decoded(Image(taking: $0)) } ?? .webp(scale: scale)
        }
        return try ResizeStep(box: fitted).apply(to: loaded, bytes: bytes, header: header, deadline: nil)
    }

    @Test(arguments: [
        (width: 300, height: nil, fit: FitMode.contain),
        (width: 800, height: nil, fit: .contain),
        (width: 1100, height: nil, fit: .contain),
        (width: 700, height: 700, fit: .cover),
        (width: 900, height: 500, fit: .fill),
        (width: nil, height: 1000, fit: .contain),
    ] as [(width: Int?, height: Int?, fit: FitMode)])
    func aVariantIsLibvipsOwnWithinALevel(box: (width: Int?, height: Int?, fit: FitMode)) throws {
        let bytes = try TestImages.noise(width: 2400, height: 1600, bands: 3).encoded(as: .webp, quality: 85).bytes
        let resizeBox = ResizeBox(width: box.width, height: box.height, fit: box.fit)
        let mine = try resized(bytes, box: resizeBox, ownDecode: true)
        let libvips = try resized(bytes, box: resizeBox, ownDecode: false)
        #expect(mine.width == libvips.width && mine.height == libvips.height, "\(box)")
        let (a, b) = (try mine.pixels(), try libvips.pixels())
        let worst = zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
        #expect(worst <= 1, "\(box): largest difference \(worst)")
    }
}
