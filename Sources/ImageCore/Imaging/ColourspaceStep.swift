import CVipsShim

/// Converts the image to 8-bit sRGB (CMYK, 16-bit, Lab and greyscale sources alike).
struct ColourspaceStep {
    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        let srgb = try image.producing { ipx_vips_to_srgb($0, $1) }
        return try srgb.producing { ipx_vips_cast_uchar($0, $1) }
    }
}
