import CVipsShim
import Testing
import TestSupport

@testable import ImageCore

private typealias Image = ImageCore.VipsImage

/// Our decoder's 1/4 image of baseline 4:4:4 and grey JPEGs against libjpeg's own 1/4 decode.
@Suite struct JPEGQuarterDecoderTests {
    /// libjpeg's decode at 1/4 (libvips' loader with its shrink), at libjpeg's size (rounded up).
    private func libjpegQuarter(_ bytes: [UInt8]) throws -> Image {
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { ipx_vips_jpegload_shrunk($0.baseAddress, $0.count, 4, &output) }
        try #require(status == 0)
        return Image(taking: try #require(output))
    }

    private func differences(_ mine: Image, _ reference: Image) throws -> [Int] {
        let (a, b) = (try mine.pixels(), try reference.pixels())
        try #require(a.count == b.count)
        return zip(a, b).map { abs(Int($0) - Int($1)) }
    }

    /// With every coefficient read, each block goes through libjpeg's own 2x2 IDCT arithmetic
    /// (`jidctred.c`): the image is libjpeg's 1/4 decode sample for sample, with optimised Huffman
    /// tables and standard ones (restart markers), at quality 85 and at 100 (many large coefficients:
    /// the long codes, the terms at rows and columns 3, 5 and 7), colour and grey, at a size that is not
    /// a multiple of the block (libjpeg rounds the 1/4 size up).
    @Test(arguments: [
        (bands: 3, restart: 1, quality: 85), (bands: 3, restart: 5, quality: 85), (bands: 1, restart: 0, quality: 85),
        (bands: 1, restart: 7, quality: 85), (bands: 3, restart: 2, quality: 100), (bands: 3, restart: 3, quality: 100),
    ])
    func everyTermReadIsLibjpegsQuarterDecode(layout: (bands: Int, restart: Int, quality: Int)) throws {
        let (width, height) = (1004, 644)
        let bytes = try TestImages.jpeg(
            TestImages.noise(width: width, height: height, bands: layout.bands), quality: layout.quality, progressive: false,
            subsample: false, restartInterval: layout.restart)
        let mine = try #require(JPEGEighthDecoder.image(bytes, shrink: 4, termsRead: 64), "\(layout)")
        #expect(mine.width == 251 && mine.height == 161 && mine.bands == layout.bands)
        let worst = try differences(mine, libjpegQuarter(bytes)).max() ?? 0
        #expect(worst == 0, "largest difference from libjpeg's 1/4 decode: \(worst) (\(layout))")
    }

    /// A colour file without restart markers is libjpeg-turbo's to decode at 1/4 (its fast Huffman path came
    /// within 3-5% of this decoder there): the header says so, the plan does not ask, and the decoder declines.
    @Test func aColourFileWithoutRestartMarkersIsLeftToLibjpeg() throws {
        let plain = try TestImages.jpeg(
            TestImages.noise(width: 1004, height: 644, bands: 3), quality: 85, progressive: false, subsample: false, restartInterval: 0)
        let restarted = try TestImages.jpeg(
            TestImages.noise(width: 1004, height: 644, bands: 3), quality: 85, progressive: false, subsample: false, restartInterval: 4)
        let grey = try TestImages.jpeg(
            TestImages.noise(width: 1004, height: 644, bands: 1), quality: 85, progressive: false, subsample: false, restartInterval: 0)
        #expect(try !SourceHeader(reading: plain).jpegQuarterDecodable)
        #expect(try SourceHeader(reading: restarted).jpegQuarterDecodable)
        #expect(try SourceHeader(reading: grey).jpegQuarterDecodable)
        #expect(JPEGEighthDecoder.image(plain, shrink: 4) == nil)
        #expect(JPEGEighthDecoder.image(plain, shrink: 8) != nil, "its 1/8 image is still ours (31-37% faster)")
        let box = ResizeBox(width: 160, height: nil, fit: .contain)
        #expect(box.coverBoxFitted(to: try SourceHeader(reading: plain)).ownDecoderShrink(try SourceHeader(reading: plain)) == nil)
        #expect(box.coverBoxFitted(to: try SourceHeader(reading: restarted)).ownDecoderShrink(try SourceHeader(reading: restarted)) == 4)
    }

    /// The default reads the terms of rows and columns 0 and 1 only: on a photograph-like image the 1/4
    /// image stays within a few levels of libjpeg's, while reading none of them (the DC alone, each
    /// block flat) is visibly coarser. So the terms read are used, and placed where the IDCT wants them.
    @Test func theFirstTermsKeepTheImageCloseToLibjpegs() throws {
        let bytes = try TestImages.jpeg(
            TestImages.photo(width: 1600, height: 1200), quality: 85, progressive: false, subsample: false, restartInterval: 4)
        let mine = try #require(JPEGEighthDecoder.image(bytes, shrink: 4))
        let flat = try #require(JPEGEighthDecoder.image(bytes, shrink: 4, termsRead: 1))
        let reference = try libjpegQuarter(bytes)
        let (near, coarse) = (try differences(mine, reference), try differences(flat, reference))
        let nearMean = Double(near.reduce(0, +)) / Double(near.count)
        let coarseMean = Double(coarse.reduce(0, +)) / Double(coarse.count)
        #expect(nearMean < 1.0, "mean difference from libjpeg's 1/4 decode: \(nearMean)")
        #expect(nearMean * 2 < coarseMean, "with the first terms \(nearMean), with the DC alone \(coarseMean)")
    }

    /// A progressive file's AC terms come in scans of their own, which the decoder does not read: it is
    /// left to libjpeg at 1/4, and so is 4:2:0 chroma.
    @Test func progressiveAndSubsampledFilesAreLeftToLibjpeg() throws {
        let image = try TestImages.noise(width: 640, height: 480, bands: 3)
        let progressive = try TestImages.jpeg(image, quality: 85, progressive: true, subsample: false, restartInterval: 0)
        let subsampled = try TestImages.jpeg(image, quality: 85, progressive: false, subsample: true, restartInterval: 0)
        for bytes in [progressive, subsampled] {
            guard case .notApplicable = JPEGEighthDecoder.decode(bytes, shrink: 4) else {
                Issue.record("decoded at 1/4")
                continue
            }
        }
        // The same progressive file is still decoded at 1/8.
        #expect(JPEGEighthDecoder.image(progressive) != nil)
    }
}
