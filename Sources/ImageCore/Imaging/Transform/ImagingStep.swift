/// One step of a transform after the resize, with one shape: an image in, an image out. The transformer
/// runs them in the order ``ImageTransformer`` lists them (colour, pad, filters, watermark, text); a
/// new step is one type conforming to this and one line in that list.
protocol ImagingStep {
    /// The image with this step done.
    /// - Throws: ``ImagingError`` (``ImagingError/processingFailed`` when libvips fails).
    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage
}

extension ColourspaceStep: ImagingStep {}
extension PadStep: ImagingStep {}
extension FilterStep: ImagingStep {}
extension OverlayStep: ImagingStep {}
extension TextStep: ImagingStep {}
