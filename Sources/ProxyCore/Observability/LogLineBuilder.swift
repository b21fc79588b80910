import Foundation
import Logging

/// One log line being built in place as UTF-8 bytes: `time`, `level`, `label` and `msg` first, then
/// fields in the order they are appended, as logfmt (`key=value`, quoted when needed) or as a JSON
/// object. Bytes rather than a `String`: the access log appends a dozen short fields per request, and
/// a byte array takes them without the string's per-append bookkeeping.
struct LogLineBuilder {
    private let format: StructuredLogHandler.Format
    private var line: [UInt8] = []
    /// Where this line starts in `line` (a line built in place follows the lines before it).
    private var start = 0

    /// A line of its own, starting with `time` (`timestamp`, ISO 8601 bytes), `level`, `label` and `msg`.
    init(format: StructuredLogHandler.Format, timestamp: [UInt8], level: Logger.Level, label: String, message: String) {
        self.format = format
        line.reserveCapacity(320)
        appendHeader(timestamp: timestamp, level: level, label: label, message: message)
    }

    /// Builds one line at the end of `buffer`, in place (no array of its own): the header fields,
    /// then what `fields` appends, then the closing brace for JSON (no newline).
    static func build(
        into buffer: inout [UInt8], format: StructuredLogHandler.Format, timestamp: [UInt8], level: Logger.Level, label: String,
        message: String, fields: (inout LogLineBuilder) -> Void
    ) {
        var builder = LogLineBuilder(format: format)
        swap(&builder.line, &buffer)
        builder.start = builder.line.count
        builder.appendHeader(timestamp: timestamp, level: level, label: label, message: message)
        fields(&builder)
        builder.close()
        swap(&builder.line, &buffer)
    }

    private init(format: StructuredLogHandler.Format) { self.format = format }

    private mutating func appendHeader(timestamp: [UInt8], level: Logger.Level, label: String, message: String) {
        startField("time")
        if format == .json { line.append(UInt8(ascii: "\"")) }
        line.append(contentsOf: timestamp)
        if format == .json { line.append(UInt8(ascii: "\"")) }
        append("level", level.rawValue)
        append("label", label)
        append("msg", message)
    }

    /// Adds `name=value` (or `"name":"value"`), quoting and escaping `value` as needed.
    mutating func append(_ name: LogFieldName, _ value: String) {
        startField(name)
        switch format {
        case .logfmt: Self.appendLogfmt(value, to: &line)
        case .json: Self.appendQuoted(value, to: &line, escapingControls: true)
        }
    }

    /// Adds `name=value` for a value the caller knows needs no quoting or escaping in either format (no
    /// space, quote, `=`, backslash or control character: a route label, a validated request id).
    mutating func append(_ name: LogFieldName, verbatim value: String) {
        startField(name)
        if format == .json { line.append(UInt8(ascii: "\"")) }
        line.append(contentsOf: value.utf8)
        if format == .json { line.append(UInt8(ascii: "\"")) }
    }

    /// Adds `name=<integer>`.
    mutating func append(_ name: LogFieldName, integer: Int) {
        startField(name)
        appendInteger(integer)
    }

    /// Adds `name=<milliseconds with one decimal>`.
    mutating func appendMilliseconds(_ name: LogFieldName, _ duration: Duration) {
        startField(name)
        appendMillisecondsValue(duration)
    }

    /// Adds `key=value` (or `"key":"value"`).
    mutating func append(_ key: String, _ value: String) {
        startField(key)
        switch format {
        case .logfmt: Self.appendLogfmt(value, to: &line)
        case .json: Self.appendQuoted(value, to: &line, escapingControls: true)
        }
    }

    /// Adds `key=<milliseconds with one decimal>` (`key` followed by `suffix`), e.g. `fetch_ms=12.3`,
    /// written as digits without an intermediate string.
    mutating func appendMilliseconds(_ key: String, suffix: String = "", _ duration: Duration) {
        startField(key, suffix: suffix)
        appendMillisecondsValue(duration)
    }

