import CVipsShim

/// Decodes JPEGs at 1/8 scale from their DC coefficients alone (`jpeg_dc.c`, our own entropy decoder).
/// Progressive files: the AC scans, most of such a file, are stepped over unread, and no coefficient
/// buffer is allocated. Baseline files of one interleaved scan: each AC code is read and stepped over
/// (several at a time), without libjpeg's IDCT and colour machinery. ``ScaleOnLoadStep`` uses it
/// whenever the output needs no more than 1/8 of the source (``ResizeBox/reducesToAnEighth(_:)``). The
/// result equals libjpeg's own 1/8 decode sample for sample; files with subsampled chroma (4:2:0,
/// 4:2:2, ...), whose 1/8 chroma libjpeg computes with AC terms, are left to libjpeg and libvips, and so
/// is every file with any damage or anomaly up to its EOI marker (libvips then answers it, for every
/// variant alike).
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

    /// Decodes `bytes`, giving up at `deadline` (`DispatchTime.uptimeNanoseconds`-style monotonic
    /// nanoseconds, 0 for none).
    public static func decode(_ bytes: [UInt8], orientation: Int = 1, deadlineNanoseconds: Int64 = 0) -> Result {
        var image: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            ipx_jpeg_decode_eighth(raw.baseAddress, raw.count, Int32(orientation), deadlineNanoseconds, &image)
        }
        switch status {
        case 0: return image.map { .decoded(VipsImage(taking: $0)) } ?? .notApplicable
        case 2: return .pastDeadline
        case 3: return .tooManyScans
        default: return .notApplicable
        }
    }

    /// The decoded image, or nil for every other result.
    public static func image(_ bytes: [UInt8], orientation: Int = 1) -> VipsImage? {
        if case .decoded(let image) = decode(bytes, orientation: orientation) { return image }
        return nil
    }
}
