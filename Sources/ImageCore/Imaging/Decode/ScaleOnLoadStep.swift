import CVipsShim

/// The first step of a transform without a crop: chooses the decoder and how far it scales while it
/// decodes. A progressive JPEG whose 1/8 covers the output is made from its DC scans alone
/// (``JPEGEighthDecoder``); another JPEG that may shrink is decoded by libjpeg at 1/2, 1/4 or 1/8 into
/// memory on this thread (`jpeg_scaled.c`); a still WebP is decoded by libwebp into memory on this thread
/// (`webp_scaled.c`) at the scale that keeps three times the output, whole within 3x
/// (``ResizeBox/webpScale(for:)``); anything else, or a JPEG those decoders decline, is left
/// to libvips' loader inside ``ResizeStep`` (with its own shrink-on-load).
struct ScaleOnLoadStep {
    /// The box, fitted to the source (``ResizeBox/coverBoxFitted(to:)``).
    let box: ResizeBox

    /// What the step hands the resize.
    enum Loaded {
        /// The source, decoded and scaled, in memory.
        case decoded(VipsImage)
        /// The source decoded by libjpeg and reduced to the forced output size as its rows arrived
        /// (``reduceWhileDecoding(_:shrink:)``): what ``ResizeStep`` would have reduced the decode to.
        case reduced(VipsImage)
        /// Left to libvips' loader, with this JPEG shrink (1: none, or not a JPEG).
        case toLoader(shrink: Int)
        /// A still WebP left to libwebp, decoded at this scale (0 < scale < 1).
        case webp(scale: Double)
    }

    /// How the DC-only decoder, or libjpeg's scaled decode, was tried before this step (the transform may
    /// try either first, under a smaller memory reservation).
    enum EighthAttempt {
        /// Not tried: this step tries it where it may help.
        case untried
        /// Tried and declined: straight to libjpeg or libvips.
        case declined
        /// libjpeg's scaled decode was tried first (``ImageTransformer``) and declined: straight to libvips'
        /// loader.
        case scaledDeclined
        /// The 1/8 image, or libjpeg's scaled decode.
        case decoded(VipsImage)
        /// libjpeg's scaled decode, reduced to the output as it was decoded (``Loaded/reduced(_:)``).
        case reduced(VipsImage)
    }

    /// The source decoded as far as this step does it.
    /// - Throws: ``ImagingError/tooManyScans(limit:)``; ``ImagingError/undecodable`` past the deadline.
    func apply(
        to bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline?, eighth: EighthAttempt = .untried
    ) throws(ImagingError) -> Loaded {
        let format = SourceFormat(sniffing: bytes)
        if format == .svg { return .decoded(try Self.renderSVG(bytes, scale: box.svgScale(for: header), deadline: deadline)) }
        if format == .webp, box.frames == 1 {
            if let image = try Self.decodeWebP(bytes, scale: box.webpScale(for: header), header: header, deadline: deadline) {
                return .decoded(image)
            }
            let scale = box.webpScale(for: header)
            return scale < 1 ? .webp(scale: scale) : .toLoader(shrink: 1)
        }
        guard format == .jpeg else { return .toLoader(shrink: 1) }
        let shrink = box.jpegShrink(for: header)
        switch eighth {
        case .decoded(let image):
            return .decoded(image)
        case .reduced(let image):
            return .reduced(image)
        case .scaledDeclined:
            return .toLoader(shrink: shrink)
        case .untried where box.ownDecoderShrink(header) != nil:
            // Progressive JPEGs: the DC scans alone make the 1/8 image, and most of the file (the AC
            // scans, whose Huffman decoding is most of the work) is never read. Used whenever 1/8 still
            // covers the output, as Pillow's draft mode does: without AC terms there is nothing finer.
            // Baseline 4:4:4 and grey JPEGs: the DC coefficients of their one scan, the AC ones stepped
            // over without libjpeg's IDCT, where libjpeg would decode at 1/8 too.
            // Baseline 4:4:4 and grey JPEGs at 1/4: the DC and first AC terms of each block.
            if let image = try Self.decodeEighth(bytes, header: header, box: box, deadline: deadline) { return .decoded(image) }
        case .untried, .declined:
            break
        }
        guard decodesJPEGInMemory(header) else { return .toLoader(shrink: 1) }
        // Baseline (and other) JPEGs: libjpeg's scaled decode straight into memory on this thread.
        return try decodeJPEG(bytes, shrink: shrink, header: header, deadline: deadline) ?? .toLoader(shrink: shrink)
    }

    /// libjpeg's decode at 1/`shrink` on this thread (``decodeScaled(_:shrink:header:deadline:reducing:)``),
    /// reduced to the output as its rows arrive where the pool thread's reduce would take it
    /// (``reduceWhileDecoding(_:shrink:)``); nil when libvips' loader should take the file.
    /// - Throws: ``ImagingError/undecodable`` past the deadline; ``ImagingError/tooManyScans(limit:)``.
    func decodeJPEG(_ bytes: [UInt8], shrink: Int, header: SourceHeader, deadline: TransformDeadline?) throws(ImagingError) -> Loaded? {
        let reduce = reduceWhileDecoding(header, shrink: shrink)
        guard let image = try Self.decodeScaled(bytes, shrink: shrink, header: header, deadline: deadline, reducing: reduce) else {
            return nil
        }
        return reduce == nil ? .decoded(image) : .reduced(image)
    }

