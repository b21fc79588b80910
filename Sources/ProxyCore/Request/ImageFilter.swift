/// One step of the `filter` parameter, applied to the resized image in the order given.
public enum ImageFilter: Sendable, Hashable, CustomStringConvertible {
    /// Gaussian blur, `blur:SIGMA` (0.1...100).
    case blur(sigma: Double)
    /// Unsharp mask, `sharpen` or `sharpen:SIGMA` (0.1...10, default 1).
    case sharpen(sigma: Double)
    /// Greyscale, `grayscale`.
    case grayscale

    /// The canonical spelling, used in the variant key.
    public var description: String {
        switch self {
        case .blur(let sigma): "blur:\(sigma)"
        case .sharpen(let sigma): "sharpen:\(sigma)"
        case .grayscale: "grayscale"
        }
    }

    /// Parses one comma-separated step of the `filter` parameter.
    static func parse(_ step: Substring) throws(RequestError) -> ImageFilter {
        let parts = step.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts[0]
        let argument = parts.count > 1 ? parts[1] : nil
        func number(_ range: ClosedRange<Double>, default fallback: Double? = nil) throws(RequestError) -> Double {
            guard let argument else {
                if let fallback { return fallback }
                throw RequestError(parameter: "filter", problem: "\(name) needs a value, e.g. \(name):2")
            }
            guard let value = Double(argument), value.isFinite, range.contains(value) else {
                throw RequestError(
                    parameter: "filter",
                    problem: "\(name) takes a number in \(range.lowerBound)...\(range.upperBound), not '\(argument)'")
            }
            return value
        }
        switch name {
        case "blur": return .blur(sigma: try number(0.1...100))
        case "sharpen": return .sharpen(sigma: try number(0.1...10, default: 1))
        case "grayscale", "greyscale":
            guard argument == nil else {
                throw RequestError(parameter: "filter", problem: "grayscale takes no value")
            }
            return .grayscale
        default:
            throw RequestError(parameter: "filter", problem: "unknown filter '\(name)' (known: blur, sharpen, grayscale)")
        }
    }
}
