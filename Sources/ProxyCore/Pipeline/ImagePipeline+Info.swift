import Foundation
import NIOCore

extension ImagePipeline {
    /// `GET /info`: the source's ``ImageInfo`` as JSON, through the same caches, single-flight,
    /// original cache and limits as images.
    public func info(
        for source: SourceURL, conditions: ClientConditions, timings: RequestTimings = RequestTimings()
    ) async throws -> Outcome {
        let now = Date().timeIntervalSince1970
        timings.sourceHost = source.host
        let sourceKey = sourceKeys.key(for: source)
        let key = VariantKey(hashing: "info|v1|" + sourceKey)
        let stale: (variant: CachedVariant, tier: CacheTier)?
        switch await lookUp(key, conditions: conditions, now: now, timings: timings) {
        case .found(let outcome): return outcome
        case .stale(let variant, let tier): stale = (variant, tier)
        case .missing: stale = nil
        }
        let flightKey = key.hex + (conditions.onlyIfCached ? "|only-if-cached" : "")
        try admit(flightKey)
        let produced = try await variantFlights.run(key: flightKey, onJoin: { self.metrics.recordDedupJoin(.transform) }) {
            let original = try await self.originalFlights.run(key: sourceKey, onJoin: { self.metrics.recordDedupJoin(.fetch) }) {
                try await self.original(of: source, sourceKey: sourceKey, conditions: conditions, now: now, timings: timings)
            }
            if original.revalidated, let stale { return await self.refresh(stale, key: key, until: original.expiresAt) }
            let bytes = original.bytes
            let limit = self.transformer.maxSourcePixels
            let info = try await timings.measure("transform") {
                try await self.pool.run { try ImageInfo(source: bytes, maxSourcePixels: limit) }
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = [UInt8](try encoder.encode(info))
            let variant = CachedVariant(
                body: ByteBuffer(bytes: json), contentType: "application/json", etag: EntityTag.strong(for: json),
                expiresAt: original.expiresAt, storable: original.storable, variesOnAccept: false, sourceKey: sourceKey)
            self.store(variant, bytes: json, key: key, original: original, now: now)
            return Produced(variant: variant, tier: .miss)
        }
        return outcome(produced.variant, tier: produced.tier, conditions, timings)
    }
}
