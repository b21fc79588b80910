import Foundation
import HTTPTypes
import HummingbirdCore
import ImageCore
import NIOCore
import ProxyEngine
import Synchronization

/// The memory-hit answer to a `GET /img` request, or nil when the router must answer (not a fresh
/// memory hit, a bad query, a signed-URL setup).
struct MemoryHitResponder: Sendable {
    /// A complete response, ready for the socket.
    struct Answer {
        /// Status line, headers and body in one buffer (one pass through the pipeline, one iovec: the
        /// copy of a thumbnail costs less than separate writes).
        var bytes: ByteBuffer
        /// The client asked to close the connection after this response.
        var close: Bool
    }

    let images: ImageHandler
    let observability: ObservabilityMiddleware
    let serverName: String
    let dates = HTTPDateCache()
    /// Parsed requests and their variant keys by path and `Accept`: a hot variant is asked for with
    /// the same path over and over.
    let parsed = ParsedRequestCache()
    /// The serialised fixed part of each hot variant's answer.
    let preparedHeads = PreparedHeadCache()
    /// The request metrics of memory hits answered 200 and 304.
    let servedSeries: ProxyMetrics.RequestSeries
    let notModifiedSeries: ProxyMetrics.RequestSeries

    /// Counts the answers given here (the status page shows the front's share).
    let answered: AtomicCounter

    init(images: ImageHandler, observability: ObservabilityMiddleware, serverName: String, answered: AtomicCounter) {
        self.images = images
        self.answered = answered
        self.observability = observability
        self.serverName = serverName
        servedSeries = observability.metrics.requestSeries(route: "img", status: 200, cache: CacheTier.memory.rawValue)
        notModifiedSeries = observability.metrics.requestSeries(route: "img", status: 304, cache: CacheTier.memory.rawValue)
    }

    func answer(_ head: RawRequestHead, client: String?, allocator: ByteBufferAllocator) -> Answer? {
        let start = ContinuousClock.now
        let pipeline = images.pipeline
        guard
            let hot = parsed.request(for: head.path, accept: head.accept, images: images)
        else { return nil }
        let timings = RequestTimings()
        let conditions = ImagePipeline.ClientConditions(
            accept: head.accept, ifNoneMatch: head.ifNoneMatch,
            onlyIfCached: head.cacheControl.map { $0.lowercased().contains("only-if-cached") } ?? false)
        guard let outcome = pipeline.freshInMemory(hot.key, sourceHost: hot.sourceHost, conditions: conditions, timings: timings)
        else { return nil }
        if let tracing = observability.tracing {
            // Traced hits: the request span alone (its `imageproxy.cache` says memory: a lookup span of a
            // microsecond would double the cost of tracing a hit).
            timings.trace = tracing.startRequest(
                method: head.isHead ? "HEAD" : "GET", path: "/img", traceparent: head.traceparent, tracestate: head.tracestate)
        }

        let variant = outcome.variant
        let second = Int(Date().timeIntervalSince1970)
        // What the fixed head depends on, as fields (no string built per hit).
        let shape = PreparedHeadCache.Key(
            notModified: outcome.notModified, close: head.close, optionsKey: hot.optionsKey, storable: variant.storable,
            revalidation: variant.revalidation, madeAt: Int(variant.madeAt), etag: variant.etag)
        let prepared = preparedHeads.head(for: shape, second: second, expiresAt: variant.expiresAt) {
            // In the router's order (the differential test compares the two byte for byte). Requests
            // with `Origin` never come here (``RawRequestHead``), so CORS is applied as to no origin.
            var (status, headers, _) = images.responseParts(for: outcome, options: hot.options)
            images.cors.apply(to: &headers, origin: nil)
            observability.addFixedHeaders(route: "img", to: &headers)
            headers[.date] = dates.now()
            headers[.server] = serverName
            return Self.serialize(status, headers, allocator: allocator)
        }
        let observed = ObservabilityMiddleware.ObservedRequest(
            method: head.isHead ? "HEAD" : "GET", route: "img", sourceURL: hot.sourceURL,
            requestID: ObservabilityMiddleware.requestID(from: head.requestID), timings: timings, client: client)
        let total = ContinuousClock.now - start
        let body = outcome.notModified ? nil : variant.body
        let sentBody = head.isHead ? nil : body
        var bytes = allocator.buffer(capacity: prepared.readableBytes + 160 + (body?.readableBytes ?? 0))
        bytes.writeImmutableBuffer(prepared)
        bytes.writeStaticString("X-Request-Id: ")
        bytes.writeString(observed.requestID)
        // Server-Timing as the router writes it for `img` (``ObservabilityMiddleware/serverTiming(_:total:)``).
        bytes.writeStaticString("\r\nServer-Timing: ")
        timings.writeServerTiming(total: total, into: &bytes)
        if let trace = timings.trace, observability.tracing?.exposeToClients == true, let traceparent = trace.traceparent {
            bytes.writeStaticString(", traceparent;desc=")
            bytes.writeString(traceparent)
        }
        bytes.writeStaticString("\r\n\r\n")
        if let sentBody { bytes.writeImmutableBuffer(sentBody) }
        observability.record(
            observed, status: outcome.notModified ? 304 : 200, bytes: body.map { String($0.readableBytes) }, errorReason: nil,
            total: total, series: outcome.notModified ? notModifiedSeries : servedSeries)
        timings.trace?.end(status: outcome.notModified ? 304 : 200, publicMessage: nil, errorType: nil, cacheTier: "memory")
        answered.add(1)
        return Answer(bytes: bytes, close: head.close)
    }

