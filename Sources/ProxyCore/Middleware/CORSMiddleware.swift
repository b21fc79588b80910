import Hummingbird
import ImageCore
import ProxyEngine

/// Applies ``CORSPolicy`` to `/img` and `/info`: CORS headers on every answer (errors included, so a
/// page can read why), and preflight `OPTIONS` answered 204. The memory-hit front applies the same policy
/// to the requests it answers (those without `Origin`).
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: CORSPolicy

    /// The paths the policy covers and what they allow.
    static var paths: [String: String] { RouteTable.crossOriginPaths }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard policy.isEnabled, let allow = Self.paths[request.uri.path] else { return try await next(request, context) }
        let origin = request.headers[.origin]
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            return Response(status: .noContent, headers: policy.preflightHeaders(origin: origin, allow: allow))
        }
        var response = try await next(request, context)
        policy.apply(to: &response.headers, origin: origin)
        return response
    }
}
