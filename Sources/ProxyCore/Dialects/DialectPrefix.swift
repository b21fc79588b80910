/// The path a dialect's URLs live under: `/` (the URLs as they are, for a host pointed at the service) or
/// `/name` (`/thumbor/unsafe/300x200/…`). Stored without a trailing slash, `/` as the empty string.
struct DialectPrefix: Sendable, Equatable {
    /// The prefix without its trailing slash; empty for `/`.
    let path: String

    init(_ text: String) {
        var trimmed = Substring(text)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        path = String(trimmed)
    }

    /// Whether `text` can be a prefix: `/`, or `/` and path characters without `?`, `%`, `#` or `..`.
    static func isValid(_ text: String) -> Bool {
        text.hasPrefix("/") && text.utf8.count <= 64 && !text.contains("..")
            && text.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && !"?#%\\".unicodeScalars.contains($0) }
    }

    /// The request target after the prefix (starting with `/`), nil when the target is not under it.
    func remainder(of target: String) -> Substring? {
        guard target.hasPrefix(path) else { return nil }
        let rest = target.dropFirst(path.count)
        return rest.hasPrefix("/") ? rest : nil
    }
}
