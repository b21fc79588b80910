/// A URL of another image proxy's dialect (imgproxy's, thumbor's) turned into the native API's terms: the
/// `/img` query it means, so that it is parsed, limited, keyed and cached as its native twin is (one variant,
/// one transform, one ETag), and the few things of the answer that the native query does not carry.
public struct DialectRequest: Sendable {
    /// The native `/img` parameters, in the order the dialect gave them.
    public var query: [(name: String, value: String)] = []
    /// For each native parameter, the dialect's own name of the option that set it: an error in a native
    /// parameter names the option the user wrote (`width`, not `w`).
    public var optionNames: [String: String] = [:]
    /// `Content-Disposition` file name stem the URL asks for (imgproxy's `filename`), nil for the default.
    public var filename: String?
    /// Answer as a download (`Content-Disposition: attachment`, imgproxy's `return_attachment`).
    public var attachment = false
    /// Unix time after which the URL is no longer served (imgproxy's `expires`): 404 after it.
    public var expires: Int?
    /// Whether the URL asks for the source's metadata as JSON instead of the image (thumbor's `meta/`).
    public var metadata = false

    public init() {}

    /// Sets a native parameter (replacing an earlier value), remembering the dialect's option name.
    public mutating func set(_ name: String, _ value: String, option: String) {
        if let index = query.firstIndex(where: { $0.name == name }) {
            query[index].value = value
        } else {
            query.append((name: name, value: value))
        }
        optionNames[name] = option
    }

    /// Removes a native parameter.
    public mutating func remove(_ name: String) {
        query.removeAll { $0.name == name }
        optionNames[name] = nil
    }

    /// The value of a native parameter set so far.
    public func value(of name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The native request, parsed as `/img` parses its query (without client hints).
    /// - Throws: ``RequestError`` naming the dialect's option.
    public func parsed(limits: ImageRequest.Limits) throws(RequestError) -> ImageRequest {
        do {
            return try ImageRequest(query: query, limits: limits)
        } catch {
            throw renamed(error)
        }
    }

    /// The native error renamed after the dialect's option, so the 400 names what the URL says.
    public func renamed(_ error: RequestError) -> RequestError {
        guard let option = optionNames[error.parameter], option != error.parameter else { return error }
        return RequestError(parameter: option, problem: error.problem)
    }
}

/// The common grammar of options written `name:argument:argument`.
enum DialectArguments {
    /// Go's `strconv.ParseBool` spellings, as imgproxy reads its flags.
    static func flag(_ text: Substring, option: String) throws(RequestError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False", "": return false
        default: throw RequestError(parameter: option, problem: "must be 1 or 0 (true or false), not '\(text.prefix(16))'")
        }
    }

    /// A whole number ≥ 0 of at most 9 digits (so no later arithmetic can overflow).
    static func count(_ text: Substring, option: String) throws(RequestError) -> Int {
        guard text.utf8.count <= 9, let value = Int(text), value >= 0 else {
            throw RequestError(parameter: option, problem: "must be a whole number ≥ 0, not '\(text.prefix(16))'")
        }
        return value
    }

    /// A finite number of at most 16 characters.
    static func number(_ text: Substring, option: String) throws(RequestError) -> Double {
        guard text.utf8.count <= 16, let value = Double(text), value.isFinite else {
            throw RequestError(parameter: option, problem: "must be a number, not '\(text.prefix(16))'")
        }
        return value
    }

    /// A number printed as the native API reads it (no exponent, no trailing `.0` noise beyond one digit).
    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }
}
