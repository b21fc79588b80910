import CVipsShim

/// `blur:SIGMA` (Gaussian) and `sharpen[:SIGMA]` (unsharp mask).
struct DetailFilterStep {
    let filter: ImageFilter

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        switch filter {
        case .blur(let sigma):
            return try image.producing { ipx_vips_gaussblur($0, $1, sigma) }
        case .sharpen(let sigma):
            // libvips sharpens in LabS; bring the result back to 8-bit sRGB (or keep greyscale).
            let sharpened = try image.producing { ipx_vips_sharpen($0, $1, sigma) }
            return try ColourspaceStep().apply(to: sharpened)
        default:
            return image
        }
    }
}
