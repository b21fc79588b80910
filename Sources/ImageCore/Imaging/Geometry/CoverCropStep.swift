import CVipsShim

/// Crops an image that covers the box down to the box: placed by a gravity anchor (0 = left/top,
/// 1 = right/bottom), or centred on a focal point as far as the edges allow.
struct CoverCropStep {
    let width: Int
    let height: Int
    let anchorX: Double
    let anchorY: Double
    /// True for a focal point (centre the crop on it), false for a gravity (align the crop's edge).
    let centredOnAnchor: Bool

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        let boxWidth = min(width, image.width)
        let boxHeight = min(height, image.height)
        let spareX = image.width - boxWidth
        let spareY = image.height - boxHeight
        let left: Int
        let top: Int
        if centredOnAnchor {
            left = max(0, min(spareX, Int((anchorX * Double(image.width) - Double(boxWidth) / 2).rounded())))
            top = max(0, min(spareY, Int((anchorY * Double(image.height) - Double(boxHeight) / 2).rounded())))
        } else {
            left = Int((Double(spareX) * anchorX).rounded())
            top = Int((Double(spareY) * anchorY).rounded())
        }
        guard boxWidth != image.width || boxHeight != image.height else { return image }
        return try image.producing { ipx_vips_extract_area($0, $1, Int32(clamping: left), Int32(clamping: top), Int32(clamping: boxWidth), Int32(clamping: boxHeight)) }
    }
}
