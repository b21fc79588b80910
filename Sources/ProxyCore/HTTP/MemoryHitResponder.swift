import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore
import Synchronization

/// The memory-hit answer to a `GET /img` request head, or nil when the router must answer (not a
/// fresh memory hit, a bad query, a signed-URL setup, a loop marker, not GET).
struct MemoryHitResponder: Sendable {
    /// A complete response.
    struct Answer {
        var head: HTTPResponse
        var body: ByteBuffer?
        /// The client asked to close the connection after this response.
        var close: Bool
    }

    let images: ImageHandler
    let observability: ObservabilityMiddleware
    let serverName: String
    let dates = HTTPDateCache()
    /// Parsed requests by path: a hot variant is asked for with the same path over and over.
    let parsed = ParsedRequestCache()

    func answer(_ head: HTTPRequest, client: String?) -> Answer? {
        guard head.method == .get, let path = head.path, path.hasPrefix("/img?"),
            images.guards.signer == nil, head.headerFields[.imageProxyHop] == nil
        else { return nil }
        let start = ContinuousClock.now
        guard let request = parsed.request(for: path, limits: images.limits) else { return nil }
        let timings = RequestTimings()
        let conditions = ImageHandler.conditions(of: head.headerFields)
        guard let outcome = images.pipeline.freshInMemory(request, conditions: conditions, timings: timings) else { return nil }

        var (status, headers, body) = images.responseParts(for: outcome)
        headers[.date] = dates.now()
        headers[.server] = serverName
        let close = head.headerFields[.connection]?.lowercased() == "close"
        if close { headers[.connection] = "close" }
        let observed = ObservabilityMiddleware.ObservedRequest(
            method: "GET", route: "img", sourceURL: request.source.absoluteString,
            requestID: ObservabilityMiddleware.requestID(from: head.headerFields[.xRequestID]), timings: timings,
            client: client)
        observability.observe(observed, status: status.code, headers: &headers, total: ContinuousClock.now - start)
        return Answer(head: HTTPResponse(status: status, headerFields: headers), body: body, close: close)
    }
}

/// `ImageRequest`s parsed from `/img` paths, at most `capacity` (forgotten all at once when full).
final class ParsedRequestCache: Sendable {
    private let requests = Mutex<[String: ImageRequest]>([:])
    private let capacity: Int

    init(capacity: Int = 10_000) { self.capacity = capacity }

    /// The request of `path`, parsed once; nil when the query is invalid (the router will say why).
    func request(for path: String, limits: ImageRequest.Limits) -> ImageRequest? {
        if let known = requests.withLock({ $0[path] }) { return known }
        let query = URI(path).queryParameters.map { (name: String($0.key), value: String($0.value)) }
        guard let request = try? ImageRequest(query: query, limits: limits) else { return nil }
        requests.withLock { requests in
            if requests.count >= capacity { requests.removeAll(keepingCapacity: true) }
            requests[path] = request
        }
        return request
    }
}

/// The IMF-fixdate of the current second, formatted once per second.
final class HTTPDateCache: Sendable {
    private let cached = Mutex<(second: Int, text: String)>((0, ""))

    func now() -> String {
        let second = Int(Date().timeIntervalSince1970)
        if let text = cached.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = Self.format(second)
        cached.withLock { $0 = (second, text) }
        return text
    }

    static func format(_ second: Int) -> String {
        var time = time_t(second)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
