import Configuration
import Foundation

extension ConfigurationSetting {
    /// A list of strings, each passing `isValid`. In the file a YAML sequence (items keep their commas);
    /// in the environment comma-separated text, or a JSON array of strings when an item holds a comma.
    static func list(
        _ key: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, [String]> & Sendable,
        expectation: String = "a list of strings (comma-separated in the environment, or a JSON array)",
        isValid: @escaping @Sendable (String) -> Bool = { _ in true }
    ) -> ConfigurationSetting {
        parsedList(key, keyPath, expectation: expectation, parse: { $0.allSatisfy(isValid) ? $0 : nil }, show: { $0 })
    }

    /// A list whose items become a component's value: `parse` turns them into it (nil when any item is
    /// malformed), `show` turns it back into items for the status page.
    static func parsedList<Value: Sendable>(
        _ key: String, _ keyPath: any WritableKeyPath<ProxyConfiguration, Value> & Sendable, expectation: String,
        parse: @escaping @Sendable ([String]) -> Value?, show: @escaping @Sendable (Value) -> [String]
    ) -> ConfigurationSetting {
        typed(key, expectation: expectation, keyPath, value: { reader, key in strings(reader, key).flatMap(parse) })
            .reading { show($0[keyPath: keyPath]).joined(separator: ", ") }
    }

    /// A list of integers, each in `range`, kept sorted: a YAML sequence or comma-separated text.
    static func integers(
        _ key: String, _ range: ClosedRange<Int>, _ keyPath: any WritableKeyPath<ProxyConfiguration, [Int]> & Sendable
    ) -> ConfigurationSetting {
        typed(
            key, expectation: "integers in \(range.lowerBound)...\(range.upperBound)", keyPath,
            value: { reader, key in
                (reader.intArray(forKey: key) ?? strings(reader, key).flatMap { items in
                    let numbers = items.compactMap { Int($0) }
                    return numbers.count == items.count ? numbers : nil
                })?.sorted()
            },
            accepts: { !$0.isEmpty && $0.allSatisfy(range.contains) }
        ).reading { $0[keyPath: keyPath].map(String.init).joined(separator: ", ") }
    }

    /// A list's items (trimmed, empty ones dropped): a sequence as it is, text split by ``splitList(_:)``.
    @Sendable static func strings(_ reader: ConfigReader, _ key: ConfigKey) -> [String]? {
        // Text first: the environment's value (which wins over the file) is text, and so is a file's
        // scalar; a file's sequence is not text and is read as an array.
        let items = reader.string(forKey: key).map(splitList) ?? reader.stringArray(forKey: key)
        return items?.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The items of a list given as text: a JSON array of strings when it starts with `[` (so that an
    /// item may hold a comma), else comma-separated.
    static func splitList(_ text: String) -> [String] {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("["), let items = try? JSONDecoder().decode([String].self, from: Data(trimmed.utf8)) {
            return items
        }
        return text.split(separator: ",").map(String.init)
    }
}
