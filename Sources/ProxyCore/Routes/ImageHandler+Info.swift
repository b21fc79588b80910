import Hummingbird
import ImageCore

extension ImageHandler {
    /// `GET /info?url=[&faces=1]`: the source's size, format, alpha, frames, bytes, dominant colour and
    /// BlurHash, and with `faces=1` the faces found in it.
    func info(_ request: Request, context: ProxyRequestContext) async throws -> Response {
        try guards.checkSignedBeyondPresets(request)
        let (source, faces) = try intake.infoQuery(guards.query(of: request))
        try guards.checkNotSelf(source)
        return try await metadata(of: source, faces: faces, request: request, context: context)
    }

    /// The `/info` answer of `source`, whose checks are done (also thumbor's `meta/`).
    func metadata(of source: SourceURL, faces: Bool = false, request: Request, context: ProxyRequestContext) async throws -> Response {
        let pipeline = self.pipeline
        let conditions = Self.conditions(of: request)
        let timings = context.timings
        let outcome = try await waitForClient(context) {
            try await pipeline.info(for: source, faces: faces, conditions: conditions, timings: timings)
        }
        return respond(with: outcome, options: ImageResponseOptions(acceptClientHints: intake.hintPolicy.clientHints))
    }
}
