import CVipsShim

/// `rotate:90|180|270`, `flip` (upside down), `flop` (mirror) and `trim` (remove a uniform border).
struct GeometryFilterStep {
    let filter: ImageFilter

    /// How different from the border colour a pixel must be to count as content.
    static let trimThreshold = 10.0

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        switch filter {
        case .rotate(let degrees):
            return try image.producing { ipx_vips_rotate($0, $1, Int32(degrees / 90)) }
        case .flip:
            return try image.producing { ipx_vips_mirror($0, $1, 0) }
        case .flop:
            return try image.producing { ipx_vips_mirror($0, $1, 1) }
        case .trim:
            var left: Int32 = 0, top: Int32 = 0, width: Int32 = 0, height: Int32 = 0
            guard ipx_vips_find_trim(image.pointer, Self.trimThreshold, &left, &top, &width, &height) == 0 else {
                _ = Vips.takeError()
                throw .processingFailed
            }
            // A uniform image has nothing to keep: leave it whole.
            guard width > 0, height > 0, Int(width) != image.width || Int(height) != image.height else { return image }
            return try image.producing { ipx_vips_extract_area($0, $1, left, top, width, height) }
        default:
            return image
        }
    }
}
