import Foundation

/// A thumbor URL: `/unsafe|<signature>/[meta/][trim/][AxB:CxD/][fit-in/][-Wx-H/][halign/][valign/][smart/]
/// [filters:name(args):…/]<image>` (thumbor's grammar, its parts in that order, each optional).
/// Parsing is pure and bounded by the URL's length.
public struct ThumborURL: Sendable {
    /// `unsafe`, or the signature (URL-safe base64 of HMAC-SHA1, with padding).
    public let signature: String
    /// What the signature covers: the path after the signature and its `/`.
    public let signedPath: String
    public var metadata = false
    /// `trim`, `trim:top-left`, `trim:bottom-right:10`: nil when not asked.
    public var trim: Substring?
    /// A manual crop `left x top : right x bottom` in source pixels.
    public var crop: (left: Int, top: Int, right: Int, bottom: Int)?
    /// `fit-in`, `adaptive-fit-in` or `full-fit-in`; nil without.
    public var fitIn: Substring?
    /// The size part as written (`300x200`, `-300x0`, `orig x 100`), nil when not given.
    public var width: Substring?
    public var height: Substring?
    public var flipHorizontally = false
    public var flipVertically = false
    public var horizontalAlign: Substring?
    public var verticalAlign: Substring?
    public var smart = false
    /// The filters, each as name and arguments.
    public var filters: [(name: Substring, arguments: [Substring])] = []
    /// The image URL, decoded.
    public let image: String

    /// Parses a request target with the dialect's prefix removed; it starts with `/`.
    /// - Throws: ``RequestError`` naming what is malformed.
    public init(target: String) throws(RequestError) {
        guard target.utf8.count <= ImgproxyURL.maxLength else {
            throw RequestError(parameter: "url", problem: "longer than \(ImgproxyURL.maxLength) bytes")
        }
        guard target.hasPrefix("/"), let end = target.dropFirst().firstIndex(of: "/") else {
            throw RequestError(parameter: "url", problem: "must be /unsafe/… or /<signature>/…")
        }
        signature = String(target.dropFirst()[..<end])
        let path = target[target.index(after: end)...]
        signedPath = String(path)
        var rest = path
        func take(_ matches: (Substring) -> Bool) -> Substring? {
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            let segment = rest[..<slash]
            guard matches(segment) else { return nil }
            rest = rest[rest.index(after: slash)...]
            return segment
        }
        if take({ $0 == "debug" }) != nil { throw RequestError(parameter: "debug", problem: "not supported by this service") }
        metadata = take { $0 == "meta" } != nil
        trim = take { $0 == "trim" || $0.hasPrefix("trim:") }
        if let segment = take({ Self.cropParts($0) != nil }) { crop = Self.cropParts(segment) }
        fitIn = take { $0 == "fit-in" || $0 == "adaptive-fit-in" || $0 == "full-fit-in" || $0 == "adaptive-full-fit-in" }
        if let size = take({ Self.sizeParts($0) != nil }), let parts = Self.sizeParts(size) {
            (flipHorizontally, width, flipVertically, height) = parts
        }
        horizontalAlign = take { $0 == "left" || $0 == "right" || $0 == "center" }
        verticalAlign = take { $0 == "top" || $0 == "bottom" || $0 == "middle" }
        smart = take { $0 == "smart" } != nil
        if rest.hasPrefix("filters:") {
            // thumbor's grammar: the filters run to the first `)/`.
            guard let end = rest.range(of: ")/") else { throw RequestError(parameter: "filters", problem: "must end with )/") }
            let list = rest[rest.index(rest.startIndex, offsetBy: 8)...end.lowerBound]
            rest = rest[end.upperBound...]
            filters = try Self.filterList(list)
        }
        guard !rest.isEmpty, let decoded = String(rest).removingPercentEncoding else {
            throw RequestError(parameter: "url", problem: "has no image URL")
        }
        image = decoded.contains("://") ? decoded : "http://" + decoded
    }

    /// `AxB:CxD` with four whole numbers.
    static func cropParts(_ segment: Substring) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        let corners = segment.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        var numbers: [Int] = []
        for corner in corners {
            let parts = corner.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            for part in parts {
                guard !part.isEmpty, part.utf8.count <= 7, part.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(part) else { return nil }
                numbers.append(value)
            }
        }
        return (numbers[0], numbers[1], numbers[2], numbers[3])
    }

    /// `[-]W x [-]H`, each side digits, `orig` or empty.
    static func sizeParts(_ segment: Substring) -> (Bool, Substring?, Bool, Substring?)? {
        let sides = segment.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2 else { return nil }
        func side(_ text: Substring) -> (Bool, Substring?)? {
            let flipped = text.hasPrefix("-")
            let value = flipped ? text.dropFirst() : text
            if value.isEmpty { return (flipped, nil) }
            guard value == "orig" || (value.utf8.count <= 7 && value.utf8.allSatisfy { (48...57).contains($0) }) else { return nil }
            return (flipped, value)
        }
        guard let first = side(sides[0]), let second = side(sides[1]) else { return nil }
        return (first.0, first.1, second.0, second.1)
    }

    /// `name(a,b):name()` into names and arguments (at most 20 filters).
    static func filterList(_ text: Substring) throws(RequestError) -> [(name: Substring, arguments: [Substring])] {
        var filters: [(name: Substring, arguments: [Substring])] = []
        var rest = text[...]
        while !rest.isEmpty {
            guard let open = rest.firstIndex(of: "("), let close = rest[open...].firstIndex(of: ")") else {
                throw RequestError(parameter: "filters", problem: "each filter is name(arguments)")
            }
            let name = rest[..<open]
            let inside = rest[rest.index(after: open)..<close]
            filters.append((name, inside.isEmpty ? [] : inside.split(separator: ",", omittingEmptySubsequences: false)))
            rest = rest[rest.index(after: close)...]
            if rest.hasPrefix(":") { rest = rest.dropFirst() } else if !rest.isEmpty {
                throw RequestError(parameter: "filters", problem: "filters are separated by ':'")
            }
            guard filters.count <= 20 else { throw RequestError(parameter: "filters", problem: "more than 20 filters") }
        }
        return filters
    }
}
