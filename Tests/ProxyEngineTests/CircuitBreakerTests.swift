import Testing

@testable import ProxyEngine

/// The shared tier's breaker as a pure value: when it opens, how long it stays open, the one trial.
@Suite struct CircuitBreakerTests {
    @Test func itOpensAfterTheThresholdAndLetsOneTrialThroughLater() {
        var breaker = CircuitBreaker(threshold: 3, openSeconds: 10)
        var allowed = breaker.allows(at: 0)
        #expect(allowed)
        breaker.recordFailure(at: 0)
        breaker.recordFailure(at: 1)
        allowed = breaker.allows(at: 1)
        #expect(allowed && !breaker.isOpen, "two failures: still closed")
        breaker.recordSuccess()
        breaker.recordFailure(at: 2)
        breaker.recordFailure(at: 2)
        #expect(!breaker.isOpen, "a success resets the count")
        breaker.recordFailure(at: 2)
        let duringPeriod = [breaker.allows(at: 5), breaker.allows(at: 11.9)]
        #expect(breaker.isOpen && duringPeriod == [false, false])
        let trial = breaker.allows(at: 12)
        let second = breaker.allows(at: 12)
        #expect(trial && !second, "after its period: one trial, and only one")
        breaker.recordFailure(at: 12)
        let reopened = [breaker.allows(at: 21), breaker.allows(at: 22)]
        #expect(reopened == [false, true], "a failed trial reopens it for a period")
        breaker.recordSuccess()
        allowed = breaker.allows(at: 22)
        #expect(!breaker.isOpen && allowed, "a good trial closes it")
    }
}
