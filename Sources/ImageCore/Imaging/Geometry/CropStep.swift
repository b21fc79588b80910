import CVipsShim

/// `crop=x,y,w,h`, before the resize: the source is loaded upright and in sRGB, shrunk on load as far as
/// the rectangle (not the whole source) allows, and the rectangle is cut out at that scale. The resize
/// that follows (``ResizeStep/apply(toCut:)``) works on the rectangle with ``box``.
struct CropStep {
    let crop: CropRectangle
    /// The request's box (with its crop).
    let box: ResizeBox

    /// The rectangle, cut out, and the box of the resize that follows.
    struct Cut {
        let image: VipsImage
        let box: ResizeBox
    }

    /// The header of the rectangle `crop` cuts from an upright `header` (upright, one frame); nil when
    /// the rectangle lies outside.
    static func croppedHeader(_ header: SourceHeader, crop: CropRectangle) -> SourceHeader? {
        let upright = header.orientedSize
        guard let rectangle = crop.resolved(width: upright.width, height: upright.height) else { return nil }
        return SourceHeader(
            width: rectangle.width, height: rectangle.height, frames: 1, orientation: 1, colourManaged: header.colourManaged)
    }

    /// Loads `bytes` and cuts the rectangle out.
    /// - Throws: ``ImagingError/cropOutside(crop:width:height:)``; ``ImagingError/undecodable``.
    func apply(to bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline?) throws(ImagingError) -> Cut {
        let upright = header.orientedSize
        guard let rectangle = crop.resolved(width: upright.width, height: upright.height),
            let cropped = Self.croppedHeader(header, crop: crop)
        else { throw .cropOutside(crop: crop.description, width: upright.width, height: upright.height) }
        let inner = box.afterCrop(cropped)
        let shrink = SourceFormat(sniffing: bytes) == .jpeg ? inner.jpegShrink(for: cropped) : 1
        var loaded: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            ipx_vips_thumbnail_buffer_pages(
                raw.baseAddress, raw.count, &loaded, Int32(clamping: max(1, upright.width / shrink)), Int32(ResizeBox.unbounded),
                ResizeBox.Size.down.rawValue, ResizeBox.Crop.none.rawValue, 1, header.colourManaged ? 1 : 0)
        }
        guard status == 0, let loaded else {
            _ = Vips.takeError()
            throw .undecodable
        }
        // The profile's bytes copied before the pixels are read (HEIF: ipx_vips_with_own_profile).
        let source = try VipsImage(taking: loaded).producing { ipx_vips_with_own_profile($0, $1) }
        deadline?.watch(source)
        let scaleX = Double(source.width) / Double(upright.width)
        let scaleY = Double(source.height) / Double(upright.height)
        let left = min(source.width - 1, Int((Double(rectangle.x) * scaleX).rounded(.down)))
        let top = min(source.height - 1, Int((Double(rectangle.y) * scaleY).rounded(.down)))
        let width = max(1, min(source.width - left, Int((Double(rectangle.width) * scaleX).rounded())))
        let height = max(1, min(source.height - top, Int((Double(rectangle.height) * scaleY).rounded())))
        do {
            let cut = try source.producing { ipx_vips_extract_area($0, $1, Int32(clamping: left), Int32(clamping: top), Int32(clamping: width), Int32(clamping: height)) }
                .producing { ipx_vips_copy_memory($0, $1) }
            return Cut(image: cut, box: inner)
        } catch {
            throw .undecodable
        }
    }
}
