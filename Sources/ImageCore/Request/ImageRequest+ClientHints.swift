extension ImageRequest {
    /// Applies client hints and `Save-Data` where the query left the choice open, and returns the kinds
    /// of hint the answer therefore depends on (the server turns them into `Vary`), in a fixed order.
    ///
    /// - No `w`: the `Width` hint (device pixels), else `Viewport-Width` × the pixel ratio, rounded up to
    ///   a step of `policy.widths` (so hints cannot multiply variants), at most `limits.maxDimension`.
    /// - No `dpr`: the `DPR` hint (rounded up to a half, 1...4) multiplies `w` and `h`.
    /// - No `q`: `Save-Data: on` lowers the quality to `policy.saveDataQuality`.
    /// Explicit parameters always win; with the policy off nothing changes and nothing varies.
    public mutating func adapt(to hints: ClientHints, policy: ClientHints.Policy, limits: Limits) -> [ClientHints.Kind] {
        let widthGiven = width != nil  // only `w` sets it before this
        var varies: [ClientHints.Kind] = []
        if policy.clientHints {
            if !widthGiven { varies += [.width, .viewportWidth] }
            if !pixelRatioGiven { varies.append(.dpr) }
            let hintedRatio = pixelRatioGiven ? pixelRatio : hints.dpr.map(ClientHints.Policy.quantise) ?? 1
            if !pixelRatioGiven, hintedRatio != 1 {
                func scaled(_ value: Int?) -> Int? { value.map { Self.clamped(Double($0) * hintedRatio, to: limits.maxDimension) } }
                if widthGiven { width = scaled(width) }
                height = scaled(height)
                pixelRatio = hintedRatio
            }
            if !widthGiven {
                // Both factors are bounded and the product is clamped in floating point before any
                // conversion: a hint cannot reach a conversion that traps, whatever the header says.
                let hinted = hints.width.map { min($0, ClientHints.widthRange.upperBound) }
                    ?? hints.viewportWidth.map { Self.clamped((Double($0) * hintedRatio).rounded(.up), to: ClientHints.widthRange.upperBound) }
                if let hinted { width = min(limits.maxDimension, policy.step(hinted)) }
            }
        }
        if policy.saveDataQuality > 0, quality == nil {
            varies.append(.saveData)
            if hints.saveData { quality = policy.saveDataQuality }
        }
        return varies
    }

    /// `value` rounded and clamped to 1...`maximum` without a conversion that can trap (NaN gives 1).
    static func clamped(_ value: Double, to maximum: Int) -> Int {
        guard value.isFinite, value >= 1 else { return 1 }
        guard value < Double(maximum) else { return maximum }
        return max(1, min(maximum, Int(value.rounded())))
    }
}
