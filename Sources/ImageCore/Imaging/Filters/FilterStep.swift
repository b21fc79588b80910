/// Applies one ``ImageFilter`` to a resized image (dispatching to the step that does it).
struct FilterStep {
    let filter: ImageFilter

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        switch filter {
        case .blur, .sharpen: try DetailFilterStep(filter: filter).apply(to: image)
        case .grayscale, .grayscale601, .sepia, .brightness, .contrast, .lighten: try ToneFilterStep(filter: filter).apply(to: image)
        case .rotate, .flip, .flop, .trim: try GeometryFilterStep(filter: filter).apply(to: image)
        case .round, .circle: try MaskFilterStep(filter: filter).apply(to: image)
        case .redactFaces(let style): try FaceRedactionStep(style: style).apply(to: image)
        }
    }
}
