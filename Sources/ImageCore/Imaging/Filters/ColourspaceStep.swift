import CVipsShim

/// Converts the image to 8-bit sRGB (CMYK, 16-bit, Lab and greyscale sources alike).
struct ColourspaceStep {
    /// The image in 8-bit sRGB: the image itself when it is already (libvips' conversions would only
    /// wrap it in a pass-through that hides an image in memory from the encoder on this thread,
    /// `jpeg_encode.c`), else converted.
    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        if image.isEightBitSRGB { return image }
        let srgb = try image.producing { ipx_vips_to_srgb($0, $1) }
        return try srgb.producing { ipx_vips_cast_uchar($0, $1) }
    }
}

extension VipsImage {
    /// 8-bit sRGB, with or without alpha: what ``ColourspaceStep`` makes.
    var isEightBitSRGB: Bool {
        vips_image_get_format(pointer) == VIPS_FORMAT_UCHAR && vips_image_get_interpretation(pointer) == VIPS_INTERPRETATION_sRGB
            && (bands == 3 || bands == 4)
    }
}
