import Logging
import NIOCore

/// The `/img` request path as one sequence: memory cache → origin fetch → transform → store.
///
/// It calls the caches, the fetcher and the transformer; none of them calls it.
public final class ImagePipeline: Sendable {
    /// What the pipeline answers with.
    public struct Outcome: Sendable {
        public var variant: CachedVariant
        public var tier: CacheTier
    }

    private let memory: MemoryCache
    private let fetcher: OriginFetcher
    private let pool: TransformPool
    private let transformer: ImageTransformer
    private let maxAgeSeconds: Int
    private let allowAutoAVIF: Bool

    public init(
        memory: MemoryCache, fetcher: OriginFetcher, pool: TransformPool, transformer: ImageTransformer,
        maxAgeSeconds: Int, allowAutoAVIF: Bool
    ) {
        self.memory = memory
        self.fetcher = fetcher
        self.pool = pool
        self.transformer = transformer
        self.maxAgeSeconds = maxAgeSeconds
        self.allowAutoAVIF = allowAutoAVIF
    }

    /// Produces (or finds) the variant `request` asks for, negotiating `format=auto` from `accept`.
    /// - Throws: a ``PublicError`` (``FetchError``, ``ImagingError``).
    public func variant(for request: ImageRequest, accept: String?) async throws -> Outcome {
        let (choice, negotiated) = request.formatChoice(accept: accept, allowAVIF: allowAutoAVIF)
        let key = request.variantKey(choice: choice)
        if let hit = memory.value(for: key) {
            return Outcome(variant: hit, tier: .memory)
        }
        let source = try await fetcher.fetch(request.source)
        let transformer = self.transformer
        let encoded = try await pool.run { try transformer.transform(source.body, request: request, choice: choice) }
        let variant = CachedVariant(
            body: ByteBuffer(bytes: encoded.bytes),
            contentType: encoded.format.mediaType,
            etag: "\"\(sha256Hex(encoded.bytes).prefix(32))\"",
            maxAgeSeconds: maxAgeSeconds,
            variesOnAccept: negotiated)
        memory.insert(variant, for: key)
        return Outcome(variant: variant, tier: .miss)
    }
}
