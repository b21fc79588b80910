import Foundation

extension ImageRequest {
    /// Decides the output format before the transform, from `format` and the request's `Accept`.
    ///
    /// `auto` picks JPEG XL when accepted and `allowJXL`, else AVIF when accepted and `allowAVIF`, else
    /// WebP when accepted, else JPEG (PNG when the result has alpha). Returns whether the choice depended
    /// on `Accept` (the response then varies on it).
    public func formatChoice(accept: String?, allowAVIF: Bool, allowJXL: Bool = false) -> (choice: FormatChoice, negotiated: Bool) {
        switch format {
        case .fixed(let fixed): return (.fixed(fixed), false)
        case .source: return (.source, false)
        case .auto: break
        }
        let accepted = Self.acceptedMediaTypes(accept)
        if allowJXL && accepted.contains("image/jxl") { return (.fixed(.jxl), true) }
        if allowAVIF && accepted.contains("image/avif") { return (.fixed(.avif), true) }
        if accepted.contains("image/webp") { return (.fixed(.webp), true) }
        return (.jpegOrPNG, true)
    }

    /// Whether `Accept` decides the output format (`format=auto`): the response then says `Vary: Accept`,
    /// whichever tier answers it.
    public var negotiatesFormat: Bool { format == .auto }

    /// Where a cover crop is anchored; empty when nothing is cropped (gravity then changes nothing).
    var cropAnchorDescription: String {
        guard fit == .cover, width != nil, height != nil else { return "" }
        if let focalPoint { return "fp:\(focalPoint)" }
        return gravity.rawValue
    }

    /// Media types of an `Accept` header, excluding those with `q=0`.
    static func acceptedMediaTypes(_ accept: String?) -> Set<String> {
        guard let accept else { return [] }
        var types: Set<String> = []
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let type = parts.first?.lowercased(), !type.isEmpty else { continue }
            let refused = parts.dropFirst().contains { parameter in
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                return pair.count == 2 && pair[0].lowercased() == "q" && Double(pair[1]) == 0
            }
            if !refused { types.insert(type) }
        }
        return types
    }

    /// The variant key: a SHA-256 over the source's cache key, the canonical options and the format choice.
    /// - Parameters:
    ///   - sourceKey: the source's cache key (``SourceKeyPolicy``); the canonical URL when nil.
    ///   - overlayIdentity: the identity of the watermark's current image (a digest of its bytes), so
    ///     that a new overlay image makes new variants.
    public func variantKey(choice: FormatChoice, sourceKey: String? = nil, overlayIdentity: String? = nil) -> VariantKey {
        var canonical = "v1|\(sourceKey ?? source.absoluteString)|w=\(width.map(String.init) ?? "")|h=\(height.map(String.init) ?? "")"
        canonical += "|fit=\(fit.rawValue)|enlarge=\(enlarge ? 1 : 0)|format=\(choice)|q=\(quality.map(String.init) ?? "")"
        canonical += "|filter=\(filters.map(\.description).joined(separator: ","))"
        let anchor = cropAnchorDescription
        canonical += "|g=\(anchor)|bg=\(background)"
        canonical += "|progressive=\(progressive ? 1 : 0)|lqip=\(placeholder ? 1 : 0)"
        // Added only when present, so that every key made before `crop` existed stays the same.
        if let crop { canonical += "|crop=\(crop)" }
        if let maxBytes { canonical += "|max_bytes=\(maxBytes)" }
        if let watermark { canonical += "|wm=\(watermark)|wmid=\(overlayIdentity ?? "")" }
        if let text { canonical += "|text=\(text)" }
        if colour == .keep { canonical += "|colour=keep" }
        // Enlargements about the pixel centres and anchored cover crops at the box's exact scale (2026-11-29) made
        // new bytes for these variants: new keys, so that no cache or shared tier serves the earlier ones.
        if enlarge || !(anchor.isEmpty || anchor == Gravity.centre.rawValue || anchor == Gravity.smart.rawValue) { canonical += "|geometry=2" }
        return VariantKey(hashing: canonical)
    }
}
