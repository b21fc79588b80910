import ImageCore
import Tracing

extension RequestTrace {
    /// The origin request's attributes (HTTP client conventions): method, host, port, `url.full` (without
    /// its query unless ``includesSourceQuery``), and whether it revalidates a stored copy.
    func describeOriginRequest(_ span: any Span, source: SourceURL, conditional: Bool) {
        span.attributes["http.request.method"] = "GET"
        span.attributes["server.address"] = source.host
        let full = source.absoluteString
        span.attributes["url.full"] = includesSourceQuery ? full : String(full.prefix { $0 != "?" && $0 != "#" })
        span.attributes["imageproxy.revalidation"] = conditional
    }

    /// The origin's answer: status and body size (`http.response.body.size`), and whether it resumed.
    func describeOriginAnswer(_ span: any Span, _ fetched: FetchedSource) {
        span.attributes["http.response.status_code"] = fetched.status
        span.attributes["http.response.body.size"] = fetched.body.count
        if fetched.resumedFrom > 0 { span.attributes["imageproxy.resumed_from"] = fetched.resumedFrom }
    }
}
