import Foundation
import ImageCore
import NIOPosix
import ProxyEngine
import Synchronization

/// Writes log lines to a file descriptor (standard error by default) from a thread of its own: callers
/// only append to a bounded in-memory buffer, so a request never waits for the terminal, a pipe or a
/// log shipper.
///
/// Every thread that logs appends to a buffer of its own (a ``LogLineShard``), so the two event loops
/// never take the same lock or touch the same cache line for a line: at the access log's rate a shared
/// lock costs more than building the line. Lines are built in place in that buffer (no array per
/// line). The writer thread takes what has gathered in every buffer every 20 ms (sooner when 32 KiB
/// wait in one), so lines are written in batches and a request costs no wake-up of another thread.
/// Lines of one thread keep their order; lines of different threads are interleaved batch by batch
/// (each carries its time). When a thread's buffer is full (the reader cannot keep up), its lines are
/// dropped and counted (``droppedLines``, exported as `imageproxy_log_lines_dropped_total`), never
/// blocking requests.
public final class LogLineWriter: Sendable {
    /// The process-wide writer of standard error.
    public static let standardError = LogLineWriter(descriptor: 2)

    private let descriptor: Int32
    /// Most bytes one thread's buffer holds.
    let shardCapacity: Int
    private let shards = Mutex<[LogLineShard]>([])
    private let threadShard = ThreadSpecificVariable<LogLineShard>()
    /// Lines dropped by threads that have ended since (their buffers are gone).
    private let droppedByEndedThreads = Atomic<Int>(0)
    /// The writer thread is asleep waiting for its next batch.
    private let waiting = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - descriptor: where lines go.
    ///   - capacityBytes: most bytes held for writing by one logging thread (the event loops, the
    ///     transform workers and the executor's threads: a few per core); lines beyond are dropped.
    public init(descriptor: Int32, capacityBytes: Int = 1 << 20) {
        self.descriptor = descriptor
        self.shardCapacity = capacityBytes
        let thread = Thread { [self] in self.run() }
        thread.name = "imageproxy-log-writer"
        thread.start()
    }

    /// The longest a line waits before the writer thread takes it.
    static let batchInterval = DispatchTimeInterval.milliseconds(20)
    /// Bytes waiting in one buffer that wake the writer before `batchInterval` is up.
    static let batchBytes = 32 * 1024

    /// Lines dropped because a buffer was full.
    public var droppedLines: Int {
        shards.withLock { $0.reduce(droppedByEndedThreads.load(ordering: .relaxed)) { $0 + $1.droppedLines } }
    }

    /// Queues `line` (a trailing newline is added); returns false when it was dropped.
    @discardableResult
    public func write(_ line: String) -> Bool {
        append { buffer, _ in buffer.append(contentsOf: line.utf8) }
    }

    /// Queues the UTF-8 bytes of one line (a trailing newline is added); returns false when it was dropped.
    @discardableResult
    public func write(bytes line: [UInt8]) -> Bool {
        append { buffer, _ in buffer.append(contentsOf: line) }
    }

    /// Queues one line that `build` appends to the end of the calling thread's buffer, given the
    /// timestamp of `second` as bytes (a trailing newline is added); returns false when the line did
    /// not fit and was dropped. `build` runs under the thread's buffer lock: it must not log.
    @discardableResult
    func append(second: Int = LogTimestamp.currentSecond(), _ build: (inout [UInt8], [UInt8]) -> Void) -> Bool {
        let shard = currentShard()
        let (accepted, pending) = shard.append(capacity: shardCapacity, second: second, build)
        // The writer wakes by itself every `batchInterval`, and is woken early only when a batch's
        // worth is waiting: a wake-up per line would cost a futex call and a context switch per request.
        if pending >= Self.batchBytes, waiting.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged {
            wake.signal()
        }
        return accepted
    }

    /// Waits until everything queued so far is written (tests, shutdown).
    public func flush(timeout: Duration = .seconds(2)) {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end, !(waiting.load(ordering: .acquiring) && shards.withLock({ $0.allSatisfy(\.isEmpty) })) {
            wake.signal()
            usleep(1_000)
        }
    }

    /// The calling thread's buffer, made and registered on its first line.
    private func currentShard() -> LogLineShard {
        if let shard = threadShard.currentValue { return shard }
        let shard = LogLineShard()
        threadShard.currentValue = shard
        shards.withLock { $0.append(shard) }
        return shard
    }

    private func run() {
        // A reader that went away must not kill the service: on this thread a write to a closed pipe
        // fails with EPIPE instead of raising SIGPIPE.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        // Buffers take turns: the one just written is handed back empty (its capacity kept), so
        // neither side allocates once both have grown to a batch's size.
        var chunk: [UInt8] = []
        while true {
            var wroteAny = false
            for shard in shards.withLock({ $0 }) {
                chunk.removeAll(keepingCapacity: true)
                shard.swapPending(with: &chunk)
                guard !chunk.isEmpty else { continue }
                wroteAny = true
                writeAll(chunk)
            }
            forgetShardsOfEndedThreads()
            if !wroteAny {
                waiting.store(true, ordering: .releasing)
                _ = wake.wait(timeout: .now() + Self.batchInterval)
                waiting.store(false, ordering: .relaxed)
            }
        }
    }

    /// Drops the buffers whose threads have ended (only this list still holds them) once they are
    /// written out, so threads that come and go do not leave buffers behind.
    private func forgetShardsOfEndedThreads() {
        shards.withLock { shards in
            var index = shards.startIndex
            while index < shards.endIndex {
                if isKnownUniquelyReferenced(&shards[index]) && shards[index].isEmpty {
                    droppedByEndedThreads.add(shards[index].droppedLines, ordering: .relaxed)
                    shards.remove(at: index)
                } else {
                    index += 1
                }
            }
        }
    }

    private func writeAll(_ chunk: [UInt8]) {
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
