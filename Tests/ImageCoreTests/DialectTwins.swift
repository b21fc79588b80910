@testable import ImageCore

/// The native request of `pairs` for `source`, as a dialect's URL should mean it: `format=source` unless the
/// pairs name a format (both dialects answer in the source's format by default).
func nativeTwin(of source: String, _ pairs: [(String, String)], limits: ImageRequest.Limits) throws -> ImageRequest {
    let format = pairs.contains { $0.0 == "format" } ? [] : [(name: "format", value: "source")]
    return try ImageRequest(query: [(name: "url", value: source)] + pairs.map { (name: $0.0, value: $0.1) } + format, limits: limits)
}
