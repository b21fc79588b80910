import CVipsShim

/// Draws a watermark image over every frame: its header checked before it is decoded, then made 8-bit
/// sRGB with alpha, scaled (``OverlayPlacement/scale``, never larger than the frame), its alpha
/// multiplied by the opacity, placed by gravity and offsets (or tiled), and composited.
struct OverlayStep {
    /// The watermark's encoded image.
    let overlay: [UInt8]
    let placement: OverlayPlacement

    /// Bytes the overlay takes while it is drawn (decoded and prepared copies), from its header, with the
    /// frame limit ``apply(to:)`` reads it with. An animated overlay is drawn from its first frame; its
    /// loader also holds a canvas of the frame's size while it composes that frame from the file (a GIF's
    /// or a WebP's), counted too. (Checked with one frame only, an animated overlay reserved nothing.)
    static func workingSetBytes(of overlay: [UInt8]) -> Int {
        guard let (_, header) = try? SourceHeader.checked(overlay, maxSourcePixels: Watermark.maxPixels, maxSourceFrames: maxFrames)
        else { return 0 }
        let frame = header.width * header.height
        return frame * 8 + (header.frames > 1 ? frame * 4 : 0)
    }

    /// Most frames an overlay may have (its first is drawn).
    static let maxFrames = 100_000

    func apply(to image: VipsImage) throws(ImagingError) -> VipsImage {
        let decoded: VipsImage
        do {
            _ = try SourceHeader.checked(overlay, maxSourcePixels: Watermark.maxPixels, maxSourceFrames: Self.maxFrames)
            decoded = try VipsImage.decode(overlay)
        } catch .tooManyPixels {
            throw .badOverlay(problem: "has more than \(Watermark.maxPixels) pixels")
        } catch {
            throw .badOverlay(problem: "is not an image that can be decoded")
        }
        let frame = (width: image.width, height: image.frameHeight)
        var factor = placement.scale > 0 ? placement.scale * Double(frame.width) / Double(decoded.width) : 1
        factor = min(factor, Double(frame.width) / Double(decoded.width), Double(frame.height) / Double(decoded.height))
        let prepared = try decoded.producing { ipx_vips_overlay_prepare($0, factor, placement.opacity, $1) }
        let origin = placement.origin(frame: frame, overlay: (prepared.width, prepared.height))
        let layer = try prepared.placed(on: frame, at: origin, tile: placement.tile, gaps: (placement.x, placement.y))
        return try image.composited(with: layer)
    }
}

extension VipsImage {
    /// A transparent `frame`-sized layer with this image at `origin` (cut at the edges), or tiled.
    func placed(
        on frame: (width: Int, height: Int), at origin: (left: Int, top: Int), tile: Bool = false, gaps: (Int, Int) = (0, 0)
    ) throws(ImagingError) -> VipsImage {
        // Far outside the frame: nothing of it shows (and no value can overflow an Int32).
        let left = Int32(clamping: max(-frame.width - 1, min(origin.left, frame.width + 1)))
        let top = Int32(clamping: max(-frame.height - 1, min(origin.top, frame.height + 1)))
        return try producing {
            ipx_vips_overlay_place(
                $0, Int32(clamping: frame.width), Int32(clamping: frame.height), left, top, tile ? 1 : 0,
                Int32(clamping: gaps.0), Int32(clamping: gaps.1), $1)
        }
    }

    /// `layer` (one frame's size, with alpha) composited over every frame.
    func composited(with layer: VipsImage) throws(ImagingError) -> VipsImage {
        let pageHeight = Int32(clamping: frameHeight)
        return try withExtendedLifetime(layer) { () throws(ImagingError) -> VipsImage in
            try producing { ipx_vips_composite_frames($0, layer.pointer, pageHeight, $1) }
        }
    }
}
