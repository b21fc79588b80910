import NIOCore

/// An encoded variant as the caches keep it, ready to be sent.
public struct CachedVariant: Sendable {
    /// The encoded image.
    public var body: ByteBuffer
    /// Its media type.
    public var contentType: String
    /// Strong entity tag, quoted.
    public var etag: String
    /// Seconds a client or CDN may reuse it.
    public var maxAgeSeconds: Int
    /// Whether the format was negotiated from `Accept`.
    public var variesOnAccept: Bool

    public init(body: ByteBuffer, contentType: String, etag: String, maxAgeSeconds: Int, variesOnAccept: Bool) {
        self.body = body
        self.contentType = contentType
        self.etag = etag
        self.maxAgeSeconds = maxAgeSeconds
        self.variesOnAccept = variesOnAccept
    }
}
