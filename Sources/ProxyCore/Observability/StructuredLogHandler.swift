import Foundation
import ImageCore
import Logging
import ProxyEngine

/// A swift-log handler writing one line per message, as logfmt (`time=... level=info label=...
/// msg="..." key=value`) or as a JSON object, through ``LogLineWriter`` (standard error, buffered, off
/// the caller's thread).
///
/// Built for the access log's rate: the timestamp is formatted once per second per thread, the line is
/// built in place at the end of the thread's write buffer (``LogLineBuilder``; no formatter, no
/// JSONSerialization, no array per line), and the access log's fields come in a fixed order
/// (``fieldOrder``) without sorting; only other fields are sorted, and there are few.
public struct StructuredLogHandler: LogHandler {
    /// The line format.
    public enum Format: String, Sendable {
        case logfmt, json
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let format: Format
    private let writer: LogLineWriter

    /// Fields written first, in this order, when present (the access log's); the rest follow sorted.
    static let fieldOrder =
        ["request_id", "method", "route", "status", "bytes", "cache", "total_ms"]
        + stageOrder.map { $0 + "_ms" } + ["source_host", "source", "client", "trace_id", "span_id"]
    /// The request stages timed in an access line, in their place in ``fieldOrder`` (stage `name` is
    /// field `name_ms`).
    static let stageOrder = ["disk", "disk_read", "fetch", "queue", "transform"]
    private static let orderedFields = Set(fieldOrder)

    public init(label: String, format: Format, level: Logger.Level, writer: LogLineWriter = .standardError) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.writer = writer
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata {
            if fields.isEmpty { fields = extra } else { fields.merge(extra) { $1 } }
        }
        // Built before the writer's lock is taken: rendering metadata runs values' `description`, which
        // is not ours and might itself log.
        let line = Self.line(
            time: Date(), level: event.level, label: label, message: "\(event.message)", metadata: fields, format: format)
        writer.write(bytes: line.finished())
    }

    /// One log line.
    public static func render(
        time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, format: Format
    ) -> String {
        line(time: time, level: level, label: label, message: message, metadata: metadata, format: format).finishedText()
    }

    /// One log line, built: the ordered fields first, the others sorted.
    private static func line(
        time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, format: Format
    ) -> LogLineBuilder {
        let second = Int(time.timeIntervalSince1970.rounded(.down))
        var line = LogLineBuilder(
            format: format, timestamp: LogTimestamp.bytes(forSecond: second), level: level, label: label, message: message)
        appendFields(metadata, format: format, to: &line)
        return line
    }

    /// The metadata's fields: those of ``fieldOrder`` first, in that order, the others sorted.
    private static func appendFields(_ metadata: Logger.Metadata, format: Format, to line: inout LogLineBuilder) {
        let reserved: Set<String> = ["time", "level", "label", "msg"]
        for key in fieldOrder {
            if let value = metadata[key] { line.append(key, "\(value)") }
        }
        if metadata.count > 0 {
            let others = metadata.keys.filter { !orderedFields.contains($0) && !(format == .json && reserved.contains($0)) }
            for key in others.sorted() { line.append(key, "\(metadata[key]!)") }
        }
    }

    /// Writes one `info` line with message `request` whose fields `appendFields` adds in place (the
    /// access log's path: no metadata dictionary). `appendFields` runs under the calling thread's buffer
    /// lock, so it only appends values it already has (it must not log).
    func writeLine(_ appendFields: (inout LogLineBuilder) -> Void) {
        writer.append { buffer, timestamp in
            LogLineBuilder.build(
                into: &buffer, format: format, timestamp: timestamp, level: .info, label: label, message: "request", fields: appendFields)
        }
    }

    /// A logfmt value, quoted when it holds spaces, quotes, `=` or line breaks.
    static func logfmtValue(_ value: String) -> String {
        var bytes: [UInt8] = []
        LogLineBuilder.appendLogfmt(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
