import CCurlShim
import Foundation
import ImageCore
import Synchronization

/// One libcurl multi handle driven by one thread: every origin transfer runs on it, sharing its
/// connection cache (keep-alive connections are reused across transfers) without a thread per transfer.
///
/// ``perform(_:)`` hands an easy handle over and suspends until libcurl finishes it. Cancelling the
/// calling task removes the handle from the multi handle at once: the transfer is aborted and its
/// connection closed, and ``perform(_:)`` answers `CURLE_ABORTED_BY_CALLBACK`.
final class CurlMultiDriver: Sendable {
    /// An easy handle on its way through the driver, and whether its caller gave up on it.
    private final class Ticket: Sendable {
        let handle: HandleBox
        let cancelled = Atomic<Bool>(false)
        let continuation = Mutex<CheckedContinuation<CURLcode, Never>?>(nil)

        init(_ handle: UnsafeMutableRawPointer) { self.handle = HandleBox(pointer: handle) }

        /// Resumes the caller once.
        func finish(_ code: CURLcode) { continuation.withLock { $0.take() }?.resume(returning: code) }
    }

    /// Work handed to the driver thread.
    private struct Inbox {
        var additions: [Ticket] = []
        var removals: [Ticket] = []
        var stopping = false
        /// The multi handle is released: no more wake-ups.
        var closed = false
    }

    /// A libcurl handle pointer; only the driver thread touches what it points to while a transfer runs.
    private struct HandleBox: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private let multi: HandleBox
    private let inbox = Mutex(Inbox())
    private let stopped = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let finished = Atomic<Bool>(false)

    /// Creates the multi handle and starts its thread.
    /// - Parameter maxConnectionsPerHost: parallel connections to one origin host at most (0: no limit).
    init(maxConnectionsPerHost: Int = 0) {
        _ = ipx_curl_global_init()
        multi = HandleBox(pointer: curl_multi_init())
        _ = ipx_multi_set_long(multi.pointer, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        let thread = Thread { [self] in runLoop() }
        thread.name = "imageproxy-curl"
        thread.start()
    }

    /// Runs `handle` (configured, not yet performed) to its end; the caller keeps owning the handle.
    func perform(_ handle: UnsafeMutableRawPointer) async -> CURLcode {
        let ticket = Ticket(handle)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CURLcode, Never>) in
                ticket.continuation.withLock { $0 = continuation }
                let accepted = !ticket.cancelled.load(ordering: .acquiring) && inbox.withLock { inbox -> Bool in
                    guard !inbox.stopping else { return false }
                    inbox.additions.append(ticket)
                    return true
                }
                guard accepted else { return ticket.finish(CURLE_ABORTED_BY_CALLBACK) }
                wake()
            }
        } onCancel: {
            ticket.cancelled.store(true, ordering: .releasing)
            inbox.withLock { $0.removals.append(ticket) }
            wake()
        }
    }

    /// Aborts every transfer, stops the thread and releases the multi handle.
    func shutdown() async {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            stopped.withLock { $0 = continuation }
            inbox.withLock { $0.stopping = true }
            wake()
        }
    }

    /// Interrupts the driver thread's `curl_multi_poll`.
    private func wake() {
        inbox.withLock { inbox in
            if !inbox.closed { curl_multi_wakeup(multi.pointer) }
        }
    }

    /// The driver thread: hand over new handles, remove cancelled ones, let libcurl work, collect the
    /// finished ones, then sleep in `curl_multi_poll` until a socket is ready, a timer is due or
    /// `curl_multi_wakeup` is called.
    private func runLoop() {
        var active: [UnsafeMutableRawPointer: Ticket] = [:]
        func end(_ ticket: Ticket, _ code: CURLcode) {
            guard active.removeValue(forKey: ticket.handle.pointer) != nil else { return }
            curl_multi_remove_handle(multi.pointer, ticket.handle.pointer)
            ticket.finish(code)
        }
        while true {
            let (additions, removals, stopping) = inbox.withLock { inbox in
                defer { inbox.additions = []; inbox.removals = [] }
                return (inbox.additions, inbox.removals, inbox.stopping)
            }
            for ticket in additions {
                // A caller cancelled before its handle got here: never start it.
                guard !ticket.cancelled.load(ordering: .acquiring) else {
                    ticket.finish(CURLE_ABORTED_BY_CALLBACK)
                    continue
                }
                active[ticket.handle.pointer] = ticket
                curl_multi_add_handle(multi.pointer, ticket.handle.pointer)
            }
            for ticket in removals where active[ticket.handle.pointer] === ticket {
                end(ticket, CURLE_ABORTED_BY_CALLBACK)
            }
            if stopping {
                for ticket in Array(active.values) { end(ticket, CURLE_ABORTED_BY_CALLBACK) }
                break
            }
            var running: Int32 = 0
            curl_multi_perform(multi.pointer, &running)
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            while ipx_multi_next_done(multi.pointer, &easy, &result) != 0 {
                if let handle = easy, let ticket = active[handle] { end(ticket, result) }
            }
            curl_multi_poll(multi.pointer, nil, 0, 1000, nil)
        }
        inbox.withLock { inbox in
            inbox.closed = true
            curl_multi_cleanup(multi.pointer)
        }
        stopped.withLock { $0 }?.resume()
    }
}
