import CVipsShim

/// The last two steps of the commonest miss made as one: a decode reduced by Lanczos3 to its forced size
/// (``ResizeStep/lanczosShrink(width:height:header:arguments:)``) and encoded as a JPEG, each output row
/// handed to libjpeg as soon as it is made (`ipx_jpeg_encode_reduced`, `ipx_jpeg_decode_reduced_encoded`).
/// The reduced image, 3 bytes an output pixel of freshly mapped memory (25 MB at 3840x2160), is never
/// held, so the transform's reservation leaves it out (``ResizeBox``'s working-set estimates), and the
/// bytes are those of reducing, then encoding (``EncodeStep``), as before.
///
/// It applies when nothing happens between the reduce and the encoder: a JPEG (or JPEG-or-PNG) output
/// without a size target, a placeholder or a kept profile; no step after the resize but the colour step,
/// which leaves 8-bit sRGB as it is (no pad, filter, watermark or text); no crop and no anchored cover;
/// one frame; a source of 8-bit RGB (or 8-bit RGBA, whose alpha may turn out opaque) needing no colour conversion
/// and no turn. A decode that turns out otherwise (grey, a real alpha) is reduced and encoded apart.
struct ReducedJPEGEncoder {
    /// The JPEG quality.
    let quality: Int
    /// Interlaced (progressive) output.
    let progressive: Bool

    /// The encoder for a transform of `request` to `choice`, or nil when something happens between the
    /// reduce and the encoder (see the type's description). `steps` are the transform's steps after the
    /// resize (``ImageTransformer/imageSteps(for:overlay:)``).
    static func forTransform(
        request: ImageRequest, choice: FormatChoice, header: SourceHeader, box: ResizeBox, keepProfile: Bool,
        steps: [any ImagingStep], settings: EncodingSettings
    ) -> ReducedJPEGEncoder? {
        guard choice == .fixed(.jpeg) || choice == .jpegOrPNG, request.maxBytes == nil, !request.placeholder, !keepProfile
        else { return nil }
        guard steps.count == 1, steps.first is ColourspaceStep else { return nil }
        guard box.crop == nil, box.frames == 1, header.frames == 1 else { return nil }
        if case .anchored = box.coverPlan { return nil }
        guard !header.colourManaged, header.orientation <= 1 else { return nil }
        // 8-bit RGB or RGBA: one byte a band (a 16-bit grey with alpha also takes 4 bytes a pixel).
        guard header.bands == 3 || header.bands == 4, header.decodedPixelBytes == header.bands else { return nil }
        return ReducedJPEGEncoder(quality: request.quality ?? settings.jpegQuality, progressive: request.progressive)
    }

    /// `image` (a decode in memory, the source's size or its DCT-scaled size) reduced into `box` (fitted to
    /// the source) and encoded; nil when it is not reduced that way (no forced size, a reduction from
    /// ``ResizeStep/lanczosOnlyBelow`` on, a side kept) or is not 8-bit sRGB of 3 bands.
    /// - Throws: ``ImagingError/processingFailed`` when libjpeg fails, memory is short or `deadline` passed
    ///   (marked expired).
    func encoded(reducing image: VipsImage, box: ResizeBox, header: SourceHeader, deadline: TransformDeadline?)
        throws(ImagingError) -> EncodedImage?
    {
        guard let (across, down) = ResizeStep(box: box).lanczosShrink(
            width: image.width, height: image.height, header: header, arguments: box.thumbnailArguments(for: header))
        else { return nil }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        var width: Int32 = 0, height: Int32 = 0
        let status = ipx_jpeg_encode_reduced(
            image.pointer, across, down, Int32(quality), progressive ? 1 : 0, deadline?.monotonicNanoseconds ?? 0, &buffer, &length,
            &width, &height)
        return try Self.result(status, buffer, length, width, height, deadline: deadline)
    }

    /// A JPEG decoded by libjpeg at 1/`shrink`, reduced by `reduce` as its rows arrive and encoded as the
    /// reduce makes its rows (``ScaleOnLoadStep/reduceWhileDecoding(_:shrink:)``); nil when libjpeg
    /// declines the file (any damage, a grey or CMYK file: decoded another way, which decides how it is
    /// answered).
    /// - Throws: ``ImagingError/tooManyScans(limit:)``; ``ImagingError/processingFailed`` when libjpeg
    ///   fails, memory is short or `deadline` passed (marked expired).
    func encoded(
        decoding bytes: [UInt8], shrink: Int, reduce: (across: Double, down: Double), header: SourceHeader,
        deadline: TransformDeadline?
    ) throws(ImagingError) -> EncodedImage? {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        var width: Int32 = 0, height: Int32 = 0
        let decoded = ScaleOnLoadStep.decodedSize(header, shrink: shrink)
        let status = bytes.withUnsafeBytes { raw in
            ipx_jpeg_decode_reduced_encoded(
                raw.baseAddress, raw.count, Int32(shrink), Int64(header.width * header.height), deadline?.monotonicNanoseconds ?? 0,
                Int32(decoded.width), Int32(decoded.height), reduce.across, reduce.down,
                Int32(quality), progressive ? 1 : 0, &buffer, &length, &width, &height)
        }
        if status == 3 { throw .tooManyScans(limit: SourceHeader.maxJPEGScans) }
        return try Self.result(status, buffer, length, width, height, deadline: deadline)
    }

    private static func result(
        _ status: Int32, _ buffer: UnsafeMutableRawPointer?, _ length: Int, _ width: Int32, _ height: Int32,
        deadline: TransformDeadline?
    ) throws(ImagingError) -> EncodedImage? {
        guard let bytes = try VipsImage.jpegBytes(status: status, buffer: buffer, length: length, deadline: deadline) else { return nil }
        return EncodedImage(bytes: bytes, format: .jpeg, width: Int(width), height: Int(height))
    }
}
