import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Outermost middleware: gives each request an `X-Request-Id` (the client's, when it sent a sane one),
/// adds `Server-Timing` (and `Timing-Allow-Origin`), records metrics and the status page's samples,
/// and writes one access-log line.
struct ObservabilityMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let metrics: ProxyMetrics
    let requestLog: RequestLog
    let accessLogger: Logger
    let timingAllowOrigin: String
    let logSourceURLs: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        context.requestID = Self.requestID(from: request.headers[.xRequestID])
        let route = Self.route(of: request.uri.path)
        var response: Response
        var failure: (any Error)?
        do {
            response = try await next(request, context)
        } catch {
            // Errors the inner error middleware did not turn into responses (e.g. the router's 404).
            failure = error
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            response = Response.plainText(status == .notFound ? "not found" : "internal error", status: status)
        }
        let total = ContinuousClock.now - start
        response.headers[.xRequestID] = context.requestID
        if route == "img" || route == "info" {
            response.headers[.serverTiming] = context.timings.serverTiming(total: total)
        }
        if !timingAllowOrigin.isEmpty { response.headers[.timingAllowOrigin] = timingAllowOrigin }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.contentSecurityPolicy] = route == "status" ? Self.statusPagePolicy : "default-src 'none'"

        let status = response.status.code
        let tier = context.timings.cacheTier
        metrics.recordRequest(route: route, status: status, cache: tier, duration: total)
        let now = Date().timeIntervalSince1970
        let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
        requestLog.record(.init(time: now, route: route, status: status, duration: seconds))
        if status >= 400 {
            let reason = response.headers[.xErrorReason] ?? (status == 404 ? "not_found" : "error")
            metrics.recordRejection(reason: reason)
            requestLog.recordError(.init(time: now, route: route, status: status, reason: reason, requestID: context.requestID))
        }
        response.headers[.xErrorReason] = nil
        accessLog(request, context: context, route: route, status: status, response: response, total: total)
        _ = failure
        return response
    }

    private func accessLog(
        _ request: Request, context: Context, route: String, status: Int, response: Response, total: Duration
    ) {
        var metadata: Logger.Metadata = [
            "request_id": "\(context.requestID)", "method": "\(request.method.rawValue)", "route": "\(route)",
            "status": "\(status)", "bytes": "\(response.headers[.contentLength] ?? "0")",
            "cache": "\(context.timings.cacheTier)", "total_ms": "\(RequestTimings.milliseconds(total))",
        ]
        for stage in context.timings.stages {
            metadata["\(stage.name)_ms"] = "\(RequestTimings.milliseconds(stage.duration))"
        }
        if route == "img" || route == "info" {
            if logSourceURLs, let url = request.uri.queryParameters["url"] {
                metadata["source"] = "\(url)"
            } else if let host = context.timings.sourceHost {
                metadata["source_host"] = "\(host)"
            }
        }
        if let address = context.remoteAddress?.ipAddress { metadata["client"] = "\(address)" }
        accessLogger.info("request", metadata: metadata)
    }

    /// The status page's own styles, its images (the variant and the source being tried) and its form.
    static let statusPagePolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' http: https:; form-action 'self'"

    /// The route label: a bounded set.
    static func route(of path: String) -> String {
        switch path {
        case "/img": "img"
        case "/info": "info"
        case "/prefetch": "prefetch"
        case "/health": "health"
        case "/ready": "ready"
        case "/metrics": "metrics"
        case "/", "/status": "status"
        case "/cache", "/cache/stats": "cache_admin"
        default: "other"
        }
    }

    /// The client's id when it is short and printable; a new UUID otherwise.
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.count <= 128,
            header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.:".contains($0)) })
        {
            return header
        }
        return UUID().uuidString.lowercased()
    }
}

extension HTTPField.Name {
    static let xRequestID = HTTPField.Name("X-Request-Id")!
    static let serverTiming = HTTPField.Name("Server-Timing")!
    static let timingAllowOrigin = HTTPField.Name("Timing-Allow-Origin")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    /// Internal: the public error's reason, passed from the error middleware to the metrics; never sent.
    static let xErrorReason = HTTPField.Name("X-Imageproxy-Error-Reason")!
}
