import Foundation
import Synchronization

/// The IMF-fixdate of the current second, formatted once per second.
final class HTTPDateCache: Sendable {
    private let cached = Mutex<(second: Int, text: String)>((0, ""))

    func now() -> String {
        let second = Int(Date().timeIntervalSince1970)
        if let text = cached.withLock({ $0.second == second ? $0.text : nil }) { return text }
        let text = Self.format(second)
        cached.withLock { $0 = (second, text) }
        return text
    }

    static func format(_ second: Int) -> String {
        var time = time_t(second)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
