import Foundation
import ImageCore
import ProxyEngine

/// What an image answer's headers depend on besides the variant, decided by the request and settings:
/// which request headers it varies on, whether it asks for client hints, its download name.
struct ImageResponseOptions: Sendable, Hashable, CustomStringConvertible {
    /// Request headers that chose the answer (`Accept` for `format=auto`, client hints, `Save-Data`).
    var vary: [String] = []
    /// Send `Accept-CH` (`http.clientHints`).
    var acceptClientHints = false
    /// The file name without extension for `Content-Disposition` (`http.contentDisposition`); nil for none.
    var filenameStem: String?
    /// `Content-Disposition: attachment` instead of `inline` (a dialect's download option).
    var attachment = false

    /// `/info` and other answers that depend on nothing but the source.
    static let plain = ImageResponseOptions()

    var description: String { "\(vary.joined(separator: ","))|\(acceptClientHints)|\(filenameStem ?? "")|\(attachment)" }

    /// A download name's stem from a source URL's last path segment: without its extension, only
    /// letters, digits, `-`, `_` and `.` (others become `_`), at most 100 characters; `image` when empty.
    static func filenameStem(of source: SourceURL) -> String {
        filenameStem(ofPath: source.absoluteString.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "")
    }

    /// A download name's stem from a URL path (see ``filenameStem(of:)``).
    static func filenameStem(ofPath path: String) -> String {
        var last = path.split(separator: "/").last.map(String.init) ?? ""
        if path.hasSuffix("/") || !path.dropFirst(8).contains("/") { last = "" }
        if let dot = last.lastIndex(of: "."), dot != last.startIndex { last = String(last[..<dot]) }
        return safeStem(last.removingPercentEncoding ?? last)
    }

    /// A file name stem safe in a header: only letters, digits, `-`, `_` and `.` (others become `_`), at
    /// most 100 characters; `image` when empty.
    static func safeStem(_ name: String) -> String {
        let safe = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_" }.prefix(100))
        return safe.isEmpty ? "image" : safe
    }

    /// The file extension for an image media type.
    static func fileExtension(of contentType: String) -> String {
        switch contentType {
        case "image/jpeg": "jpg"
        case "image/png": "png"
        case "image/webp": "webp"
        case "image/avif": "avif"
        case "image/gif": "gif"
        case "image/jxl": "jxl"
        default: "bin"
        }
    }
}
