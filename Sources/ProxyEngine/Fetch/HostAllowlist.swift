import ImageCore

/// Source host patterns a deployment accepts: `images.example.com` (exactly) or `*.example.com`
/// (any subdomain). Empty allows every host.
public struct HostAllowlist: Sendable, Equatable {
    /// The patterns as given (lower-cased).
    public let patterns: [String]
    private let exact: Set<String>
    private let suffixes: [String]

    /// An allowlist of `patterns`; none allows every host.
    public init(patterns: [String]) {
        self.patterns = patterns.map { $0.lowercased() }
        var exact: Set<String> = []
        var suffixes: [String] = []
        for pattern in self.patterns {
            if pattern.hasPrefix("*.") { suffixes.append(String(pattern.dropFirst())) } else { exact.insert(pattern) }
        }
        self.exact = exact
        self.suffixes = suffixes
    }

    /// Whether any host is allowed.
    public var allowsAll: Bool { exact.isEmpty && suffixes.isEmpty }

    /// Whether `host` (lower case) is allowed.
    public func allows(_ host: String) -> Bool {
        allowsAll || exact.contains(host) || suffixes.contains { host.hasSuffix($0) && host.count > $0.count }
    }
}
