import Hummingbird

extension ImageHandler {
    /// `GET /info?url=`: the source's size, format, alpha, frames, bytes, dominant colour and BlurHash.
    func info(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        try guards.checkSignedBeyondPresets(request)
        let source = try intake.source(query: guards.query(of: request))
        try guards.checkNotSelf(source)
        let pipeline = self.pipeline
        let conditions = Self.conditions(of: request)
        let timings = context.timings
        let outcome = try await waitForClient(context) {
            try await pipeline.info(for: source, conditions: conditions, timings: timings)
        }
        return respond(with: outcome, options: ImageResponseOptions(acceptClientHints: intake.hintPolicy.clientHints))
    }
}
