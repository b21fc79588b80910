import Foundation
import ImageCore
import NIOCore

/// What a variant's object in the shared tier carries besides its bytes, as one user-metadata field
/// (`x-amz-meta-imageproxy`: base64 of JSON): what an answer needs (content type, ETag, freshness, the
/// origin's validators, how it may be reused) and what proves the bytes whole (length and SHA-256).
struct SharedVariantMetadata: Codable, Equatable {
    var version = 1
    var sourceKey: String
    var contentType: String
    var etag: String
    var expiresAt: Double
    var madeAt: Double
    var revalidation: Revalidation
    var originETag: String?
    var originLastModified: String?
    /// When the source it was made from was downloaded or revalidated (seconds since 1970): a purge of
    /// the source after that makes it stale.
    var sourceFetchedAt: Double
    var length: Int
    var sha256: String
    /// The watermark image's source key of a variant that drew one (absent in objects written before it).
    var overlaySourceKey: String?

    /// The metadata field's name (S3 sends it back as `x-amz-meta-imageproxy`).
    static let field = "imageproxy"

    init(variant: CachedVariant, bytes: [UInt8], sourceFetchedAt: Double) {
        self.sourceFetchedAt = sourceFetchedAt
        sourceKey = variant.sourceKey
        contentType = variant.contentType
        etag = variant.etag
        expiresAt = variant.expiresAt
        madeAt = variant.madeAt
        revalidation = variant.revalidation
        originETag = variant.originValidators?.etag
        originLastModified = variant.originValidators?.lastModified
        length = bytes.count
        sha256 = sha256Hex(bytes)
        overlaySourceKey = variant.overlaySourceKey
    }

    /// An original's: its index row's fields (the ETag is the row's own hash of the bytes).
    init(original entry: DiskEntry, bytes: [UInt8]) {
        sourceKey = entry.sourceKey
        contentType = entry.contentType
        etag = entry.etag
        expiresAt = entry.expiresAt
        madeAt = entry.fetchedAt
        revalidation = entry.revalidation
        originETag = entry.originETag
        originLastModified = entry.originLastModified
        sourceFetchedAt = entry.fetchedAt
        length = bytes.count
        sha256 = sha256Hex(bytes)
    }

    /// The disk index row of an original read back, under `key`.
    func originalEntry(key: String, now: Double) -> DiskEntry {
        DiskEntry(
            key: key, kind: .original, sourceKey: sourceKey, size: length, contentType: contentType, etag: etag,
            originETag: originETag, originLastModified: originLastModified, fetchedAt: sourceFetchedAt,
            expiresAt: expiresAt, lastAccess: now, revalidation: revalidation)
    }

    /// Read back from an answer's headers (names lower-cased); nil when absent, malformed or not
    /// believable (``isBelievable``): the bucket is written by every replica and by whoever else holds its
    /// credentials, so nothing in it reaches a response header or an arithmetic unchecked.
    init?(headers: [String: String]) {
        guard let encoded = headers["x-amz-meta-" + Self.field], encoded.utf8.count <= 16_384,
            let json = Data(base64Encoded: encoded),
            let decoded = try? JSONDecoder().decode(SharedVariantMetadata.self, from: json), decoded.version == 1,
            decoded.isBelievable
        else { return nil }
        self = decoded
    }

    /// Latest time a stored field may name (the year 9999), in seconds since 1970.
    static let latestTime = 253_402_300_799.0
    /// Largest object the tier reads back (an original: 256 MiB).
    static let largestObject = 256 << 20

    /// Whether every field is one this service could have written: times finite and within 1970...9999,
    /// a length within what the tier reads, a SHA-256 of 64 lowercase hex digits, a content type and
    /// validators that are short printable ASCII (they become response headers), a source key without
    /// control characters.
    var isBelievable: Bool {
        let times = [expiresAt, madeAt, sourceFetchedAt]
        guard times.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= Self.latestTime }) else { return false }
        guard (0...Self.largestObject).contains(length), sha256.utf8.count == 64,
            sha256.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return false }
        guard Self.isHeaderValue(contentType, longest: 128), contentType.contains("/"), Self.isHeaderValue(etag, longest: 256),
            originETag.map({ Self.isHeaderValue($0, longest: 1024) }) ?? true,
            originLastModified.map({ Self.isHeaderValue($0, longest: 128) }) ?? true
        else { return false }
        return [sourceKey, overlaySourceKey ?? "-"].allSatisfy { key in
            !key.isEmpty && key.utf8.count <= 16_384 && !key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        }
    }

    /// Printable ASCII (space to `~`), 1 to `longest` bytes: what a response header may carry.
    static func isHeaderValue(_ text: String, longest: Int) -> Bool {
        (1...longest).contains(text.utf8.count) && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// The user metadata to send with the object.
    var headers: [String: String] {
        let json = (try? JSONEncoder().encode(self)) ?? Data()
        return [Self.field: json.base64EncodedString()]
    }

    /// Whether `bytes` are the whole variant this describes (length and digest).
    func describes(_ bytes: [UInt8]) -> Bool {
        bytes.count == length && sha256Hex(bytes) == sha256
    }

    /// The variant, with `body`.
    func variant(body: [UInt8]) -> CachedVariant {
        let validators = originETag != nil || originLastModified != nil
            ? OriginValidators(etag: originETag, lastModified: originLastModified) : nil
        var variant = CachedVariant(
            body: ByteBuffer(bytes: body), contentType: contentType, etag: etag, expiresAt: expiresAt, storable: true,
            revalidation: revalidation, sourceKey: sourceKey, originValidators: validators, madeAt: madeAt)
        variant.overlaySourceKey = overlaySourceKey
        return variant
    }
}
