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
    /// - Throws: ``ImagingError/processingFailed``.
    public func encoded(
        as format: OutputFormat, quality: Int? = nil, settings: EncodingSettings = EncodingSettings(),
        background: RGBAColour = .white, progressive: Bool = false, keepJPEGMetadata: Bool = false, keepProfile: Bool = false
    ) throws(ImagingError) -> EncodedImage {
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
}
