import Foundation
import ImageCore
import Logging
import ProxyEngine
import Synchronization

/// A swift-log handler writing one line per message, as logfmt (`time=... level=info label=...
/// msg="..." key=value`) or as a JSON object, through ``LogLineWriter`` (standard error, buffered, off
/// the caller's thread).
///
/// Built for the access log's rate: the timestamp is formatted once per second, the line is one string
/// built in place (no formatter, no JSONSerialization), and the access log's fields come in a fixed order
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
        + stageOrder.map { $0 + "_ms" } + ["source_host", "source", "client"]
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
        writer.write(
            Self.render(time: Date(), level: event.level, label: label, message: "\(event.message)", metadata: fields, format: format))
    }

    /// One log line.
    public static func render(
        time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, format: Format
    ) -> String {
        var line = LogLineBuilder(format: format, time: time, level: level, label: label, message: message)
        let reserved: Set<String> = ["time", "level", "label", "msg"]
        for key in fieldOrder {
            if let value = metadata[key] { line.append(key, "\(value)") }
        }
        if metadata.count > 0 {
            let others = metadata.keys.filter { !orderedFields.contains($0) && !(format == .json && reserved.contains($0)) }
            for key in others.sorted() { line.append(key, "\(metadata[key]!)") }
        }
        return line.finished()
    }

    /// Writes one `info` line with message `request` whose fields `appendFields` adds in place (the
    /// access log's path: no metadata dictionary).
    func writeLine(_ appendFields: (inout LogLineBuilder) -> Void) {
        var line = LogLineBuilder(format: format, time: Date(), level: .info, label: label, message: "request")
        appendFields(&line)
        writer.write(line.finished())
    }

    /// A logfmt value, quoted when it holds spaces, quotes, `=` or line breaks.
    static func logfmtValue(_ value: String) -> String {
        var text = ""
        LogLineBuilder.appendLogfmt(value, to: &text)
        return text
    }
}

/// One log line being built in place: `time`, `level`, `label` and `msg` first, then fields in the order
/// they are appended, as logfmt (`key=value`, quoted when needed) or as a JSON object.
struct LogLineBuilder {
    private let format: StructuredLogHandler.Format
    private var line = ""

    init(format: StructuredLogHandler.Format, time: Date, level: Logger.Level, label: String, message: String) {
        self.format = format
        line.reserveCapacity(256)
        append("time", TimestampCache.shared.text(for: time))
        append("level", level.rawValue)
        append("label", label)
        append("msg", message)
    }

    /// Adds `key=value` (or `"key":"value"`).
    mutating func append(_ key: String, _ value: String) {
        switch format {
        case .logfmt:
            if !line.isEmpty { line += " " }
            line += key
            line += "="
            Self.appendLogfmt(value, to: &line)
        case .json:
            line += line.isEmpty ? "{" : ","
            Self.appendQuoted(key, to: &line, escapingControls: true)
            line += ":"
            Self.appendQuoted(value, to: &line, escapingControls: true)
        }
    }

    /// The line, without a trailing newline.
    consuming func finished() -> String {
        if format == .json { line += "}" }
        return line
    }

    static func appendLogfmt(_ value: String, to line: inout String) {
        let needsQuotes = value.isEmpty || value.utf8.contains { $0 == 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x0A || $0 == 0x0D || $0 == 0x5C }
        guard needsQuotes else {
            line += value
            return
        }
        appendQuoted(value, to: &line, escapingControls: false)
    }

    /// `value` in double quotes, with backslash, quote, CR and LF escaped (and, for JSON, every other
    /// control character as a `\u` escape of four hex digits).
    private static func appendQuoted(_ value: String, to line: inout String, escapingControls: Bool) {
        line += "\""
        for character in value.unicodeScalars {
            switch character {
            case "\\": line += "\\\\"
            case "\"": line += "\\\""
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t" where escapingControls: line += "\\t"
            default:
                if escapingControls && character.value < 0x20 {
                    let hex = String(character.value, radix: 16)
                    line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    line.unicodeScalars.append(character)
                }
            }
        }
        line += "\""
    }
}

/// ISO 8601 UTC timestamps to the second, formatted once per second.
final class TimestampCache: Sendable {
    static let shared = TimestampCache()
    private let cached = Mutex<(second: Int, text: String)>((Int.min, ""))

    func text(for time: Date) -> String {
        let second = Int(time.timeIntervalSince1970.rounded(.down))
        if let text = cached.withLock({ $0.second == second ? $0.text : nil }) { return text }
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let text = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
        cached.withLock { $0 = (second, text) }
        return text
    }
}
