import Configuration
import Foundation
import ImageCore
import ProxyEngine
import SystemPackage

extension ProxyConfiguration {
    /// The file read when no `--config` is given and it exists in the working directory.
    public static let defaultFilePath = "config/imageproxy.yaml"

    /// Loads the configuration: embedded defaults, overridden by the YAML (or JSON) file, overridden
    /// by `IMAGEPROXY_*` environment variables.
    ///
    /// - Parameters:
    ///   - filePath: The file to read; nil reads ``defaultFilePath`` when it exists, else no file.
    ///   - environment: The process environment (only `IMAGEPROXY_*` names are read).
    /// - Throws: ``ConfigurationError`` for an unreadable file, an unknown key or environment name,
    ///   or a malformed value, naming the key and what it accepts.
    public static func load(filePath: String?, environment: [String: String]) async throws -> ProxyConfiguration {
        let settingsByKey = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })
        var providers: [any ConfigProvider] = []

        // Each variable under the name users write (acronyms as words) or its deprecated spelling, handed to
        // swift-configuration's provider under the name it derives from the key.
        var strippedEnvironment: [String: String] = [:]
        var providerSuffixes: [String: String] = [:]
        var deprecatedNames: [String: String] = [:]
        for setting in settings {
            let providerSuffix = ConfigurationSetting.environmentSuffix(forKey: setting.key)
            providerSuffixes[setting.environmentName] = providerSuffix
            if let old = setting.deprecatedEnvironmentName {
                providerSuffixes[old] = providerSuffix
                deprecatedNames[old] = setting.environmentName
            }
        }
        var deprecations: [String] = []
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix(ConfigurationSetting.environmentPrefix) {
            guard let suffix = providerSuffixes[name] else {
                throw ConfigurationError("unknown environment variable \(name)")
            }
            if let current = deprecatedNames[name] {
                guard environment[current] == nil else {
                    throw ConfigurationError("\(name) and \(current) are the same setting: keep \(current)")
                }
                deprecations.append("\(name) is deprecated: name it \(current)")
            }
            strippedEnvironment[suffix] = value
        }
        providers.append(EnvironmentVariablesProvider(environmentVariables: strippedEnvironment))

        var fileLeaves: [String: ConfigurationFileSnapshot.Leaf] = [:]
        let chosenPath = filePath ?? (FileManager.default.fileExists(atPath: defaultFilePath) ? defaultFilePath : nil)
        if let chosenPath {
            let file: FileProvider<ConfigurationFileSnapshot>
            do {
                file = try await FileProvider<ConfigurationFileSnapshot>(filePath: FilePath(chosenPath))
            } catch let error as ConfigurationError {
                throw ConfigurationError("\(chosenPath): \(error.message)")
            } catch {
                throw ConfigurationError("cannot read \(chosenPath): \(error)")
            }
            if let snapshot = file.snapshot() as? ConfigurationFileSnapshot {
                fileLeaves = snapshot.leaves
                if let unknown = snapshot.keys.first(where: { settingsByKey[$0] == nil && !isPresetKey($0) && !isOverlayDefinitionKey($0) }) {
                    throw ConfigurationError("unknown key '\(unknown)' in \(chosenPath)")
                }
                if let nested = snapshot.keys.first(where: { snapshot.leaves[$0] == .unsupported }), let setting = settingsByKey[nested] {
                    throw ConfigurationError(
                        "invalid value for \(nested) in \(chosenPath): expected \(setting.expectation)")
                }
            }
            providers.append(file)
        }

        let reader = ConfigReader(providers: providers)
        var configuration = ProxyConfiguration()
        configuration.deprecations = deprecations
        for setting in settings {
            guard case .invalid(let given) = setting.load(reader, ConfigKey(setting.key), &configuration) else { continue }
            throw ConfigurationError(
                "invalid value '\(given)' for \(setting.key) (\(setting.environmentName)): expected \(setting.expectation)")
        }
        configuration.overlays.definitions = try overlayDefinitions(from: fileLeaves, maxDimension: configuration.image.maxDimension)
        configuration.presets = try presets(
            from: fileLeaves, presetsOnly: configuration.presets.presetsOnly, maxDimension: configuration.image.maxDimension,
            overlays: configuration.overlays, defaultColour: configuration.image.colour,
            defaultPreset: configuration.presets.defaultPreset)
        configuration.fetch.s3.endpoint.takeCredentials(from: environment)
        configuration.cache.shared.endpoint.takeCredentials(from: environment)
        configuration.compat.imgproxy.takeImgproxyEnvironment(environment)
        try configuration.checkDialects()
        return configuration
    }
}
