/// What a transform spent its time on, phase by phase, for traces: the decode (and which decoder, at
/// which scale), the resize, the steps after it (filters, watermark, text) and the encode.
///
/// libvips runs lazily: when the decode and the resize are libvips' own, they only build a pipeline and
/// the pixels are decoded and reduced while the encoder pulls them, so the time lands in `encode`
/// (its `imageproxy.pipeline` detail says `lazy`). The own decoders (libjpeg at a scale, the DC-only
/// decoder, the PNG decoder) decode in `decode`.
public struct TransformPhase: Sendable {
    /// A detail's value: text or an integer.
    public enum Value: Sendable, Equatable {
        case text(String)
        case integer(Int)
    }

    /// `decode`, `resize`, `steps`, `encode`, or `resize_encode` (a reduce and encode made as one step).
    public var name: String
    public var start: ContinuousClock.Instant
    public var end: ContinuousClock.Instant
    /// Attribute names (`imageproxy.decoder`, `imageproxy.output.format`, ...) and their values.
    public var details: [(key: String, value: Value)]

    public init(name: String, start: ContinuousClock.Instant, end: ContinuousClock.Instant, details: [(key: String, value: Value)] = []) {
        self.name = name
        self.start = start
        self.end = end
        self.details = details
    }

}

/// Records ``TransformPhase``s on the thread that runs a transform: each `begin` ends the phase before it.
final class TransformPhaseRecorder {
    private(set) var phases: [TransformPhase] = []
    private var open: (name: String, start: ContinuousClock.Instant, details: [(key: String, value: TransformPhase.Value)])?

    /// Ends the open phase, if any, and starts `name`.
    func begin(_ name: String, _ details: [(key: String, value: TransformPhase.Value)] = []) {
        let now = ContinuousClock.now
        close(at: now)
        open = (name, now, details)
    }

    /// Adds a detail to the open phase.
    func note(_ key: String, _ value: TransformPhase.Value) {
        open?.details.append((key, value))
    }

    /// Ends the open phase.
    func finish() { close(at: ContinuousClock.now) }

    private func close(at now: ContinuousClock.Instant) {
        guard let phase = open else { return }
        phases.append(TransformPhase(name: phase.name, start: phase.start, end: now, details: phase.details))
        open = nil
    }
}
