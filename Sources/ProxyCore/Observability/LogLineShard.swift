import Foundation
import Synchronization

/// One logging thread's share of a ``LogLineWriter``: the bytes it queued and not yet written, the
/// lines it had to drop, and its own copy of the current second's timestamp. Only its thread appends
/// and only the writer thread takes, every batch interval, so its lock is practically never contended.
final class LogLineShard: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var dropped = 0
        var second = Int.min
        var timestamp: [UInt8] = []
    }

    private let state = Mutex(State())

    /// Lines dropped because this buffer was full.
    var droppedLines: Int { state.withLock { $0.dropped } }

    /// Nothing waits to be written.
    var isEmpty: Bool { state.withLock { $0.pending.isEmpty } }

    /// Appends one line that `build` writes at the end of the buffer (given the ISO 8601 timestamp of
    /// `second`, formatted once per second), then a newline. A line that takes the buffer past
    /// `capacity` is taken back out and counted as dropped.
    /// - Returns: whether the line was kept, and the bytes now waiting.
    func append(capacity: Int, second: Int, _ build: (inout [UInt8], [UInt8]) -> Void) -> (accepted: Bool, pending: Int) {
        state.withLock { state in
            if state.second != second {
                state.second = second
                state.timestamp = LogTimestamp.bytes(forSecond: second)
            }
            let start = state.pending.count
            build(&state.pending, state.timestamp)
            guard state.pending.count + 1 <= capacity else {
                state.pending.removeSubrange(start...)
                state.dropped += 1
                return (false, state.pending.count)
            }
            state.pending.append(UInt8(ascii: "\n"))
            return (true, state.pending.count)
        }
    }

    /// Hands the waiting bytes over in exchange for `buffer` (empty, its capacity kept for the next lines).
    func swapPending(with buffer: inout [UInt8]) {
        state.withLock { swap(&$0.pending, &buffer) }
    }
}

/// ISO 8601 UTC timestamps to the second (`2026-11-25T07:52:13Z`).
enum LogTimestamp {
    /// The timestamp of `second` (seconds since 1970) as UTF-8 bytes.
    static func bytes(forSecond second: Int) -> [UInt8] {
        var seconds = time_t(second)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        func digits(_ value: Int32, count: Int) {
            var divisor: Int32 = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, count: 4)
        bytes.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, count: 2)
        bytes.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, count: 2)
        bytes.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(parts.tm_min, count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, count: 2)
        bytes.append(UInt8(ascii: "Z"))
        return bytes
    }

    /// The current second (the coarse wall clock: a line's time needs no finer grain).
    static func currentSecond() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return now.tv_sec
    }
}
