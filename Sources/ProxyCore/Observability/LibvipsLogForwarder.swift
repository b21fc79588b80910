import Foundation
import ImageCore
import Logging
import ProxyEngine
import Synchronization

/// Forwards libvips' messages (``VipsLog``) to the service's logger: one constant message, the text and
/// the id of the request it belongs to as metadata (the request whose transform thread emitted it, or,
/// from libvips' own worker threads, the only transform running then; with several running, none: a
/// line never names another request), at most `perSecond` lines a second (a damaged file can make libjpeg warn for every row);
/// the lines dropped are counted in the next one (`dropped`).
final class LibvipsLogForwarder: Sendable {
    private let logger: Logger
    private let perSecond: Int
    private let soleRunningRequestID: @Sendable () -> String?
    private let window = Mutex<(second: Int, lines: Int, dropped: Int)>((0, 0, 0))

    init(logger: Logger, perSecond: Int = 10, soleRunningRequestID: @escaping @Sendable () -> String? = { nil }) {
        self.logger = logger
        self.perSecond = perSecond
        self.soleRunningRequestID = soleRunningRequestID
    }

    /// Routes libvips' messages here (process-wide).
    func install() {
        VipsLog.route { [self] level, domain, message, requestID in
            forward(level: level, domain: domain, message: message, requestID: requestID)
        }
    }

    func forward(level: String, domain: String, message: String, requestID: String?, now: Date = Date()) {
        let second = Int(now.timeIntervalSince1970)
        let dropped: Int? = window.withLock { state in
            if state.second != second { state = (second, 0, state.dropped) }
            guard state.lines < perSecond else {
                state.dropped += 1
                return nil
            }
            state.lines += 1
            defer { state.dropped = 0 }
            return state.dropped
        }
        guard let dropped else { return }
        var metadata: Logger.Metadata = ["libvips_level": "\(level)", "domain": "\(domain)", "text": "\(message)"]
        if let requestID = requestID ?? soleRunningRequestID() { metadata["request_id"] = "\(requestID)" }
        if dropped > 0 { metadata["dropped"] = "\(dropped)" }
        let logLevel: Logger.Level = switch level {
        case "error", "critical": .error
        case "warning": .warning
        case "message", "info": .info
        default: .debug
        }
        logger.log(level: logLevel, "libvips message", metadata: metadata)
    }
}
