extension SourceHeader {
    /// The checks every source passes before any pixel is decoded, for `/img` and `/info` alike: a
    /// sniffed format, at most `maxSourceFrames` frames and `IPX_JPEG_MAX_SCANS` scans (from the
    /// container), at most `maxSourcePixels` pixels (width x height x frames, from the header).
    /// - Throws: ``ImagingError`` (415 unsupported, 422 undecodable or over a limit).
    /// JPEG XL sources pass only when `allowJXL` (`image.allowJXLInput`), SVG sources only when `allowSVG`
    /// (`image.allowSVGInput`); an SVG's declared size is not its pixels (the plan bounds the pixels it is
    /// drawn at, ``ResizeBox/svgRenderPixels(for:)``).
    static func checked(
        _ source: [UInt8], maxSourcePixels: Int, maxSourceFrames: Int, allowJXL: Bool = false, allowSVG: Bool = false
    ) throws(ImagingError) -> (SourceFormat, SourceHeader) {
        guard let format = SourceFormat(sniffing: source) else { throw .unsupportedFormat }
        if format == .jxl && !allowJXL { throw .formatDisabled(format: "JPEG XL", key: "image.allowJXLInput") }
        if format == .svg && !allowSVG { throw .formatDisabled(format: "SVG", key: "image.allowSVGInput") }
        let header = try SourceHeader(reading: source, maxFrames: maxSourceFrames)
        guard format == .svg || header.totalPixels <= maxSourcePixels else { throw .tooManyPixels(limit: maxSourcePixels) }
        return (format, header)
    }
}
