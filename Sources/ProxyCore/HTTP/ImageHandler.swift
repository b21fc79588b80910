import Foundation
import HTTPTypes
import Hummingbird

/// `GET /img`: parse, run the pipeline, answer with caching headers (or 304).
struct ImageHandler: Sendable {
    let pipeline: ImagePipeline
    let limits: ImageRequest.Limits
    /// `stale-while-revalidate` seconds, 0 for none.
    let staleWhileRevalidate: Int

    func handle(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        let query = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        let imageRequest = try ImageRequest(query: query, limits: limits)
        let conditions = ImagePipeline.ClientConditions(
            accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
            onlyIfCached: request.headers[.cacheControl].map { $0.lowercased().contains("only-if-cached") } ?? false)
        let outcome = try await pipeline.variant(for: imageRequest, conditions: conditions, timings: context.timings)
        let variant = outcome.variant

        var headers = HTTPFields()
        headers[.eTag] = variant.etag
        headers[.cacheControl] = cacheControl(for: variant)
        if variant.variesOnAccept { headers[.vary] = "Accept" }
        headers[.xCache] = outcome.tier.rawValue
        if outcome.notModified {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = variant.contentType
        headers[.contentLength] = String(variant.body.readableBytes)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: variant.body))
    }

    /// `public, max-age=<remaining freshness>` (+ `stale-while-revalidate`), or `no-store` when the
    /// origin forbade storing.
    func cacheControl(for variant: CachedVariant) -> String {
        guard variant.storable else { return "no-store" }
        var value = "public, max-age=\(variant.remainingFreshness(at: Date().timeIntervalSince1970))"
        if staleWhileRevalidate > 0 { value += ", stale-while-revalidate=\(staleWhileRevalidate)" }
        return value
    }
}

extension HTTPField.Name {
    /// Which cache tier answered: memory, disk or miss.
    static let xCache = HTTPField.Name("X-Cache")!
}
