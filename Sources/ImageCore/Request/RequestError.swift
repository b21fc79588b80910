/// A problem with the query of an image request: 400, naming the parameter.
public struct RequestError: PublicError, Equatable {
    /// The query parameter at fault.
    public let parameter: String
    /// What is wrong with it.
    public let problem: String

    public init(parameter: String, problem: String) {
        self.parameter = parameter
        self.problem = problem
    }

    public var httpStatus: Int { 400 }
    public var publicMessage: String { "invalid parameter '\(parameter)': \(problem)" }
    public var reason: String { "bad_request" }
}
