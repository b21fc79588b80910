import Foundation
import ImageCore

/// A request header sent only to origins whose host matches a pattern (per-origin credentials),
/// written in configuration as `pattern=Name: value`, e.g. `*.private.example.com=Authorization: Basic dXNlcjpwdw==`.
public struct OriginHeader: Sendable, Equatable, CustomStringConvertible {
    /// `host.example.com` or `*.example.com`.
    public var hostPattern: String
    /// `Name: value`.
    public var line: String

    /// Parses `pattern=Name: value`; nil when malformed.
    public init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let pattern = text[..<equals].trimmingCharacters(in: .whitespaces)
        let line = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !pattern.isEmpty, let colon = line.firstIndex(of: ":"), colon != line.startIndex,
            !line.contains(where: { $0 == "\r" || $0 == "\n" })
        else { return nil }
        self.hostPattern = pattern
        self.line = line
    }

    /// `pattern=Name: value`, as written in configuration.
    public var description: String { "\(hostPattern)=\(line)" }
}
