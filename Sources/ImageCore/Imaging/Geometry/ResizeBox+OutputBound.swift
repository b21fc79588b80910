/// The bound on every side a resize makes, given or derived from the source's aspect: the one place the
/// box is held to `image.maxDimension` before any libvips call (``ImageTransformer/plan(_:request:choice:overlay:decoded:)``
/// applies it for every route and every dialect).
///
/// Without it a 600000×1 PNG of 1.8 KB asked for `w=4096&h=4096&fit=cover&enlarge=1` scaled to
/// 2,457,600,000×4096 before its crop (past libvips' and `Int32`'s range: the process ended), and
/// `h=4096&enlarge=1` of a 20000×100 source made an 819,200×4096 image.
extension ResizeBox {
    /// How many times `image.maxDimension` the side of a cover's intermediate (the source scaled to cover
    /// the box, before its crop) may be. Two keeps every cover of a source up to 2:1 exact at the largest
    /// box; a more extreme aspect enlarged to cover a large box gets the largest box of the box's size
    /// or less that the source covers with that intermediate (a 3000×1000 source, `w=4096&h=4096&fit=cover&enlarge=1`:
    /// 4096×2731).
    static let coverIntermediateFactor = 2

    /// This box held so that no side of the output (nor of a cover's intermediate) exceeds `limit`, for a
    /// source with `header` (its upright size, or the crop rectangle's when the box has one). Sides given
    /// by the request are already within `limit`; what is bounded here are the sides derived from the
    /// aspect ratio:
    /// - one side given (any fit): when the other would come out longer than `limit`, the box becomes a
    ///   contain box of `limit` on the missing side (a 20000×100 source at `h=4096&enlarge=1` is 4096×20);
    /// - `cover` with `enlarge`: when the intermediate's longer side would pass ``coverIntermediateFactor``
    ///   × `limit`, the box shrinks (aspect of the source) to what that intermediate covers, sides rounded down;
    /// - `contain`, `pad` and `fill` with both sides, and anything without `enlarge` that cannot grow past
    ///   the box: unchanged. A re-encode without `w` or `h` keeps the source's size (held by
    ///   `image.maxSourcePixels`).
    ///
    /// The arithmetic is in `Double` from sizes already bounded by the header check, and every conversion
    /// back to an integer saturates (``side(_:)``), so no input reaches a trapping conversion.
    func bounded(toMaxDimension limit: Int, for header: SourceHeader) -> ResizeBox {
        guard limit > 0, width != nil || height != nil else { return self }
        // The crop rectangle's size when the box has one (as ``CropStep`` cuts it), else the upright source's.
        var upright = header.orientedSize
        if let crop, let rectangle = crop.resolved(width: upright.width, height: upright.height) {
            upright = (rectangle.width, rectangle.height)
        }
        let sourceWidth = Double(max(1, upright.width))
        let sourceHeight = Double(max(1, upright.height))
        let longestSource = max(sourceWidth, sourceHeight)
        var bounded = self
        if let width, let height {
            guard fit == .cover, enlarge else { return self }
            let scale = max(Double(width) / sourceWidth, Double(height) / sourceHeight)
            let ceiling = Double(limit) * Double(Self.coverIntermediateFactor)
            guard longestSource * scale > ceiling else { return self }
            let coveringScale = ceiling / longestSource
            // Rounded down, so that the intermediate stays within the ceiling.
            bounded.width = min(width, Self.side(sourceWidth * coveringScale, rounding: .down))
            bounded.height = min(height, Self.side(sourceHeight * coveringScale, rounding: .down))
            return bounded
        }
        var scale = min(
            width.map { Double($0) / sourceWidth } ?? .infinity, height.map { Double($0) / sourceHeight } ?? .infinity)
        if !enlarge { scale = min(scale, 1) }
        guard longestSource * scale > Double(limit) else { return self }
        bounded.width = width ?? limit
        bounded.height = height ?? limit
        if fit != .pad { bounded.fit = .contain }
        return bounded
    }

    /// A side in pixels from a computed length: rounded, at least 1, and saturated at
    /// ``unbounded`` (a NaN or an infinity is 1 or ``unbounded``, never a trap).
    static func side(_ length: Double, rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int {
        guard !length.isNaN else { return 1 }
        let rounded = length.rounded(rule)
        if rounded >= Double(unbounded) { return unbounded }
        return max(1, Int(rounded.clamped(to: 1...Double(unbounded))))
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
