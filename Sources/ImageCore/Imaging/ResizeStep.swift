import CVipsShim

/// Resizes into the box with libvips' `thumbnail` (from the decoded image ``ScaleOnLoadStep`` or
/// ``CropStep`` made, or from the bytes through libvips' loader: shrink-on-load, EXIF auto-rotation,
/// animated sources' frames), then, for a cover box anchored off-centre or on a focal point, the crop
/// around the anchor (``CoverCropStep``).
struct ResizeStep {
    /// The box, fitted to the source.
    let box: ResizeBox

    /// The resized, upright image of what ``ScaleOnLoadStep`` handed on.
    /// - Throws: ``ImagingError/undecodable`` when the source cannot be decoded.
    func apply(
        to loaded: ScaleOnLoadStep.Loaded, bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline?
    ) throws(ImagingError) -> VipsImage {
        let arguments = box.thumbnailArguments(for: header)
        // Sources with a profile (or CMYK) are converted to sRGB by `thumbnail` itself, after shrinking.
        let toSRGB: Int32 = header.colourManaged ? 1 : 0
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            switch loaded {
            case .decoded(let image):
                return ipx_vips_thumbnail_image(
                    image.pointer, &output, Int32(arguments.width), Int32(arguments.height), arguments.size,
                    arguments.crop, toSRGB)
            case .webp(let scale):
                return ipx_vips_thumbnail_webp_scaled(
                    raw.baseAddress, raw.count, &output, Int32(arguments.width), Int32(arguments.height),
                    arguments.size, arguments.crop, scale, toSRGB)
            case .toLoader(let shrink) where shrink > 1:
                return ipx_vips_thumbnail_jpeg_shrunk(
                    raw.baseAddress, raw.count, &output, Int32(arguments.width), Int32(arguments.height),
                    arguments.size, arguments.crop, Int32(shrink), toSRGB)
            case .toLoader:
                return ipx_vips_thumbnail_buffer_pages(
                    raw.baseAddress, raw.count, &output, Int32(arguments.width), Int32(arguments.height),
                    arguments.size, arguments.crop, Int32(box.frames), toSRGB)
            }
        }
        guard status == 0, let output else {
            _ = Vips.takeError()
            throw .undecodable
        }
        // Materialise now: decode errors surface here as 422, not later in the encoder.
        let lazy = VipsImage(taking: output)
        deadline?.watch(lazy)
        let image: VipsImage
        do {
            image = try lazy.producing { ipx_vips_copy_memory($0, $1) }
        } catch {
            throw .undecodable
        }
        return try coverCropped(image)
    }

    /// The rectangle ``CropStep`` cut out, resized into the box.
    /// - Throws: ``ImagingError/processingFailed`` when libvips fails.
    func apply(toCut cut: VipsImage) throws(ImagingError) -> VipsImage {
        let cutHeader = SourceHeader(width: cut.width, height: cut.height, frames: 1, orientation: 1, colourManaged: false)
        let arguments = box.thumbnailArguments(for: cutHeader)
        let resized: VipsImage
        do {
            resized = try cut.producing {
                ipx_vips_thumbnail_image(
                    $0, $1, Int32(arguments.width), Int32(arguments.height), arguments.size, arguments.crop, 0)
            }
        } catch {
            throw .processingFailed
        }
        return try coverCropped(resized)
    }

    /// A cover box anchored off-centre or on a focal point: the crop around the anchor.
    private func coverCropped(_ image: VipsImage) throws(ImagingError) -> VipsImage {
        guard case .anchored(let x, let y, let focal) = box.coverPlan, let width = box.width, let height = box.height else {
            return image
        }
        return try CoverCropStep(width: width, height: height, anchorX: x, anchorY: y, centredOnAnchor: focal).apply(to: image)
    }
}
