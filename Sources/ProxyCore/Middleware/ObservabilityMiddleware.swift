import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import Logging
import ProxyEngine

/// Outermost middleware: gives each request an `X-Request-Id` (the client's, when it sent a sane one),
/// adds `Server-Timing` (and `Timing-Allow-Origin`), records metrics and the status page's samples,
/// and writes one access-log line.
struct ObservabilityMiddleware: RouterMiddleware {
    typealias Context = ProxyRequestContext
    let metrics: ProxyMetrics
    let requestLog: RequestLog
    let statusHistory: StatusHistory
    let accessLog: AccessLog
    let timingAllowOrigin: String
    let logSourceURLs: Bool
    /// Traces (`tracing.enabled`); nil when off, and then nothing here makes spans.
    var tracing: RequestTracing? = nil
    /// The prefixes of the URL dialects that are on, for their route labels (`imgproxy`, `thumbor`).
    var dialectPrefixes: (imgproxy: DialectPrefix?, thumbor: DialectPrefix?) = (nil, nil)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        context.requestID = Self.requestID(from: request.headers[.xRequestID])
        context.timings.requestID = context.requestID
        var route = Self.route(of: request.uri.path)
        if route == "other", request.method == .get || request.method == .head,
            let dialect = DialectMiddleware.label(of: request.uri.path, imgproxy: dialectPrefixes.imgproxy, thumbor: dialectPrefixes.thumbor)
        {
            route = dialect
        }
        if let tracing {
            context.timings.trace = tracing.startRequest(
                method: request.method.rawValue, path: "/" + route, traceparent: request.headers[.traceparent],
                tracestate: request.headers[.tracestate])
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // Errors the inner error middleware did not turn into responses (e.g. the router's 404).
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            response = Response.plainText(status == .notFound ? "not found" : "internal error", status: status)
        }
        let total = ContinuousClock.now - start
        let observed = ObservedRequest(
            method: request.method.rawValue, route: route, sourceURL: request.uri.queryParameters["url"].map(String.init),
            requestID: context.requestID, timings: context.timings, client: context.remoteAddress?.ipAddress)
        observe(observed, status: response.status.code, headers: &response.headers, total: total)
        return response
    }

    /// What the log and the metrics need to know of a request.
    struct ObservedRequest {
        var method: String
        var route: String
        var sourceURL: String?
        var requestID: String
        var timings: RequestTimings
        var client: String?
    }

    /// Completes the response headers (request id, Server-Timing, Timing-Allow-Origin, nosniff, CSP)
    /// and records the request: metrics, the status page's samples, one access-log line.
    func observe(_ request: ObservedRequest, status: Int, headers: inout HTTPFields, total: Duration) {
        headers[.xRequestID] = request.requestID
        let trace = request.timings.trace
        if var timing = serverTiming(request, total: total) {
            if tracing?.exposeToClients == true, let traceparent = trace?.traceparent { timing += ", traceparent;desc=" + traceparent }
            headers[.serverTiming] = timing
        }
        addFixedHeaders(route: request.route, to: &headers)
        let reason = status >= 400 ? headers[.xErrorReason] ?? (status == 404 ? "not_found" : "error") : nil
        headers[.xErrorReason] = nil
        trace?.end(status: status, publicMessage: reason, errorType: reason, cacheTier: request.timings.cacheTier)
        record(request, status: status, bytes: headers[.contentLength], errorReason: reason, total: total)
    }

    /// The `Server-Timing` value of a request, for the routes that have one.
    func serverTiming(_ request: ObservedRequest, total: Duration) -> String? {
        request.route == "img" || request.route == "info" ? request.timings.serverTiming(total: total) : nil
    }

    /// The headers every response of `route` gets that do not depend on the request: Timing-Allow-Origin,
    /// nosniff, CSP. (``MemoryHitResponder`` serialises them once per hot variant.)
    func addFixedHeaders(route: String, to headers: inout HTTPFields) {
        if !timingAllowOrigin.isEmpty { headers[.timingAllowOrigin] = timingAllowOrigin }
        headers[.xContentTypeOptions] = "nosniff"
        headers[.contentSecurityPolicy] = route == "status" ? Self.statusPagePolicy : "default-src 'none'"
    }

    /// Records an answered request: metrics (into `series` when the caller looked it up already), the
    /// status page's samples, one access-log line.
    func record(
        _ request: ObservedRequest, status: Int, bytes: String?, errorReason: String?, total: Duration,
        series: ProxyMetrics.RequestSeries? = nil
    ) {
        let route = request.route
        let cacheTier = request.timings.cacheTier
        if let series {
            series.record(total)
        } else {
            metrics.recordRequest(route: route, status: status, cache: cacheTier, duration: total)
        }
        let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
        let imageVariant = route == "img" || RouteTable.dialectLabels.contains(route)
        statusHistory.record(status: status, seconds: seconds, cacheTier: imageVariant ? cacheTier : "none")
        if let errorReason {
            metrics.recordRejection(reason: errorReason)
            requestLog.recordError(
                .init(time: Date().timeIntervalSince1970, route: route, status: status, reason: errorReason, requestID: request.requestID))
        }
        accessLog(request, status: status, bytes: bytes ?? "0", cacheTier: cacheTier, total: total)
    }

    private func accessLog(_ request: ObservedRequest, status: Int, bytes: String, cacheTier: String, total: Duration) {
        guard accessLog.isEnabled else { return }
        let imageRoute = request.route == "img" || request.route == "info" || RouteTable.dialectLabels.contains(request.route)
        accessLog.write(
            AccessLog.Entry(
                requestID: request.requestID, method: request.method, route: request.route, status: status, bytes: bytes,
                cacheTier: cacheTier, total: total, stages: request.timings.stages,
                source: imageRoute && logSourceURLs ? request.sourceURL : nil,
                sourceHost: imageRoute ? request.timings.sourceHost : nil, client: request.client, trace: request.timings.trace?.ids))
    }

    /// The status page's own styles, its one script (by hash) fetching its live part, its images (the variant
    /// and the source being tried) and its form.
    static let statusPagePolicy =
        "default-src 'none'; style-src 'unsafe-inline'; script-src \(StatusPage.liveScriptSource); connect-src 'self'; "
        + "img-src 'self' http: https:; form-action 'self'"

    /// The route label (``RouteTable``): a bounded set.
    static func route(of path: String) -> String { RouteTable.label(of: path) }

    /// The client's id when it is short and printable; a new one otherwise: this process's random
    /// prefix and a counter (unique across restarts and replicas, cheaper than a UUID per request).
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128,
            header.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte == 0x3A
            })
        {
            return header
        }
        return requestIDPrefix + String(requestCounter.increment(), radix: 16)
    }

    private static let requestIDPrefix = String(UInt64.random(in: 0...UInt64.max), radix: 16) + "-"
    private static let requestCounter = AtomicCounter()
}

extension HTTPField.Name {
    static let xRequestID = HTTPField.Name("X-Request-Id")!
    static let serverTiming = HTTPField.Name("Server-Timing")!
    static let timingAllowOrigin = HTTPField.Name("Timing-Allow-Origin")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let traceparent = HTTPField.Name("traceparent")!
    static let tracestate = HTTPField.Name("tracestate")!
    /// Internal: the public error's reason, passed from the error middleware to the metrics; never sent.
    static let xErrorReason = HTTPField.Name("X-Imageproxy-Error-Reason")!
}
