/// Whether the shared tier is worth asking: after `threshold` failures in a row it is skipped for
/// `openSeconds` (a dead tier then adds no latency to any request); the first call after that is a
/// trial, and its success closes the breaker again, its failure opens it for another period.
///
/// A pure value type: the caller owns the clock and the lock.
struct CircuitBreaker: Sendable, Equatable {
    enum State: Sendable, Equatable {
        case closed(failures: Int)
        case open(until: Double)
        /// One trial call is out.
        case trial
    }

    /// Failures in a row that open the breaker.
    let threshold: Int
    /// Seconds it stays open.
    let openSeconds: Double
    private(set) var state = State.closed(failures: 0)

    init(threshold: Int = 5, openSeconds: Double = 10) {
        self.threshold = max(1, threshold)
        self.openSeconds = openSeconds
    }

    /// Whether a call may go out at `now`; an open breaker past its period lets one trial through.
    mutating func allows(at now: Double) -> Bool {
        switch state {
        case .closed: return true
        case .trial: return false
        case .open(let until):
            guard now >= until else { return false }
            state = .trial
            return true
        }
    }

    /// A call succeeded.
    mutating func recordSuccess() { state = .closed(failures: 0) }

    /// A call failed at `now`.
    mutating func recordFailure(at now: Double) {
        switch state {
        case .closed(let failures):
            state = failures + 1 >= threshold ? .open(until: now + openSeconds) : .closed(failures: failures + 1)
        case .trial, .open:
            state = .open(until: now + openSeconds)
        }
    }

    /// Whether calls are being skipped now.
    var isOpen: Bool {
        if case .closed = state { return false }
        return true
    }
}
