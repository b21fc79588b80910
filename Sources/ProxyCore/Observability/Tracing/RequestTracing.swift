import HTTPTypes
import Logging
import OTel
import ProxyEngine
import ServiceLifecycle
import Tracing

/// The service's tracer when `tracing.enabled` (swift-otel's OTLP/HTTP exporter behind a batch processor
/// with a bounded queue, and a parent-based ratio sampler), and the start of each request's trace.
///
/// Exports run in ``service`` (a member of the application's service group), never on a request's path:
/// a collector that is slow, down or failing costs spans (counted), not latency.
public struct RequestTracing: Sendable {
    /// The tracer spans are made with.
    let tracer: any Tracer
    /// The exporter and its batch processor, run (and flushed at shutdown) by the service group.
    public let service: any Service
    /// Whether `Server-Timing` names the trace (`tracing.exposeToClients`).
    let exposeToClients: Bool
    /// Whether the origin span's `url.full` keeps the query (`log.sourceUrls`).
    let includesSourceQuery: Bool
    /// Spans lost so far (the status page shows them).
    public let health: TraceExportHealth
    /// The share of new traces sampled (`tracing.sampleRatio`), decided here before any span is made.
    let sampleRatio: Double
    /// Draws for that decision (a counter through a mixing function: no system call, no lock).
    let draws = AtomicCounter()

    /// The tracing of `settings`; nil when tracing is off.
    /// - Throws: swift-otel's configuration error (an endpoint or sampler it cannot use).
    public static func make(settings: TracingSettings, includesSourceQuery: Bool, logger: Logger, metrics: ProxyMetrics) throws -> RequestTracing? {
        guard settings.enabled else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = settings.serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.endpoint = settings.endpoint
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.headers = TracingSettings.headerPairs(settings.headers) ?? []
        configuration.traces.otlpExporter.timeout = .milliseconds(settings.exportTimeoutMilliseconds)
        configuration.traces.batchSpanProcessor.maxQueueSize = settings.queueSize
        configuration.traces.batchSpanProcessor.maxExportBatchSize = min(512, settings.queueSize)
        configuration.traces.batchSpanProcessor.exportTimeout = .milliseconds(settings.exportTimeoutMilliseconds)
        // New traces are sampled by `startRequest` before any span exists (an unsampled request then costs
        // nothing); the tracer keeps what it is given and follows a caller's `traceparent`. An
        // `OTEL_TRACES_SAMPLER` in the environment replaces this parent-based rule.
        configuration.traces.sampler = .parentBasedAlwaysOn
        configuration.propagators = [.traceContext]
        let health = TraceExportHealth()
        let diagnostics = ExporterDiagnostics(forward: logger, metrics: metrics, health: health)
        configuration.diagnosticLogger = .custom(Logger(label: "imageproxy.tracing") { _ in diagnostics })
        configuration.diagnosticLogLevel = .warning
        // `OTEL_*` environment variables are applied over these by swift-otel.
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        return RequestTracing(
            tracer: backend.factory, service: backend.service, exposeToClients: settings.exposeToClients,
            includesSourceQuery: includesSourceQuery, health: health, sampleRatio: settings.sampleRatio)
    }

    /// Starts the server span of a request (`GET /img`), continuing the trace of the client's `traceparent`
    /// and `tracestate`; nil when it is not sampled.
    func startRequest(method: String, path: String, traceparent: String?, tracestate: String?) -> RequestTrace? {
        if traceparent == nil, sampleRatio < 1, !Self.draw(draws.increment(), below: sampleRatio) { return nil }
        var parent = ServiceContext.topLevel
        if traceparent != nil {
            tracer.extract(TraceHeaders(traceparent: traceparent, tracestate: tracestate), into: &parent, using: TraceHeaderExtractor())
        }
        var attributes = SpanAttributes()
        attributes["http.request.method"] = method
        attributes["http.route"] = path
        attributes["url.scheme"] = "http"
        let trace = RequestTrace(
            tracer: tracer, name: method + " " + path, parent: parent, attributes: attributes, includesSourceQuery: includesSourceQuery)
        guard trace.isRecording else {
            trace.span.end()
            return nil
        }
        return trace
    }

    /// Whether the `count`th draw falls below `ratio`: `count` mixed by SplitMix64's finaliser into a uniform
    /// 53-bit fraction.
    static func draw(_ count: Int, below ratio: Double) -> Bool {
        var mixed = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Double(mixed >> 11) / Double(UInt64(1) << 53) < ratio
    }

    /// A request's W3C trace context headers, as sent.
    struct TraceHeaders: Sendable {
        var traceparent: String?
        var tracestate: String?
    }

    /// Gives swift-otel's W3C propagator (which parses them) `traceparent` and `tracestate`.
    struct TraceHeaderExtractor: Extractor {
        func extract(key: String, from carrier: TraceHeaders) -> String? {
            switch key.lowercased() {
            case "traceparent": carrier.traceparent
            case "tracestate": carrier.tracestate
            default: nil
            }
        }
    }
}
