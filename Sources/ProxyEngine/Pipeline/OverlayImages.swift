import ImageCore
import Synchronization

/// Watermark images in hand, by source key, each with its identity (a digest of its bytes, part of
/// every variant key that draws it) and how long it stays fresh. When one goes stale, the pipeline
/// fetches it again through the original cache (revalidated or downloaded), so a changed image gets a
/// new identity and makes new variants. Bounded by bytes: when full, it starts afresh.
final class OverlayImages: Sendable {
    /// One overlay image.
    struct Image: Sendable {
        var bytes: [UInt8]
        /// Hex SHA-256 of `bytes`.
        var identity: String
        var expiresAt: Double
    }

    private let images = Mutex<(entries: [String: Image], bytes: Int)>(([:], 0))
    private let capacityBytes: Int

    init(capacityBytes: Int = 32 << 20) {
        self.capacityBytes = capacityBytes
    }

    /// The image of `sourceKey` while fresh at `now`.
    func fresh(_ sourceKey: String, now: Double) -> Image? {
        images.withLock { held in
            guard let image = held.entries[sourceKey], image.expiresAt > now else { return nil }
            return image
        }
    }

    /// Drops the image of `sourceKey` (a purge of its URL); returns whether one was held.
    @discardableResult
    func forget(_ sourceKey: String) -> Bool {
        images.withLock { held in
            guard let old = held.entries.removeValue(forKey: sourceKey) else { return false }
            held.bytes -= old.bytes.count
            return true
        }
    }

    /// Drops every image (a purge of everything); returns how many were held.
    @discardableResult
    func forgetAll() -> Int {
        images.withLock { held in
            let count = held.entries.count
            held = ([:], 0)
            return count
        }
    }

    /// Keeps `bytes` as the image of `sourceKey` until `expiresAt`, and returns it with its identity.
    func keep(_ bytes: [UInt8], for sourceKey: String, until expiresAt: Double) -> Image {
        let image = Image(bytes: bytes, identity: sha256Hex(bytes), expiresAt: expiresAt)
        images.withLock { held in
            if let old = held.entries[sourceKey] { held.bytes -= old.bytes.count }
            if held.bytes + bytes.count > capacityBytes { held = ([:], 0) }
            held.entries[sourceKey] = image
            held.bytes += bytes.count
        }
        return image
    }
}
