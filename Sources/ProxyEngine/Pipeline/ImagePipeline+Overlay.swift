import Foundation
import ImageCore

extension ImagePipeline {
    /// The watermark image of `source`: in hand while fresh, else through the original cache and the
    /// download queue like any source (the same address policy, allowlist and limits; revalidated when
    /// stale), with a new identity when its bytes changed.
    /// - Throws: ``OverlayFetchError`` carrying the failure's status.
    func overlayImage(
        _ source: SourceURL, conditions: ClientConditions, now: Double, timings: RequestTimings, priority: WorkQueueState.Priority
    ) async throws -> OverlayImages.Image {
        let sourceKey = sourceKeys.key(for: source)
        if let held = overlayImages.fresh(sourceKey, now: now) { return held }
        do {
            let original = try await self.original(
                of: source, sourceKey: sourceKey, conditions: ClientConditions(onlyIfCached: conditions.onlyIfCached), now: now,
                timings: timings, priority: priority)
            return overlayImages.keep(original.bytes, for: sourceKey, until: original.expiresAt)
        } catch let error as any PublicError {
            throw OverlayFetchError(underlying: error)
        }
    }

    /// Drops the watermark image held for `sourceKey` (a purge of its URL): the next variant that draws
    /// it fetches it again. Returns whether one was held.
    public func forgetOverlayImage(sourceKey: String) -> Bool {
        overlayImages.forget(sourceKey)
    }

    /// Drops every watermark image held (a purge of everything); returns how many.
    public func forgetOverlayImages() -> Int {
        overlayImages.forgetAll()
    }
}
