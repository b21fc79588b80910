import CVipsShim

/// Decodes progressive JPEGs at 1/8 scale from their DC scans alone (`jpeg_dc.c`, our own entropy
/// decoder): the AC scans, most of such a file, are stepped over unread, and no coefficient buffer is
/// allocated. ``ResizeStep`` uses it whenever the output needs no more than 1/8 of the source. The
/// result equals libjpeg's own 1/8 decode, except that 4:2:0 chroma is repeated rather than scaled
/// with its few AC terms (colour edges a little softer before the final reduce).
public enum JPEGEighthDecoder {
    /// The 1/8-scale image with the source's ICC profile and `orientation` attached, or nil when the
    /// bytes are not a progressive YCbCr or grey JPEG whose DC scans are all present.
    public static func decode(_ bytes: [UInt8], orientation: Int = 1) -> VipsImage? {
        var image: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            ipx_jpeg_decode_eighth(raw.baseAddress, raw.count, Int32(orientation), &image)
        }
        guard status == 0, let image else { return nil }
        return VipsImage(taking: image)
    }
}
