import Foundation

/// Derives the cache identity of a source: its canonical URL without the query parameters that
/// change on every page view but not the image (presigned-URL signatures, expiry stamps).
public struct SourceKeyPolicy: Sendable {
    private let exactNames: Set<String>
    private let prefixes: [String]

    /// - Parameter ignoredParameters: names to leave out, case-insensitive; a trailing `*` matches a prefix.
    public init(ignoredParameters: [String]) {
        var exact: Set<String> = []
        var prefixes: [String] = []
        for pattern in ignoredParameters.map({ $0.lowercased() }) {
            if pattern.hasSuffix("*") { prefixes.append(String(pattern.dropLast())) } else { exact.insert(pattern) }
        }
        self.exactNames = exact
        self.prefixes = prefixes
    }

    /// The cache key text of `source`.
    public func key(for source: SourceURL) -> String {
        // Fast path (every request comes here): no query, nothing to drop.
        guard source.absoluteString.contains("?") else { return source.absoluteString }
        guard exactNames.count + prefixes.count > 0, var components = URLComponents(string: source.absoluteString),
            let items = components.percentEncodedQueryItems
        else { return source.absoluteString }
        let kept = items.filter { item in
            let name = item.name.lowercased()
            return !exactNames.contains(name) && !prefixes.contains { name.hasPrefix($0) }
        }
        guard kept.count != items.count else { return source.absoluteString }
        components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        return components.string ?? source.absoluteString
    }
}
