import CVipsShim

/// Draws ``TextOverlay`` text over every frame with libvips' `text` (Pango): the user's text escaped
/// (never read as markup), wrapped at the frame's width less the offset, in the configured font at
/// `size` pixels, cut at the frame's edges. Its rendered size is bounded by the frame's width and
/// ``TextOverlay/maxLength`` characters of at most 200 px.
struct TextStep {
    let overlay: TextOverlay
    /// A font family installed on the machine (`overlays.font`).
    let font: String

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        let frame = (width: image.width, height: image.frameHeight)
        let placement = overlay.placement
        let wrapWidth = Int32(clamping: max(1, frame.width - placement.x))
        let colour = overlay.colour
        let rgba = [Double(colour.red), Double(colour.green), Double(colour.blue), Double(colour.alpha) * placement.opacity]
        let description = "\(font) \(overlay.size)"
        let markup = overlay.markup
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = rgba.withUnsafeBufferPointer { values in
            ipx_vips_text_layer(markup, description, wrapWidth, values.baseAddress, &output)
        }
        guard status == 0, let output else {
            _ = Vips.takeError()
            throw .processingFailed
        }
        let text = VipsImage(taking: output)
        let origin = placement.origin(frame: frame, overlay: (text.width, text.height))
        return try image.composited(with: try text.placed(on: frame, at: origin))
    }
}
