import ImageCore
import NIOCore

extension CachedVariant {
    /// A variant read back from the disk tier.
    init(entry: DiskEntry, body: ByteBuffer) {
        self.init(
            body: body, contentType: entry.contentType, etag: entry.etag, expiresAt: entry.expiresAt, storable: true,
            revalidation: entry.revalidation, sourceKey: entry.sourceKey, originValidators: entry.originValidators,
            madeAt: entry.fetchedAt)
        overlaySourceKey = entry.overlaySourceKey
    }

    /// The index row for a variant that came whole from another tier (the shared tier), with the origin
    /// validators it carries.
    func diskEntry(key: String, now: Double) -> DiskEntry {
        DiskEntry(
            key: key, kind: .variant, sourceKey: sourceKey, size: body.readableBytes, contentType: contentType,
            etag: etag, originETag: originValidators?.etag, originLastModified: originValidators?.lastModified,
            fetchedAt: madeAt, expiresAt: expiresAt, lastAccess: now, revalidation: revalidation, overlaySourceKey: overlaySourceKey)
    }

    /// The index row for this variant; it carries its original's validators so that, once stale, it is
    /// kept for revalidation like the original.
    func diskEntry(key: String, original: DiskEntry, now: Double) -> DiskEntry {
        DiskEntry(
            key: key, kind: .variant, sourceKey: sourceKey, size: body.readableBytes, contentType: contentType,
            etag: etag, originETag: original.originETag, originLastModified: original.originLastModified,
            fetchedAt: madeAt, expiresAt: expiresAt, lastAccess: now, revalidation: revalidation, overlaySourceKey: overlaySourceKey)
    }
}
