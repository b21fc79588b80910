import HTTPTypes

/// One route the server answers.
struct Route: Sendable {
    let path: String
    /// The methods it serves (others get 405, `OPTIONS` 204, both with `Allow`).
    let methods: [HTTPRequest.Method]
    /// Its value of the `route` label in metrics and the access log (a bounded set).
    let label: String
    /// Whether cross-origin reads are allowed (``CORSPolicy``, preflights answered).
    var crossOrigin = false
    /// Served on the main address only when `metrics.bind` is empty.
    var onlyWithoutMetricsAddress = false
}

/// Every route, once: registration (``ProxyApplication``), the 405 and `OPTIONS` answers, the route label
/// of metrics and logs (``ObservabilityMiddleware``), the paths CORS covers (``CORSMiddleware``) and the
/// OpenAPI document's check read this table.
enum RouteTable {
    static let all: [Route] = [
        Route(path: "/img", methods: [.get, .head], label: "img", crossOrigin: true),
        Route(path: "/info", methods: [.get], label: "info", crossOrigin: true),
        Route(path: "/prefetch", methods: [.post], label: "prefetch"),
        Route(path: "/health", methods: [.get], label: "health"),
        Route(path: "/ready", methods: [.get], label: "ready"),
        Route(path: "/metrics", methods: [.get], label: "metrics", onlyWithoutMetricsAddress: true),
        Route(path: "/", methods: [.get], label: "status"),
        Route(path: "/status", methods: [.get], label: "status"),
        Route(path: "/status/live", methods: [.get], label: "status"),
        Route(path: "/cache", methods: [.delete], label: "cache_admin"),
        Route(path: "/cache/stats", methods: [.get], label: "cache_admin"),
        Route(path: "/openapi.json", methods: [.get], label: "openapi"),
        Route(path: "/favicon.ico", methods: [.get], label: "other"),
    ]

    /// The routes served on the main address.
    static func served(metricsOnMainAddress: Bool) -> [Route] {
        all.filter { metricsOnMainAddress || !$0.onlyWithoutMetricsAddress }
    }

    private static let labels = Dictionary(all.map { ($0.path, $0.label) }, uniquingKeysWith: { first, _ in first })

    /// The route label of a request path; `other` for paths no route serves.
    static func label(of path: String) -> String { labels[path] ?? "other" }

    /// Every value the route label takes, `other` included.
    static var labelValues: [String] { Array(Set(all.map(\.label) + ["other"] + dialectLabels)).sorted() }

    /// The route labels of the URL dialects' requests (``DialectMiddleware``).
    static let dialectLabels = ["imgproxy", "thumbor"]

    /// The paths CORS covers, each with what a preflight is told it allows.
    static let crossOriginPaths: [String: String] = Dictionary(
        all.filter(\.crossOrigin).map { ($0.path, ($0.methods + [.options]).map(\.rawValue).joined(separator: ", ")) },
        uniquingKeysWith: { first, _ in first })
}
