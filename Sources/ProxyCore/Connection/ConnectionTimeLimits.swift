import NIOCore

/// The time limits of one connection as a pure value: the header limit (from the connection's start and
/// from the end of each response to the next request head: slowloris, idle keep-alive), the body limit
/// (from a request's head to its end) and the idle limit (no traffic at all, while the router answers
/// nothing). Events move its clocks; ``verdict(at:)`` says whether a limit has run out or when to look
/// again. ``ConnectionTimeLimitHandler`` owns one and its single timer.
///
/// Deadlines only move later as traffic arrives, so the owner schedules one check at ``nextCheck`` and
/// re-arms it only when an event brings that instant earlier: answering a request costs no timer.
struct ConnectionTimeLimits: Sendable, Equatable {
    /// Which limit ran out.
    enum Limit: Sendable, Equatable {
        /// No request head within the header limit.
        case header
        /// A request body did not arrive within the body limit.
        case body
        /// Nothing was read or answered within the idle limit.
        case idle
    }

    /// What to do when the check is due.
    enum Verdict: Sendable, Equatable {
        /// Close the connection: `limit` ran out.
        case close(Limit)
        /// Nothing ran out; look again at this instant (nil: no limit is running).
        case checkAgain(at: NIODeadline?)
    }

    let headerLimit: TimeAmount
    let bodyLimit: TimeAmount?
    let idleLimit: TimeAmount?

    /// Since when the connection waits for a request head (nil: a head is being read or answered).
    private(set) var awaitingHeadSince: NIODeadline?
    /// Since when a request's body is being read (nil: no body is due).
    private(set) var receivingBodySince: NIODeadline?
    /// The last read or answer.
    private(set) var lastTraffic: NIODeadline
    /// Requests the router has read and not yet answered to their end.
    private(set) var routerRequestsInProgress = 0

    /// A connection that opened at `start`.
    init(headerLimit: TimeAmount, bodyLimit: TimeAmount?, idleLimit: TimeAmount?, start: NIODeadline) {
        self.headerLimit = headerLimit
        self.bodyLimit = bodyLimit
        self.idleLimit = idleLimit
        awaitingHeadSince = start
        lastTraffic = start
    }

    /// With the connection's `server.*` settings.
    init(settings: ConnectionSettings, start: NIODeadline) {
        self.init(
            headerLimit: settings.headerTimeout, bodyLimit: settings.bodyTimeout, idleLimit: settings.idleTimeout,
            start: start)
    }

    /// Bytes arrived.
    mutating func bytesRead(at now: NIODeadline) {
        lastTraffic = now
    }

    /// A request was answered in front of the decoder (a memory hit): the next head is due from now.
    mutating func answeredInFront(at now: NIODeadline) {
        lastTraffic = now
        if awaitingHeadSince != nil { awaitingHeadSince = now }
    }

    /// The router has a request's head: no head is due; its body is, from now.
    mutating func routerReadHead(at now: NIODeadline) {
        lastTraffic = now
        routerRequestsInProgress += 1
        awaitingHeadSince = nil
        receivingBodySince = now
    }

    /// The router has a request's end: its body is in.
    mutating func routerReadEnd() {
        receivingBodySince = nil
    }

    /// The router wrote a response's end: the next head is due from now.
    mutating func routerAnswered(at now: NIODeadline) {
        lastTraffic = now
        routerRequestsInProgress = max(0, routerRequestsInProgress - 1)
        awaitingHeadSince = now
    }

    /// The earliest instant a limit may run out (nil: none is running).
    var nextCheck: NIODeadline? {
        var earliest: NIODeadline?
        func consider(_ instant: NIODeadline?) {
            guard let instant else { return }
            earliest = earliest.map { min($0, instant) } ?? instant
        }
        consider(awaitingHeadSince.map { $0 + headerLimit })
        if let bodyLimit { consider(receivingBodySince.map { $0 + bodyLimit }) }
        if let idleLimit { consider(lastTraffic + idleLimit) }
        return earliest
    }

    /// Whether a limit ran out by `now`. A connection whose request the router is still answering is not
    /// idle (its idle clock is looked at again one idle limit later).
    func verdict(at now: NIODeadline) -> Verdict {
        if let since = awaitingHeadSince, since + headerLimit <= now { return .close(.header) }
        if let bodyLimit, let since = receivingBodySince, since + bodyLimit <= now { return .close(.body) }
        if let idleLimit, lastTraffic + idleLimit <= now {
            guard routerRequestsInProgress > 0 else { return .close(.idle) }
            var later = self
            later.lastTraffic = now
            return .checkAgain(at: later.nextCheck)
        }
        return .checkAgain(at: nextCheck)
    }
}
