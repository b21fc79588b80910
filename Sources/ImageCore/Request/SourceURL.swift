import Foundation

/// An absolute http or https URL without user-info, in canonical form (lower-case scheme and host,
/// no default port, no fragment), so that spellings of one source share a cache key.
public struct SourceURL: Sendable, Hashable, CustomStringConvertible {
    /// The canonical URL text.
    public let absoluteString: String
    /// The lower-cased host name or address literal (IPv6 without brackets).
    public let host: String

    /// Validates and canonicalises `text`.
    /// - Throws: ``RequestError`` on parameter `url` naming what is wrong.
    public init(parsing text: String) throws(RequestError) {
        func bad(_ problem: String) -> RequestError { RequestError(parameter: "url", problem: problem) }
        guard !text.isEmpty else { throw bad("is empty") }
        guard text.utf8.count <= 8192 else { throw bad("is longer than 8192 bytes") }
        guard var components = URLComponents(string: text) else { throw bad("is not a valid URL") }
        guard let scheme = components.scheme?.lowercased() else { throw bad("must be an absolute http or https URL") }
        guard scheme == "http" || scheme == "https" else { throw bad("scheme must be http or https, not \(scheme)") }
        guard components.user == nil, components.password == nil else { throw bad("must not contain user info") }
        guard let host = components.host?.lowercased(), !host.isEmpty else { throw bad("has no host") }
        components.scheme = scheme
        components.host = host
        components.fragment = nil
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        if components.path.isEmpty { components.path = "/" }
        guard let canonical = components.string else { throw bad("is not a valid URL") }
        self.absoluteString = canonical
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
    }

    public var description: String { absoluteString }
}
