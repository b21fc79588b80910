import CVipsShim

/// `filter=redact_faces[:blur|:pixelate]`: every face ``FaceDetector`` finds in the image (as it is at this
/// step, after the resize) is hidden beyond recognition, with a fifth of its size more on every side (hair,
/// ears, chin): a Gaussian blur of a quarter of the face's size, or blocks of an eighth of it (at least 6
/// pixels). The rest of the image is left as it is.
struct FaceRedactionStep {
    let style: FaceRedaction

    /// How far past the detector's box the redaction reaches, as a share of the box's size on each side.
    static let margin = 0.2

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        let faces = try FaceDetector.faces(in: image)
        var output = image
        for face in faces {
            let area = face.pixels(width: image.width, height: image.height, margin: Self.margin)
            let side = max(area.width, area.height)
            let region = try output.producing {
                ipx_vips_extract_area($0, $1, Int32(area.x), Int32(area.y), Int32(area.width), Int32(area.height))
            }
            let hidden: VipsImage = switch style {
            case .blur: try region.producing { ipx_vips_gaussblur($0, $1, max(2, Double(side) / 4)) }
            case .pixelate: try region.producing { ipx_vips_pixelate($0, $1, Int32(max(6, side / 8))) }
            }
            output = try output.producing { ipx_vips_insert($0, hidden.pointer, $1, Int32(area.x), Int32(area.y)) }
        }
        // Evaluated now: the regions read from the image each face was placed on.
        return try output.producing { ipx_vips_copy_memory($0, $1) }
    }
}
