import Configuration
import Foundation
import ImageCore
import ProxyEngine

/// One configuration key: its dotted name, what it accepts, and how its value, read by type through
/// swift-configuration's `ConfigReader`, updates a ``ProxyConfiguration``.
struct ConfigurationSetting: Sendable {
    /// What reading a key found.
    enum Outcome: Equatable {
        /// No provider sets the key: the default stays.
        case absent
        /// The value was read and applied.
        case applied
        /// The value (shown as given) is not what the key accepts.
        case invalid(String)
    }

    /// Dotted key as written in the YAML file, e.g. `cache.memoryBytes`.
    let key: String
    /// What a valid value looks like, for error messages.
    let expectation: String
    /// Reads the key's value from `reader` by type, checks it and applies it.
    let load: @Sendable (_ reader: ConfigReader, _ key: ConfigKey, _ configuration: inout ProxyConfiguration) -> Outcome
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

    /// The environment variable that overrides this key: `IMAGEPROXY_` + the key in upper snake case, an
    /// acronym one word (`image.allowJXLInput` → `IMAGEPROXY_IMAGE_ALLOW_JXL_INPUT`).
    var environmentName: String {
        ConfigurationSetting.environmentPrefix + ConfigurationSetting.environmentWords(forKey: key)
    }

    /// The spelling before acronyms were words (`IMAGEPROXY_IMAGE_ALLOW_JXLINPUT`), still accepted with a
    /// warning in the log; nil when it is the same as ``environmentName``.
    var deprecatedEnvironmentName: String? {
        let old = ConfigurationSetting.environmentPrefix + ConfigurationSetting.environmentSuffix(forKey: key)
        return old == environmentName ? nil : old
    }

    static let environmentPrefix = "IMAGEPROXY_"

    /// `image.allowJXLInput` → `IMAGE_ALLOW_JXL_INPUT`: a word starts at an upper-case letter after a lower-case
    /// letter or digit, and at the last capital of an acronym followed by a lower-case letter.
    static func environmentWords(forKey key: String) -> String {
        var output = ""
        for component in key.split(separator: ".") {
            if !output.isEmpty { output += "_" }
            let characters = Array(component)
            for (index, character) in characters.enumerated() {
                if index > 0, character.isUppercase {
                    let previous = characters[index - 1]
                    let next = index + 1 < characters.count ? characters[index + 1] : nil
                    if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) { output += "_" }
                }
                output.append(character)
            }
        }
        return output.uppercased()
    }

    /// `cache.memoryBytes` → `CACHE_MEMORY_BYTES`, the way swift-configuration's environment provider encodes keys
    /// (an acronym runs into the next word: `ALLOW_JXLINPUT`).
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

    /// The key's value as given, for an error message; nil when no provider sets it.
    static func given(_ reader: ConfigReader, _ key: ConfigKey) -> String? {
        reader.string(forKey: key) ?? reader.stringArray(forKey: key)?.joined(separator: ", ")
    }

    /// A setting of a typed value: `value` reads it (nil when it is not of the type), `accepts` checks it.
    static func typed<Value: Sendable>(
        _ key: String, expectation: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, Value> & Sendable,
        value: @escaping @Sendable (ConfigReader, ConfigKey) -> Value?,
        accepts: @escaping @Sendable (Value) -> Bool = { _ in true }
    ) -> ConfigurationSetting {
        ConfigurationSetting(key: key, expectation: expectation) { reader, configKey, configuration in
            guard let given = given(reader, configKey) else { return .absent }
            guard let read = value(reader, configKey), accepts(read) else { return .invalid(given) }
            configuration[keyPath: keyPath] = read
            return .applied
        }
    }

    static func integer(
        _ key: String, _ range: ClosedRange<Int>, _ keyPath: any WritableKeyPath<ProxyConfiguration, Int> & Sendable
    ) -> ConfigurationSetting {
        typed(
            key, expectation: "an integer in \(range.lowerBound)...\(range.upperBound)", keyPath,
            value: { $0.int(forKey: $1) }, accepts: { range.contains($0) }
        ).reading { String($0[keyPath: keyPath]) }
    }

    static func boolean(_ key: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, Bool> & Sendable) -> ConfigurationSetting {
        typed(key, expectation: "true or false", keyPath, value: { $0.bool(forKey: $1) })
            .reading { String($0[keyPath: keyPath]) }
    }

    static func text(
        _ key: String, _ expectation: String = "a non-empty string",
        _ keyPath: any WritableKeyPath<ProxyConfiguration, String> & Sendable,
        allowed: Set<String>? = nil, allowEmpty: Bool = false, accepts: @escaping @Sendable (String) -> Bool = { _ in true }
    ) -> ConfigurationSetting {
        typed(
            key, expectation: expectation, keyPath, value: { $0.string(forKey: $1) },
            accepts: { text in (allowEmpty || !text.isEmpty) && (allowed?.contains(text) ?? true) && accepts(text) }
        ).reading { $0[keyPath: keyPath] }
    }

    /// One of an enumeration's raw values, read as the enumeration by the reader.
    static func choice<Value: RawRepresentable<String> & Sendable>(
        _ key: String, _ expectation: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, Value> & Sendable
    ) -> ConfigurationSetting {
        typed(key, expectation: expectation, keyPath, value: { $0.string(forKey: $1, as: Value.self) })
            .reading { $0[keyPath: keyPath].rawValue }
    }

    /// A value parsed from text by `parse` (nil when malformed), e.g. `host:port`.
    static func parsed<Value: Sendable>(
        _ key: String, _ expectation: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, Value> & Sendable,
        _ parse: @escaping @Sendable (String) -> Value?
    ) -> ConfigurationSetting {
        typed(key, expectation: expectation, keyPath, value: { reader, key in reader.string(forKey: key).flatMap(parse) })
    }
}
