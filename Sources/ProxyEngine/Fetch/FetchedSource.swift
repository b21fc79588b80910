import Foundation
import ImageCore

/// The bytes of a source and what its origin said about them.
public struct FetchedSource: Sendable {
    /// The body, complete.
    public var body: [UInt8]
    /// Response header fields of the final response (after redirects), names lower-cased.
    public var headers: [(name: String, value: String)]
    /// The HTTP status of the final response.
    public var status: Int
    /// Bytes that came from an earlier, interrupted transfer (0 unless the download was resumed).
    public var resumedFrom: Int

    public init(body: [UInt8], headers: [(name: String, value: String)], status: Int, resumedFrom: Int = 0) {
        self.body = body
        self.headers = headers
        self.status = status
        self.resumedFrom = resumedFrom
    }

    /// The first value of a header field, by lower-case name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// Parses raw header lines (`Name: value\r\n`, the status line skipped).
    static func parseHeaderLines(_ raw: String) -> [(name: String, value: String)] {
        raw.split(whereSeparator: \.isNewline).compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            return (name, value)
        }
    }
}
