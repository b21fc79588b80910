import CVipsShim

/// `grayscale`, `sepia`, `brightness:F`, `contrast:F` and `lighten:D`: per-pixel colour changes, alpha untouched.
struct ToneFilterStep {
    let filter: ImageFilter

    /// The classic sepia matrix (rows: output R, G, B).
    static let sepiaMatrix: [Double] = [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131]
    /// Rec. 601 luma weights in every output row: grey kept as three equal bands (`grayscale:601`).
    static let luma601Matrix: [Double] = [0.299, 0.587, 0.114, 0.299, 0.587, 0.114, 0.299, 0.587, 0.114]

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        switch filter {
        case .grayscale:
            let grey = try image.producing { ipx_vips_to_greyscale($0, $1) }
            return try grey.producing { ipx_vips_cast_uchar($0, $1) }
        case .sepia:
            return try recombined(image, Self.sepiaMatrix)
        case .grayscale601:
            return try recombined(image, Self.luma601Matrix)
        case .brightness(let factor):
            return try linear(image, scale: factor, offset: 0)
        case .contrast(let factor):
            return try linear(image, scale: factor, offset: 128 * (1 - factor))
        case .lighten(let delta):
            return try linear(image, scale: 1, offset: Double(delta))
        default:
            return image
        }
    }

    /// The sRGB bands mixed by a 3×3 matrix (rows: output R, G, B); alpha kept as is.
    private func recombined(_ image: VipsImage, _ matrix: [Double]) throws(ImagingError) -> VipsImage {
        let srgb = try ColourspaceStep().apply(to: image)
        return try matrix.withUnsafeBufferPointer { matrix throws(ImagingError) in
            try srgb.producing { ipx_vips_recomb3($0, $1, matrix.baseAddress) }
        }
    }

    /// `value * scale + offset` on the colour bands; alpha kept as is.
    private func linear(_ image: VipsImage, scale: Double, offset: Double) throws(ImagingError) -> VipsImage {
        let bands = image.bands
        let colourBands = image.hasAlpha ? bands - 1 : bands
        let scales = (0..<bands).map { $0 < colourBands ? scale : 1 }
        let offsets = (0..<bands).map { $0 < colourBands ? offset : 0 }
        return try image.producing { input, output in
            ipx_vips_linear_uchar(input, output, scales, offsets, Int32(bands))
        }
    }
}
