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

    func answer(_ head: HTTPRequest, client: String?) -> Answer? {
        guard head.method == .get, let path = head.path, path.hasPrefix("/img?"),
            images.guards.signer == nil, head.headerFields[.imageProxyHop] == nil
        else { return nil }
        let start = ContinuousClock.now
        let uri = URI(path)
        let query = uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        guard let request = try? ImageRequest(query: query, limits: images.limits) else { return nil }
        let timings = RequestTimings()
        let conditions = ImageHandler.conditions(of: head.headerFields)
        guard let outcome = images.pipeline.freshInMemory(request, conditions: conditions, timings: timings) else { return nil }

        var (status, headers, body) = images.responseParts(for: outcome)
        headers[.date] = dates.now()
        headers[.server] = serverName
        let close = head.headerFields[.connection]?.lowercased() == "close"
        if close { headers[.connection] = "close" }
        let observed = ObservabilityMiddleware.ObservedRequest(
            method: "GET", route: "img", sourceURL: uri.queryParameters["url"].map(String.init),
            requestID: ObservabilityMiddleware.requestID(from: head.headerFields[.xRequestID]), timings: timings,
            client: client)
        observability.observe(observed, status: status.code, headers: &headers, total: ContinuousClock.now - start)
        return Answer(head: HTTPResponse(status: status, headerFields: headers), body: body, close: close)
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
