/// What kind of failure an error is, in the imaging layer's terms: what went wrong, not how a protocol
/// says it (the server maps each kind to its HTTP status, ``PublicError``).
public enum FailureKind: Sendable, Equatable {
    /// The request itself is wrong (a parameter, a signature).
    case invalidRequest
    /// The source is not in a format the service reads, or one turned off.
    case unsupportedSource
    /// The source is in a supported format but cannot be used: damaged, too large, or the request cannot
    /// be done on it.
    case unusableSource
    /// The service is too busy to do it now (a resource stayed taken): retry later.
    case busy
    /// The work took longer than its limit and was stopped: retry later.
    case tooSlow
    /// An internal failure, reported without its details.
    case internalFailure
}

/// An error whose message may be shown to a client as it is: one line that names the problem without
/// internals (no paths, no library messages, no stack traces), its kind and a short reason.
public protocol ReportableError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    var kind: FailureKind { get }
    /// The message the client receives, one line of plain text.
    var publicMessage: String { get }
    /// A short identifier from a bounded set, for metric labels and log metadata.
    var reason: String { get }
}

extension ReportableError {
    public var description: String { "\(reason): \(publicMessage)" }
}
