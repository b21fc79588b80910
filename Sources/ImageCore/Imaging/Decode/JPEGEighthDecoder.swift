import CVipsShim

/// Decodes JPEGs at 1/8 scale from their DC coefficients alone, and baseline ones at 1/4 from their
/// DC and first AC coefficients (`jpeg_dc.c`, our own entropy decoder). ``ScaleOnLoadStep`` uses it at
/// the scale ``ResizeBox/ownDecoderShrink(_:)`` picks.
///
/// - 1/8, progressive files: the AC scans, most of such a file, are stepped over unread, and no
///   coefficient buffer is allocated. Baseline files of one interleaved scan: each AC code is read and
///   stepped over (several at a time), without libjpeg's IDCT and colour machinery. The result equals
///   libjpeg's own 1/8 decode sample for sample.
/// - 1/4, baseline files: libjpeg's 2x2 IDCT of each block (`jidctred.c`'s arithmetic) from the AC
///   terms among its first ``quarterTermsRead`` in zigzag order; the later ones are stepped over as at
///   1/8. Those are the high frequencies a thumbnail's final reduce averages away: the image is within a
///   few levels of libjpeg's 1/4 decode (exactly it with all 64 read), and the thumbnail's SSIM is that
///   of libjpeg's 1/4 decode to within 0.0005 (`bench/RESULTS.md`, 2026-11-27 (baseline JPEGs' 1/4 image from their first coefficients)).
///
/// Files with subsampled chroma (4:2:0, 4:2:2, ...), whose reduced chroma libjpeg computes with AC
/// terms, are left to libjpeg and libvips, and so is every file with any damage or anomaly up to its
/// EOI marker (libvips then answers it, for every variant alike).
public enum JPEGEighthDecoder {
    /// What the decoder made of the bytes.
    public enum Result {
        /// The 1/8-scale image with the source's ICC profile and `orientation` attached.
        case decoded(VipsImage)
        /// Not a complete, undamaged progressive or one-scan baseline 4:4:4 YCbCr or grey JPEG: decode
        /// another way.
        case notApplicable
        /// The deadline passed while decoding.
        case pastDeadline
        /// More than ``SourceHeader/maxJPEGScans`` scans.
        case tooManyScans
    }

    /// How many coefficients of each block, in zigzag order (the DC term first), a 1/4 decode reads:
    /// 5 takes the terms of the first row and column pair, (0,1), (1,0) and (1,1), which carry nearly
    /// all of a 2x2 block's detail. Measured at 300, 400 and 500 px on the 11 baseline 4:4:4 and grey
    /// files of both benchmark corpora, mean SSIM against a Lanczos3 reduce of the whole decode: 3 terms
    /// 0.9884 / 0.9960 / 0.9884, 5 terms 0.9886 / 0.9970 / 0.9911, 10 terms 0.9890 / 0.9966 / 0.9904, all
    /// 64 (libjpeg's 1/4 decode) 0.9891 / 0.9964 / 0.9901; libjpeg's 1/8 at 300 px (thumbor's) 0.9777.
    public static let quarterTermsRead = 5

    /// Decodes `bytes` at 1/`shrink` (8, or 4 for a baseline file), giving up at `deadline`
    /// (`DispatchTime.uptimeNanoseconds`-style monotonic nanoseconds, 0 for none). `termsRead`: the
    /// coefficients a 1/4 decode reads (64: libjpeg's own 1/4 decode).
    public static func decode(
        _ bytes: [UInt8], shrink: Int = 8, termsRead: Int = quarterTermsRead, orientation: Int = 1, deadlineNanoseconds: Int64 = 0
    ) -> Result {
        var image: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            shrink == 4
                ? ipx_jpeg_decode_quarter(
                    raw.baseAddress, raw.count, Int32(clamping: termsRead), Int32(orientation), deadlineNanoseconds, &image)
                : ipx_jpeg_decode_eighth(raw.baseAddress, raw.count, Int32(orientation), deadlineNanoseconds, &image)
        }
        switch status {
        case 0: return image.map { .decoded(VipsImage(taking: $0)) } ?? .notApplicable
        case 2: return .pastDeadline
        case 3: return .tooManyScans
        default: return .notApplicable
        }
    }

    /// The decoded image, or nil for every other result.
    public static func image(_ bytes: [UInt8], shrink: Int = 8, termsRead: Int = quarterTermsRead, orientation: Int = 1) -> VipsImage? {
        if case .decoded(let image) = decode(bytes, shrink: shrink, termsRead: termsRead, orientation: orientation) { return image }
        return nil
    }
}