    private mutating func appendMillisecondsValue(_ duration: Duration) {
        if format == .json { line.append(UInt8(ascii: "\"")) }
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        let tenths = Int((value * 10).rounded())
        if tenths < 0 { line.append(UInt8(ascii: "-")) }
        appendDigits(UInt(abs(tenths) / 10))
        line.append(UInt8(ascii: "."))
        line.append(UInt8(ascii: "0") + UInt8(abs(tenths) % 10))
        if format == .json { line.append(UInt8(ascii: "\"")) }
    }

    /// Adds `key=<integer>`.
    mutating func append(_ key: String, integer: Int) {
        startField(key)
        appendInteger(integer)
    }

    private mutating func appendInteger(_ integer: Int) {
        if format == .json { line.append(UInt8(ascii: "\"")) }
        if integer < 0 { line.append(UInt8(ascii: "-")) }
        appendDigits(integer.magnitude)
        if format == .json { line.append(UInt8(ascii: "\"")) }
    }

    /// The line's bytes, without a trailing newline.
    consuming func finished() -> [UInt8] {
        close()
        return line
    }

    private mutating func close() {
        if format == .json { line.append(UInt8(ascii: "}")) }
    }

    /// The line as text, without a trailing newline.
    consuming func finishedText() -> String {
        String(decoding: finished(), as: UTF8.self)
    }

    /// The separator and the encoded name, up to where the value starts.
    private mutating func startField(_ name: LogFieldName) {
        let prefix = format == .logfmt ? name.logfmt : name.json
        // The prefix starts with the separator, which the line's first field goes without.
        line.append(contentsOf: line.count > start ? prefix[...] : prefix.dropFirst())
    }

    /// The separator and the key, up to where the value starts.
    private mutating func startField(_ key: String, suffix: String = "") {
        switch format {
        case .logfmt:
            if line.count > start { line.append(UInt8(ascii: " ")) }
            line.append(contentsOf: key.utf8)
            line.append(contentsOf: suffix.utf8)
            line.append(UInt8(ascii: "="))
        case .json:
            line.append(line.count == start ? UInt8(ascii: "{") : UInt8(ascii: ","))
            Self.appendQuoted(key + suffix, to: &line, escapingControls: true)
            line.append(UInt8(ascii: ":"))
        }
    }

    /// The decimal digits of `value`, most significant first.
    private mutating func appendDigits(_ value: UInt) {
        var divisor: UInt = 1
        while value / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            line.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
    /// `\u00`: a control character's JSON escape before its two hex digits.
    private static let unicodeEscapePrefix = Array("\\u00".utf8)

    static func appendLogfmt(_ value: String, to line: inout [UInt8]) {
        var needsQuotes = value.isEmpty
        if !needsQuotes {
            for byte in value.utf8 where byte == 0x20 || byte == 0x22 || byte == 0x3D || byte == 0x0A || byte == 0x0D || byte == 0x5C {
                needsQuotes = true
                break
            }
        }
        guard needsQuotes else {
            line.append(contentsOf: value.utf8)
            return
        }
        appendQuoted(value, to: &line, escapingControls: false)
    }

    /// `value` in double quotes, with backslash, quote, CR and LF escaped (and, for JSON, every other
    /// control character as a `\u` escape of four hex digits). Works on UTF-8 bytes: every byte that
    /// needs escaping is ASCII, and multi-byte characters pass through whole.
    private static func appendQuoted(_ value: String, to line: inout [UInt8], escapingControls: Bool) {
        line.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\""): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case 0x0A: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09 where escapingControls: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            default:
                if escapingControls && byte < 0x20 {
                    line.append(contentsOf: Self.unicodeEscapePrefix)
                    line.append(Self.hexDigits[Int(byte >> 4)])
                    line.append(Self.hexDigits[Int(byte & 0x0F)])
                } else {
                    line.append(byte)
                }
            }
        }
        line.append(UInt8(ascii: "\""))
    }
}

/// A field's name encoded once for both line formats, separator included: ` key=` for logfmt,
/// `,"key":` for JSON. The access log appends a dozen fixed fields per request; encoding their names
/// once spares escaping and copying each key per line.
struct LogFieldName: Sendable {
    let logfmt: [UInt8]
    let json: [UInt8]

    /// `key` must be a plain name (letters, digits, `_`), as every field name of ours is.
    init(_ key: String) {
        logfmt = Array(" \(key)=".utf8)
        json = Array(",\"\(key)\":".utf8)
    }
}
