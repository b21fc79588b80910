import CVipsShim

/// `round:RADIUS` (rounded corners) and `circle` (the largest centred circle): everything outside the
/// shape becomes transparent; edges are anti-aliased over one pixel.
struct MaskFilterStep {
    let filter: ImageFilter

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        let mask: [UInt8]
        switch filter {
        case .round(let radius):
            mask = Self.roundedRectangle(width: image.width, height: image.height, radius: Double(radius))
        case .circle:
            let radius = Double(min(image.width, image.height)) / 2
            mask = Self.ellipse(width: image.width, height: image.height, radius: radius)
        default:
            return image
        }
        return try mask.withUnsafeBufferPointer { pointer throws(ImagingError) in
            try image.producing { ipx_vips_apply_mask($0, $1, pointer.baseAddress) }
        }
    }

    /// Coverage 0...255 of a pixel whose centre is `distance` past the shape's edge (negative: inside).
    private static func coverage(_ distance: Double) -> UInt8 {
        UInt8(max(0, min(1, 0.5 - distance)) * 255)
    }

    static func roundedRectangle(width: Int, height: Int, radius requested: Double) -> [UInt8] {
        let radius = min(requested, Double(min(width, height)) / 2)
        var mask = [UInt8](repeating: 255, count: width * height)
        for y in 0..<height {
            let py = Double(y) + 0.5
            for x in 0..<width {
                let px = Double(x) + 0.5
                // Distance from the nearest corner circle's centre, only in the corner squares.
                let cx = px < radius ? radius : (px > Double(width) - radius ? Double(width) - radius : px)
                let cy = py < radius ? radius : (py > Double(height) - radius ? Double(height) - radius : py)
                guard cx != px, cy != py else { continue }
                let distance = ((px - cx) * (px - cx) + (py - cy) * (py - cy)).squareRoot() - radius
                mask[y * width + x] = coverage(distance)
            }
        }
        return mask
    }

    static func ellipse(width: Int, height: Int, radius: Double) -> [UInt8] {
        var mask = [UInt8](repeating: 0, count: width * height)
        let centreX = Double(width) / 2, centreY = Double(height) / 2
        for y in 0..<height {
            let dy = Double(y) + 0.5 - centreY
            for x in 0..<width {
                let dx = Double(x) + 0.5 - centreX
                mask[y * width + x] = coverage((dx * dx + dy * dy).squareRoot() - radius)
            }
        }
        return mask
    }
}
