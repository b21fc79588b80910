import ImageCore
import NIOCore
import Synchronization
import Tracing

/// What one request went through: stage durations for `Server-Timing` and the access log, the cache
/// tier that answered, the source host. Filled by the pipeline, read by the observability middleware.
public final class RequestTimings: Sendable {
    /// A named stage, in the order it happened.
    public struct Stage: Sendable, Equatable {
        public var name: String
        public var duration: Duration
    }

    private struct State {
        var stages: [Stage] = []
        var cacheTier: String = "none"
        var sourceHost: String?
        var requestID: String?
        /// Named facts without a duration (`quality;desc=62`).
        var descriptions: [(name: String, text: String)] = []
        var trace: RequestTrace?
    }

    private let state = Mutex(State())

    public init() {}

    /// Records a finished stage (`queue`, `fetch`, `transform`, ...).
    public func record(_ name: String, _ duration: Duration) {
        state.withLock { $0.stages.append(Stage(name: name, duration: duration)) }
    }

    /// Adds a fact without a duration to `Server-Timing` (`name;desc=text`; `text` is a token: letters,
    /// digits, `-`, `_`, `.`).
    public func describe(_ name: String, _ text: String) {
        state.withLock { $0.descriptions.append((name, text)) }
    }

    /// Times `work` as stage `name`; when the request is traced, also as span `imageproxy.<name>`, with
    /// `imageproxy.hit` from `hit` when given (a lookup).
    public func measure<Result>(
        _ name: String, hit: ((Result) -> Bool)? = nil, _ work: () async throws -> Result
    ) async rethrows -> Result {
        let start = ContinuousClock.now
        defer { record(name, ContinuousClock.now - start) }
        guard let trace else { return try await work() }
        return try await trace.span("imageproxy." + name) { span in
            let result = try await work()
            if let hit { span.attributes["imageproxy.hit"] = hit(result) }
            return result
        }
    }

    /// ``measure(_:hit:_:)`` for work that needs its span (to be the parent of the spans it makes, or of the
    /// `traceparent` it sends): `work` gets it, or nil when the request is not traced.
    public func measure<Result>(
        _ name: String, inSpan work: ((any Span)?) async throws -> Result
    ) async rethrows -> Result {
        let start = ContinuousClock.now
        defer { record(name, ContinuousClock.now - start) }
        guard let trace else { return try await work(nil) }
        return try await trace.span("imageproxy." + name) { span in try await work(span) }
    }

    /// The request's trace, when it is traced and sampled (``RequestTrace``).
    public var trace: RequestTrace? {
        get { state.withLock { $0.trace } }
        set { state.withLock { $0.trace = newValue } }
    }

    /// The cache tier that answered: memory, disk, miss, or none (not an image request).
    public var cacheTier: String {
        get { state.withLock { $0.cacheTier } }
        set { state.withLock { $0.cacheTier = newValue } }
    }

    /// The source's host name (never the full URL).
    /// The request's id (`X-Request-Id`), for logs written while it is being served.
    public var requestID: String? {
        get { state.withLock { $0.requestID } }
        set { state.withLock { $0.requestID = newValue } }
    }

    public var sourceHost: String? {
        get { state.withLock { $0.sourceHost } }
        set { state.withLock { $0.sourceHost = newValue } }
    }

    /// The stages so far.
    public var stages: [Stage] { state.withLock { $0.stages } }

    /// The `Server-Timing` header value: `cache;desc=miss, fetch;dur=38.2, ..., total;dur=61.0`.
    public func serverTiming(total: Duration) -> String {
        var parts = ["cache;desc=\(cacheTier)"]
        for (name, text) in state.withLock({ $0.descriptions }) { parts.append("\(name);desc=\(text)") }
        for stage in stages {
            parts.append("\(stage.name);dur=\(Self.milliseconds(stage.duration))")
        }
        parts.append("total;dur=\(Self.milliseconds(total))")
        return parts.joined(separator: ", ")
    }

    /// Milliseconds with one decimal.
    public static func milliseconds(_ duration: Duration) -> String {
        let tenths = tenthsOfMilliseconds(duration)
        return "\(tenths / 10).\(abs(tenths % 10))"
    }

    /// `duration` in tenths of a millisecond, rounded.
    static func tenthsOfMilliseconds(_ duration: Duration) -> Int {
        let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return Int((min(max(value * 10, -1e15), 1e15)).rounded())
    }

    /// ``serverTiming(total:)`` written straight into `buffer`, the same bytes without a `String` built (the
    /// memory-hit front writes it for every hit).
    public func writeServerTiming(total: Duration, into buffer: inout ByteBuffer) {
        let (tier, descriptions, stages) = state.withLock { ($0.cacheTier, $0.descriptions, $0.stages) }
        buffer.writeStaticString("cache;desc=")
        buffer.writeString(tier)
        for (name, text) in descriptions {
            buffer.writeStaticString(", ")
            buffer.writeString(name)
            buffer.writeStaticString(";desc=")
            buffer.writeString(text)
        }
        for stage in stages {
            buffer.writeStaticString(", ")
            buffer.writeString(stage.name)
            buffer.writeStaticString(";dur=")
            Self.writeMilliseconds(stage.duration, into: &buffer)
        }
        buffer.writeStaticString(", total;dur=")
        Self.writeMilliseconds(total, into: &buffer)
    }

    /// ``milliseconds(_:)``'s text written into `buffer`.
    static func writeMilliseconds(_ duration: Duration, into buffer: inout ByteBuffer) {
        let tenths = tenthsOfMilliseconds(duration)
        writeDecimal(tenths / 10, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "."))
        buffer.writeInteger(UInt8(48 + abs(tenths % 10)))
    }

    /// `value` in decimal digits, as `String(value)` writes it.
    static func writeDecimal(_ value: Int, into buffer: inout ByteBuffer) {
        if value < 0 { buffer.writeInteger(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        var rest = magnitude
        while divisor > 0 {
            buffer.writeInteger(UInt8(48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
