import CVipsShim

/// Applies one ``ImageFilter`` to a resized image.
struct FilterStep {
    let filter: ImageFilter

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        switch filter {
        case .blur(let sigma):
            return try image.producing { ipx_vips_gaussblur($0, $1, sigma) }
        case .sharpen(let sigma):
            let sharpened = try image.producing { ipx_vips_sharpen($0, $1, sigma) }
            return try ColourspaceStep().apply(to: sharpened)
        case .grayscale:
            let grey = try image.producing { ipx_vips_to_greyscale($0, $1) }
            return try grey.producing { ipx_vips_cast_uchar($0, $1) }
        }
    }
}
