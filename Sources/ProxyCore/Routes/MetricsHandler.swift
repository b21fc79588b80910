import Hummingbird
import ImageCore
import ProxyEngine

/// `GET /metrics`: the Prometheus text exposition, scrape-time figures refreshed first.
struct MetricsHandler: Sendable {
    let runtime: ProxyRuntime

    func handle(_ request: Request, context: some RequestContext) async throws -> Response {
        await runtime.collectMetrics()
        let text = runtime.metrics.exposition()
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
