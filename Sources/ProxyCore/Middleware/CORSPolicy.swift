import HTTPTypes
import ImageCore
import ProxyEngine

/// Cross-origin reads of `/img` and `/info` (`http.corsOrigins`): pages draw images on canvas/WebGL and
/// `fetch()` `/info`. `*` allows every origin (`Access-Control-Allow-Origin: *`, the same answer for
/// all, so no `Vary`); a list allows those origins by exact match, and every answer says `Vary: Origin`
/// (shared caches keep one copy per origin). Empty: no CORS headers at all.
struct CORSPolicy: Sendable, Equatable {
    let origins: Set<String>
    let anyOrigin: Bool

    init(origins: [String]) {
        anyOrigin = origins.contains("*")
        self.origins = Set(origins.filter { $0 != "*" })
    }

    var isEnabled: Bool { anyOrigin || !origins.isEmpty }

    /// Whether answers vary on `Origin` (a list rather than `*`).
    var variesOnOrigin: Bool { !anyOrigin && !origins.isEmpty }

    /// Response headers a page may read besides the CORS-safelisted ones.
    static let exposedHeaders = "ETag, Last-Modified, X-Cache, X-Request-Id, Server-Timing, Content-Disposition"
    /// Request headers a preflight may ask for: the ones `/img` and `/info` read.
    static let allowedRequestHeaders =
        (["Accept", "If-None-Match", "Cache-Control", ClientHints.saveDataHeader] + ClientHints.hintHeaders + ["X-Request-Id"])
        .joined(separator: ", ")

    /// Adds the CORS headers of an answer to a request from `origin` (nil: no `Origin` header).
    func apply(to headers: inout HTTPFields, origin: String?) {
        guard isEnabled else { return }
        if anyOrigin {
            headers[.accessControlAllowOrigin] = "*"
        } else if let origin, origins.contains(origin) {
            headers[.accessControlAllowOrigin] = origin
        }
        if headers[.accessControlAllowOrigin] != nil { headers[.accessControlExposeHeaders] = Self.exposedHeaders }
        if variesOnOrigin { Self.addVary("Origin", to: &headers) }
    }

    /// The headers of a preflight answer (`OPTIONS` with `Access-Control-Request-Method`).
    func preflightHeaders(origin: String?, allow: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.allow] = allow
        guard isEnabled else { return headers }
        if anyOrigin || origin.map(origins.contains) == true {
            headers[.accessControlAllowOrigin] = anyOrigin ? "*" : origin
            headers[.accessControlAllowMethods] = "GET, HEAD"
            headers[.accessControlAllowHeaders] = Self.allowedRequestHeaders
            headers[.accessControlMaxAge] = "86400"
        }
        if variesOnOrigin { Self.addVary("Origin", to: &headers) }
        return headers
    }

    /// Appends `name` to the `Vary` field (one field, comma-separated).
    static func addVary(_ name: String, to headers: inout HTTPFields) {
        if let existing = headers[.vary], !existing.isEmpty {
            headers[.vary] = existing + ", " + name
        } else {
            headers[.vary] = name
        }
    }
}
