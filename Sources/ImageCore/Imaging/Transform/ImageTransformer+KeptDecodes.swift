import CVipsShim

/// Whole decodes: when a source is decoded whole (PNG, kept JPEG decodes) and when a kept decode serves the next variants.
extension ImageTransformer {
    /// What a whole decode of a PNG by `png_decode.c` holds beside the image (0 for other formats): the
    /// image data copied into one block (at most the file's `sourceBytes`) and the rows' filter bytes.
    static func wholePNGDecoderBytes(sourceBytes: Int, header: SourceHeader, format: SourceFormat?) -> Int {
        format == .png ? sourceBytes + header.height : 0
    }

    /// The largest decode held whole in memory: 64 MiB (16 MP of 8-bit RGBA). A larger PNG or GIF (up to
    /// `maxSourcePixels`; 16-bit, up to 400 MB decoded) is resized by libvips' `thumbnail` as it is
    /// decoded, as before, and never kept.
    static let maxWholeDecodeBytes = 64 << 20

    /// Whether `bytes` are of a format a decode may be kept of (PNG, GIF, WebP whole; JPEG at a DCT
    /// scale), from their first bytes.
    public static func keepsDecodes(of bytes: [UInt8]) -> Bool {
        switch SourceFormat(sniffing: bytes) {
        case .png, .gif, .webp, .jpeg: true
        default: false
        }
    }

    /// The largest JPEG decode kept (3 bytes a pixel): 32 MiB, e.g. 1/1 of a 3840x2160 source or 1/2 of a
    /// 5120x2880 one. Larger ones (1/1 of a 5 K source, 44 MB) would push a few smaller ones out of
    /// ``DecodedSource``'s cache for the few widths only they serve.
    static let maxKeptJPEGDecodeBytes = 32 << 20

    /// Whether a JPEG's decode at 1/`shrink` is one to keep: a progressive (or multi-scan) file of 8-bit
    /// colour (3 bands), decoded to more than the thread's reused buffer (`IPX_THREAD_BUFFER_MAX_BYTES`, 8
    /// MiB: a thumbnail's decode is not kept, and its source's bytes are not hashed for it) and at most
    /// ``maxKeptJPEGDecodeBytes``. libjpeg reads every scan of such a
    /// file into its whole-image coefficient buffer whatever the scale, so each width decoded again costs
    /// most of a whole decode (200 ms for a 5120x2880 wallpaper, against 20 ms to reduce a kept 1/2 decode
    /// to 1080 px). A baseline file's DCT-scaled decode stays cheaper than holding and reducing a larger
    /// decode (`bench/RESULTS.md`, 2026-11-27 (progressive JPEGs keep their decode for a srcset): keeping baseline decodes too cost the web-like srcset 3%).
    static func keepsJPEGDecode(of header: SourceHeader, shrink: Int) -> Bool {
        guard header.bands == 3, header.frames == 1, header.jpegCoefficientBytes > 0 else { return false }
        let size = ScaleOnLoadStep.decodedSize(header, shrink: shrink)
        let bytes = 3 * size.width * size.height
        return bytes > Int(IPX_THREAD_BUFFER_MAX_BYTES) && bytes <= Self.maxKeptJPEGDecodeBytes
    }

    /// Whether the variant is made from a decode of `width` x `height` (the source's axes) in memory by the
    /// Lanczos3 reduce alone (``ResizeStep/lanczosShrink(width:height:header:arguments:)``), or is that
    /// decode as it is: what a kept JPEG decode is used for.
    private func variantIsReduced(fromWidth width: Int, height: Int, header: SourceHeader, box: ResizeBox) -> Bool {
        let fitted = box.coverBoxFitted(to: header)
        let arguments = fitted.thumbnailArguments(for: header)
        return ResizeStep(box: fitted).lanczosShrink(width: width, height: height, header: header, arguments: arguments) != nil
            || ResizeBox.thumbnailKeepsTheSize(width: width, height: height, arguments: arguments)
    }

