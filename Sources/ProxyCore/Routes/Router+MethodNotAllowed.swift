import Hummingbird
import ImageCore
import ProxyEngine

extension Router {
    /// The methods a route could be asked with.
    static var answerableMethods: [HTTPRequest.Method] { [.get, .head, .post, .put, .delete, .patch, .options] }

    /// For each path, answers the methods it does not serve: `OPTIONS` with 204, anything else with
    /// 405; both with `Allow` listing what it serves (a wrong method is not a missing resource).
    func answerOtherMethods(of routes: [(path: String, allowed: [HTTPRequest.Method])]) {
        for (path, allowed) in routes {
            let allow = (allowed + (allowed.contains(.options) ? [] : [.options])).map(\.rawValue).joined(separator: ", ")
            for method in Self.answerableMethods where !allowed.contains(method) {
                on(RouterPath(path), method: method) { _, _ in
                    if method == .options { return Response(status: .noContent, headers: [.allow: allow]) }
                    var response = Response.plainText(
                        "method \(method.rawValue) is not allowed here; use \(allowed.map(\.rawValue).joined(separator: " or "))",
                        status: .methodNotAllowed)
                    response.headers[.allow] = allow
                    return response
                }
            }
        }
    }
}
