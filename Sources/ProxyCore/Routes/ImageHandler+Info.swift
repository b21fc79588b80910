import Hummingbird
import ImageCore

extension ImageHandler {
    /// `GET /info?url=`: the source's size, format, alpha, frames, bytes, dominant colour and BlurHash.
    func info(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        try guards.checkSignedBeyondPresets(request)
        let source = try intake.source(query: guards.query(of: request))
        try guards.checkNotSelf(source)
        return try await metadata(of: source, request: request, context: context)
    }

    /// The `/info` answer of `source`, whose checks are done (also thumbor's `meta/`).
    func metadata(of source: SourceURL, request: Request, context: ProxyRequestContext) async throws -> Response {
        let pipeline = self.pipeline
        let conditions = Self.conditions(of: request)
        let timings = context.timings
        let outcome = try await waitForClient(context) {
            try await pipeline.info(for: source, conditions: conditions, timings: timings)
        }
        return respond(with: outcome, options: ImageResponseOptions(acceptClientHints: intake.hintPolicy.clientHints))
    }
}
