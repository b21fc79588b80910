import Hummingbird
import ImageCore
import Logging
import ProxyEngine

/// Turns a ``PublicError`` into its status with a one-line plain-text body; any other error
/// becomes a bare 500 (logged, never shown).
public struct PublicErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any PublicError {
            var response = Response.plainText(
                error.publicMessage, status: HTTPResponse.Status(code: error.httpStatus), cacheControl: error.cacheControl)
            response.headers[.xErrorReason] = error.reason
            if let retryAfter = (error as? PipelineError)?.retryAfterSeconds {
                response.headers[.retryAfter] = String(retryAfter)
            }
            return response
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            context.logger.error("unexpected error", metadata: ["error.type": "\(type(of: error))"])
            return Response.plainText("internal error", status: .internalServerError)
        }
    }
}
