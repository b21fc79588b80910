import CVipsShim

extension VipsImage {
    /// Encodes the image. Metadata (EXIF, XMP, IPTC, ICC, comments) is removed first, and WebP
    /// containers are rewritten without EXIF/XMP/ICCP chunks afterwards (libvips 8.14's WebP saver
    /// writes EXIF even with `strip`); formats without alpha (JPEG) get it flattened onto `background`.
    /// - Parameters:
    ///   - quality: 1...100, nil for the format's default in `settings`.
    ///   - progressive: interlaced JPEG.
    ///   - keepJPEGMetadata: keep EXIF in JPEG output (only to build test fixtures).
    ///   - deadlineNanoseconds: when a JPEG encode on the calling thread gives up (CLOCK_MONOTONIC
    ///     nanoseconds, as ``TransformDeadline``; 0 for none). The image's kill flag stops it too.
    /// - Throws: ``ImagingError/processingFailed`` (also when the deadline passed).
    public func encoded(
        as format: OutputFormat, quality: Int? = nil, settings: EncodingSettings = EncodingSettings(),
        background: RGBAColour = .white, progressive: Bool = false, keepJPEGMetadata: Bool = false,
        deadlineNanoseconds: Int64 = 0
    ) throws(ImagingError) -> EncodedImage {
        var source = self
        if !keepJPEGMetadata {
            source = try source.producing { ipx_vips_without_metadata($0, $1) }
        }
        if format == .jpeg && hasAlpha {
            let colour = (Double(background.red), Double(background.green), Double(background.blue))
            source = try source.producing { ipx_vips_flatten($0, $1, colour.0, colour.1, colour.2) }
        }
        if format == .jpeg && !keepJPEGMetadata,
            let bytes = try source.jpegOnCallingThread(
                quality: quality ?? settings.jpegQuality, progressive: progressive, deadlineNanoseconds: deadlineNanoseconds)
        {
            return EncodedImage(bytes: bytes, format: format, width: width, height: frameHeight)
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let strip: Int32 = keepJPEGMetadata ? 0 : 1
        let status: Int32 = switch format {
        case .jpeg:
            ipx_vips_jpegsave(source.pointer, &buffer, &length, Int32(quality ?? settings.jpegQuality), progressive ? 1 : 0, strip)
        case .png: ipx_vips_pngsave(source.pointer, &buffer, &length, Int32(settings.pngCompression))
        case .webp: ipx_vips_webpsave(source.pointer, &buffer, &length, Int32(quality ?? settings.webpQuality))
        case .avif: ipx_vips_avifsave(source.pointer, &buffer, &length, Int32(quality ?? settings.avifQuality), Int32(settings.avifEffort))
        case .gif: ipx_vips_gifsave(source.pointer, &buffer, &length)
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
            guard ipx_webp_strip_metadata(buffer, length, &stripped, &strippedLength) == 0, let stripped else {
                throw .processingFailed
            }
            defer { g_free(stripped) }
            let bytes = Array(UnsafeRawBufferPointer(start: stripped, count: strippedLength))
            return EncodedImage(bytes: bytes, format: format, width: width, height: frameHeight)
        }
        let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: length))
        return EncodedImage(bytes: bytes, format: format, width: width, height: frameHeight)
    }
}

extension VipsImage {
    /// The image as JPEG, encoded by libjpeg on this thread with the pipeline evaluated here strip by strip
    /// (`jpeg_encode.c`): no hand-off to libvips' worker threads, which costs a transform thread about
    /// 30 context switches per thumbnail. Nil when the image is not 8-bit sRGB or grey (then libvips'
    /// saver converts it); the stream is the one `ipx_vips_jpegsave` writes without metadata.
    /// - Throws: ``ImagingError/processingFailed`` when evaluation fails (a decode error, the image killed
    ///   by its deadline) or the deadline passed.
    func jpegOnCallingThread(quality: Int, progressive: Bool, deadlineNanoseconds: Int64) throws(ImagingError) -> [UInt8]? {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = ipx_jpeg_encode_on_caller(pointer, Int32(quality), progressive ? 1 : 0, deadlineNanoseconds, &buffer, &length)
        switch status {
        case 0:
            guard let buffer else { throw .processingFailed }
            defer { free(buffer) }
            return Array(UnsafeRawBufferPointer(start: buffer, count: length))
        case 1:
            return nil
        default:
            _ = Vips.takeError()
            throw .processingFailed
        }
    }
}
