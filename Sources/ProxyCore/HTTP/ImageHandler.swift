import Foundation
import HTTPTypes
import Hummingbird

/// `GET /img`: parse, run the pipeline, answer with caching headers (or 304).
struct ImageHandler: Sendable {
    let pipeline: ImagePipeline
    let limits: ImageRequest.Limits

    func handle(_ request: Request, context: some RequestContext) async throws -> Response {
        let query = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        let imageRequest = try ImageRequest(query: query, limits: limits)
        let outcome = try await pipeline.variant(for: imageRequest, accept: request.headers[.accept])
        let variant = outcome.variant

        var headers = HTTPFields()
        headers[.eTag] = variant.etag
        headers[.cacheControl] = "public, max-age=\(variant.maxAgeSeconds)"
        if variant.variesOnAccept { headers[.vary] = "Accept" }
        headers[.xCache] = outcome.tier.rawValue

        if let condition = request.headers[.ifNoneMatch], Self.matches(condition, etag: variant.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = variant.contentType
        headers[.contentLength] = String(variant.body.readableBytes)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: variant.body))
    }

    /// `If-None-Match` semantics: `*` or any listed tag equal (weak comparison) to `etag`.
    static func matches(_ condition: String, etag: String) -> Bool {
        condition.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}

extension HTTPField.Name {
    /// Which cache tier answered: memory, disk or miss.
    static let xCache = HTTPField.Name("X-Cache")!
}
