/// The identity of one output variant: hex SHA-256 of its canonical description.
public struct VariantKey: Sendable, Hashable, CustomStringConvertible {
    /// 64 lower-case hex digits.
    public let hex: String

    /// Hashes a canonical description.
    public init(hashing canonical: String) {
        hex = sha256Hex(Array(canonical.utf8))
    }

    public var description: String { hex }
}
