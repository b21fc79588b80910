import Configuration
import Foundation
import ImageCore
import ProxyEngine
import SystemPackage
import Yams

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

        var strippedEnvironment: [String: String] = [:]
        let knownSuffixes = Set(settings.map { ConfigurationSetting.environmentSuffix(forKey: $0.key) })
        for (name, value) in environment where name.hasPrefix(ConfigurationSetting.environmentPrefix) {
            let suffix = String(name.dropFirst(ConfigurationSetting.environmentPrefix.count))
            guard knownSuffixes.contains(suffix) else {
                throw ConfigurationError("unknown environment variable \(name)")
            }
            strippedEnvironment[suffix] = value
        }
        providers.append(EnvironmentVariablesProvider(environmentVariables: strippedEnvironment))

        let chosenPath = filePath ?? (FileManager.default.fileExists(atPath: defaultFilePath) ? defaultFilePath : nil)
        if let chosenPath {
            let keys = try fileKeys(at: chosenPath)
            if let unknown = keys.first(where: { settingsByKey[$0] == nil }) {
                throw ConfigurationError("unknown key '\(unknown)' in \(chosenPath)")
            }
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(chosenPath)))
            } catch {
                throw ConfigurationError("cannot read \(chosenPath): \(error)")
            }
        }

        let reader = ConfigReader(providers: providers)
        var configuration = ProxyConfiguration()
        for setting in settings {
            let key = ConfigKey(setting.key)
            if let applyItems = setting.applyItems {
                // The environment's text is split here (JSON array or commas); a file's sequence is taken
                // item by item, so an item keeps its commas.
                let environmentText = strippedEnvironment[ConfigurationSetting.environmentSuffix(forKey: setting.key)]
                guard
                    let items = environmentText.map(ConfigurationSetting.splitList) ?? reader.stringArray(forKey: key)
                        ?? reader.string(forKey: key).map(ConfigurationSetting.splitList)
                else { continue }
                guard applyItems(&configuration, items) else {
                    throw ConfigurationError(
                        "invalid value '\(items.joined(separator: ", "))' for \(setting.key) (\(setting.environmentName)): "
                            + "expected \(setting.expectation)")
                }
                continue
            }
            guard let text = reader.string(forKey: key) else { continue }
            guard setting.apply(&configuration, text) else {
                throw ConfigurationError(
                    "invalid value '\(text)' for \(setting.key) (\(setting.environmentName)): expected \(setting.expectation)")
            }
        }
        return configuration
    }

    /// The dotted leaf keys of a YAML (or JSON, a subset of YAML) file.
    private static func fileKeys(at path: String) throws -> [String] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError("cannot read configuration file \(path)")
        }
        let document: Any?
        do {
            document = try Yams.load(yaml: text)
        } catch {
            throw ConfigurationError("\(path) is not valid YAML: \(error)")
        }
        guard let document else { return [] }
        guard let mapping = document as? [String: Any] else {
            throw ConfigurationError("\(path) must hold a mapping of keys to values")
        }
        var keys: [String] = []
        func collect(_ mapping: [String: Any], prefix: String) {
            for (name, value) in mapping {
                let key = prefix.isEmpty ? name : prefix + "." + name
                if let nested = value as? [String: Any] { collect(nested, prefix: key) } else { keys.append(key) }
            }
        }
        collect(mapping, prefix: "")
        return keys.sorted()
    }
}
