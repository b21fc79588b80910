import Foundation
import ImageCore
import Synchronization
import Tracing

/// One sampled request's trace: the tracer, the request's server span, and how its monotonic clock maps
/// to the wall clock (spans made afterwards, from a transform's recorded phases, are placed by it).
///
/// Carried by ``RequestTimings/trace``; nil when tracing is off or the request is not sampled, and then
/// nothing here runs. Spans are named `imageproxy.<stage>` (the origin request is the client span `GET`),
/// their attributes follow OpenTelemetry's semantic conventions where one exists and are
/// `imageproxy.*` otherwise. A failure is recorded on the span that failed with the public message only.
public final class RequestTrace: Sendable {
    /// The tracer the spans are made with.
    public let tracer: any Tracer
    /// The request's own span (kind server).
    public let span: any Span
    /// The wall clock (nanoseconds since 1970) at ``startInstant``.
    let startNanoseconds: UInt64
    /// The monotonic clock at the request's start.
    let startInstant: ContinuousClock.Instant
    /// Whether the origin request's `url.full` keeps its query (`log.sourceUrls`).
    public let includesSourceQuery: Bool

    /// Starts the request span `name` (`GET /img`), as a child of `parent` (the client's `traceparent`,
    /// or a new trace).
    public init(tracer: any Tracer, name: String, parent: ServiceContext, attributes: SpanAttributes = [:], includesSourceQuery: Bool = false) {
        self.tracer = tracer
        self.includesSourceQuery = includesSourceQuery
        startInstant = .now
        startNanoseconds = Self.wallNanoseconds()
        let span = tracer.startSpan(name, context: parent, ofKind: .server, at: WallInstant(nanosecondsSinceEpoch: startNanoseconds), function: #function, file: #fileID, line: #line)
        span.attributes.merge(attributes)
        self.span = span
    }

    /// Whether the request's span is recorded (sampled).
    public var isRecording: Bool { span.isRecording }

    /// Runs `work` inside a live child span `name` of `parent` (default: the request span); a thrown error is
    /// recorded on it (``fail(_:with:)``) and rethrown.
    public func span<Result>(
        _ name: String, kind: SpanKind = .internal, parent: ServiceContext? = nil,
        _ work: (any Span) async throws -> Result
    ) async rethrows -> Result {
        let child = tracer.startSpan(name, context: parent ?? span.context, ofKind: kind, at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        defer { child.end() }
        do {
            return try await work(child)
        } catch {
            Self.fail(child, with: error)
            throw error
        }
    }

    /// A child span of `parent` (default: the request span) that ran from `start` to `end` (monotonic
    /// instants of this process), made now; its context, for children of its own.
    @discardableResult
    public func recordSpan(
        _ name: String, from start: ContinuousClock.Instant, to end: ContinuousClock.Instant, parent: ServiceContext? = nil,
        attributes: SpanAttributes = [:], links: [ServiceContext] = []
    ) -> ServiceContext {
        let child = tracer.startSpan(name, context: parent ?? span.context, ofKind: .internal, at: wall(start), function: #function, file: #fileID, line: #line)
        child.attributes.merge(attributes)
        for link in links { child.addLink(SpanLink(context: link, attributes: [:])) }
        child.end(at: wall(max(start, end)))
        return child.context
    }

    /// The W3C trace context of `context` (`traceparent`, `tracestate`) as request header lines, for the
    /// origin and object-store requests made in that span.
    public func headerLines(for context: ServiceContext) -> [String] {
        var lines: [String] = []
        tracer.inject(context, into: &lines, using: HeaderLineInjector())
        return lines
    }

    /// The `traceparent` value of the request span (for `Server-Timing` and the access log's ids), made once.
    public var traceparent: String? { madeTraceparent.withLock { made in
        if made == nil { made = .some(headerLines(for: span.context).first { $0.hasPrefix("traceparent: ") }.map { String($0.dropFirst(13)) }) }
        return made ?? nil
    } }
    private let madeTraceparent = Mutex<String??>(nil)

    /// The request span's trace id and span id (lower-case hex), as its `traceparent` carries them.
    public var ids: (traceID: String, spanID: String)? {
        guard let parent = traceparent else { return nil }
        let fields = parent.split(separator: "-")
        guard fields.count == 4, fields[1].count == 32, fields[2].count == 16 else { return nil }
        return (String(fields[1]), String(fields[2]))
    }

    /// The spans of a transform's phases (``TransformPhase``) under `parent`.
    public func recordPhases(_ phases: [TransformPhase], parent: ServiceContext) {
        for phase in phases {
            var attributes = SpanAttributes()
            for (key, value) in phase.details {
                switch value {
                case .text(let text): attributes[key] = text
                case .integer(let number): attributes[key] = number
                }
            }
            recordSpan("imageproxy." + phase.name, from: phase.start, to: phase.end, parent: parent, attributes: attributes)
        }
    }

    /// Ends the request span with the response's status code (`http.response.status_code`; a 5xx is an
    /// error, a 4xx is not, as the server conventions say).
    public func end(status: Int, publicMessage: String?, errorType: String?, cacheTier: String? = nil) {
        span.attributes["http.response.status_code"] = status
        if let cacheTier { span.attributes["imageproxy.cache"] = cacheTier }
        if let errorType { span.attributes["error.type"] = errorType }
        if status >= 500 { span.setStatus(SpanStatus(code: .error, message: publicMessage)) }
        span.end(at: wall(.now))
    }

    /// Marks `span` failed with `error`: its public message and reason, never its internals.
    public static func fail(_ span: any Span, with error: any Error) {
        switch error {
        case let error as any PublicError:
            span.attributes["error.type"] = error.reason
            span.setStatus(SpanStatus(code: .error, message: error.publicMessage))
        case is CancellationError:
            span.attributes["error.type"] = "cancelled"
            span.setStatus(SpanStatus(code: .error, message: "cancelled"))
        default:
            span.attributes["error.type"] = "internal"
            span.setStatus(SpanStatus(code: .error, message: "internal error"))
        }
    }

    /// `instant` on the wall clock, through the request's start.
    func wall(_ instant: ContinuousClock.Instant) -> WallInstant {
        let offset = instant - startInstant
        let nanoseconds = offset.components.seconds * 1_000_000_000 + offset.components.attoseconds / 1_000_000_000
        let clamped = min(max(nanoseconds, -Int64(startNanoseconds / 2)), Int64(1) << 60)
        return WallInstant(nanosecondsSinceEpoch: UInt64(Int64(startNanoseconds) + clamped))
    }

    static func wallNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Writes each propagated field as a `name: value` header line.
    struct HeaderLineInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [String]) {
            // The values come from this process's own tracer; a line break is refused all the same.
            guard !value.contains(where: { $0 == "\r" || $0 == "\n" }) else { return }
            carrier.append(key + ": " + value)
        }
    }

    /// A point on the wall clock, in the form tracers take.
    public struct WallInstant: TracerInstant {
        public var nanosecondsSinceEpoch: UInt64
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }
    }
}
