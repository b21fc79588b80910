import Testing
import TestSupport

@testable import ImageCore

/// The working set a transform reserves, estimated from the header before anything is decoded
/// (``ResizeBox/estimatedWorkingSetBytes(for:format:eighthDecoded:)``): it follows the decoder that runs.
@Suite struct WorkingSetEstimateTests {
    @Test func theEstimateFollowsShrinkOnLoad() throws {
        let header = try SourceHeader(reading: TestImages.jpeg(width: 4000, height: 3000))
        let small = ResizeBox(width: 200, height: nil, fit: .contain).estimatedWorkingSetBytes(for: header, format: .jpeg)
        let large = ResizeBox(width: 3000, height: nil, fit: .contain).estimatedWorkingSetBytes(for: header, format: .jpeg)
        #expect(small < 4 * 4000 * 3000 / 16, "a 200 px thumbnail decodes at 1/8: \(small)")
        #expect(large >= 2 * 4 * 4000 * 3000, "a 3000 px one decodes whole: \(large)")
        var enlarged = ResizeBox(width: 4096, height: nil, fit: .contain)
        enlarged.enlarge = true
        #expect(enlarged.estimatedWorkingSetBytes(for: header, format: .jpeg) < 200_000_000, "one side given: the other from the aspect")
    }

