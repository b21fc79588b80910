import ImageCore

extension ProxyConfiguration {
    /// The fields of a named overlay, `overlays.<name>.<field>`.
    static let overlayFields: Set<String> = ["source", "gravity", "x", "y", "opacity", "scale", "tile"]

    /// Whether a file key is a field of a named overlay (three parts: `overlays.<name>.<field>`; the
    /// settings of the section, `overlays.allowText` and the like, have two).
    static func isOverlayDefinitionKey(_ key: String) -> Bool {
        key.hasPrefix("overlays.") && key.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    /// The named overlays the file defines, checked: a wrong one stops the start, naming the key.
    /// - Throws: ``ConfigurationError``.
    static func overlayDefinitions(
        from leaves: [String: ConfigurationFileSnapshot.Leaf], maxDimension: Int
    ) throws -> [String: OverlayCatalog.Definition] {
        var fieldsByName: [String: [String: ConfigurationFileSnapshot.Scalar]] = [:]
        for (key, leaf) in leaves where isOverlayDefinitionKey(key) {
            let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let (name, field) = (parts[1], parts[2])
            guard OverlayCatalog.isValidName(name) else {
                throw ConfigurationError("invalid overlay name in \(key): names are 1 to 32 of a-z, 0-9, - and _")
            }
            guard overlayFields.contains(field) else {
                throw ConfigurationError(
                    "unknown key '\(key)': an overlay has \(overlayFields.sorted().joined(separator: ", "))")
            }
            guard case .scalar(let scalar) = leaf else { throw ConfigurationError("invalid value for \(key): expected a scalar") }
            fieldsByName[name, default: [:]][field] = scalar
        }
        var definitions: [String: OverlayCatalog.Definition] = [:]
        for (name, fields) in fieldsByName {
            func fail(_ field: String, _ expectation: String) -> ConfigurationError {
                ConfigurationError("invalid value for overlays.\(name).\(field): expected \(expectation)")
            }
            guard let sourceText = fields["source"]?.text, let source = try? SourceURL(parsing: sourceText) else {
                throw fail("source", "an http(s) URL or s3://bucket/key")
            }
            var placement = OverlayPlacement()
            if let gravity = fields["gravity"]?.text {
                guard let parsed = try? ImageRequest.overlayGravity(gravity, parameter: "gravity") else {
                    throw fail("gravity", "a compass point (north ... southwest) or centre")
                }
                placement.gravity = parsed
            }
            for (field, keyPath) in [("x", \OverlayPlacement.x), ("y", \OverlayPlacement.y)] {
                guard let scalar = fields[field] else { continue }
                guard let value = scalar.integer, (0...maxDimension).contains(value) else {
                    throw fail(field, "an integer in 0...\(maxDimension) (pixels)")
                }
                placement[keyPath: keyPath] = value
            }
            for (field, keyPath) in [("opacity", \OverlayPlacement.opacity), ("scale", \OverlayPlacement.scale)] {
                guard let scalar = fields[field] else { continue }
                guard let value = Double(scalar.text), value.isFinite, (0...1).contains(value) else { throw fail(field, "a number in 0...1") }
                placement[keyPath: keyPath] = value
            }
            if let tile = fields["tile"] {
                guard let value = tile.boolean else { throw fail("tile", "true or false") }
                placement.tile = value
            }
            definitions[name] = OverlayCatalog.Definition(source: source, placement: placement)
        }
        return definitions
    }
}