    /// The DCT scale at which this JPEG variant's own decode is held whole and kept for the source's next
    /// widths (``DecodedSource``), or nil when it is decoded as before: a variant libjpeg decodes into
    /// memory (``ResizeBox/mayDecodeJPEGInMemory(for:format:)``), reduced from that decode by Lanczos3
    /// alone or equal to it, whose decode ``keepsJPEGDecode(of:shrink:)``. Such a decode would otherwise be
    /// reduced as its rows arrive (``ScaleOnLoadStep/reduceWhileDecoding(_:shrink:)``); held, it costs
    /// the same but for its pages.
    func keptJPEGShrink(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Int? {
        guard format == .jpeg, box.crop == nil, box.frames == 1, box.mayDecodeJPEGInMemory(for: header, format: format) else { return nil }
        let shrink = box.coverBoxFitted(to: header).jpegShrink(for: header)
        guard Self.keepsJPEGDecode(of: header, shrink: shrink) else { return nil }
        let size = ScaleOnLoadStep.decodedSize(header, shrink: shrink)
        return variantIsReduced(fromWidth: size.width, height: size.height, header: header, box: box) ? shrink : nil
    }

    /// Whether this JPEG variant is made from `decoded`, a decode of the same bytes kept by an earlier
    /// variant, instead of decoding: its own decode would be at the kept decode's scale or the next one
    /// down (1/4 from a kept 1/2: at most four times the pixels to reduce, which costs less than libjpeg's
    /// Huffman decoding of the whole file again), and the variant is reduced from the kept decode by
    /// Lanczos3 alone. A larger decode, reduced by Lanczos3, is at least as close to the source as a smaller
    /// DCT-scaled one (`KeptJPEGDecodeTests`); the bytes differ from the variant's own decode's.
    func usesKeptJPEGDecode(_ decoded: DecodedSource, header: SourceHeader, box: ResizeBox) -> Bool {
        guard box.crop == nil, box.frames == 1, decoded.matches(header), box.mayDecodeJPEGInMemory(for: header, format: .jpeg)
        else { return false }
        let own = box.coverBoxFitted(to: header).jpegShrink(for: header)
        guard decoded.shrink <= own, 2 * decoded.shrink >= own else { return false }
        return variantIsReduced(fromWidth: decoded.width, height: decoded.height, header: header, box: box)
    }

    /// Whether the variant `plan` makes of `source` may use a kept decode of it, or keep its own
    /// (``looksUpKeptDecode(of:box:format:)``).
    public func looksUpKeptDecode(for plan: TransformPlan, source: [UInt8]) -> Bool {
        looksUpKeptDecode(of: plan.header, box: plan.box, format: SourceFormat(sniffing: source))
    }

    /// Whether a variant may use a kept decode of its source, or keep its own: the pool then looks one up
    /// under the source's identity (whose bytes are hashed only then). PNG, GIF and WebP where
    /// ``keepsWholeDecode(of:box:format:)``; a JPEG whose own decode, or the next larger one, is one to keep.
    func looksUpKeptDecode(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Bool {
        if format == .jpeg {
            guard box.crop == nil, box.frames == 1, box.mayDecodeJPEGInMemory(for: header, format: format) else { return false }
            let own = box.coverBoxFitted(to: header).jpegShrink(for: header)
            return Self.keepsJPEGDecode(of: header, shrink: own) || (own > 1 && Self.keepsJPEGDecode(of: header, shrink: own / 2))
        }
        return keepsWholeDecode(of: header, box: box, format: format)
    }

    /// Whether a variant that finds no kept decode decodes the source whole (and keeps it) rather than
    /// scaling on load: PNG and GIF below ``ResizeStep/lanczosOnlyBelow`` (from 7x on the resize is
    /// `thumbnail`'s either way, and decoding whole first costs more than `thumbnail` reading the file as
    /// it decodes); a still WebP where libwebp decodes it whole anyway (``ResizeBox/webpScale(for:)`` is 1,
    /// a reduction within 3x), whose smaller variants are cheaper resized from the kept decode (a WebP
    /// decode costs the same at any scale) than decoded again.
    func makesWholeDecode(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Bool {
        let fitted = box.coverBoxFitted(to: header)
        if format == .webp { return fitted.webpScale(for: header) >= 1 }
        return fitted.reduction(for: header) < ResizeStep.lanczosOnlyBelow
    }

    /// Whether a variant of this source is made from a whole decode of it in memory (``DecodedSource``,
    /// kept for the next variants): a still image of a format whose decoder cannot scale at all (PNG,
    /// GIF: the loader decodes them whole anyway; WebP: libwebp decodes the whole frame at any scale) of
    /// at most ``maxWholeDecodeBytes`` decoded, with no crop rectangle and one frame loaded. A kept decode
    /// is used at any reduction; a new one is made where ``makesWholeDecode(of:box:format:)`` says. In
    /// memory an opaque alpha is found and not premultiplied, and the resize is Lanczos3 alone
    /// (``ResizeStep/apply(toWhole:header:deadline:)``). A JPEG is not decoded whole for this: its
    /// DCT-scaled decode costs less than resizing a whole decode (a progressive one keeps its scaled
    /// decode instead, ``keptJPEGShrink(of:box:format:)``); HEIC, AVIF and JPEG XL decoders hold more
    /// memory than their estimates allow for a decode kept in memory. Those are decoded per variant.
    func keepsWholeDecode(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Bool {
        guard box.crop == nil, box.frames == 1, header.frames == 1 else { return false }
        guard header.decodedPixelBytes * header.width * header.height <= Self.maxWholeDecodeBytes else { return false }
        return format == .png || format == .gif || format == .webp
    }
}
