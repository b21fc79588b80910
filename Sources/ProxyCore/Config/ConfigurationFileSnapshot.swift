import Configuration
import Foundation
import Yams

/// The configuration file (YAML, or JSON as a subset of it) as swift-configuration's file snapshot,
/// parsed once by Yams: values are read by key and type through `ConfigReader`, and ``keys`` lists every
/// leaf key the file sets, so that a misspelt one is reported instead of silently ignored.
///
/// Scalars convert as YAML's core schema says (Yams' constructors: `0x10`, `1_000`, `yes`/`no`); a
/// sequence is a list whose items keep their commas.
struct ConfigurationFileSnapshot: FileConfigSnapshot {
    /// No options: the file's format is YAML.
    struct ParsingOptions: FileParsingOptions {
        static var `default`: ParsingOptions { ParsingOptions() }
    }

    /// One scalar as written, with the integer and boolean Yams reads in it (nil when it holds none).
    struct Scalar: Sendable, Equatable {
        var text: String
        var integer: Int?
        var boolean: Bool?
    }

    /// What a leaf key holds.
    enum Leaf: Sendable, Equatable {
        case scalar(Scalar)
        case sequence([Scalar])
        /// A sequence holding mappings or sequences: no setting accepts it.
        case unsupported
    }

    let providerName: String
    /// The file's leaves by dotted key (`cache.memoryBytes`).
    let leaves: [String: Leaf]

    /// The dotted leaf keys the file sets, sorted.
    var keys: [String] { leaves.keys.sorted() }

    init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        let bytes = data.withUnsafeBytes { Data($0) }
        let root: Node?
        do {
            root = try Yams.compose(yaml: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw ConfigurationError("the file is not valid YAML: \(error)")
        }
        self.providerName = providerName
        guard let root else {
            self.leaves = [:]
            return
        }
        guard let mapping = root.mapping else { throw ConfigurationError("the file must hold a mapping of keys to values") }
        var leaves: [String: Leaf] = [:]
        Self.collect(mapping, prefix: "", into: &leaves)
        self.leaves = leaves
    }

    private static func collect(_ mapping: Node.Mapping, prefix: String, into leaves: inout [String: Leaf]) {
        for (name, value) in mapping {
            let key = prefix.isEmpty ? name.string ?? "" : prefix + "." + (name.string ?? "")
            switch value {
            case .mapping(let nested): collect(nested, prefix: key, into: &leaves)
            case .scalar(let scalar): leaves[key] = .scalar(Self.scalar(scalar))
            case .sequence(let items):
                let scalars = items.compactMap { $0.scalar.map(Self.scalar) }
                leaves[key] = scalars.count == items.count ? .sequence(scalars) : .unsupported
            case .alias: leaves[key] = .unsupported
            }
        }
    }

    private static func scalar(_ scalar: Node.Scalar) -> Scalar {
        Scalar(text: scalar.string, integer: Int.construct(from: scalar), boolean: Bool.construct(from: scalar))
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let encodedKey = key.components.joined(separator: ".")
        guard let leaf = leaves[encodedKey] else { return LookupResult(encodedKey: encodedKey, value: nil) }
        guard let content = Self.content(of: leaf, as: type) else {
            throw ConfigurationError("the value of \(encodedKey) is not \(type.rawValue)")
        }
        return LookupResult(encodedKey: encodedKey, value: ConfigValue(content, isSecret: false))
    }

    /// The leaf as `type`, or nil when it cannot be read so.
    static func content(of leaf: Leaf, as type: ConfigType) -> ConfigContent? {
        switch (leaf, type) {
        case (.scalar(let scalar), .string): .string(scalar.text)
        case (.scalar(let scalar), .int): scalar.integer.map(ConfigContent.int)
        case (.scalar(let scalar), .bool): scalar.boolean.map(ConfigContent.bool)
        case (.sequence(let items), .stringArray): .stringArray(items.map(\.text))
        case (.sequence(let items), .intArray):
            items.allSatisfy({ $0.integer != nil }) ? .intArray(items.compactMap(\.integer)) : nil
        default: nil
        }
    }

    var description: String { "\(providerName)[\(leaves.count) values]" }
    var debugDescription: String { "\(providerName)[\(keys.joined(separator: ", "))]" }
}
