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
        // Blanks and line breaks alone draw nothing (and Pango renders no image for them).
        guard overlay.text.unicodeScalars.contains(where: { !$0.properties.isWhitespace }) else { return image }
        let frame = (width: image.width, height: image.frameHeight)
        let placement = overlay.placement
        let wrapWidth = Int32(clamping: max(1, frame.width - placement.x))
        let colour = overlay.colour
        let rgba = [Double(colour.red), Double(colour.green), Double(colour.blue), Double(colour.alpha) * placement.opacity]
        let description = "\(font) \(overlay.size)"
        // Lines below the frame are cut off anyway: they are not rendered (a text of 100 line breaks at
        // 200 px would otherwise make a 24000 px tall mask). Wrapped lines stay bounded by the width.
        var visible = overlay
        let lines = overlay.text.split(separator: "\n", omittingEmptySubsequences: false)
        let fitting = frame.height / max(1, overlay.size) + 1
        if lines.count > fitting { visible.text = lines.prefix(fitting).joined(separator: "\n") }
        let markup = visible.markup
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = rgba.withUnsafeBufferPointer { values in
            ipx_vips_text_layer(markup, description, wrapWidth, values.baseAddress, &output)
        }
        guard status == 0, let output else {
            // Pango's surface has a size limit: text wrapped into too many lines for it (a long word at a
            // large size on a narrow output) cannot be drawn. The request's own choice: a 422, not a fault.
            _ = Vips.takeError()
            throw .textNotDrawable
        }
        let text = VipsImage(taking: output)
        let origin = placement.origin(frame: frame, overlay: (text.width, text.height))
        return try image.composited(with: try text.placed(on: frame, at: origin))
    }
}
