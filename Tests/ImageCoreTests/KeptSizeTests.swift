import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// A decode already at the variant's size (a srcset width capped at the source's width) is the variant as
/// it is: `thumbnail`, which would hand every sample back unchanged, and its copy of the whole image into
/// fresh memory are skipped. The variant is then the decode's own memory (a kept whole decode's behind a
/// lazy image of its own), sample for sample what `thumbnail` makes of it.
@Suite struct KeptSizeTests {
    private func pixelAddress(_ image: Image) -> UnsafeRawPointer? { ipx_vips_image_address(image.pointer) }

    /// What `thumbnail` makes of `image` with `arguments` (the path taken before), in memory.
    private func thumbnailed(_ image: Image, _ arguments: (width: Int, height: Int, size: Int32, crop: Int32)) throws -> Image {
        try image.producingForTests {
            ipx_vips_thumbnail_image($0, $1, Int32(arguments.width), Int32(arguments.height), arguments.size, arguments.crop, 0)
        }
        .producingForTests { ipx_vips_copy_memory($0, $1) }
    }

    @Test(arguments: [1600, 2000])
    func aJPEGDecodedAtItsFullSizeIsTheVariant(width: Int) throws {
        let bytes = try TestImages.noise(width: 1600, height: 1000, bands: 3).encoded(as: .jpeg, quality: 90).bytes
        let resized = try #require(try ResizedInMemory(bytes, width: width), "decoded in memory")
        let (decoded, variant) = (resized.decoded, resized.variant)
        #expect(variant.width == 1600 && variant.height == 1000)
        #expect(pixelAddress(variant) == pixelAddress(decoded), "no copy: the decode's own memory")
        let reference = try thumbnailed(decoded, resized.arguments)
        #expect(pixelAddress(reference) != pixelAddress(decoded))
        #expect(try variant.pixels() == reference.pixels())
    }

    /// Opaque, and with a real alpha (`thumbnail` premultiplies only when it resizes). The variant is an
    /// image of its own over the decode's memory (nothing copied until the encoder reads it), so that a
    /// deadline's kill flag on it never reaches the kept decode other transforms read.
    @Test(arguments: [false, true])
    func aWholeDecodeAtTheVariantsSizeIsTheVariant(alpha: Bool) throws {
        let image = alpha ? try TestImages.halfTransparent(width: 1500, height: 900) : try TestImages.noise(width: 1500, height: 900, bands: 3)
        let png = try image.encoded(as: .png).bytes
        let header = try SourceHeader(reading: png)
        let decoded = try DecodedSource.decoding(png, deadline: nil)
        let box = ResizeBox(width: 1500, height: nil, fit: .contain).coverBoxFitted(to: header)
        #expect(decoded.hasRealAlpha == alpha)
        let variant = try ResizeStep(box: box).apply(toWhole: decoded, header: header, deadline: nil)
        #expect(variant.pointer != decoded.image.pointer && pixelAddress(variant) == nil, "a lazy image of its own, no copy yet")
        #expect(try variant.pixels() == thumbnailed(decoded.image, box.thumbnailArguments(for: header)).pixels())
    }

    /// A turn still goes through `thumbnail` (it turns the image), and so does anything `thumbnail` would
    /// resize or crop.
    @Test func whatThumbnailWouldChangeStillGoesThroughIt() throws {
        let turned = try TestImages.rotatedJPEG(width: 640, height: 400)
        let header = try SourceHeader(reading: turned)
        #expect(header.orientation == 6)
        let box = ResizeBox(width: 400, height: nil, fit: .contain).coverBoxFitted(to: header)
        let loaded = try ScaleOnLoadStep(box: box).apply(to: turned, header: header, deadline: nil)
        let variant = try ResizeStep(box: box).apply(to: loaded, bytes: turned, header: header, deadline: nil)
        #expect(variant.width == 400 && variant.height == 640, "turned")

        let image = try TestImages.noise(width: 300, height: 200, bands: 3)
        let keeps = { (arguments: (width: Int, height: Int, size: Int32, crop: Int32)) in
            ResizeStep.thumbnailKeepsTheSize(of: image, arguments: arguments)
        }
        let (force, down, both) = (ResizeBox.Size.force.rawValue, ResizeBox.Size.down.rawValue, ResizeBox.Size.both.rawValue)
        #expect(keeps((300, 200, force, -1)) && keeps((300, 10_000_000, down, -1)) && keeps((400, 250, down, -1)))
        #expect(!keeps((300, 199, force, -1)) && !keeps((299, 10_000_000, down, -1)), "a reduction")
        #expect(!keeps((400, 250, both, -1)), "an enlargement")
        #expect(!keeps((300, 200, force, ResizeBox.Crop.centre.rawValue)), "a crop")
    }
}
