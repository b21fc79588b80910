import ImageCore

/// Why a source could not be fetched.
public enum FetchError: PublicError, Equatable {
    /// The source resolved only to addresses the policy refuses, or redirected to a refused scheme.
    case refused(String)
    /// The origin answered 404 or 410.
    case notFound(status: Int)
    /// The source is larger than the configured limit.
    case tooLarge(limit: Int)
    /// The origin failed: an error status, a reset connection, too many redirects, an unknown host.
    case originFailure(String)
    /// The origin answered with a server error (5xx).
    case originServerError(status: Int)
    /// No connection to the origin could be made.
    case originUnreachable
    /// The origin did not answer in time.
    case timeout
    /// The object store refused the service's credentials or the bucket's policy refused it (S3 403):
    /// the operator's configuration, answered 502 (the client can do nothing about it).
    case accessDenied

    public var httpStatus: Int {
        switch self {
        case .refused: 403
        case .notFound: 404
        case .tooLarge: 413
        case .originFailure, .originServerError, .originUnreachable, .accessDenied: 502
        case .timeout: 504
        }
    }

    public var publicMessage: String {
        switch self {
        case .refused(let why): "source refused: \(why)"
        case .notFound(let status): "source not found (origin answered \(status))"
        case .tooLarge(let limit): "source is larger than the limit of \(limit) bytes"
        case .originFailure(let why): "origin failure: \(why)"
        case .originServerError(let status): "origin failure: origin answered \(status)"
        case .originUnreachable: "origin failure: cannot connect to the origin"
        case .timeout: "origin did not answer in time"
        case .accessDenied: "origin failure: the object store denied access"
        }
    }

    public var reason: String {
        switch self {
        case .refused: "source_refused"
        case .notFound: "source_not_found"
        case .tooLarge: "source_too_large"
        case .originFailure, .originServerError, .originUnreachable, .accessDenied: "origin_failure"
        case .timeout: "origin_timeout"
        }
    }

    /// Worth another attempt: the origin may answer next time.
    public var isTransient: Bool {
        switch self {
        case .originServerError, .originUnreachable, .timeout: true
        default: false
        }
    }
}
