import Foundation
import ImageCore
import ProxyEngine

/// The standard `process_*` figures, read from `/proc` (Linux).
public struct ProcessStatistics: Sendable, Equatable {
    public var residentMemoryBytes: Double
    public var cpuSeconds: Double
    public var openFileDescriptors: Double
    public var startTimeSeconds: Double

    /// The memory limit of the process's cgroup (v2 `memory.max`, else v1 `memory.limit_in_bytes`);
    /// nil when there is none.
    public static func memoryLimitBytes() -> Double? {
        for path in ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            guard let value = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }  // "max"
            return value >= 1e18 ? nil : value  // v1 writes a huge number for "no limit"
        }
        return nil
    }

    /// Reads the current process; nil where `/proc` is not available.
    public static func current() -> ProcessStatistics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let closing = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after "(comm)": state is field 3; utime 14, stime 15, starttime 22, rss 24.
        let fields = stat[stat.index(after: closing)...].split(separator: " ")
        func field(_ number: Int) -> Double { fields.count > number - 3 ? Double(fields[number - 3]) ?? 0 : 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        let bootTime = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { Double($0.dropFirst(6)) } ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return ProcessStatistics(
            residentMemoryBytes: field(24) * pageSize,
            cpuSeconds: (field(14) + field(15)) / ticks,
            openFileDescriptors: Double(descriptors),
            startTimeSeconds: bootTime + field(22) / ticks)
    }
}
