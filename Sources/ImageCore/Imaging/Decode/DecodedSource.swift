import CVipsShim

/// A source decoded whole into memory, kept for a short time so that the other widths of a srcset are
/// resized from it instead of decoding the same bytes again (ProxyEngine's `DecodedSourceCache`).
///
/// Formats whose decoders cannot scale are kept whole (PNG, GIF and a still WebP, which libwebp decodes
/// whole whatever it scales to; ``ImageTransformer/keepsWholeDecode(of:box:format:)``). A JPEG is kept at
/// the DCT scale libjpeg decoded it at for a wide variant (``shrink``, ``ImageTransformer/keptJPEGShrink(of:box:format:)``),
/// where that decode is too large for the thread's reused buffer: the narrower widths that would decode
/// at that scale or the next one down are reduced from it instead.
///
/// Sendable by construction: the image is in memory and its pixels and metadata are never written after
/// it is made; libvips lets any number of pipelines on any threads read an image in memory (each makes
/// its own regions). It is never handed to ``TransformDeadline`` (a kill flag on it would stop every
/// transform reading it); the transforms watch their own outputs.
public final class DecodedSource: @unchecked Sendable {
    let image: VipsImage
    /// Width of the decoded image (the source's, before orientation).
    public let width: Int
    /// Height of the decoded image (the source's, before orientation).
    public let height: Int
    /// Bytes its pixels take in memory: what it holds of the transform memory budget while kept.
    public let bytes: Int
    /// It has an alpha band that is not opaque everywhere: resizes premultiply it (in floating point).
    public let hasRealAlpha: Bool
    /// The DCT scale a JPEG was decoded at (1/`shrink` of each side, rounded up, as libjpeg does); 1 for a
    /// whole decode.
    public let shrink: Int
    /// The time the decode took (wall time: libvips' loader decodes on its own threads): what keeping it
    /// saves each variant made from it (the cache keeps the decodes that save most per byte longest).
    public let decodeCost: Duration

    init(image: VipsImage, shrink: Int = 1, decodeCost: Duration = .zero) {
        self.image = image
        self.shrink = shrink
        self.decodeCost = decodeCost
        width = image.width
        height = image.height
        bytes = Int(ipx_vips_memory_bytes(image.pointer))
        hasRealAlpha = ipx_vips_has_real_alpha(image.pointer) != 0
    }

    /// Decodes `bytes` whole into memory (failing on the first decode error, as the loader path does),
    /// stopped by `deadline`: a still WebP by libwebp into memory of its own (`webp_scaled.c`, the pixels
    /// libvips' webpload gives; `header` gives its orientation), an 8-bit RGB or RGBA PNG without a profile
    /// by `png_decode.c` (libvips' pngload's pixels; not watched by `deadline`: its work is bounded by the
    /// file and ``ImageTransformer/maxWholeDecodeBytes``), anything else (or a file those decoders leave
    /// to libvips) by libvips' loader. An 8-bit alpha that is opaque everywhere (most RGBA PNGs)
    /// is dropped from the loader's decode in place: the image holds the colour bands only, and every
    /// output is the one the same picture without an alpha band gives.
    /// - Throws: ``ImagingError/undecodable``; ``ImagingError/processingFailed`` when memory for the image
    ///   could not be had.
    static func decoding(_ bytes: [UInt8], header: SourceHeader? = nil, deadline: TransformDeadline?) throws(ImagingError) -> DecodedSource {
        let started = ContinuousClock.now
        if let header, SourceFormat(sniffing: bytes) == .webp,
            let image = try ScaleOnLoadStep.decodeWebP(bytes, scale: 1, header: header, deadline: deadline, ownMemory: true)
        {
            return DecodedSource(image: image, decodeCost: ContinuousClock.now - started)
        }
        var outOfMemory = false
        let decoded: UnsafeMutablePointer<_VipsImage>? = bytes.withUnsafeBytes { raw in
            var copy: UnsafeMutablePointer<_VipsImage>?
            // The common PNG (8-bit RGB or RGBA, no profile) by libdeflate and our unfilter (`png_decode.c`:
            // libvips' pixels at a third of its CPU, bounded by the file and `maxWholeDecodeBytes`); any
            // other PNG, and anything it declines, by libvips' loader.
            switch ipx_png_decode_whole(raw.baseAddress, raw.count, ImageTransformer.maxWholeDecodeBytes, &copy) {
            case 0: break
            case 1:
                var lazy: UnsafeMutablePointer<_VipsImage>?
                guard ipx_vips_load_strict(raw.baseAddress, raw.count, 0, &lazy) == 0, let lazy else { return nil }
                let opened = VipsImage(taking: lazy)
                deadline?.watch(opened)
                // Into a mapping of its own, in huge pages (`mapped_pixels.c`): tens of MiB faulted in 2 MiB at a time.
                guard ipx_vips_copy_into_pixels(opened.pointer, &copy) == 0 else { return nil }
            default:
                outOfMemory = true
                return nil
            }
            guard let copy else { return nil }
            // An alpha opaque everywhere dropped in place (`opaque_alpha.c`): a quarter less memory held
            // and resized, the same output.
            var withoutAlpha: UnsafeMutablePointer<_VipsImage>?
            switch ipx_vips_drop_opaque_alpha(copy, &withoutAlpha) {
            case 0:
                g_object_unref(copy)
                return withoutAlpha
            case 1: return copy
            default:
                g_object_unref(copy)
                return nil
            }
        }
        guard let decoded else {
            _ = Vips.takeError()
            throw outOfMemory ? .processingFailed : .undecodable
        }
        return DecodedSource(image: VipsImage(taking: decoded), decodeCost: ContinuousClock.now - started)
    }

    /// A JPEG decoded by libjpeg at 1/`shrink` into memory of its own (``ScaleOnLoadStep/decodeScaled(_:shrink:header:deadline:reducing:ownMemory:)``),
    /// stopped by `deadline`; nil when libjpeg declines the file (libvips' loader decides how it is answered).
    /// - Throws: ``ImagingError/undecodable`` past the deadline; ``ImagingError/tooManyScans(limit:)``.
    static func decodingJPEG(
        _ bytes: [UInt8], shrink: Int, header: SourceHeader, deadline: TransformDeadline?
    ) throws(ImagingError) -> DecodedSource? {
        let started = ContinuousClock.now
        guard let image = try ScaleOnLoadStep.decodeScaled(bytes, shrink: shrink, header: header, deadline: deadline, ownMemory: true)
        else { return nil }
        return DecodedSource(image: image, shrink: shrink, decodeCost: ContinuousClock.now - started)
    }

    /// Whether this decode is of a source with `header`'s size (at its ``shrink``).
    func matches(_ header: SourceHeader) -> Bool {
        let expected = ScaleOnLoadStep.decodedSize(header, shrink: shrink)
        return width == expected.width && height == expected.height
    }
}
