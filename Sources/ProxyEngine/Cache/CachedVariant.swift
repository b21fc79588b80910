import Foundation
import ImageCore
import NIOCore

/// An encoded variant as the caches keep it, ready to be sent.
public struct CachedVariant: Sendable {
    /// The encoded image.
    public var body: ByteBuffer
    /// Its media type.
    public var contentType: String
    /// Strong entity tag, quoted.
    public var etag: String
    /// When it stops being fresh (seconds since 1970): the freshness of the original it was made from.
    public var expiresAt: Double
    /// False when the origin forbade storing (`no-store`, `private`): sent with `Cache-Control: no-store`.
    public var storable: Bool
    /// What reusing it takes (the origin's `no-cache`, `must-revalidate`).
    public var revalidation: Revalidation
    /// The source's cache key, for purges.
    public var sourceKey: String
    /// The origin's validators of the source it was made from: once stale, a conditional request with
    /// them (304) makes it fresh again without a download or a transform.
    public var originValidators: OriginValidators?
    /// When it was made (seconds since 1970): its `Last-Modified` when the origin sent none.
    public var madeAt: Double
    /// The cache key of the watermark image it drew, if any: a purge of that image's URL removes the
    /// variant too.
    public var overlaySourceKey: String?

    public init(
        body: ByteBuffer, contentType: String, etag: String, expiresAt: Double, storable: Bool,
        revalidation: Revalidation = .none, sourceKey: String, originValidators: OriginValidators? = nil,
        madeAt: Double = Date().timeIntervalSince1970
    ) {
        self.originValidators = originValidators
        self.madeAt = madeAt
        self.body = body
        self.contentType = contentType
        self.etag = etag
        self.expiresAt = expiresAt
        self.storable = storable
        self.revalidation = revalidation
        self.sourceKey = sourceKey
    }

    /// Whether it may answer a request at `now` without asking the origin: fresh, or stale for a client
    /// that said `only-if-cached` when the origin allows stale reuse.
    public func isUsable(at now: Double, onlyIfCached: Bool) -> Bool {
        expiresAt > now || (onlyIfCached && revalidation == .none)
    }

    /// The origin's `Last-Modified` when it looks like an HTTP date (letters, digits, spaces, commas and
    /// colons, at most 40 characters); nil otherwise (answers then say when it was made, ``madeAt``).
    public var originLastModified: String? {
        guard let origin = originValidators?.lastModified, origin.utf8.count <= 40,
            origin.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || " ,:".contains($0)) })
        else { return nil }
        return origin
    }

    /// Whole seconds of freshness left at `now` (0 when stale).
    public func remainingFreshness(at now: Double) -> Int {
        max(0, Int((expiresAt - now).rounded(.down)))
    }
}
