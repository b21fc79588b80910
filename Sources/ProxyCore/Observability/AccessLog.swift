import Foundation
import Logging
import ProxyEngine

/// The one-line-per-request access log.
///
/// It takes a `Logger`. When that logger's handler is the service's own ``StructuredLogHandler`` (as
/// bootstrapped by the executable), each line is rendered straight into text in the handler's fixed
/// field order and queued on its ``LogLineWriter``: no metadata dictionary, no per-field
/// `Logger.MetadataValue`, no lookups by key. The bytes are the ones the handler itself would write
/// for the same fields. Any other handler (a test's recorder, a third-party backend) gets an ordinary
/// `logger.info("request", metadata:)` call with the same fields.
public struct AccessLog: Sendable {
    /// One answered request, as the access log shows it.
    public struct Entry {
        public var requestID: String
        public var method: String
        public var route: String
        public var status: Int
        /// The body size, as sent in `Content-Length` ("0" without a body).
        public var bytes: String
        public var cacheTier: String
        public var total: Duration
        public var stages: [RequestTimings.Stage]
        /// The full source URL (only with `log.sourceUrls`).
        public var source: String?
        /// The source's host (when the URL is not logged).
        public var sourceHost: String?
        public var client: String?
        /// The request span's trace and span ids (hex), when the request was traced and sampled.
        public var trace: (traceID: String, spanID: String)? = nil
    }

    private let logger: Logger
    private let direct: StructuredLogHandler?

    /// - Parameter logger: where lines go; its level decides whether there are any (`info` or lower).
    public init(logger: Logger) {
        self.logger = logger
        // A handler carrying metadata of its own renders through swift-log, which merges it.
        let handler = logger.handler as? StructuredLogHandler
        self.direct = handler?.metadata.isEmpty == true ? handler : nil
    }

    /// Whether lines are written at all (the logger's level is `info` or lower).
    public var isEnabled: Bool { logger.logLevel <= .info }

    /// Writes the line of `entry` (nothing when ``isEnabled`` is false).
    public func write(_ entry: Entry) {
        guard isEnabled else { return }
        if let direct {
            direct.writeLine { line in Self.appendFields(of: entry, to: &line) }
        } else {
            logger.info("request", metadata: Self.metadata(of: entry))
        }
    }

    /// The names of the fields every line has, encoded once (``LogFieldName``).
    private enum Field {
        static let requestID = LogFieldName("request_id")
        static let method = LogFieldName("method")
        static let route = LogFieldName("route")
        static let status = LogFieldName("status")
        static let bytes = LogFieldName("bytes")
        static let cache = LogFieldName("cache")
        static let total = LogFieldName("total_ms")
        /// `<stage>_ms` of each stage in ``StructuredLogHandler/stageOrder``, in that order.
        static let stages = StructuredLogHandler.stageOrder.map { LogFieldName($0 + "_ms") }
        static let sourceHost = LogFieldName("source_host")
        static let source = LogFieldName("source")
        static let client = LogFieldName("client")
        static let traceID = LogFieldName("trace_id")
        static let spanID = LogFieldName("span_id")
    }

    /// The fields in ``StructuredLogHandler/fieldOrder``; stages without a place there follow sorted.
    /// Route and cache tier are labels of our own bounded sets, the request id is checked to be plain
    /// (``ObservabilityMiddleware/requestID(from:)``), the body size is digits: written as they are.
    /// The method, the source and the client are escaped as any value.
    static func appendFields(of entry: borrowing Entry, to line: inout LogLineBuilder) {
        line.append(Field.requestID, verbatim: entry.requestID)
        line.append(Field.method, entry.method)
        line.append(Field.route, verbatim: entry.route)
        line.append(Field.status, integer: entry.status)
        line.append(Field.bytes, verbatim: entry.bytes)
        line.append(Field.cache, verbatim: entry.cacheTier)
        line.appendMilliseconds(Field.total, entry.total)
        if !entry.stages.isEmpty { appendStages(entry.stages, to: &line) }
        if let host = entry.sourceHost, entry.source == nil { line.append(Field.sourceHost, host) }
        if let source = entry.source { line.append(Field.source, source) }
        if let client = entry.client { line.append(Field.client, client) }
        if let trace = entry.trace {
            line.append(Field.traceID, verbatim: trace.traceID)
            line.append(Field.spanID, verbatim: trace.spanID)
        }
        if !entry.stages.isEmpty {
            let unordered = entry.stages.filter { !StructuredLogHandler.stageOrder.contains($0.name) }
            for stage in unordered.sorted(by: { $0.name < $1.name }) {
                line.appendMilliseconds(stage.name, suffix: "_ms", stage.duration)
            }
        }
    }

    /// The stages of ``StructuredLogHandler/stageOrder`` present in `stages`, in that order.
    private static func appendStages(_ stages: [RequestTimings.Stage], to line: inout LogLineBuilder) {
        for (name, field) in zip(StructuredLogHandler.stageOrder, Field.stages) {
            // A stage timed twice counts once, its last time (as a metadata key would).
            if let stage = stages.last(where: { $0.name == name }) {
                line.appendMilliseconds(field, stage.duration)
            }
        }
    }

    /// The same fields as swift-log metadata, for other handlers.
    static func metadata(of entry: Entry) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "request_id": .string(entry.requestID), "method": .string(entry.method), "route": .string(entry.route),
            "status": .string(String(entry.status)), "bytes": .string(entry.bytes), "cache": .string(entry.cacheTier),
            "total_ms": .string(RequestTimings.milliseconds(entry.total)),
        ]
        for stage in entry.stages {
            metadata[stage.name + "_ms"] = .string(RequestTimings.milliseconds(stage.duration))
        }
        if let source = entry.source {
            metadata["source"] = .string(source)
        } else if let host = entry.sourceHost {
            metadata["source_host"] = .string(host)
        }
        if let client = entry.client { metadata["client"] = .string(client) }
        if let trace = entry.trace {
            metadata["trace_id"] = .string(trace.traceID)
            metadata["span_id"] = .string(trace.spanID)
        }
        return metadata
    }
}
