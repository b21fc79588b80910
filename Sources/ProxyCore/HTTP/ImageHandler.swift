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
        let conditions = Self.conditions(of: request)
        let outcome = try await pipeline.variant(for: imageRequest, conditions: conditions, timings: context.timings)
        return respond(with: outcome)
    }

    /// `GET /info?url=`: the source's size, format, alpha, frames, bytes, dominant colour and BlurHash.
    func info(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        var url: String?
        for (name, value) in request.uri.queryParameters {
            guard name == "url" else { throw RequestError(parameter: String(name), problem: "unknown parameter") }
            guard url == nil else { throw RequestError(parameter: "url", problem: "given more than once") }
            url = String(value)
        }
        guard let url else { throw RequestError(parameter: "url", problem: "is required") }
        let outcome = try await pipeline.info(
            for: try SourceURL(parsing: url), conditions: Self.conditions(of: request), timings: context.timings)
        return respond(with: outcome)
    }

    static func conditions(of request: Request) -> ImagePipeline.ClientConditions {
        ImagePipeline.ClientConditions(
            accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
            onlyIfCached: request.headers[.cacheControl].map { $0.lowercased().contains("only-if-cached") } ?? false)
    }

    /// The response for a pipeline outcome: 200 with the body, or 304, with the caching headers.
    func respond(with outcome: ImagePipeline.Outcome) -> Response {
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
