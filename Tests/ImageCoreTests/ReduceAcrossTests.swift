import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// The Lanczos3 reduce across of `reduce_across.c` against libvips' reduceh: the same size, and the same
/// samples within libvips' own rounding (it places each output pixel to 1/64 of an input pixel and keeps
/// its weights to 12 bits; this code does neither).
@Suite struct ReduceAcrossTests {
    private func libvips(_ image: Image, shrink: Double) throws -> Image {
        try image.producingForTests { ipx_vips_reduceh_lanczos3($0, $1, shrink) }
    }

    private func mine(_ image: Image, shrink: Double) throws -> Image {
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = ipx_reduce_across_lanczos3(image.pointer, &output, shrink)
        try #require(status == 0)
        return Image(taking: try #require(output))
    }

    /// The largest and the mean difference between two images' samples.
    private func differences(_ first: Image, _ second: Image) throws -> (worst: Int, mean: Double) {
        try #require(first.width == second.width && first.height == second.height && first.bands == second.bands)
        let (a, b) = (try first.pixels(), try second.pixels())
        var worst = 0
        var total = 0
        for (x, y) in zip(a, b) {
            let difference = abs(Int(x) - Int(y))
            worst = max(worst, difference)
            total += difference
        }
        return (worst, Double(total) / Double(max(1, a.count)))
    }

    @Test(arguments: [
        (bands: 3, shrink: 2.0), (bands: 3, shrink: 1.07), (bands: 3, shrink: 1.875), (bands: 3, shrink: 3.3),
        (bands: 1, shrink: 2.5), (bands: 4, shrink: 1.6), (bands: 2, shrink: 7.9), (bands: 3, shrink: 1.0),
    ])
    func reducesAsLibvipsReducehDoes(layout: (bands: Int, shrink: Double)) throws {
        // Noise, the hardest case for the rounding, and not a multiple of any shrink.
        let source = try TestImages.noise(width: 1001, height: 67, bands: layout.bands)
        let reduced = try mine(source, shrink: layout.shrink)
        let reference = try layout.shrink > 1 ? libvips(source, shrink: layout.shrink) : source
        #expect(reduced.width == reference.width && reduced.height == 67 && reduced.bands == layout.bands, "\(layout)")
        let (worst, mean) = try differences(reduced, reference)
        #expect(worst <= 1 && mean < 0.2, "\(layout): largest difference \(worst), mean \(mean)")
    }

    @Test func aSmoothImageIsTheSameWithinOneLevel() throws {
        let source = try TestImages.photo(width: 3840, height: 40)
        let (worst, mean) = try differences(try mine(source, shrink: 2), try libvips(source, shrink: 2))
        #expect(worst <= 1 && mean < 0.1, "largest difference \(worst), mean \(mean)")
    }

    @Test func keepsTheMetadataAndRunsTheInputsPipeline() throws {
        let p3 = try TestImages.noise(width: 640, height: 480, bands: 3).producing { ipx_vips_icc_export($0, $1, "p3") }
        vips_image_set_int(p3.pointer, "orientation", 6)
        // A lazy input: libvips' reduce down, evaluated strip by strip on this thread.
        let down = try p3.producingForTests { ipx_vips_reduce_lanczos($0, $1, 1.0, 2.0, 0) }
        let reduced = try mine(down, shrink: 2)
        #expect(reduced.width == 320 && reduced.height == 240)
        #expect(vips_image_get_orientation(reduced.pointer) == 6)
        var names = [CChar](repeating: 0, count: 4096)
        _ = ipx_vips_metadata_fields(reduced.pointer, &names, names.count)
        #expect(String(cString: names).contains("icc-profile-data"))
    }

    /// Down and across in one pass over an image in memory (`ipx_reduce_lanczos3_in_memory`) against
    /// libvips' reducev then reduceh computed in doubles and rounded once: the same size, and the same
    /// samples within a level (libvips places each output pixel to 1/64 of an input pixel).
    @Test(arguments: [
        (bands: 3, across: 2.0, down: 2.0), (bands: 3, across: 1.6, down: 1.6), (bands: 3, across: 2.13, down: 2.13),
        (bands: 1, across: 2.5, down: 1.07), (bands: 4, across: 1.3, down: 3.3), (bands: 2, across: 7.9, down: 6.1),
        (bands: 3, across: 12.8, down: 12.8),
    ])
    func reducesDownAndAcrossAsAnExactReduceDoes(layout: (bands: Int, across: Double, down: Double)) throws {
        let source = try TestImages.noise(width: 1001, height: 703, bands: layout.bands)
        var output: UnsafeMutablePointer<_VipsImage>?
        try #require(ipx_reduce_lanczos3_in_memory(source.pointer, &output, layout.across, layout.down) == 0)
        let reduced = Image(taking: try #require(output))
        let exact = try source.producingForTests { ipx_vips_reduce_lanczos3_exact($0, $1, layout.across, layout.down) }
        let eightBit = try source.producingForTests { ipx_vips_reducev_lanczos3($0, $1, layout.down) }
            .producingForTests { ipx_vips_reduceh_lanczos3($0, $1, layout.across) }
        #expect(reduced.width == exact.width && reduced.height == exact.height && reduced.bands == layout.bands, "\(layout)")
        #expect(reduced.width == eightBit.width && reduced.height == eightBit.height, "\(layout)")
        let (worst, mean) = try differences(reduced, exact)
        #expect(worst <= 1 && mean < 0.25, "\(layout): largest difference from the exact reduce \(worst), mean \(mean)")
        // libvips' own 8-bit path is further from the exact reduce than this one is (its 12-bit weights drift
        // from a sum of one when a large shrink spreads them over many taps).
        let (libvipsWorst, libvipsMean) = try differences(eightBit, exact)
        #expect(worst <= max(1, libvipsWorst) && mean <= libvipsMean + 0.01, "\(layout): libvips' 8-bit path \(libvipsWorst), \(libvipsMean)")
    }

    @Test func aPhotographReducedInOnePassIsWithinALevelOfLibvips() throws {
        let source = try TestImages.photo(width: 3840, height: 2160)
        var output: UnsafeMutablePointer<_VipsImage>?
        try #require(ipx_reduce_lanczos3_in_memory(source.pointer, &output, 12.8, 2160.0 / 169) == 0)
        let reduced = Image(taking: try #require(output))
        let reference = try source.producingForTests { ipx_vips_reduce_lanczos3_exact($0, $1, 12.8, 2160.0 / 169) }
        let (worst, mean) = try differences(reduced, reference)
        #expect(reduced.width == 300 && reduced.height == 169)
        #expect(worst <= 1 && mean < 0.1, "largest difference \(worst), mean \(mean)")
    }

    @Test func theOnePassKeepsTheMetadataAndDeclinesLazyImages() throws {
        let p3 = try TestImages.noise(width: 640, height: 480, bands: 3).producing { ipx_vips_icc_export($0, $1, "p3") }
            .producingForTests { ipx_vips_copy_memory($0, $1) }
        vips_image_set_int(p3.pointer, "orientation", 6)
        var output: UnsafeMutablePointer<_VipsImage>?
        try #require(ipx_reduce_lanczos3_in_memory(p3.pointer, &output, 2, 2) == 0)
        let reduced = Image(taking: try #require(output))
        #expect(reduced.width == 320 && reduced.height == 240)
        #expect(vips_image_get_orientation(reduced.pointer) == 6)
        var names = [CChar](repeating: 0, count: 4096)
        _ = ipx_vips_metadata_fields(reduced.pointer, &names, names.count)
        #expect(String(cString: names).contains("icc-profile-data"))
        // A lazy image (libvips' reduce down, not evaluated) and a 5-band one are left to the other path.
        let lazy = try p3.producingForTests { ipx_vips_reduce_lanczos($0, $1, 1.0, 2.0, 0) }
        #expect(ipx_reduce_lanczos3_in_memory(lazy.pointer, &output, 2, 2) == 1)
        let five = try TestImages.noise(width: 64, height: 8, bands: 5)
        #expect(ipx_reduce_lanczos3_in_memory(five.pointer, &output, 2, 2) == 1)
        #expect(ipx_reduce_lanczos3_in_memory(p3.pointer, &output, 2, 1) == 1, "no reduce down: the across path")
    }

    @Test func declinesWhatItDoesNotReduce() throws {
        var output: UnsafeMutablePointer<_VipsImage>?
        let five = try TestImages.noise(width: 64, height: 8, bands: 5)
        #expect(ipx_reduce_across_lanczos3(five.pointer, &output, 2) == 1, "5 bands: libvips' reduceh")
        #expect(ipx_reduce_across_lanczos3(five.pointer, &output, 0.5) == 1, "an enlargement is not a reduce")
    }

    /// The common miss's resize (a JPEG decoded into memory, reduced to its forced size) is the one-pass
    /// reduce, sample for sample: libvips' reduce down and across rounds in between and differs.
    @Test func aDecodeIsReducedByTheOnePass() throws {
        let bytes = try TestImages.noise(width: 2400, height: 1600, bands: 3).encoded(as: .jpeg, quality: 90).bytes
        let resized = try #require(try ResizedInMemory(bytes, width: 700), "decoded in memory")
        let (decoded, variant, arguments) = (resized.decoded, resized.variant, resized.arguments)
        let across = Double(decoded.width) / Double(arguments.width), down = Double(decoded.height) / Double(arguments.height)
        var output: UnsafeMutablePointer<_VipsImage>?
        try #require(ipx_reduce_lanczos3_in_memory(decoded.pointer, &output, across, down) == 0)
        let onePass = Image(taking: try #require(output))
        #expect(try variant.pixels() == onePass.pixels())
        let libvips = try decoded.producingForTests { ipx_vips_reducev_lanczos3($0, $1, down) }
            .producingForTests { ipx_vips_reduceh_lanczos3($0, $1, across) }
        #expect(try variant.pixels() != libvips.pixels(), "the noise makes libvips' two roundings show")
    }

    /// A decode reduced to its forced size with nothing left for `thumbnail` to do (no profile, no turn)
    /// skips it: the variant is what `thumbnail` makes of the reduced image, sample for sample.
    @Test(arguments: [700, 1100])
    func aReducedDecodeSkipsThumbnailWithoutChangingASample(width: Int) throws {
        let bytes = try TestImages.noise(width: 2400, height: 1600, bands: 3).encoded(as: .jpeg, quality: 90).bytes
        let resized = try #require(try ResizedInMemory(bytes, width: width), "decoded in memory")
        let (decoded, variant, arguments) = (resized.decoded, resized.variant, resized.arguments)
        #expect(arguments.size == ResizeBox.Size.force.rawValue && variant.width == arguments.width && variant.height == arguments.height)
        let across = Double(decoded.width) / Double(arguments.width), down = Double(decoded.height) / Double(arguments.height)
        let reference = try decoded.producingForTests { ipx_vips_reduce_lanczos($0, $1, across, down, 0) }
            .producingForTests { ipx_vips_thumbnail_image($0, $1, Int32(arguments.width), Int32(arguments.height), arguments.size, -1, 0) }
            .producingForTests { ipx_vips_copy_memory($0, $1) }
        #expect(try variant.pixels() == reference.pixels())
    }
}
