import Crypto
import Foundation
import Hummingbird
import ImageCore
import ProxyEngine

/// `DELETE /cache?url=` (purge a source and all its variants from both tiers), `DELETE /cache?all=1`
/// (everything) and `GET /cache/stats`.
/// Both need `Authorization: Bearer <cache.adminToken>`; with no token configured they answer 404.
struct CacheAdminHandler: Sendable {
    let runtime: ProxyRuntime

    func purge(_ request: Request, context: some RequestContext) async throws -> Response {
        if let refusal = authorize(request) { return refusal }
        let query = request.uri.queryParameters
        if query["all"] == "1" {
            guard query["url"] == nil else { throw RequestError(parameter: "all", problem: "cannot be given with url") }
            return try json(["purged": await runtime.purgeAll()])
        }
        guard let url = query["url"].map(String.init) else {
            throw RequestError(parameter: "url", problem: "is required (or all=1)")
        }
        let source = try SourceURL(parsing: url)
        let removed = await runtime.purge(source: source)
        return try json(["purged": removed])
    }

    func stats(_ request: Request, context: some RequestContext) async throws -> Response {
        if let refusal = authorize(request) { return refusal }
        return try json(await runtime.cacheStatistics())
    }

    /// Nil when allowed; otherwise the response to send.
    private func authorize(_ request: Request) -> Response? {
        let token = runtime.configuration.cache.adminToken
        guard !token.isEmpty else { return Response.plainText("not found", status: .notFound) }
        guard AdminAuthorization.allows(request, token: token) else {
            var response = Response.plainText("admin token required", status: .unauthorized)
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        return nil
    }

    private func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
