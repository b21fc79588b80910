import CVipsShim
import Synchronization

/// Where libvips' own messages go. GLib's default handler writes them raw to stderr (with blank lines,
/// outside the structured log); once ``route(to:)`` is called every GLib/libvips message (for example
/// `VipsJpeg: Corrupt JPEG data: premature end of data segment`) reaches the sink instead.
///
/// Each message carries the request id its thread was tagged with (``withRequestTag(_:_:)``, set by the
/// transform pool around a job), so a message is attributed to the request whose work emitted it, or to
/// none (libvips' own worker threads): never to another request running at the same time. libvips'
/// error buffer is process-wide in 8.14, so its text is never attributed to a request at all (the
/// service discards it and names failures itself).
public enum VipsLog {
    /// One message: GLib's level name (`warning`, `message`, ...), its domain and text, and the request
    /// id the emitting thread works for (nil when none).
    public typealias Sink = @Sendable (_ level: String, _ domain: String, _ message: String, _ requestID: String?) -> Void

    /// The sink, boxed: a closure kept directly in a `Mutex` and read back through `withLock`'s `inout`
    /// gains a reabstraction thunk on every read, until the stack overflows (issue #29). A reference
    /// read by value does not.
    private final class Route: Sendable {
        let sink: Sink
        init(_ sink: @escaping Sink) { self.sink = sink }
    }

    private static let route = Mutex<Route?>(nil)

    /// Sends libvips' messages to `sink` from now on (process-wide; the last call wins).
    public static func route(to sink: @escaping Sink) {
        let route = Route(sink)
        Self.route.withLock { $0 = route }
        ipx_route_glib_log { domain, level, message, tag in
            guard let message else { return }
            VipsLog.deliver(
                level: level, domain: domain.map { String(cString: $0) } ?? "", message: String(cString: message),
                requestID: tag.map { String(cString: $0) })
        }
    }

    static func deliver(level: Int32, domain: String, message: String, requestID: String?) {
        let current: Route? = route.withLock { stored in stored }
        guard let current else { return }
        current.sink(levelName(level), domain, message.trimmingCharacters(in: .whitespacesAndNewlines), requestID)
    }

    /// Runs `work` with this thread's libvips messages tagged with `requestID` (nil: untagged).
    public static func withRequestTag<Result>(_ requestID: String?, _ work: () throws -> Result) rethrows -> Result {
        guard let requestID else { return try work() }
        ipx_set_thread_log_tag(requestID)
        defer { ipx_set_thread_log_tag(nil) }
        return try work()
    }

    /// Emits one GLib warning on this thread, exactly as libvips does (for tests of the routing).
    public static func emitWarningForTesting(domain: String, _ message: String) {
        ipx_emit_glib_warning(domain, message)
    }

    /// GLib's level flags by name.
    static func levelName(_ flags: Int32) -> String {
        let level = Int64(flags)
        func has(_ flag: GLogLevelFlags) -> Bool { level & Int64(flag.rawValue) != 0 }
        if has(G_LOG_LEVEL_ERROR) { return "error" }
        if has(G_LOG_LEVEL_CRITICAL) { return "critical" }
        if has(G_LOG_LEVEL_WARNING) { return "warning" }
        if has(G_LOG_LEVEL_MESSAGE) { return "message" }
        if has(G_LOG_LEVEL_INFO) { return "info" }
        return "debug"
    }
}
