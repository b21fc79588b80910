import Logging
import ProxyEngine

/// The trace exporter's own log (swift-otel's diagnostic logger): its warnings and errors go on to the
/// service's log, and the two that matter to whoever is on call are counted as they pass:
/// spans dropped for a full queue (`dropped_count` of the batch processor's warning) and batches the
/// collector did not take.
struct ExporterDiagnostics: LogHandler {
    let forward: Logger
    let metrics: ProxyMetrics
    /// The same counts, for the status page.
    let health: TraceExportHealth
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if case .string(let text)? = merged["dropped_count"], let dropped = Int64(text), dropped > 0 {
            metrics.traceSpansDropped.increment(by: dropped)
            health.droppedSpans.add(Int(dropped))
        } else if event.message.description.hasPrefix("Failed to export") {
            metrics.traceExportFailures.increment()
            health.failedExports.add(1)
        }
        guard event.level >= .warning else { return }
        var fields: Logger.Metadata = [:]
        for key in ["component", "dropped_count", "queue_size", "batch_size", "error"] { fields[key] = merged[key] }
        fields["message"] = .string(event.message.description)
        if let error = event.error { fields["error"] = .string(String(describing: error)) }
        forward.log(level: event.level, "trace exporter trouble", metadata: fields)
    }
}

/// Spans lost since start: dropped for a full queue, and batches the collector did not take.
public final class TraceExportHealth: Sendable {
    public let droppedSpans = AtomicCounter()
    public let failedExports = AtomicCounter()
}
