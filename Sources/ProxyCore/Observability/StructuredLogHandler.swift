import Foundation
import Logging

/// A swift-log handler writing one line per message to standard error, as logfmt
/// (`time=... level=info label=... msg="..." key=value`) or as a JSON object.
public struct StructuredLogHandler: LogHandler {
    /// The line format.
    public enum Format: String, Sendable {
        case logfmt, json
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let format: Format

    public init(label: String, format: Format, level: Logger.Level) {
        self.label = label
        self.format = format
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let extra = event.metadata { fields.merge(extra) { $1 } }
        let line = Self.render(
            time: Date(), level: event.level, label: label, message: "\(event.message)", metadata: fields, format: format)
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// One log line.
    public static func render(
        time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, format: Format
    ) -> String {
        let timestamp = ISO8601DateFormatter().string(from: time)
        let sorted = metadata.sorted { $0.key < $1.key }.map { ($0.key, "\($0.value)") }
        switch format {
        case .json:
            var object: [String: String] = ["time": timestamp, "level": level.rawValue, "label": label, "msg": message]
            for (key, value) in sorted where object[key] == nil { object[key] = value }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        case .logfmt:
            var parts = ["time=\(timestamp)", "level=\(level.rawValue)", "label=\(logfmtValue(label))", "msg=\(logfmtValue(message))"]
            for (key, value) in sorted { parts.append("\(key)=\(logfmtValue(value))") }
            return parts.joined(separator: " ")
        }
    }

    /// Quotes a logfmt value when it holds spaces, quotes or `=`.
    static func logfmtValue(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }
}
