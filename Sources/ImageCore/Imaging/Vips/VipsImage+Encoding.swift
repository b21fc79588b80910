import CVipsShim

extension VipsImage {
    /// Encodes the image. Metadata (EXIF, XMP, IPTC, ICC, comments) is removed first, and WebP
    /// containers are rewritten without EXIF/XMP/ICCP chunks afterwards (libvips 8.14's WebP saver
    /// writes EXIF even with `strip`); formats without alpha (JPEG) get it flattened onto `background`.
    /// - Parameters:
    ///   - quality: 1...100, nil for the format's default in `settings`.
    ///   - progressive: interlaced JPEG.
    ///   - keepJPEGMetadata: keep EXIF in JPEG output (only to build test fixtures).
    ///   - keepProfile: keep the ICC profile (`colour=keep`), the only metadata kept.
    ///   - deadline: stops a JPEG encode made on this thread (``jpegOnThisThread(quality:progressive:deadline:)``).
    /// - Throws: ``ImagingError/processingFailed``.
    public func encoded(
        as format: OutputFormat, quality: Int? = nil, settings: EncodingSettings = EncodingSettings(),
        background: RGBAColour = .white, progressive: Bool = false, keepJPEGMetadata: Bool = false, keepProfile: Bool = false
    ) throws(ImagingError) -> EncodedImage {
        try encoded(
            as: format, quality: quality, settings: settings, background: background, progressive: progressive,
            keepJPEGMetadata: keepJPEGMetadata, keepProfile: keepProfile, deadline: nil)
    }

    func encoded(
        as format: OutputFormat, quality: Int?, settings: EncodingSettings, background: RGBAColour, progressive: Bool,
        keepJPEGMetadata: Bool, keepProfile: Bool, deadline: TransformDeadline?
    ) throws(ImagingError) -> EncodedImage {
        if format == .jpeg, !keepJPEGMetadata, !keepProfile,
            let bytes = try jpegOnThisThread(quality: quality ?? settings.jpegQuality, progressive: progressive, deadline: deadline)
        {
            return EncodedImage(bytes: bytes, format: format, width: width, height: frameHeight)
        }
        var source = self
        if !keepJPEGMetadata {
            let keepICC: Int32 = keepProfile ? 1 : 0
            source = try source.producing { ipx_vips_without_metadata_but_icc($0, $1, keepICC) }
        }
        if format == .jpeg && hasAlpha {
            let colour = (Double(background.red), Double(background.green), Double(background.blue))
            source = try source.producing { ipx_vips_flatten($0, $1, colour.0, colour.1, colour.2) }
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        // With only the profile left, the savers write it (and nothing else) when they do not strip.
        let strip: Int32 = keepJPEGMetadata || keepProfile ? 0 : 1
        let status: Int32 = switch format {
        case .jpeg:
            ipx_vips_jpegsave(source.pointer, &buffer, &length, Int32(quality ?? settings.jpegQuality), progressive ? 1 : 0, strip)
        case .png: ipx_vips_pngsave(source.pointer, &buffer, &length, Int32(settings.pngCompression), strip)
        case .webp: ipx_vips_webpsave(source.pointer, &buffer, &length, Int32(quality ?? settings.webpQuality), strip)
        case .avif:
            ipx_vips_avifsave(
                source.pointer, &buffer, &length, Int32(quality ?? settings.avifQuality), Int32(settings.avifEffort), strip)
        case .gif: ipx_vips_gifsave(source.pointer, &buffer, &length)
        case .jxl:
            ipx_vips_jxlsave(source.pointer, &buffer, &length, Int32(quality ?? settings.jxlQuality), Int32(settings.jxlEffort), strip)
        }
        guard status == 0, let buffer else {
            _ = Vips.takeError()
            throw .processingFailed
        }
        defer { g_free(buffer) }
        if format == .webp && !keepJPEGMetadata {
            // libvips 8.14 writes an EXIF chunk into every WebP; the container is rewritten without it.
            var stripped: UnsafeMutableRawPointer?
            var strippedLength = 0
            guard ipx_webp_strip_metadata_but_icc(buffer, length, keepProfile ? 1 : 0, &stripped, &strippedLength) == 0,
                let stripped
            else {
                throw .processingFailed
            }
            defer { g_free(stripped) }
            let bytes = Array(UnsafeRawBufferPointer(start: stripped, count: strippedLength))
            return EncodedImage(bytes: bytes, format: format, width: width, height: frameHeight)
        }
        var bytes = Array(UnsafeRawBufferPointer(start: buffer, count: length))
        if format == .jpeg && keepProfile && !keepJPEGMetadata { bytes = JPEGApplicationSegments.removingAPP1(bytes) }
        return EncodedImage(bytes: bytes, format: format, width: width, height: frameHeight)
    }

    /// The JPEG of an opaque image in memory, made by libjpeg on this thread (`jpeg_encode.c`): the bytes
    /// libvips' saver writes with metadata stripped, without its hand-off to worker threads. Nil when the
    /// image is not one it takes (not in memory, alpha, not 8-bit sRGB or grey): libvips encodes it.
    /// - Throws: ``ImagingError/processingFailed`` when libjpeg fails or `deadline` passes (marked expired).
    private func jpegOnThisThread(quality: Int, progressive: Bool, deadline: TransformDeadline?) throws(ImagingError) -> [UInt8]? {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = ipx_jpeg_encode_memory(
            pointer, Int32(quality), progressive ? 1 : 0, deadline?.monotonicNanoseconds ?? 0, &buffer, &length)
        return try Self.jpegBytes(status: status, buffer: buffer, length: length, deadline: deadline)
    }

    /// What an encode by libjpeg on this thread returned (`jpeg_encode.c`'s statuses): the JPEG's bytes
    /// (the buffer freed), nil when the encoder did not take the image (1).
    /// - Throws: ``ImagingError/processingFailed`` when libjpeg failed, memory was short or `deadline`
    ///   passed (2: marked expired).
    static func jpegBytes(
        status: Int32, buffer: UnsafeMutableRawPointer?, length: Int, deadline: TransformDeadline?
    ) throws(ImagingError) -> [UInt8]? {
        switch status {
        case 0:
            guard let buffer else { throw .processingFailed }
            defer { g_free(buffer) }
            return Array(UnsafeRawBufferPointer(start: buffer, count: length))
        case 1:
            _ = Vips.takeError()
            return nil
        case 2:
            deadline?.expireNow()
            throw .processingFailed
        default:
            throw .processingFailed
        }
    }
}
