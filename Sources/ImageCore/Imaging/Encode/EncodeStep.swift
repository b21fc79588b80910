import CVipsShim

/// The last step of a transform: the image encoded as the chosen format (a JPEG-or-PNG choice by its
/// alpha), at the request's quality, or at the highest quality under `max_bytes` (``SizeTargetEncoder``).
struct EncodeStep {
    let choice: FormatChoice
    let request: ImageRequest
    let settings: EncodingSettings
    /// The source's wide-gamut profile is kept (`colour=keep`).
    let keepProfile: Bool
    /// The quality of a placeholder (`lqip=1`).
    let placeholderQuality: Int

    func apply(to image: VipsImage, deadline: TransformDeadline) throws(ImagingError) -> EncodedImage {
        let output: OutputFormat = switch choice {
        case .fixed(let fixed): fixed
        case .jpegOrPNG, .source: image.hasAlpha ? .png : .jpeg
        }
        deadline.watch(image)
        if let budget = request.maxBytes, !request.placeholder, SizeTargetEncoder.applies(to: output) {
            // Several encodes of one image: materialised once (a lazy pipeline can be saved only once).
            let ready = try image.producing { ipx_vips_copy_memory($0, $1) }
            let start = request.quality ?? settings.defaultQuality(for: output)
            return try SizeTargetEncoder(budget: budget, startQuality: start).search { (quality) throws(ImagingError) in
                try ready.encoded(
                    as: output, quality: quality, settings: settings, background: request.background,
                    progressive: request.progressive, keepJPEGMetadata: false, keepProfile: keepProfile, deadline: deadline)
            }
        }
        return try image.encoded(
            as: output, quality: request.placeholder ? placeholderQuality : request.quality, settings: settings,
            background: request.background, progressive: request.progressive, keepJPEGMetadata: false, keepProfile: keepProfile,
            deadline: deadline)
    }
}
