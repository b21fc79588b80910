import GRDB
import ImageCore

/// One row of the disk cache index: what a cached file holds and how long it stays fresh.
public struct DiskEntry: Sendable, Equatable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "entries"

    /// Whether an entry is a downloaded source or an encoded variant.
    public enum Kind: String, Sendable, Codable {
        case original, variant
    }

    /// Hex SHA-256 identity (variant key, or the original's key).
    public var key: String
    public var kind: Kind
    /// The source's cache key, shared by an original and all its variants (for purges).
    public var sourceKey: String
    /// Bytes in the file.
    public var size: Int
    public var contentType: String
    /// Our strong ETag (variants) or a hash of the bytes (originals).
    public var etag: String
    /// The origin's validators, for revalidation.
    public var originETag: String?
    public var originLastModified: String?
    /// Seconds since 1970.
    public var fetchedAt: Double
    public var expiresAt: Double
    public var lastAccess: Double
    /// What reusing it takes (the origin's `no-cache`, `must-revalidate`).
    public var revalidation: Revalidation
    /// The bytes are a blob in the index (table `bodies`) rather than a file of their own: entries up to
    /// ``DiskCache/Settings/inlineBytes``.
    public var storedInline = false
    /// A variant's watermark image's source key (purges of that URL remove the variant too); nil for
    /// originals and variants without one.
    public var overlaySourceKey: String?

    public init(
        key: String, kind: Kind, sourceKey: String, size: Int, contentType: String, etag: String,
        originETag: String?, originLastModified: String?, fetchedAt: Double, expiresAt: Double,
        lastAccess: Double, revalidation: Revalidation = .none, overlaySourceKey: String? = nil
    ) {
        self.overlaySourceKey = overlaySourceKey
        self.key = key
        self.kind = kind
        self.sourceKey = sourceKey
        self.size = size
        self.contentType = contentType
        self.etag = etag
        self.originETag = originETag
        self.originLastModified = originLastModified
        self.fetchedAt = fetchedAt
        self.expiresAt = expiresAt
        self.lastAccess = lastAccess
        self.revalidation = revalidation
    }

    /// Whether the origin gave a validator, so a stale entry can be revalidated.
    public var hasValidators: Bool { originETag != nil || originLastModified != nil }

    /// The origin's validators for a conditional request; nil when it gave none.
    public var originValidators: OriginValidators? {
        hasValidators ? OriginValidators(etag: originETag, lastModified: originLastModified) : nil
    }
}
