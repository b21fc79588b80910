import ImageCore

/// The one intake of image requests: a query (without `sig`), the client's hints and the configuration
/// become the parsed request (presets expanded, overlays resolved, hints applied) and what its answer's
/// headers depend on. `/img`, `/prefetch` and the memory-hit front parse through ``image(query:hints:)``,
/// `/info` through ``source(query:)``: a new query parameter is parsed in one place (``ImageRequest``)
/// and reaches every entry point.
struct ImageIntake: Sendable {
    /// What parsing enforces and expands (`image.maxDimension`, presets, overlays, `image.colour`).
    let limits: ImageRequest.Limits
    /// Client hints and `Save-Data` (`http.clientHints`, `http.clientHintWidths`, `http.saveDataQuality`).
    let hintPolicy: ClientHints.Policy
    /// Whether answers carry `Content-Disposition: inline; filename=...` (`http.contentDisposition`).
    let contentDisposition: Bool

    /// The intake `limits` and the `http.*` settings make.
    init(limits: ImageRequest.Limits, http: ResponseSettings) {
        self.limits = limits
        hintPolicy = ClientHints.Policy(
            clientHints: http.clientHints, widths: http.clientHintWidths, saveDataQuality: http.saveDataQuality)
        contentDisposition = http.contentDisposition
    }

    /// An image request and what its answer's headers depend on.
    struct Parsed: Sendable {
        var request: ImageRequest
        var options: ImageResponseOptions
    }

    /// The request of an `/img` query with the client's hints applied.
    /// - Throws: ``RequestError`` naming the parameter at fault.
    func image(query: [(name: String, value: String)], hints: ClientHints) throws(RequestError) -> Parsed {
        var request = try ImageRequest(query: query, limits: limits)
        let hinted = request.adapt(to: hints, policy: hintPolicy, limits: limits)
        let options = ImageResponseOptions(
            vary: (request.negotiatesFormat ? ["Accept"] : []) + ClientHints.varyNames(of: hinted), acceptClientHints: hintPolicy.clientHints,
            filenameStem: contentDisposition ? ImageResponseOptions.filenameStem(of: request.source) : nil)
        return Parsed(request: request, options: options)
    }

    /// The source of an `/info` query, which takes `url`, and `faces=1` for the face boxes
    /// (``ImageInfo/faces``).
    /// - Throws: ``RequestError`` for any other, repeated or missing parameter, or a bad URL.
    func infoQuery(_ query: [(name: String, value: String)]) throws(RequestError) -> (source: SourceURL, faces: Bool) {
        var url: String?
        var faces: Bool?
        for (name, value) in query {
            switch name {
            case "url":
                guard url == nil else { throw RequestError(parameter: "url", problem: "given more than once") }
                url = value
            case "faces":
                guard faces == nil else { throw RequestError(parameter: "faces", problem: "given more than once") }
                guard value == "0" || value == "1" else { throw RequestError(parameter: "faces", problem: "must be 0 or 1") }
                faces = value == "1"
            default:
                throw RequestError(parameter: name, problem: "unknown parameter")
            }
        }
        guard let url else { throw RequestError(parameter: "url", problem: "is required") }
        return (try SourceURL(parsing: url), faces ?? false)
    }
}
