import CVipsShim

/// The scale an SVG source is drawn at: a vector source has no pixels of its own, so it is rendered at the
/// size the box needs (a 64 px icon is never drawn at 10,000 px, a 2000 px social card is sharp), and the
/// resize after it has only rounding left to do.
extension ResizeBox {
    /// The factor from the SVG's declared size (`header`: its width and height, or its viewBox, in pixels as libvips reads them) to the
    /// output: the side that needs more pixels for a cover crop or a forced size (fill, or a cover's
    /// anchored crop), the other for contain; 1 with a source crop (`crop=` is in declared pixels) or
    /// without a bounded side; held to the scales libvips' loader takes (`IPX_SVG_MIN_SCALE`...`IPX_SVG_MAX_SCALE`:
    /// a source declared 100,000 px wide is drawn at 100 px at least, and resized down from there).
    func svgScale(for header: SourceHeader) -> Double {
        min(max(unclampedSVGScale(for: header), IPX_SVG_MIN_SCALE), IPX_SVG_MAX_SCALE)
    }

    private func unclampedSVGScale(for header: SourceHeader) -> Double {
        guard crop == nil, header.width > 0, header.height > 0 else { return 1 }
        let arguments = thumbnailArguments(for: header)
        let across = arguments.width >= Self.unbounded ? nil : Double(arguments.width) / Double(header.width)
        let down = arguments.height >= Self.unbounded ? nil : Double(arguments.height) / Double(header.height)
        let covers = arguments.crop != Crop.none.rawValue || arguments.size == Size.force.rawValue
        switch (across, down) {
        case (let across?, let down?): return covers ? max(across, down) : min(across, down)
        case (let across?, nil): return across
        case (nil, let down?): return down
        case (nil, nil): return 1
        }
    }

    /// The pixels the SVG is rendered at (``svgScale(for:)`` of each side, rounded up), which
    /// `image.maxSourcePixels` bounds in place of the declared size.
    func svgRenderPixels(for header: SourceHeader) -> Int {
        let scale = svgScale(for: header)
        let width = (Double(header.width) * scale).rounded(.up), height = (Double(header.height) * scale).rounded(.up)
        return Int(min(width * height, 1e15))
    }
}
