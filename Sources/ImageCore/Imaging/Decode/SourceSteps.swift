/// The steps that turn source bytes into the resized image, in their order: scale-on-load
/// (``ScaleOnLoadStep``) or, with `crop`, the cut (``CropStep``), then the resize (``ResizeStep``); or, for
/// a source decoded whole (``DecodedSource``), the resize alone.
struct SourceSteps {
    /// The request's box.
    let box: ResizeBox

    /// The resized, upright image of `bytes`.
    /// - Throws: ``ImagingError`` (undecodable, crop outside, too many scans, processing failed).
    func image(
        from bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline?,
        eighth: ScaleOnLoadStep.EighthAttempt = .untried
    ) throws(ImagingError) -> VipsImage {
        if let crop = box.crop {
            let cut = try CropStep(crop: crop, box: box).apply(to: bytes, header: header, deadline: deadline)
            return try ResizeStep(box: cut.box).apply(toCut: cut.image)
        }
        let fitted = box.coverBoxFitted(to: header)
        let loaded = try ScaleOnLoadStep(box: fitted).apply(to: bytes, header: header, deadline: deadline, eighth: eighth)
        return try ResizeStep(box: fitted).apply(to: loaded, bytes: bytes, header: header, deadline: deadline)
    }

    /// The resized, upright image of a source decoded whole (``DecodedSource``): no scale-on-load, no crop.
    /// - Throws: ``ImagingError/processingFailed`` when libvips fails.
    func image(fromWhole decoded: DecodedSource, header: SourceHeader, deadline: TransformDeadline?) throws(ImagingError) -> VipsImage {
        try ResizeStep(box: box.coverBoxFitted(to: header)).apply(toWhole: decoded, header: header, deadline: deadline)
    }
}
