import CVipsShim
import Synchronization

/// Where libvips' own messages go. GLib's default handler writes them raw to stderr (with blank lines,
/// outside the structured log); once ``route(to:)`` is called every GLib/libvips message (for example
/// `VipsJpeg: Corrupt JPEG data: premature end of data segment`) reaches the sink instead.
public enum VipsLog {
    /// One message: GLib's level name (`warning`, `message`, ...), its domain and text.
    public typealias Sink = @Sendable (_ level: String, _ domain: String, _ message: String) -> Void

    private static let sink = Mutex<Sink?>(nil)

    /// Sends libvips' messages to `sink` from now on (process-wide; the last call wins).
    public static func route(to sink: @escaping Sink) {
        Self.sink.withLock { $0 = sink }
        ipx_route_glib_log { domain, level, message in
            guard let message else { return }
            VipsLog.deliver(level: level, domain: domain.map { String(cString: $0) } ?? "", message: String(cString: message))
        }
    }

    static func deliver(level: Int32, domain: String, message: String) {
        guard let sink = sink.withLock({ $0 }) else { return }
        sink(levelName(level), domain, message.trimmingCharacters(in: .whitespacesAndNewlines))
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
