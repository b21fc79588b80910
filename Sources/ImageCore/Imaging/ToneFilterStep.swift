import CVipsShim

/// `grayscale`, `sepia`, `brightness:F` and `contrast:F`: per-pixel colour changes, alpha untouched.
struct ToneFilterStep {
    let filter: ImageFilter

    /// The classic sepia matrix (rows: output R, G, B).
    static let sepiaMatrix: [Double] = [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131]

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        switch filter {
        case .grayscale:
            let grey = try image.producing { ipx_vips_to_greyscale($0, $1) }
            return try grey.producing { ipx_vips_cast_uchar($0, $1) }
        case .sepia:
            let srgb = try ColourspaceStep().apply(to: image)
            return try Self.sepiaMatrix.withUnsafeBufferPointer { matrix throws(ImagingError) in
                try srgb.producing { ipx_vips_recomb3($0, $1, matrix.baseAddress) }
            }
        case .brightness(let factor):
            return try linear(image, scale: factor, offset: 0)
        case .contrast(let factor):
            return try linear(image, scale: factor, offset: 128 * (1 - factor))
        default:
            return image
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
