import Foundation
import Hummingbird
import ImageCore
import ProxyEngine

/// `POST /prefetch` with `{"urls": ["/img?url=...&w=300", ...]}`: the same paths a page would request.
/// Answers 202 at once and produces the variants in the background at low priority (below every
/// client request; a client asking for the same source or variant raises it), so later requests are
/// cache hits. When the queues are full a prefetch is dropped silently. Entries that cannot be parsed (or are not signed, when signatures are required) are
/// reported in the 202 body and do not stop the others.
struct PrefetchHandler: Sendable {
    let pipeline: ImagePipeline
    /// The same intake as `/img` (a prefetch carries no client hints).
    let intake: ImageIntake
    let guards: SourceGuard
    /// A prefetch waits as long as a request may (`queue.requestTimeoutMs`), then leaves the queues.
    let deadlineMilliseconds: Int

    /// Most URLs in one prefetch request, and most body bytes.
    static let maxURLs = 100
    static let maxBodyBytes = 256 * 1024

    struct Body: Decodable {
        var urls: [String]
    }

    struct Answer: Encodable {
        struct Rejected: Encodable {
            var url: String
            var error: String
        }
        var accepted: Int
        var rejected: [Rejected]
    }

    func handle(_ request: Request, context: some RequestContext) async throws -> Response {
        try guards.checkNotLooping(request.headers)
        let bytes = try await request.body.collect(upTo: Self.maxBodyBytes)
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(buffer: bytes)) else {
            throw RequestError(parameter: "body", problem: #"must be JSON {"urls": ["/img?url=...", ...]}"#)
        }
        guard body.urls.count <= Self.maxURLs else {
            throw RequestError(parameter: "urls", problem: "at most \(Self.maxURLs) per request")
        }
        var answer = Answer(accepted: 0, rejected: [])
        let accept = request.headers[.accept]
        for entry in body.urls {
            do {
                let imageRequest = try parse(entry)
                let pipeline = self.pipeline
                Task(priority: .low) {
                    _ = try? await withDeadline(milliseconds: deadlineMilliseconds) {
                        try await pipeline.variant(for: imageRequest, conditions: .init(accept: accept), priority: .low)
                    }
                }
                answer.accepted += 1
            } catch let error as any PublicError {
                answer.rejected.append(.init(url: entry, error: error.publicMessage))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Response(
            status: .accepted, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(answer))))
    }

    /// An `/img?...` path as a page would request it.
    func parse(_ entry: String) throws -> ImageRequest {
        guard let components = URLComponents(string: entry), components.path == "/img" else {
            throw RequestError(parameter: "urls", problem: "entries must be /img?... paths")
        }
        try guards.verifySignature(entry)
        let pairs = (components.percentEncodedQueryItems ?? []).compactMap { item -> (name: String, value: String)? in
            guard !(guards.signer != nil && item.name == "sig") else { return nil }
            return (item.name.removingPercentEncoding ?? item.name, (item.value ?? "").removingPercentEncoding ?? "")
        }
        let imageRequest = try intake.image(query: pairs, hints: ClientHints()).request
        try guards.checkNotSelf(imageRequest)
        return imageRequest
    }
}
