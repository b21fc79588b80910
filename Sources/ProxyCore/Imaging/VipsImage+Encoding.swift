import CVipsShim

extension VipsImage {
    /// Encodes the image; metadata (EXIF, XMP, ICC) is stripped. JPEG output flattens alpha onto white.
    /// - Parameters:
    ///   - quality: 1...100, nil for the format's default in `settings`.
    ///   - keepJPEGMetadata: keep EXIF in JPEG output (only to build test fixtures).
    /// - Throws: ``ImagingError/processingFailed``.
    public func encoded(
        as format: OutputFormat, quality: Int? = nil, settings: EncodingSettings = EncodingSettings(),
        keepJPEGMetadata: Bool = false
    ) throws(ImagingError) -> EncodedImage {
        var source = self
        if format == .jpeg && hasAlpha {
            source = try producing { ipx_vips_flatten($0, $1, 255, 255, 255) }
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status: Int32 = switch format {
        case .jpeg: ipx_vips_jpegsave(source.pointer, &buffer, &length, Int32(quality ?? settings.jpegQuality), 0, keepJPEGMetadata ? 0 : 1)
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
        let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: length))
        return EncodedImage(bytes: bytes, format: format, width: width, height: height)
    }
}
