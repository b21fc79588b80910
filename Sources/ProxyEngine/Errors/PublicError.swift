import ImageCore

/// An error that may be shown to a client as it is: an HTTP status and a one-line message that
/// names the problem without internals (no paths, no library messages, no stack traces).
///
/// Every area has its own error type conforming to this; ImageCore's errors (``ReportableError``) say what
/// kind of failure they are, and their status is that kind's (``FailureKind/httpStatus``).
public protocol PublicError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status code the client receives.
    var httpStatus: Int { get }
    /// The message the client receives, one line of plain text.
    var publicMessage: String { get }
    /// A short identifier from a bounded set, for metric labels and log metadata.
    var reason: String { get }
    /// The `Cache-Control` of the error response; `no-store` unless the error may be reused.
    var cacheControl: String { get }
}

extension PublicError {
    public var description: String { "\(httpStatus) \(reason): \(publicMessage)" }
    public var cacheControl: String { "no-store" }
}

/// An error that clients and CDNs may reuse for a while (a remembered origin 404).
public struct CacheableError: PublicError {
    /// The error itself.
    public let underlying: any PublicError
    /// Seconds it may be reused.
    public let maxAge: Int

    public init(_ underlying: any PublicError, maxAge: Int) {
        self.underlying = underlying
        self.maxAge = maxAge
    }

    public var httpStatus: Int { underlying.httpStatus }
    public var publicMessage: String { underlying.publicMessage }
    public var reason: String { underlying.reason }
    public var cacheControl: String { "public, max-age=\(maxAge)" }
}

extension FailureKind {
    /// The HTTP status of this kind of failure.
    public var httpStatus: Int {
        switch self {
        case .invalidRequest: 400
        case .unsupportedSource: 415
        case .unusableSource: 422
        case .busy, .tooSlow: 503
        case .internalFailure: 500
        }
    }
}

extension ImagingError: PublicError {
    public var httpStatus: Int { kind.httpStatus }
    public var description: String { "\(httpStatus) \(reason): \(publicMessage)" }
}

extension RequestError: PublicError {
    public var httpStatus: Int { kind.httpStatus }
    public var description: String { "\(httpStatus) \(reason): \(publicMessage)" }
}
