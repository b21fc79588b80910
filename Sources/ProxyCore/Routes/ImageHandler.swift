import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import ProxyEngine

/// `GET /img` and `GET /info`: check, parse, run the pipeline, answer with caching headers (or 304).
struct ImageHandler: Sendable {
    let pipeline: ImagePipeline
    let limits: ImageRequest.Limits
    /// `stale-while-revalidate` seconds, 0 for none.
    let staleWhileRevalidate: Int
    /// Signature and loop checks.
    let guards: SourceGuard
    /// A request's whole time budget (`queue.requestTimeoutMs`).
    let deadlineMilliseconds: Int
    /// Client hints and `Save-Data` (`http.clientHints`, `http.clientHintWidths`, `http.saveDataQuality`).
    var hintPolicy = ClientHints.Policy.none
    /// Whether answers carry `Content-Disposition: inline; filename=...` (`http.contentDisposition`).
    var contentDisposition = false
    /// Cross-origin reads (`http.corsOrigins`); applied by ``CORSMiddleware`` and the memory-hit front.
    var cors = CORSPolicy(origins: [])

    /// Answers an `/img` request that reached the router. Most memory hits never do: ``MemoryHitHandler``
    /// answers them in front of the HTTP decoder. The ones that come here (`Origin`, client hints,
    /// `Save-Data`, a request with a body, a connection with an earlier request in hand, or the front
    /// turned off) get the same answer: both paths take ``ImagePipeline/freshInMemory(_:conditions:timings:)``
    /// and ``responseParts(for:options:)``, and a differential test compares their bytes.
    func handle(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        try guards.check(request)
        let (imageRequest, options) = try parse(query: guards.query(of: request), hints: ClientHints(headers: request.headers))
        try guards.checkNotSelf(imageRequest)
        let conditions = Self.conditions(of: request)
        if let hit = pipeline.freshInMemory(imageRequest, conditions: conditions, timings: context.timings) {
            return respond(with: hit, options: options)
        }
        let pipeline = self.pipeline
        let timings = context.timings
        let outcome = try await waitForClient(context) {
            try await pipeline.variant(for: imageRequest, conditions: conditions, timings: timings)
        }
        return respond(with: outcome, options: options)
    }

    /// The request of a query with the client's hints applied, and what its answer's headers depend on.
    func parse(
        query: [(name: String, value: String)], hints: ClientHints
    ) throws(RequestError) -> (ImageRequest, ImageResponseOptions) {
        var imageRequest = try ImageRequest(query: query, limits: limits)
        let hinted = imageRequest.adapt(to: hints, policy: hintPolicy, limits: limits)
        let options = ImageResponseOptions(
            vary: (imageRequest.negotiatesFormat ? ["Accept"] : []) + hinted, acceptClientHints: hintPolicy.clientHints,
            filenameStem: contentDisposition ? ImageResponseOptions.filenameStem(of: imageRequest.source) : nil)
        return (imageRequest, options)
    }

    /// `GET /info?url=`: the source's size, format, alpha, frames, bytes, dominant colour and BlurHash.
    func info(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        try guards.check(request)
        var url: String?
        for (name, value) in guards.query(of: request) {
            guard name == "url" else { throw RequestError(parameter: name, problem: "unknown parameter") }
            guard url == nil else { throw RequestError(parameter: "url", problem: "given more than once") }
            url = value
        }
        guard let url else { throw RequestError(parameter: "url", problem: "is required") }
        let source = try SourceURL(parsing: url)
        try guards.checkNotSelf(source)
        let pipeline = self.pipeline
        let conditions = Self.conditions(of: request)
        let timings = context.timings
        let outcome = try await waitForClient(context) {
            try await pipeline.info(for: source, conditions: conditions, timings: timings)
        }
        return respond(with: outcome, options: ImageResponseOptions(acceptClientHints: hintPolicy.clientHints))
    }

    /// Runs `work` within the request deadline, and stops it when the client disconnects (answered
    /// 499, which nobody receives but the access log and the metrics show).
    private func waitForClient(
        _ context: ProxyRequestContext, _ work: @escaping @Sendable () async throws -> ImagePipeline.Outcome
    ) async throws -> ImagePipeline.Outcome {
        let disconnect = await context.channel?.clientDisconnectSignal()
        do {
            return try await withDeadline(milliseconds: deadlineMilliseconds, disconnect: disconnect, work)
        } catch is CancellationError {
            throw ClientClosedRequestError()
        }
    }

    static func conditions(of request: Request) -> ImagePipeline.ClientConditions {
        conditions(of: request.headers)
    }

    static func conditions(of headers: HTTPFields) -> ImagePipeline.ClientConditions {
        ImagePipeline.ClientConditions(
            accept: headers[.accept], ifNoneMatch: headers[.ifNoneMatch],
            onlyIfCached: headers[.cacheControl].map { $0.lowercased().contains("only-if-cached") } ?? false)
    }

    /// The response for a pipeline outcome: 200 with the body, or 304, with the caching headers.
    /// `options.vary` belongs to the request, not to the stored entry: one entry serves `format=webp`
    /// and negotiated WebP alike.
    func respond(with outcome: ImagePipeline.Outcome, options: ImageResponseOptions) -> Response {
        let (status, headers, body) = responseParts(for: outcome, options: options)
        guard let body else { return Response(status: status, headers: headers) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    /// Status, headers (caching headers, `Content-Type`, `Content-Length`) and body (nil for 304) of an
    /// outcome; shared with ``MemoryHitHandler``.
    func responseParts(
        for outcome: ImagePipeline.Outcome, options: ImageResponseOptions
    ) -> (HTTPResponse.Status, HTTPFields, ByteBuffer?) {
        let variant = outcome.variant
        var headers = HTTPFields()
        headers[.eTag] = variant.etag
        headers[.lastModified] = variant.originLastModified ?? HTTPDateCache.format(Int(variant.madeAt))
        headers[.cacheControl] = cacheControl(for: variant)
        if !options.vary.isEmpty { headers[.vary] = options.vary.joined(separator: ", ") }
        if options.acceptClientHints { headers[.acceptCH] = ClientHints.acceptCH }
        headers[.xCache] = outcome.tier.rawValue
        if outcome.notModified {
            return (.notModified, headers, nil)
        }
        headers[.contentType] = variant.contentType
        headers[.contentLength] = String(variant.body.readableBytes)
        if let stem = options.filenameStem {
            headers[.contentDisposition] = "inline; filename=\"\(stem).\(ImageResponseOptions.fileExtension(of: variant.contentType))\""
        }
        return (.ok, headers, variant.body)
    }

    /// `public, max-age=<remaining freshness>` (+ `stale-while-revalidate`); `no-store` when the
    /// origin forbade storing, `public, no-cache` when it asked to be consulted before each reuse,
    /// `public, max-age=N, must-revalidate` when it forbade stale reuse.
    func cacheControl(for variant: CachedVariant) -> String {
        guard variant.storable else { return "no-store" }
        switch variant.revalidation {
        case .always:
            return "public, no-cache"
        case .whenStale:
            return "public, max-age=\(variant.remainingFreshness(at: Date().timeIntervalSince1970)), must-revalidate"
        case .none:
            var value = "public, max-age=\(variant.remainingFreshness(at: Date().timeIntervalSince1970))"
            if staleWhileRevalidate > 0 { value += ", stale-while-revalidate=\(staleWhileRevalidate)" }
            return value
        }
    }
}

extension HTTPField.Name {
    /// Which cache tier answered: memory, disk or miss.
    static let xCache = HTTPField.Name("X-Cache")!
}
