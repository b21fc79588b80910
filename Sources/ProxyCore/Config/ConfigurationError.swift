import ImageCore
import ProxyEngine

/// Why the configuration could not be loaded; printed at start-up, which then fails.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    /// One line naming the key or file at fault and what was expected.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { "configuration error: \(message)" }
}
