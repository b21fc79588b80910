import CVipsShim

/// Decodes and resizes in one libvips `thumbnail` call: shrink-on-load, EXIF auto-rotation,
/// and the box arithmetic of `fit` (contain, cover with a centre crop, fill by stretching).
struct ResizeStep {
    var width: Int?
    var height: Int?
    var fit: FitMode
    var enlarge: Bool

    /// libvips' "no limit" for one side of the box.
    private static let unbounded = 10_000_000

    private enum Size: Int32 { case both = 0, up = 1, down = 2, force = 3 }
    private static let centreCrop: Int32 = 1
    private static let noCrop: Int32 = -1

    init(request: ImageRequest) {
        width = request.width
        height = request.height
        fit = request.fit
        enlarge = request.enlarge
    }

    /// The libvips thumbnail arguments for a source of the given header.
    func thumbnailArguments(for header: SourceHeader) -> (width: Int, height: Int, size: Int32, crop: Int32) {
        let growth: Size = enlarge ? .both : .down
        guard let width, let height else {
            return (width ?? Self.unbounded, height ?? Self.unbounded, growth.rawValue, Self.noCrop)
        }
        switch fit {
        case .contain:
            return (width, height, growth.rawValue, Self.noCrop)
        case .cover:
            return (width, height, growth.rawValue, Self.centreCrop)
        case .fill:
            guard !enlarge else { return (width, height, Size.force.rawValue, Self.noCrop) }
            let source = header.orientedSize
            let factor = min(1, Double(source.width) / Double(width), Double(source.height) / Double(height))
            return (
                max(1, Int((Double(width) * factor).rounded())), max(1, Int((Double(height) * factor).rounded())),
                Size.force.rawValue, Self.noCrop
            )
        }
    }

    /// Decodes `bytes` into a resized, upright image.
    /// - Throws: ``ImagingError/undecodable`` when the source cannot be decoded.
    func apply(to bytes: [UInt8], header: SourceHeader) throws(ImagingError) -> VipsImage {
        let arguments = thumbnailArguments(for: header)
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            ipx_vips_thumbnail_buffer(
                raw.baseAddress, raw.count, &output, Int32(arguments.width), Int32(arguments.height),
                arguments.size, arguments.crop, 1)
        }
        guard status == 0, let output else {
            _ = Vips.takeError()
            throw .undecodable
        }
        // Materialise now: decode errors surface here as 422, not later in the encoder.
        let lazy = VipsImage(taking: output)
        return try lazy.producing { ipx_vips_copy_memory($0, $1) }
    }
}