    /// A whole decode reserves 6 bytes an output pixel only where the pool thread's reduce is the variant
    /// (`ResizeStep.lanczosShrink`: below 7x on both axes), 12 where `thumbnail` reduces: a `fill` 12x
    /// across and under 2x down is `thumbnail`'s, one 5x and 4x the reduce's.
    @Test func aWholeDecodeReservesForThePathItTakes() throws {
        let header = try SourceHeader(reading: TestImages.noise(width: 3000, height: 2000, bands: 3).encoded(as: .png).bytes)
        func bytesPerOutputPixel(_ box: ResizeBox) -> Int {
            let beyondTheOutput = 2 * 3000 * 2000 + (8 << 20)
            return (box.estimatedBytesFromWholeDecode(for: header, realAlpha: false) - beyondTheOutput) / box.estimatedOutputPixels(for: header)
        }
        #expect(bytesPerOutputPixel(ResizeBox(width: 600, height: 500, fit: .fill)) == 6)
        #expect(bytesPerOutputPixel(ResizeBox(width: 250, height: 1200, fit: .fill)) == 12)
        #expect(bytesPerOutputPixel(ResizeBox(width: 600, height: 500, fit: .cover)) == 12, "a crop: thumbnail's")
        // A real alpha: 7 bytes a source pixel (premultiplied in floating point), 12 an output pixel and
        // 32 MiB of slack (a fresh-clone CI run measured a 3000x3000 RGBA WebP at 1000 px 14 MB over 8 MiB).
        let box = ResizeBox(width: 600, height: 500, fit: .fill)
        #expect(box.estimatedBytesFromWholeDecode(for: header, realAlpha: true)
            == 7 * 3000 * 2000 + 12 * box.estimatedOutputPixels(for: header) + (32 << 20))
    }

    /// A progressive JPEG's decode held whole to be kept reserves the decode, its coefficient buffer, the
    /// encoder's buffer and the slack (the reduce hands its rows to the encoder); a variant from a kept
    /// decode at 1/2 counts that decode's pixels, not the source's.
    @Test func aJPEGDecodeHeldToBeKeptReservesTheDecode() throws {
        var header = SourceHeader(width: 5120, height: 2880, frames: 1, orientation: 1, colourManaged: false, jpegCoefficientBytes: 88 << 20)
        header.bands = 3
        let box = ResizeBox(width: 1920, height: nil, fit: .contain)
        let output = box.estimatedOutputPixels(for: header)
        let decode = 3 * 2561 * 1441
        #expect(box.estimatedBytesDecodingJPEGInMemory(for: header, encoderCoefficientBytes: 3, reduceEncoded: true, holdingTheDecode: true)
            == decode + (88 << 20) + 2 * output + (16 << 20))
        #expect(box.estimatedBytesDecodingJPEGInMemory(for: header, encoderCoefficientBytes: 3, reduceEncoded: false, holdingTheDecode: true)
            == decode + (88 << 20) + 5 * output + (16 << 20), "the reduce's image too when it is not encoded as it is made")
        // From a kept 1/2 decode (2560x1440): 2 bytes a decoded pixel, 3 an output pixel, 12 MiB.
        #expect(box.estimatedBytesFromWholeDecode(for: header, decodedShrink: 2, realAlpha: false, reduceEncoded: true)
            == 2 * 2560 * 1440 + 3 * output + (12 << 20))
    }

    /// Issue #34: a JPEG that libjpeg decodes and the reduce takes to a forced size as the rows arrive
    /// reserves the rows the reduce's taps span, not the decode: a 5120x2880 photograph at 3840 px (a
    /// whole decode of 44 MB) reserves under 1 MiB beyond the reduce's output, the encoder's buffer and
    /// the slack; a turned one too (`thumbnail` turns the reduced image, twice the output). A JPEG kept at
    /// its size still reserves its decode.
    @Test func aJPEGReducedWhileDecodingReservesRowsNotTheDecode() throws {
        let header = SourceHeader(width: 5120, height: 2880, frames: 1, orientation: 1, colourManaged: false)
        let decode = 3 * 5121 * 2881
        let box = ResizeBox(width: 3840, height: nil, fit: .contain)
        let output = box.estimatedOutputPixels(for: header)
        let reduced = box.estimatedBytesDecodingJPEGInMemory(for: header, encoderCoefficientBytes: 3)
        #expect(reduced >= 5 * output + (16 << 20) && reduced - (5 * output + (16 << 20)) < 1 << 20, "\(reduced)")
        var turned = header
        turned.orientation = 6
        let upright = ResizeBox(width: 1440, height: nil, fit: .contain)
        let turnedOutput = upright.estimatedOutputPixels(for: turned)
        let turnedBytes = upright.estimatedBytesDecodingJPEGInMemory(for: turned, encoderCoefficientBytes: 3)
        #expect(turnedBytes >= 8 * turnedOutput + (16 << 20) && turnedBytes - (8 * turnedOutput + (16 << 20)) < 1 << 20, "\(turnedBytes)")
        let kept = ResizeBox(width: 5120, height: nil, fit: .contain)
        #expect(kept.estimatedBytesDecodingJPEGInMemory(for: header, encoderCoefficientBytes: 3) > decode)
    }

    /// A camera's 24 MP JPEG (72 MB decoded, over the 64 MiB held whole) at a srcset width is reduced as
    /// libjpeg's rows arrive rather than left to libvips' loader; at its own width (the decode would be
    /// held as the variant) it is still the loader's.
    @Test func aLargeJPEGReducedWhileDecodingIsNotLeftToTheLoader() throws {
        let header = SourceHeader(width: 6000, height: 4000, frames: 1, orientation: 1, colourManaged: false)
        let srcset = ResizeBox(width: 3840, height: nil, fit: .contain)
        #expect(srcset.jpegShrink(for: header) == 1)
        #expect(srcset.mayDecodeJPEGInMemory(for: header, format: .jpeg))
        #expect(srcset.estimatedBytesDecodingJPEGInMemory(for: header, encoderCoefficientBytes: 3) < 3 * 6000 * 4000)
        let own = ResizeBox(width: 6000, height: nil, fit: .contain)
        #expect(!own.mayDecodeJPEGInMemory(for: header, format: .jpeg))
    }

    @Test func theEstimateCountsLibjpegsCoefficientBufferForProgressiveFiles() throws {
        let picture = try TestImages.gradient(width: 800, height: 600)
        let baseline = try SourceHeader(reading: TestImages.jpeg(picture, progressive: false, subsample: true, keepMetadata: true))
        let progressive420 = try SourceHeader(reading: TestImages.jpeg(picture, progressive: true, subsample: true, keepMetadata: true))
        let progressive444 = try SourceHeader(reading: TestImages.jpeg(picture, progressive: true, subsample: false, keepMetadata: true))
        #expect(baseline.jpegCoefficientBytes == 0 && !baseline.jpegEighthDecodable, "one interleaved scan: decoded row by row")
        // libjpeg keeps 128 bytes per 8x8 block of each component, rows and columns padded to whole MCUs:
        // 4:2:0 luma 100x76 blocks (16-row MCUs), each chroma 50x38; 4:4:4 three planes of 100x75.
        #expect(progressive420.jpegCoefficientBytes == (100 * 76 + 2 * 50 * 38) * 128)
        #expect(!progressive420.jpegEighthDecodable, "subsampled chroma: libjpeg's path")
        #expect(progressive444.jpegCoefficientBytes == 3 * 100 * 75 * 128)
        #expect(progressive444.jpegEighthDecodable)
        #expect(try SourceHeader(reading: TestImages.gradient(width: 800, height: 600).encoded(as: .png).bytes).jpegCoefficientBytes == 0)
        // Four components (CMYK): uniform sampling, but not the DC decoder's kind; libjpeg keeps four planes.
        let cmyk = try SourceHeader(
            reading: TestImages.jpeg(
                TestImages.solid(red: 200, green: 80, blue: 40, width: 800, height: 600, profile: "cmyk"),
                progressive: true, subsample: false, keepMetadata: true))
        #expect(cmyk.jpegCoefficientBytes == 4 * 100 * 75 * 128 && !cmyk.jpegEighthDecodable)

        let thumbnail = ResizeBox(width: 50, height: nil, fit: .contain)
        let medium = ResizeBox(width: 400, height: nil, fit: .contain)
        func estimate(_ step: ResizeBox, _ header: SourceHeader) -> Int { step.estimatedWorkingSetBytes(for: header, format: .jpeg) }
        // 1/16 of the width: with its DC-only image in hand, the 4:4:4 file needs no coefficient buffer;
        // before that, the buffer is counted (the DC decoder may decline the file).
        #expect(thumbnail.estimatedWorkingSetBytes(for: progressive444, format: .jpeg, eighthDecoded: true) == estimate(thumbnail, baseline))
        #expect(estimate(thumbnail, progressive444) == estimate(thumbnail, baseline) + progressive444.jpegCoefficientBytes)
        #expect(thumbnail.mayDecodeEighth(for: progressive444, format: .jpeg) && !medium.mayDecodeEighth(for: progressive444, format: .jpeg))
        #expect(estimate(thumbnail, progressive420) == estimate(thumbnail, baseline) + progressive420.jpegCoefficientBytes)
        #expect(estimate(thumbnail, cmyk) == estimate(thumbnail, baseline) + cmyk.jpegCoefficientBytes)
        #expect(estimate(medium, progressive444) == estimate(medium, baseline) + progressive444.jpegCoefficientBytes)
        var cropped = medium
        cropped.crop = try #require(CropRectangle(parameter: "0,0,400,300"))
        #expect(estimate(cropped, progressive444) == estimate(cropped, baseline) + progressive444.jpegCoefficientBytes)
    }

    @Test func aWebPIsEstimatedAtTheScaleLibwebpDecodesIt() throws {
        let header = try SourceHeader(reading: TestImages.gradient(width: 2000, height: 2000).encoded(as: .webp).bytes)
        let thumbnail = ResizeBox(width: 200, height: nil, fit: .contain)
        let webp = thumbnail.estimatedWorkingSetBytes(for: header, format: .webp)
        let png = thumbnail.estimatedWorkingSetBytes(for: header, format: .png)
        // Decoded once at three times the output (600x600 of 2001x2001: scale 0.3; 4 bytes a pixel), the
        // 200x200 output once, libwebp's own buffers and the fixed share.
        #expect(webp == 4 * 360_361 + 4 * 200 * 200 + ResizeBox.webpDecoderBytes + (36 << 20))
        #expect(png >= 2 * 4 * 2000 * 2000, "no shrink on load: the whole image")
        // Within 3x it is decoded whole (2000x2000, counted as 2001x2001).
        let half = ResizeBox(width: 1000, height: nil, fit: .contain)
        #expect(half.estimatedWorkingSetBytes(for: header, format: .webp) == 4 * 2001 * 2001 + 4 * 1000 * 1000 + ResizeBox.webpDecoderBytes + (36 << 20))
        // An alpha is reduced premultiplied in floating point: 14 bytes a decoded pixel.
        var alpha = header
        alpha.hasAlpha = true
        #expect(thumbnail.estimatedWorkingSetBytes(for: alpha, format: .webp) == webp + 10 * 360_361 + (12 << 20), "and 12 MiB more slack")
        // Enlarging past the source: the decode stops at the source's size.
        var enlarged = ResizeBox(width: 4000, height: nil, fit: .contain)
        enlarged.enlarge = true
        #expect(enlarged.estimatedWorkingSetBytes(for: header, format: .webp) == 4 * 2001 * 2001 + 4 * 4000 * 4000 + ResizeBox.webpDecoderBytes + (36 << 20))
    }
}
