import ImageCore

extension ProxyConfiguration {
    /// The section of the file whose keys are names the operator chooses: `presets.<name>`.
    static let presetsSection = "presets"

    /// Whether a file key belongs to the presets section (its names are not in ``settings``).
    static func isPresetKey(_ key: String) -> Bool {
        key.hasPrefix(presetsSection + ".")
    }

    /// The presets the file defines, checked: each must be a valid name and expand to a request that
    /// parses (every parameter known and in range), so that a wrong preset stops the start, not a request.
    /// - Throws: ``ConfigurationError`` naming the preset.
    static func presets(
        from leaves: [String: ConfigurationFileSnapshot.Leaf], presetsOnly: Bool, maxDimension: Int,
        overlays: OverlayCatalog = .none, defaultColour: ColourHandling = .srgb, defaultPreset: String = ""
    ) throws -> PresetTable {
        var definitions: [String: String] = [:]
        for (key, leaf) in leaves where isPresetKey(key) {
            let name = String(key.dropFirst(presetsSection.count + 1))
            guard case .scalar(let scalar) = leaf, !name.contains(".") else {
                throw ConfigurationError("invalid value for \(key): expected a query string such as w=300&h=300&fit=cover")
            }
            definitions[name] = scalar.text
        }
        var table: PresetTable
        do {
            table = try PresetTable(definitions: definitions, presetsOnly: presetsOnly)
        } catch {
            throw ConfigurationError("invalid \(presetsSection).\(error.preset): \(error.problem)")
        }
        guard defaultPreset.isEmpty || definitions[defaultPreset] != nil else {
            throw ConfigurationError("invalid value '\(defaultPreset)' for http.defaultPreset: expected the name of a preset under presets")
        }
        table.defaultPreset = defaultPreset
        for name in definitions.keys.sorted() {
            let query = [(name: "url", value: "https://example.com/preset-check.jpg"), (name: "preset", value: name)]
            do {
                _ = try ImageRequest(query: query, limits: .init(maxDimension: maxDimension, presets: table, overlays: overlays, defaultColour: defaultColour))
            } catch {
                throw ConfigurationError("invalid \(presetsSection).\(name): \(error.publicMessage)")
            }
        }
        return table
    }
}
