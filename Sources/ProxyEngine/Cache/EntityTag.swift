import ImageCore

/// Strong entity tags and `If-None-Match` comparison.
public enum EntityTag {
    /// A strong, quoted ETag derived from the bytes (128 bits of SHA-256).
    public static func strong(for bytes: [UInt8]) -> String {
        "\"\(sha256Hex(bytes).prefix(32))\""
    }

    /// `If-None-Match` semantics: `*`, or any listed tag equal to `etag` (weak comparison).
    public static func matches(_ condition: String, etag: String) -> Bool {
        condition.split(separator: ",").contains { candidate in
            var tag = Substring(candidate.drop { $0 == " " || $0 == "\t" })
            while tag.last == " " || tag.last == "\t" { tag = tag.dropLast() }
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            return tag == etag
        }
    }
}
