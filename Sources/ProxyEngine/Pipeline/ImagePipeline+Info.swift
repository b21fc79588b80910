import Foundation
import ImageCore
import NIOCore

extension ImagePipeline {
    /// `GET /info`: the source's ``ImageInfo`` as JSON, through the same caches, queues,
    /// original cache and limits as images; with `faces`, the faces found in it (``ImageInfo/faces``).
    public func info(
        for source: SourceURL, faces: Bool = false, conditions: ClientConditions, timings: RequestTimings = RequestTimings(),
        priority: WorkQueueState.Priority = .high
    ) async throws -> Outcome {
        let now = Date().timeIntervalSince1970
        timings.sourceHost = source.host
        let sourceKey = sourceKeys.key(for: source)
        let key = VariantKey(hashing: (faces ? "info|v1|faces|" : "info|v1|") + sourceKey)
        let limit = transformer.maxSourcePixels, frameLimit = transformer.maxSourceFrames, allowJXL = transformer.allowJXLInput
        let allowSVG = transformer.allowSVGInput
        return try await shared(
            key: key, source: source, sourceKey: sourceKey, conditions: conditions, now: now, timings: timings, priority: priority
        ) { original in
            let bytes = original.bytes
            let begin = ContinuousClock.now
            var info = try await self.pool.run(requestID: timings.requestID) {
                try ImageInfo(source: bytes, maxSourcePixels: limit, maxSourceFrames: frameLimit, allowJXL: allowJXL, allowSVG: allowSVG)
            }
            if faces {
                let search = try await self.pool.searchFaces(bytes, with: self.transformer, requestID: timings.requestID)
                info.faces = search.faces.map { ImageInfo.FaceRectangle($0, width: search.width, height: search.height) }
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = [UInt8](try encoder.encode(info))
            let variant = CachedVariant(
                body: ByteBuffer(bytes: json), contentType: "application/json", etag: EntityTag.strong(for: json),
                expiresAt: original.expiresAt, storable: original.storable,
                revalidation: original.entry.revalidation, sourceKey: sourceKey,
                originValidators: original.entry.originValidators)
            self.store(variant, bytes: json, key: key, original: original, now: now)
            return Produced(variant: variant, tier: .miss, transformDuration: ContinuousClock.now - begin)
        }
    }
}
