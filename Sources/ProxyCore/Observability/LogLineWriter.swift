import Foundation
import ImageCore
import ProxyEngine
import Synchronization

/// Writes log lines to a file descriptor (standard error by default) from a thread of its own: callers
/// only append to a bounded in-memory buffer, so a request never waits for the terminal, a pipe or a
/// log shipper. The thread takes what has gathered every 20 ms (sooner when 32 KiB are waiting), so
/// lines are written in batches and a request costs no wake-up of another thread. When the buffer is full (the reader cannot keep up), lines are dropped and counted
/// (``droppedLines``, exported as `imageproxy_log_lines_dropped_total`), never blocking requests.
public final class LogLineWriter: Sendable {
    /// The process-wide writer of standard error.
    public static let standardError = LogLineWriter(descriptor: 2)

    private struct State {
        var pending: [UInt8] = []
        var dropped = 0
        var waiting = false
    }

    private let descriptor: Int32
    private let capacity: Int
    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - descriptor: where lines go.
    ///   - capacityBytes: most bytes held for writing; lines beyond are dropped.
    public init(descriptor: Int32, capacityBytes: Int = 4 << 20) {
        self.descriptor = descriptor
        self.capacity = capacityBytes
        self.state = Mutex(State())
        let thread = Thread { [self] in self.run() }
        thread.name = "imageproxy-log-writer"
        thread.start()
    }

    /// The longest a line waits before the writer thread takes it.
    static let batchInterval = DispatchTimeInterval.milliseconds(20)
    /// Bytes waiting that wake the writer before `batchInterval` is up.
    static let batchBytes = 32 * 1024

    /// Lines dropped because the buffer was full.
    public var droppedLines: Int { state.withLock { $0.dropped } }

    /// Queues `line` (a trailing newline is added); returns false when it was dropped.
    @discardableResult
    public func write(_ line: String) -> Bool {
        write(bytes: Array(line.utf8))
    }

    /// Queues the UTF-8 bytes of one line (a trailing newline is added); returns false when it was dropped.
    @discardableResult
    public func write(bytes line: [UInt8]) -> Bool {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            let size = line.count + 1
            guard state.pending.count + size <= capacity else {
                state.dropped += 1
                return (false, false)
            }
            state.pending.append(contentsOf: line)
            state.pending.append(UInt8(ascii: "\n"))
            // Lines are written in batches: the writer wakes by itself every `batchInterval`, and
            // is woken early only when a batch's worth is waiting. A wake-up per line would cost a
            // futex call and a context switch per request.
            let signal = state.waiting && state.pending.count >= Self.batchBytes
            if signal { state.waiting = false }
            return (true, signal)
        }
        if signal { wake.signal() }
        return accepted
    }

    /// Waits until everything queued so far is written (tests, shutdown).
    public func flush(timeout: Duration = .seconds(2)) {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end, !state.withLock({ $0.pending.isEmpty && $0.waiting }) {
            wake.signal()
            usleep(1_000)
        }
    }

    private func run() {
        // A reader that went away must not kill the service: on this thread a write to a closed pipe
        // fails with EPIPE instead of raising SIGPIPE.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        // Two buffers take turns: the one just written is handed back empty (its capacity kept), so
        // neither side allocates once both have grown to a batch's size.
        var chunk: [UInt8] = []
        while true {
            chunk.removeAll(keepingCapacity: true)
            state.withLock { state in
                swap(&chunk, &state.pending)
                if chunk.isEmpty { state.waiting = true }
            }
            if chunk.isEmpty {
                _ = wake.wait(timeout: .now() + Self.batchInterval)
                continue
            }
            var offset = 0
            chunk.withUnsafeBytes { raw in
                while offset < raw.count {
                    let written = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written <= 0 {
                        if errno == EINTR || errno == EAGAIN { continue }
                        return  // the reader went away: the lines are lost, the service carries on
                    }
                    offset += written
                }
            }
        }
    }
}
