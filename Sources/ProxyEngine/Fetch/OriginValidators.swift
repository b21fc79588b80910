import ImageCore

/// What an origin said to identify a version of a source, for conditional requests.
public struct OriginValidators: Sendable, Equatable {
    /// The origin's `ETag`, as sent.
    public var etag: String?
    /// The origin's `Last-Modified`, as sent.
    public var lastModified: String?

    public init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }
}
