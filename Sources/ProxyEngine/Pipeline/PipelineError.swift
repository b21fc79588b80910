import ImageCore

/// The pipeline refusing or giving up on work as a whole.
public enum PipelineError: PublicError, Equatable {
    /// Too much uncached work is pending: try again shortly (503 + `Retry-After`).
    case overloaded
    /// The request's deadline passed before its image was ready (504).
    case deadlinePassed(milliseconds: Int)

    public var httpStatus: Int {
        switch self {
        case .overloaded: 503
        case .deadlinePassed: 504
        }
    }

    public var publicMessage: String {
        switch self {
        case .overloaded: "busy: too many images are being produced; retry shortly"
        case .deadlinePassed(let milliseconds): "the image was not ready within \(milliseconds) ms"
        }
    }

    public var reason: String {
        switch self {
        case .overloaded: "overloaded"
        case .deadlinePassed: "deadline"
        }
    }

    /// Seconds a client should wait before retrying, when it should.
    public var retryAfterSeconds: Int? {
        if case .overloaded = self { return 1 }
        return nil
    }
}

/// The client closed its connection before its image was ready (nginx's 499): the request left the
/// queues; nobody reads this answer, but the access log and the metrics count it.
public struct ClientClosedRequestError: PublicError {
    public var httpStatus: Int { 499 }
    public var publicMessage: String { "the client closed the connection before the image was ready" }
    public var reason: String { "client_closed" }

    public init() {}
}