    /// `HTTP/1.1 <status>` and the header lines, without the blank line that ends the head.
    static func serialize(_ status: HTTPResponse.Status, _ headers: HTTPFields, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 512)
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(status.code))
        buffer.writeStaticString(" ")
        buffer.writeString(status.reasonPhrase)
        buffer.writeStaticString("\r\n")
        for field in headers {
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        return buffer
    }
}

/// `/img` requests parsed, with their variant keys, by path and `Accept` header; at most `capacityBytes`
/// of paths, headers and URLs held (heads may be up to `server.maxHeaderBytes` each), forgotten all at
/// once when full.
final class ParsedRequestCache: Sendable {
    /// What a memory-hit answer needs from a request.
    struct HotRequest: Sendable {
        var key: VariantKey
        var sourceURL: String
        var sourceHost: String?
        /// What the answer's headers depend on (`Vary`, `Accept-CH`, `Content-Disposition`).
        var options: ImageResponseOptions
        /// `options` as text, made once: part of the prepared-head key of every hit.
        var optionsKey: String
    }

    /// A request's path and `Accept` (the key of a parsed request; two strings, not one built per hit).
    struct PathAndAccept: Hashable {
        var path: String
        var accept: String?
    }

    private let requests = Mutex<(entries: [PathAndAccept: HotRequest], bytes: Int)>(([:], 0))
    private let capacityBytes: Int

    init(capacityBytes: Int = 8 << 20) { self.capacityBytes = capacityBytes }

    /// Bytes held now (keys and source URLs, plus a fixed overhead per entry).
    var heldBytes: Int { requests.withLock { $0.bytes } }

    /// The request of `path` for a client sending `accept` (and no client hints, `Save-Data` or
    /// `Origin`: such requests go to the router), parsed once as `images` parses it; nil when the query
    /// is invalid or, with signed URLs, the signature is missing or wrong (the router will say why). Only
    /// verified paths are kept, so a path found here carries a signature checked (in constant time) before.
    func request(for path: String, accept: String?, images: ImageHandler) -> HotRequest? {
        let cacheKey = PathAndAccept(path: path, accept: accept)
        if let known = requests.withLock({ $0.entries[cacheKey] }) { return known }
        let signer = images.guards.signer
        do { try images.guards.verifySignature(path) } catch { return nil }
        let query = URI(path).queryParameters.compactMap { name, value -> (name: String, value: String)? in
            signer != nil && name == "sig" ? nil : (name: String(name), value: String(value))
        }
        // A watermark's key changes with its image: such requests are not kept here (the router answers them).
        guard let parsed = try? images.intake.image(query: query, hints: ClientHints()), parsed.request.watermark == nil,
            let key = images.pipeline.variantKey(for: parsed.request, accept: accept)
        else { return nil }
        let hot = HotRequest(
            key: key, sourceURL: parsed.request.source.absoluteString,
            sourceHost: parsed.request.source.host, options: parsed.options, optionsKey: parsed.options.description)
        let size = path.utf8.count + (accept?.utf8.count ?? 0) + hot.sourceURL.utf8.count + 160
        requests.withLock { requests in
            if requests.bytes + size > capacityBytes { requests = ([:], 0) }
            if requests.entries.updateValue(hot, forKey: cacheKey) == nil { requests.bytes += size }
        }
        return hot
    }
}
