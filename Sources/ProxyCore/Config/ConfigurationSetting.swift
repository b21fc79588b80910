import Foundation
import ImageCore
import ProxyEngine

/// One configuration key: its dotted name, what it accepts, and how it updates a ``ProxyConfiguration``.
struct ConfigurationSetting: Sendable {
    /// Dotted key as written in the YAML file, e.g. `cache.memoryBytes`.
    let key: String
    /// What a valid value looks like, for error messages.
    let expectation: String
    /// Applies a textual value; returns false when the text is malformed or out of range.
    let apply: @Sendable (inout ProxyConfiguration, String) -> Bool
    /// Applies a list's items as they are (commas inside an item kept); nil for single values. A list is
    /// a YAML sequence; in the environment comma-separated text, or a JSON array of strings when an item
    /// itself holds a comma.
    var applyItems: (@Sendable (inout ProxyConfiguration, [String]) -> Bool)?
    /// The current value as text, as the status page shows it.
    var read: @Sendable (ProxyConfiguration) -> String = { _ in "" }
    /// A credential (signing keys, tokens, origin headers): shown masked.
    var isSecret = false

    /// This setting, its value read by `read`.
    func reading(_ read: @escaping @Sendable (ProxyConfiguration) -> String) -> ConfigurationSetting {
        var copy = self
        copy.read = read
        return copy
    }

    /// This setting, marked as a credential.
    func secret() -> ConfigurationSetting {
        var copy = self
        copy.isSecret = true
        return copy
    }

    /// The environment variable that overrides this key: `IMAGEPROXY_` + upper snake case.
    var environmentName: String {
        ConfigurationSetting.environmentPrefix + ConfigurationSetting.environmentSuffix(forKey: key)
    }

    static let environmentPrefix = "IMAGEPROXY_"

    /// `cache.memoryBytes` → `CACHE_MEMORY_BYTES`, the way swift-configuration's environment provider encodes keys.
    static func environmentSuffix(forKey key: String) -> String {
        var output = ""
        for component in key.split(separator: ".") {
            if !output.isEmpty { output += "_" }
            var previous: Character?
            for character in component {
                if let previous, previous.isLowercase, character.isUppercase { output += "_" }
                output.append(character)
                previous = character
            }
        }
        return output.uppercased()
    }

    static func integer(
        _ key: String, _ range: ClosedRange<Int>, _ keyPath: any WritableKeyPath<ProxyConfiguration, Int> & Sendable
    ) -> ConfigurationSetting {
        ConfigurationSetting(key: key, expectation: "an integer in \(range.lowerBound)...\(range.upperBound)") {
            configuration, text in
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else { return false }
            configuration[keyPath: keyPath] = value
            return true
        }.reading { String($0[keyPath: keyPath]) }
    }

    static func boolean(_ key: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, Bool> & Sendable) -> ConfigurationSetting {
        ConfigurationSetting(key: key, expectation: "true or false") { configuration, text in
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "yes", "1", "on": configuration[keyPath: keyPath] = true
            case "false", "no", "0", "off": configuration[keyPath: keyPath] = false
            default: return false
            }
            return true
        }.reading { String($0[keyPath: keyPath]) }
    }

    static func text(
        _ key: String, _ expectation: String = "a non-empty string",
        _ keyPath: any WritableKeyPath<ProxyConfiguration, String> & Sendable,
        allowed: Set<String>? = nil, allowEmpty: Bool = false
    ) -> ConfigurationSetting {
        ConfigurationSetting(key: key, expectation: expectation) { configuration, text in
            guard allowEmpty || !text.isEmpty, allowed.map({ $0.contains(text) }) ?? true else { return false }
            configuration[keyPath: keyPath] = text
            return true
        }.reading { $0[keyPath: keyPath] }
    }
}

extension ConfigurationSetting {
    /// A list of strings; given as text, items are separated by commas. Each item must pass `isValid`.
    static func list(
        _ key: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, [String]> & Sendable,
        expectation: String = "a list of strings (comma-separated in the environment, or a JSON array)",
        isValid: @escaping @Sendable (String) -> Bool = { _ in true }
    ) -> ConfigurationSetting {
        .items(key, expectation: expectation) { configuration, items in
            guard items.allSatisfy(isValid) else { return false }
            configuration[keyPath: keyPath] = items
            return true
        }.reading { $0[keyPath: keyPath].joined(separator: ", ") }
    }

    /// A list setting whose items `apply` turns into a value (items trimmed, empty ones dropped).
    static func items(
        _ key: String, expectation: String, _ apply: @escaping @Sendable (inout ProxyConfiguration, [String]) -> Bool
    ) -> ConfigurationSetting {
        var setting = ConfigurationSetting(key: key, expectation: expectation) { configuration, text in
            apply(&configuration, splitList(text))
        }
        setting.applyItems = { configuration, items in
            apply(&configuration, items.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return setting
    }

    /// The items of a list given as text: a JSON array of strings when it starts with `[` (so that an
    /// item may hold a comma), else comma-separated.
    static func splitList(_ text: String) -> [String] {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("["), let items = try? JSONDecoder().decode([String].self, from: Data(trimmed.utf8)) {
            return items.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
