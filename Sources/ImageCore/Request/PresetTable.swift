import Foundation

/// Named sets of `/img` parameters (`presets.<name>` in the configuration) and how `preset=` applies them.
///
/// `preset=a,b` applies `a`, then `b` (a later preset's value for a parameter replaces an earlier one's),
/// then the request's own parameters, which win. With ``presetsOnly`` a request may give nothing but
/// `url` and `preset`: strangers cannot ask for arbitrary variants, so a browser-side loader works
/// without a signing key. The variant key is made from the expanded parameters, so changing a preset's
/// definition makes new variants.
public struct PresetTable: Sendable, Equatable {
    /// One `name=value` pair of a preset.
    public struct Parameter: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    /// No presets, every parameter allowed.
    public static let none = PresetTable()

    /// Most presets one request may name.
    public static let maxPerRequest = 8

    /// The presets by name, each its parameters in the order written.
    public private(set) var presets: [String: [Parameter]] = [:]
    /// Whether requests may give only `url` and `preset` (`http.presetsOnly`); they must then name a
    /// preset, or ``defaultPreset`` applies.
    public var presetsOnly = false
    /// The preset a presets-only request that names none gets (`http.defaultPreset`); empty: such a
    /// request is a 400. Ignored unless ``presetsOnly``.
    public var defaultPreset = ""

    /// The parameters a request may give in presets-only mode.
    static let presetsOnlyParameters: Set<String> = ["url", "preset"]

    public init() {}

    /// Presets from their definitions: each a query string such as `w=300&h=300&fit=cover&format=webp`
    /// (no `url`, no `preset`). A value may be percent-encoded.
    /// - Throws: ``PresetError`` naming the preset and what is wrong with it.
    public init(definitions: [String: String], presetsOnly: Bool = false) throws(PresetError) {
        self.presetsOnly = presetsOnly
        for (name, definition) in definitions {
            guard Self.isValidName(name) else {
                throw PresetError(preset: name, problem: "names are 1 to 32 of a-z, 0-9, - and _")
            }
            var parameters: [Parameter] = []
            for pair in definition.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(parts[0])
                let value = parts.count == 2 ? String(parts[1]) : ""
                guard !key.isEmpty, key != "url", key != "preset" else {
                    throw PresetError(preset: name, problem: "'\(pair)' is not a parameter a preset may set")
                }
                guard !parameters.contains(where: { $0.name == key }) else {
                    throw PresetError(preset: name, problem: "sets '\(key)' more than once")
                }
                parameters.append(Parameter(name: key, value: value.removingPercentEncodingIfValid))
            }
            guard !parameters.isEmpty else { throw PresetError(preset: name, problem: "sets no parameter") }
            presets[name] = parameters
        }
    }

    /// A preset name: 1 to 32 of `a-z`, `0-9`, `-`, `_`.
    public static func isValidName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count)
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x5F }
    }

    /// The query with `preset` replaced by the parameters of the presets it names, the request's own
    /// parameters winning.
    /// - Throws: ``RequestError`` for an unknown preset, too many of them, or (presets-only) any other parameter.
    public func expand(_ query: [(name: String, value: String)]) throws(RequestError) -> [(name: String, value: String)] {
        if presetsOnly, let other = query.first(where: { !Self.presetsOnlyParameters.contains($0.name) }) {
            throw RequestError(
                parameter: other.name, problem: "not allowed: this service takes only url and preset (http.presetsOnly)")
        }
        var named = query.filter { $0.name == "preset" }
        if presetsOnly, named.isEmpty {
            // Presets-only answers presets, never the source as it is.
            guard !defaultPreset.isEmpty else {
                throw RequestError(parameter: "preset", problem: "required: this service answers only presets (http.presetsOnly)")
            }
            named = [(name: "preset", value: defaultPreset)]
        }
        guard let list = named.first?.value else { return query }
        guard named.count == 1 else { throw RequestError(parameter: "preset", problem: "given more than once") }
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard names.count <= Self.maxPerRequest else {
            throw RequestError(parameter: "preset", problem: "names more than \(Self.maxPerRequest) presets")
        }
        var merged: [Parameter] = []
        for name in names {
            guard let parameters = presets[name] else {
                throw RequestError(parameter: "preset", problem: "unknown preset '\(name.prefix(32))'")
            }
            for parameter in parameters {
                if let index = merged.firstIndex(where: { $0.name == parameter.name }) {
                    merged[index] = parameter
                } else {
                    merged.append(parameter)
                }
            }
        }
        let explicit = query.filter { $0.name != "preset" }
        let given = Set(explicit.map(\.name))
        return explicit + merged.filter { !given.contains($0.name) }.map { (name: $0.name, value: $0.value) }
    }
}

/// A preset definition the configuration cannot use.
public struct PresetError: Error, Equatable, CustomStringConvertible {
    public let preset: String
    public let problem: String

    public var description: String { "preset '\(preset)': \(problem)" }
}

extension String {
    /// Percent-decoded, or unchanged when it holds no valid percent-encoding.
    var removingPercentEncodingIfValid: String {
        guard contains("%") else { return self }
        return removingPercentEncoding ?? self
    }
}
