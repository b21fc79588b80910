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

    /// The fields in ``StructuredLogHandler/fieldOrder``; stages without a place there follow sorted.
    static func appendFields(of entry: Entry, to line: inout LogLineBuilder) {
        line.append("request_id", entry.requestID)
        line.append("method", entry.method)
        line.append("route", entry.route)
        line.append("status", integer: entry.status)
        line.append("bytes", entry.bytes)
        line.append("cache", entry.cacheTier)
        line.appendMilliseconds("total_ms", entry.total)
        var unordered: [RequestTimings.Stage] = []
        for name in StructuredLogHandler.stageOrder {
            // A stage timed twice counts once, its last time (as a metadata key would).
            if let stage = entry.stages.last(where: { $0.name == name }) {
                line.appendMilliseconds(name, suffix: "_ms", stage.duration)
            }
        }
        for stage in entry.stages where !StructuredLogHandler.stageOrder.contains(stage.name) { unordered.append(stage) }
        if let host = entry.sourceHost, entry.source == nil { line.append("source_host", host) }
        if let source = entry.source { line.append("source", source) }
        if let client = entry.client { line.append("client", client) }
        for stage in unordered.sorted(by: { $0.name < $1.name }) {
            line.appendMilliseconds(stage.name, suffix: "_ms", stage.duration)
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
        return metadata
    }
}
