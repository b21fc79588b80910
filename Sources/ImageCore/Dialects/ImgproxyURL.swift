import Foundation

/// An imgproxy URL: `/<signature>/<options>/plain/<percent-encoded source>[@<ext>]` or
/// `/<signature>/<options>/<base64url source, optionally split by slashes>[.<ext>]`, each option
/// `name:argument:…` (imgproxy's documented grammar). Parsing is pure and bounded by the URL's length.
public struct ImgproxyURL: Sendable {
    /// The first path segment: the signature, or `insecure` (any value when signing is off).
    public let signature: String
    /// What the signature covers: the path after the signature, from its `/`, exactly as sent.
    public let signedPath: String
    /// The processing options, in order, each split at `:`.
    public let options: [[Substring]]
    /// The source URL, decoded.
    public let source: String
    /// The extension after `@` (plain) or `.` (base64), nil when none: the output format.
    public let sourceExtension: String?

    /// The longest request target read (longer ones are a 400 before any parsing).
    public static let maxLength = 16_384

    /// Parses a request target (path and query, as sent) with the dialect's prefix already removed; it
    /// starts with `/`.
    /// - Throws: ``RequestError`` naming what is malformed.
    public init(target: String) throws(RequestError) {
        guard target.utf8.count <= Self.maxLength else {
            throw RequestError(parameter: "url", problem: "longer than \(Self.maxLength) bytes")
        }
        guard target.hasPrefix("/") else { throw RequestError(parameter: "url", problem: "must start with /") }
        let afterSlash = target.dropFirst()
        guard let end = afterSlash.firstIndex(of: "/") else {
            throw RequestError(parameter: "url", problem: "must be /<signature>/<options>/<source>")
        }
        signature = String(afterSlash[..<end])
        signedPath = String(afterSlash[end...])
        let segments = afterSlash[end...].dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var options: [[Substring]] = []
        var index = 0
        while index < segments.count, segments[index] != "plain", segments[index].contains(":") {
            options.append(segments[index].split(separator: ":", omittingEmptySubsequences: false))
            index += 1
        }
        self.options = options
        guard index < segments.count else { throw RequestError(parameter: "url", problem: "has no source URL") }
        if segments[index] == "plain" {
            let rest = segments[(index + 1)...].joined(separator: "/")
            var encoded = Substring(rest)
            var ext: String?
            if let at = rest.lastIndex(of: "@"), !rest[rest.index(after: at)...].contains("/") {
                ext = String(rest[rest.index(after: at)...])
                encoded = rest[..<at]
            }
            guard let decoded = String(encoded).removingPercentEncoding, !decoded.isEmpty else {
                throw RequestError(parameter: "url", problem: "plain source is empty or badly percent-encoded")
            }
            source = decoded
            sourceExtension = ext
        } else {
            // The base64 form has no query: anything after `?` is not part of the source.
            var joined = String(segments[index...].joined().prefix { $0 != "?" })
            var ext: String?
            if let dot = joined.lastIndex(of: ".") {
                ext = String(joined[joined.index(after: dot)...])
                joined = String(joined[..<dot])
            }
            guard let decoded = Self.decodeBase64URL(joined) else {
                throw RequestError(parameter: "url", problem: "source is neither plain/<url> nor URL-safe base64")
            }
            source = decoded
            sourceExtension = ext
        }
        if let sourceExtension, sourceExtension.isEmpty || sourceExtension.utf8.count > 8 {
            throw RequestError(parameter: "extension", problem: "must be a format name such as jpg, png, webp")
        }
    }

    /// URL-safe base64 (padding optional, `+`/`/` tolerated) decoded to UTF-8 text; nil otherwise.
    static func decodeBase64URL(_ text: String) -> String? {
        guard !text.isEmpty,
            text.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return String(data: data, encoding: .utf8)
    }
}

extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
