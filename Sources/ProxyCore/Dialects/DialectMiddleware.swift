import Foundation
import Hummingbird
import ImageCore
import ProxyEngine

/// Answers the URL dialects that are on (`compat.*`) before the router: a `GET` or `HEAD` whose path is
/// no native route and lies under a dialect's prefix becomes the native request it means and is served
/// as `/img` serves it (``ImageHandler/serve(_:request:context:)``). Native routes always win.
struct DialectMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let images: ImageHandler
    let imgproxy: ImgproxyFront?
    let thumbor: ThumborFront?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head, RouteTable.label(of: request.uri.path) == "other" else {
            return try await next(request, context)
        }
        let target = request.uri.description
        if let imgproxy, let rest = imgproxy.prefix.remainder(of: target) {
            return try await serve(try imgproxy.translate(rest), request: request, context: context)
        }
        if let thumbor, let rest = thumbor.prefix.remainder(of: target) {
            return try await serve(try thumbor.translate(rest), request: request, context: context)
        }
        return try await next(request, context)
    }

    /// Serves a dialect's request with the native checks: loop, expiry, parsing and limits, the address
    /// policy; errors name the dialect's option.
    func serve(_ dialect: DialectRequest, request: Request, context: Context) async throws -> Response {
        try images.guards.checkNotLooping(request.headers)
        if let expires = dialect.expires, expires < Int(Date().timeIntervalSince1970) { throw DialectURLExpiredError() }
        var parsed: ImageIntake.Parsed
        do {
            parsed = try images.intake.image(query: dialect.query, hints: ClientHints(headers: request.headers))
        } catch {
            throw dialect.renamed(error)
        }
        if dialect.metadata {
            try images.guards.checkNotSelf(parsed.request.source)
            return try await images.metadata(of: parsed.request.source, request: request, context: context)
        }
        if let filename = dialect.filename {
            parsed.options.filenameStem = ImageResponseOptions.safeStem(filename)
        } else if dialect.attachment, parsed.options.filenameStem == nil {
            parsed.options.filenameStem = ImageResponseOptions.filenameStem(of: parsed.request.source)
        }
        parsed.options.attachment = dialect.attachment
        let response = try await images.serve(parsed, request: request, context: context)
        guard request.method == .head else { return response }
        return Response(status: response.status, headers: response.headers)
    }

    /// The route label of a dialect's request (`imgproxy`, `thumbor`), nil for other paths.
    static func label(of path: String, imgproxy: DialectPrefix?, thumbor: DialectPrefix?) -> String? {
        if let imgproxy, imgproxy.remainder(of: path) != nil { return "imgproxy" }
        if let thumbor, thumbor.remainder(of: path) != nil { return "thumbor" }
        return nil
    }
}

/// A dialect URL past its `expires` time: 404, as imgproxy answers it.
struct DialectURLExpiredError: PublicError {
    var httpStatus: Int { 404 }
    var publicMessage: String { "this URL has expired (its expires option is in the past)" }
    var reason: String { "expired_url" }
}

/// A dialect URL without a valid signature: 403, naming how that dialect signs.
enum DialectSignatureError: PublicError, Equatable {
    /// thumbor's `unsafe/` while `compat.thumbor.allowUnsafe` is off.
    case unsafeNotAllowed
    /// A signature that does not match (imgproxy: HMAC-SHA256 of salt + path; thumbor: HMAC-SHA1 of the path).
    case invalid(dialect: String)

    var httpStatus: Int { 403 }
    var publicMessage: String {
        switch self {
        case .unsafeNotAllowed: "unsafe URLs are not allowed (compat.thumbor.allowUnsafe): sign the URL with the security key"
        case .invalid(let dialect): "invalid \(dialect) signature"
        }
    }
    var reason: String { "bad_signature" }
}
