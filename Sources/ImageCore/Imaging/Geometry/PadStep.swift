import CVipsShim

/// `fit=pad`: centres the (contained) image on a width x height canvas of the background colour.
/// A background with transparency gives the image an alpha band.
struct PadStep {
    let width: Int
    let height: Int
    let background: RGBAColour

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        guard image.width != width || image.height != height else { return image }
        var source = try ColourspaceStep().apply(to: image)
        if background.alpha < 255 && !source.hasAlpha {
            source = try source.producing { ipx_vips_add_alpha($0, $1) }
        }
        var fill = [Double(background.red), Double(background.green), Double(background.blue)]
        if source.hasAlpha { fill.append(Double(background.alpha)) }
        let canvas = (width: Int32(clamping: width), height: Int32(clamping: height))
        let bands = Int32(fill.count)
        return try fill.withUnsafeBufferPointer { values throws(ImagingError) in
            try source.producing { ipx_vips_embed_centre($0, $1, canvas.width, canvas.height, values.baseAddress, bands) }
        }
    }
}
