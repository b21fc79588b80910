import ImageCore
import Tracing

extension RequestTrace {
    /// The span of a finished transform job (from `start` to now) with its output (`imageproxy.output.*`,
    /// and under `max_bytes` the encodes it took), and its phases (``TransformPhase``) as children; its context.
    @discardableResult
    func recordTransform(_ encoded: EncodedImage, from start: ContinuousClock.Instant) -> ServiceContext {
        var attributes = SpanAttributes()
        attributes["imageproxy.output.format"] = encoded.format.rawValue
        attributes["imageproxy.output.bytes"] = encoded.bytes.count
        attributes["imageproxy.output.width"] = encoded.width
        attributes["imageproxy.output.height"] = encoded.height
        attributes["imageproxy.encodes"] = encoded.encodes
        if let quality = encoded.chosenQuality { attributes["imageproxy.output.quality"] = quality }
        if let fits = encoded.fitsSizeTarget { attributes["imageproxy.max_bytes.met"] = fits }
        let context = recordSpan("imageproxy.transform", from: start, to: .now, attributes: attributes)
        // The output's attributes on the encode too (the phase whose name ends in `encode`).
        var phases = encoded.phases
        if let encode = phases.lastIndex(where: { $0.name.hasSuffix("encode") }) {
            phases[encode].details += [
                ("imageproxy.output.format", .text(encoded.format.rawValue)), ("imageproxy.output.bytes", .integer(encoded.bytes.count)),
                ("imageproxy.encodes", .integer(encoded.encodes)),
            ]
            if let quality = encoded.chosenQuality { phases[encode].details.append(("imageproxy.output.quality", .integer(quality))) }
        }
        recordPhases(phases, parent: context)
        return context
    }

    /// The span of a transform job that failed (from `start` to now), with the error's public message.
    func recordFailedTransform(_ error: ImagingError, from start: ContinuousClock.Instant) {
        let child = tracer.startSpan(
            "imageproxy.transform", context: span.context, ofKind: .internal, at: wall(start), function: #function, file: #fileID,
            line: #line)
        Self.fail(child, with: error)
        child.end(at: wall(.now))
    }
}
