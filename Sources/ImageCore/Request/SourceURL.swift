import Foundation

/// A source: an absolute http or https URL without user-info, or an object `s3://BUCKET/KEY` on the
/// operator's S3 endpoint, in canonical form (lower-case scheme and host, no default port, no fragment),
/// so that spellings of one source share a cache key.
public struct SourceURL: Sendable, Hashable, CustomStringConvertible {
    /// The canonical URL text.
    public let absoluteString: String
    /// The lower-cased host name or address literal (IPv6 without brackets); an S3 source's bucket.
    public let host: String
    /// The bucket and key of an `s3://` source (the key percent-encoded as in the URL, without its
    /// leading slash); nil for http(s).
    public let object: S3Object?

    /// An object in an S3 bucket.
    public struct S3Object: Sendable, Hashable {
        /// The bucket name (3...63 of `a-z 0-9 . -`, S3's rules).
        public let bucket: String
        /// The object key, percent-encoded as in the URL path (no leading slash).
        public let encodedKey: String
    }

    /// Validates and canonicalises `text`.
    /// - Throws: ``RequestError`` on parameter `url` naming what is wrong.
    public init(parsing text: String) throws(RequestError) {
        func bad(_ problem: String) -> RequestError { RequestError(parameter: "url", problem: problem) }
        guard !text.isEmpty else { throw bad("is empty") }
        guard text.utf8.count <= 8192 else { throw bad("is longer than 8192 bytes") }
        guard var components = URLComponents(string: text) else { throw bad("is not a valid URL") }
        guard let scheme = components.scheme?.lowercased() else { throw bad("must be an absolute http, https or s3 URL") }
        if scheme == "s3" {
            self = try Self.s3(components, bad: bad)
            return
        }
        guard scheme == "http" || scheme == "https" else { throw bad("scheme must be http, https or s3, not \(scheme)") }
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
        self.object = nil
    }

    private init(absoluteString: String, host: String, object: S3Object?) {
        self.absoluteString = absoluteString
        self.host = host
        self.object = object
    }

    /// `s3://BUCKET/KEY`: a bucket by S3's naming rules, a non-empty key without `.` or `..` segments,
    /// no user info, port, query or fragment.
    private static func s3(_ components: URLComponents, bad: (String) -> RequestError) throws(RequestError) -> SourceURL {
        guard components.user == nil, components.password == nil else { throw bad("must not contain user info") }
        guard components.port == nil else { throw bad("an s3 URL has no port") }
        guard components.query == nil, components.fragment == nil else { throw bad("an s3 URL has no query or fragment") }
        guard let bucket = components.host, Self.isBucketName(bucket) else {
            throw bad("s3 bucket must be 3-63 lower-case letters, digits, dots or hyphens")
        }
        let encodedPath = components.percentEncodedPath
        guard encodedPath.count > 1 else { throw bad("s3 URL has no object key") }
        let encodedKey = String(encodedPath.dropFirst())
        let segments = components.path.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0 == ".." || $0 == "." }) else { throw bad("s3 key must not contain . or .. segments") }
        return SourceURL(
            absoluteString: "s3://\(bucket)/\(encodedKey)", host: bucket,
            object: S3Object(bucket: bucket, encodedKey: encodedKey))
    }

    /// S3's bucket naming rules: 3...63 characters of `a-z 0-9 . -`, starting and ending with a letter or digit.
    public static func isBucketName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        guard alphanumeric(bytes[0]), alphanumeric(bytes[bytes.count - 1]) else { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == 0x2E || $0 == 0x2D }
    }

    public var description: String { absoluteString }
}
