extension ImageRequest {
    /// The overlay parameters of `/img`.
    static let overlayParameters: Set<String> = [
        "wm", "wmurl", "text", "text_size", "text_color", "text_g", "text_x", "text_y", "text_opacity",
    ]

    /// Parses `wm`, `wmurl` and the `text` parameters from the request's values.
    mutating func parseOverlays(_ values: [String: String], limits: Limits) throws(RequestError) {
        let catalog = limits.overlays
        var placement = OverlayPlacement()
        var source: SourceURL?
        if let name = values["wm"] {
            guard let definition = catalog.definitions[name] else {
                throw RequestError(parameter: "wm", problem: "unknown overlay '\(name.prefix(32))'")
            }
            placement = definition.placement
            source = definition.source
        }
        if let url = values["wmurl"] {
            guard catalog.allowURL else {
                throw RequestError(parameter: "wmurl", problem: "per-request overlays are off (overlays.allowUrl)")
            }
            do {
                source = try SourceURL(parsing: url)
            } catch {
                throw RequestError(parameter: "wmurl", problem: error.problem)
            }
        }
        if let source { watermark = Watermark(source: source, placement: placement) }

        let textParameters = ["text_size", "text_color", "text_g", "text_x", "text_y", "text_opacity"]
        guard let text = values["text"] else {
            if let stray = textParameters.first(where: { values[$0] != nil }) {
                throw RequestError(parameter: stray, problem: "needs text")
            }
            return
        }
        guard catalog.allowText else { throw RequestError(parameter: "text", problem: "text overlays are off (overlays.allowText)") }
        guard !text.isEmpty, text.unicodeScalars.count <= TextOverlay.maxLength else {
            throw RequestError(parameter: "text", problem: "must be 1 to \(TextOverlay.maxLength) characters")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }) else {
            throw RequestError(parameter: "text", problem: "must not hold control characters (a line break is allowed)")
        }
        var overlay = TextOverlay(text: text)
        if let size = values["text_size"] {
            guard size.utf8.count <= 3, let value = Int(size), TextOverlay.sizeRange.contains(value) else {
                throw RequestError(
                    parameter: "text_size",
                    problem: "must be an integer in \(TextOverlay.sizeRange.lowerBound)...\(TextOverlay.sizeRange.upperBound) (pixels)")
            }
            overlay.size = value
        }
        if let colour = values["text_color"] {
            guard let value = RGBAColour(hex: colour) else {
                throw RequestError(parameter: "text_color", problem: "must be RRGGBB or RRGGBBAA in hex")
            }
            overlay.colour = value
        }
        if let gravity = values["text_g"] {
            overlay.placement.gravity = try Self.overlayGravity(gravity, parameter: "text_g")
        }
        overlay.placement.x = try Self.offset(values["text_x"], parameter: "text_x", limit: limits.maxDimension) ?? 0
        overlay.placement.y = try Self.offset(values["text_y"], parameter: "text_y", limit: limits.maxDimension) ?? 0
        if let opacity = values["text_opacity"] {
            guard opacity.utf8.count <= 12, let value = Double(opacity), value.isFinite, (0...1).contains(value) else {
                throw RequestError(parameter: "text_opacity", problem: "must be a number in 0...1")
            }
            overlay.placement.opacity = value
        }
        self.text = overlay
    }

    /// A gravity for an overlay: any compass point or the centre (`smart` and `face` place nothing).
    public static func overlayGravity(_ text: String, parameter: String) throws(RequestError) -> Gravity {
        guard let gravity = Gravity(parameter: text), gravity.anchor != nil else {
            let names = Gravity.allCases.filter { $0.anchor != nil }.map(\.rawValue).joined(separator: ", ")
            throw RequestError(parameter: parameter, problem: "must be one of \(names)")
        }
        return gravity
    }

    private static func offset(_ text: String?, parameter: String, limit: Int) throws(RequestError) -> Int? {
        guard let text else { return nil }
        guard text.utf8.count <= 6, let value = Int(text), (0...limit).contains(value) else {
            throw RequestError(parameter: parameter, problem: "must be an integer in 0...\(limit) (pixels)")
        }
        return value
    }
}
