import Foundation

/// OpenTelemetry traces (`tracing.*`): off by default. When on, each sampled request is a trace of spans
/// (the request, the cache lookups, the queue and memory waits, the origin fetch, the transform's phases,
/// the shared-tier write) exported by OTLP/HTTP (protobuf) from a bounded queue in the background.
///
/// The standard OpenTelemetry environment variables override these keys when set:
/// `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
/// `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`.
public struct TracingSettings: Sendable, Equatable {
    /// Whether requests are traced. Key `tracing.enabled`, default false.
    public var enabled = false
    /// The collector's OTLP/HTTP traces URL. Key `tracing.endpoint`, default `http://127.0.0.1:4318/v1/traces`
    /// (a collector beside the service).
    public var endpoint = "http://127.0.0.1:4318/v1/traces"
    /// Headers sent with every export (`name=value`, e.g. an API key). Key `tracing.headers`, default none.
    public var headers: [String] = []
    /// `service.name` of the spans. Key `tracing.serviceName`, default `imageproxy`.
    public var serviceName = "imageproxy"
    /// The share of new traces sampled (0...1), decided before any span is made (an unsampled request costs
    /// nothing); a request with a `traceparent` follows its caller's decision. Key `tracing.sampleRatio`, default 1.
    public var sampleRatio = 1.0
    /// Finished spans held for export; beyond it spans are dropped and counted
    /// (`imageproxy_trace_spans_dropped_total`). Key `tracing.queueSize`, default 4096.
    public var queueSize = 4096
    /// Milliseconds an export may take before it is given up (and counted as failed). Key
    /// `tracing.exportTimeoutMs`, default 5000.
    public var exportTimeoutMilliseconds = 5_000
    /// Whether `Server-Timing` carries the request's `traceparent` (so a browser's developer tools name the
    /// trace). Key `tracing.exposeToClients`, default false.
    public var exposeToClients = false

    public init() {}

    /// The export headers as pairs; nil when one is not `name=value` with a header name and a value without
    /// line breaks.
    public static func headerPairs(_ lines: [String]) -> [(String, String)]? {
        var pairs: [(String, String)] = []
        for line in lines {
            guard let equals = line.firstIndex(of: "=") else { return nil }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte), !value.contains(where: { $0 == "\r" || $0 == "\n" }) else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}
