/// An error that may be shown to a client as it is: an HTTP status and a one-line message that
/// names the problem without internals (no paths, no library messages, no stack traces).
///
/// Every area (request parsing, fetching, imaging, ...) has its own error type conforming to this.
public protocol PublicError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status code the client receives.
    var httpStatus: Int { get }
    /// The message the client receives, one line of plain text.
    var publicMessage: String { get }
    /// A short identifier from a bounded set, for metric labels and log metadata.
    var reason: String { get }
}

extension PublicError {
    public var description: String { "\(httpStatus) \(reason): \(publicMessage)" }
}
