import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import ProxyEngine

/// `GET /img`: check, parse, run the pipeline, answer with caching headers (or 304). `GET /info` is its
/// sibling (``ImageHandler+Info.swift``): the same checks, deadline and caching headers.
struct ImageHandler: Sendable {
    let pipeline: ImagePipeline
    /// Query and hints to request (presets, overlays, client hints, response options).
    let intake: ImageIntake
    /// `stale-while-revalidate` seconds, 0 for none.
    let staleWhileRevalidate: Int
    /// Signature and loop checks.
    let guards: SourceGuard
    /// A request's whole time budget (`queue.requestTimeoutMs`).
    let deadlineMilliseconds: Int
    /// Cross-origin reads (`http.corsOrigins`); applied by ``CORSMiddleware`` and the memory-hit front.
    var cors = CORSPolicy(origins: [])

    /// Answers an `/img` request that reached the router. Most memory hits never do: ``MemoryHitHandler``
    /// answers them in front of the HTTP decoder. The ones that come here (`Origin`, client hints,
    /// `Save-Data`, a request with a body, a connection with an earlier request in hand, or the front
    /// turned off) get the same answer: both paths take ``ImagePipeline/probeMemory(_:sourceHost:conditions:timings:)``
    /// and ``responseParts(for:options:)``, and a differential test compares their bytes.
    func handle(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        try guards.check(request)
        let parsed = try intake.image(query: guards.query(of: request), hints: ClientHints(headers: request.headers))
        return try await serve(parsed, request: request, context: context)
    }

    /// Answers a parsed image request whose signature (if any is needed) was checked: the native `/img`
    /// and every URL dialect (``DialectMiddleware``) end here.
    func serve(_ parsed: ImageIntake.Parsed, request: Request, context: ProxyRequestContext) async throws -> Response {
        let (imageRequest, options) = (parsed.request, parsed.options)
        try guards.checkNotSelf(imageRequest)
        let conditions = Self.conditions(of: request)
        // The key once per request: for the memory lookup and, on a miss, the pipeline (nil until a
        // watermark's image is in hand).
        // The memory tier once per request too: a fresh hit answers, anything else goes with the request.
        let key = pipeline.variantKey(for: imageRequest, accept: conditions.accept)
        let probe = key.map { self.pipeline.probeMemory($0, sourceHost: imageRequest.source.host, conditions: conditions, timings: context.timings) }
        if case .fresh(let hit) = probe { return respond(with: hit, options: options) }
        let pipeline = self.pipeline
        let timings = context.timings
        let outcome = try await waitForClient(context) {
            try await pipeline.variant(for: imageRequest, knownKey: key, memory: probe, conditions: conditions, timings: timings)
        }
        return respond(with: outcome, options: options)
    }

    /// Runs `work` within the request deadline, and stops it when the client disconnects (answered
    /// 499, which nobody receives but the access log and the metrics show).
    func waitForClient(
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
            let disposition = options.attachment ? "attachment" : "inline"
            headers[.contentDisposition] = "\(disposition); filename=\"\(stem).\(ImageResponseOptions.fileExtension(of: variant.contentType))\""
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