    /// The shrinks across and down by which Lanczos3 alone takes libjpeg's decode at 1/`shrink` to the
    /// forced output size (``ResizeStep/lanczosShrink(width:height:header:arguments:)`` of the decode's
    /// size, which libjpeg rounds up), or nil when the decode is not reduced that way. Such a decode is
    /// reduced as its rows arrive and never held whole (`ipx_jpeg_decode_reduced`): the same bytes, with
    /// a few rows in memory instead of the decode (``ResizeBox/estimatedBytesDecodingJPEGInMemory(for:encoderCoefficientBytes:)``).
    ///
    /// Only a decode larger than the transform thread's reused buffer (`IPX_THREAD_BUFFER_MAX_BYTES`, 8
    /// MiB) is reduced this way, since it would otherwise be freshly mapped and faulted in; a smaller one
    /// (a thumbnail's 1/8 or 1/4 decode) is decoded into that buffer, whose pages are already in, and
    /// reduced afterwards as before: streaming it gained nothing measurable (`floor`, `bench/RESULTS.md`
    /// 2026-11-27 (a JPEG reduced as libjpeg's rows arrive)), and it keeps the thumbnail path that earlier measurements showed.
    func reduceWhileDecoding(_ header: SourceHeader, shrink: Int) -> (across: Double, down: Double)? {
        let (width, height) = Self.decodedSize(header, shrink: shrink)
        guard 3 * width * height > Int(IPX_THREAD_BUFFER_MAX_BYTES) else { return nil }
        return ResizeStep(box: box).lanczosShrinkOfBothSides(
            width: width, height: height, header: header, arguments: box.thumbnailArguments(for: header)
        ).map { (across: $0.0, down: $0.1) }
    }

    /// The size libjpeg decodes a JPEG of `header` at 1/`shrink` (each side rounded up).
    static func decodedSize(_ header: SourceHeader, shrink: Int) -> (width: Int, height: Int) {
        ((header.width + shrink - 1) / shrink, (header.height + shrink - 1) / shrink)
    }

    /// Whether a JPEG the DC decoder does not take is decoded by libjpeg here: when it shrinks on load;
    /// unshrunk, when the reduce to a forced size takes its rows as they arrive
    /// (``reduceWhileDecoding(_:shrink:)``: the decode is never held, whatever its size); and, unshrunk
    /// and not large, when it is reduced to a forced size otherwise or is the variant as it is
    /// (``ResizeBox/wholeDecodeIsTheVariant(for:)``). Otherwise libvips' loader streams it through
    /// `thumbnail`.
    func decodesJPEGInMemory(_ header: SourceHeader) -> Bool {
        let shrink = box.jpegShrink(for: header)
        if shrink > 1 || reduceWhileDecoding(header, shrink: shrink) != nil { return true }
        return (box.thumbnailArguments(for: header).size == ResizeBox.Size.force.rawValue || box.wholeDecodeIsTheVariant(for: header))
            && header.width * header.height * 3 <= Self.largestUnshrunkDecodeBytes
    }

    /// The largest JPEG decoded here whole without a shrink (its RGB pixels): 64 MiB, a 22 MP photograph.
    static let largestUnshrunkDecodeBytes = 64 << 20

    /// A JPEG's image from our own decoder (``JPEGEighthDecoder``) at the scale `box` (fitted to the
    /// source) picks (``ResizeBox/ownDecoderShrink(_:)``), upright and with its profile, or nil when the
    /// box picks none or the decoder declines the file (libjpeg or libvips then decode it).
    /// - Throws: ``ImagingError/tooManyScans(limit:)``; ``ImagingError/undecodable`` past the deadline.
    static func decodeEighth(_ bytes: [UInt8], header: SourceHeader, box: ResizeBox, deadline: TransformDeadline?) throws(ImagingError) -> VipsImage? {
        guard let shrink = box.ownDecoderShrink(header) else { return nil }
        switch JPEGEighthDecoder.decode(
            bytes, shrink: shrink, orientation: header.orientation, deadlineNanoseconds: deadline?.monotonicNanoseconds ?? 0)
        {
        case .decoded(let image): return image
        case .notApplicable: return nil
        case .tooManyScans: throw .tooManyScans(limit: SourceHeader.maxJPEGScans)
        case .pastDeadline:
            deadline?.expireNow()
            throw .undecodable
        }
    }

