/// A problem with the query of an image request (an invalid request), naming the parameter.
public struct RequestError: ReportableError, Equatable {
    /// The query parameter at fault.
    public let parameter: String
    /// What is wrong with it.
    public let problem: String

    public init(parameter: String, problem: String) {
        self.parameter = parameter
        self.problem = problem
    }

    public var kind: FailureKind { .invalidRequest }
    public var publicMessage: String { "invalid parameter '\(parameter)': \(problem)" }
    public var reason: String { "bad_request" }
}
