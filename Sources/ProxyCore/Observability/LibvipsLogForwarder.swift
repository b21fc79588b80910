import Foundation
import ImageCore
import Logging
import ProxyEngine
import Synchronization

/// Forwards libvips' messages (``VipsLog``) to the service's logger: one constant message, the text and
/// the ids of the requests whose transforms were running as metadata, at most `perSecond` lines a
/// second (a damaged file can make libjpeg warn for every row); the lines dropped are counted in the
/// next one (`dropped`).
final class LibvipsLogForwarder: Sendable {
    private let logger: Logger
    private let perSecond: Int
    private let runningRequestIDs: @Sendable () -> [String]
    private let window = Mutex<(second: Int, lines: Int, dropped: Int)>((0, 0, 0))

    init(logger: Logger, perSecond: Int = 10, runningRequestIDs: @escaping @Sendable () -> [String]) {
        self.logger = logger
        self.perSecond = perSecond
        self.runningRequestIDs = runningRequestIDs
    }

    /// Routes libvips' messages here (process-wide).
    func install() {
        VipsLog.route { [self] level, domain, message in forward(level: level, domain: domain, message: message) }
    }

    func forward(level: String, domain: String, message: String, now: Date = Date()) {
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
        let ids = runningRequestIDs()
        if ids.count == 1 { metadata["request_id"] = "\(ids[0])" } else if !ids.isEmpty { metadata["request_ids"] = "\(ids.joined(separator: ","))" }
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