    /// An SVG drawn by librsvg at `scale` times its declared size (``ResizeBox/svgScale(for:)``), into memory:
    /// libvips renders it in tiles, and `deadline` stops it between them.
    /// - Throws: ``ImagingError/undecodable`` when librsvg fails (or its own limits stop it: a million
    ///   elements loaded, half a million referenced), or past the deadline.
    static func renderSVG(_ bytes: [UInt8], scale: Double, deadline: TransformDeadline?) throws(ImagingError) -> VipsImage {
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in ipx_vips_svgload_scaled(raw.baseAddress, raw.count, scale, &output) }
        guard status == 0, let output else {
            _ = Vips.takeError()
            throw .undecodable
        }
        let lazy = VipsImage(taking: output)
        deadline?.watch(lazy)
        do {
            return try lazy.producing { ipx_vips_copy_memory($0, $1) }
        } catch {
            throw .undecodable
        }
    }

    /// A still WebP decoded by libwebp at `scale` into one memory image on this thread (`webp_scaled.c`;
    /// the pixels libvips' webpload gives at that scale), with its ICC profile and `header`'s orientation,
    /// or nil when libvips' loader should take it (an animation, a frame that does not fill the canvas).
    /// `ownMemory` (at scale 1 only): into memory of the image's own rather than the thread's reused
    /// buffer, for a whole decode kept after the transform (``DecodedSource``).
    /// - Throws: ``ImagingError/undecodable`` when libwebp rejects the data or it ends early, or when the
    ///   deadline passed (the deadline is expired first); ``ImagingError/processingFailed`` when memory
    ///   for the image could not be had.
    static func decodeWebP(
        _ bytes: [UInt8], scale: Double, header: SourceHeader, deadline: TransformDeadline?, ownMemory: Bool = false
    ) throws(ImagingError) -> VipsImage? {
        var image: UnsafeMutablePointer<_VipsImage>?
        let orientation = Int32(header.orientation)
        let pixels = Int64(header.width * header.height)
        let deadlineNanoseconds = deadline?.monotonicNanoseconds ?? 0
        let status = bytes.withUnsafeBytes { raw in
            ownMemory && scale == 1
                ? ipx_webp_decode_whole(raw.baseAddress, raw.count, orientation, pixels, deadlineNanoseconds, &image)
                : ipx_webp_decode_scaled(raw.baseAddress, raw.count, scale, orientation, pixels, deadlineNanoseconds, &image)
        }
        switch status {
        case 0: return image.map { VipsImage(taking: $0) }
        case 1: return nil
        case 2:
            deadline?.expireNow()
            throw .undecodable
        case 4:
            throw .undecodable
        default:
            _ = Vips.takeError()
            throw .processingFailed
        }
    }

    /// A JPEG decoded by libjpeg at 1/`shrink` into memory on this thread (`jpeg_scaled.c`), or nil when
    /// libvips' loader should take it (a colour space or precision it does not convert, a frame larger
    /// than `header` says, any warning or error: libvips then decides how the file is answered, for every
    /// variant alike). The image carries the source's ICC profile and `header`'s orientation. With
    /// `reducing`, the decode is reduced by Lanczos3 by those shrinks as its rows arrive
    /// (``reduceWhileDecoding(_:shrink:)``): the image is the reduce's. `ownMemory` (without `reducing`):
    /// into memory of the image's own rather than the thread's reused buffer, for a decode kept after the
    /// transform (``DecodedSource``).
    /// - Throws: ``ImagingError/undecodable`` when the deadline passed (the deadline is expired first);
    ///   ``ImagingError/tooManyScans(limit:)`` when libjpeg reached more scans than the limit.
    static func decodeScaled(
        _ bytes: [UInt8], shrink: Int, header: SourceHeader, deadline: TransformDeadline?,
        reducing: (across: Double, down: Double)? = nil, ownMemory: Bool = false
    ) throws(ImagingError) -> VipsImage? {
        var image: UnsafeMutablePointer<_VipsImage>?
        let orientation = Int32(header.orientation), pixels = Int64(header.width * header.height)
        let deadlineNanoseconds = deadline?.monotonicNanoseconds ?? 0
        let decoded = Self.decodedSize(header, shrink: shrink)
        let status = bytes.withUnsafeBytes { raw in
            guard let reducing else {
                return ownMemory
                    ? ipx_jpeg_decode_scaled_owned(
                        raw.baseAddress, raw.count, Int32(shrink), orientation, pixels, deadlineNanoseconds, &image)
                    : ipx_jpeg_decode_scaled(
                        raw.baseAddress, raw.count, Int32(shrink), orientation, pixels, deadlineNanoseconds, &image)
            }
            return ipx_jpeg_decode_reduced(
                raw.baseAddress, raw.count, Int32(shrink), orientation, pixels, deadlineNanoseconds,
                Int32(decoded.width), Int32(decoded.height),
                reducing.across, reducing.down, &image)
        }
        switch status {
        case 0: return image.map { VipsImage(taking: $0) }
        case 2:
            deadline?.expireNow()
            throw .undecodable
        case 3:
            throw .tooManyScans(limit: SourceHeader.maxJPEGScans)
        default:
            _ = Vips.takeError()
            return nil
        }
    }
}
