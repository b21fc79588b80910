import NIOCore
import Testing

@testable import ProxyServer

/// The connection's time limits as a value: each limit runs out on its own clock, traffic moves the
/// clocks, and a connection whose request the router is answering is never idle.
@Suite struct ConnectionTimeLimitsTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    func limits(idle: Int64? = 60) -> ConnectionTimeLimits {
        ConnectionTimeLimits(
            headerLimit: .seconds(10), bodyLimit: .seconds(5), idleLimit: idle.map { .seconds($0) }, start: start)
    }

    func at(_ seconds: Double) -> NIODeadline { start + .nanoseconds(Int64(seconds * 1e9)) }

    @Test func aConnectionThatSendsNoHeadIsClosedAtTheHeaderLimit() {
        let limits = limits()
        #expect(limits.nextCheck == at(10))
        #expect(limits.verdict(at: at(9.9)) == .checkAgain(at: at(10)))
        #expect(limits.verdict(at: at(10)) == .close(.header))
    }

    @Test func tricklingBytesDoNotExtendTheHeaderLimit() {
        var limits = limits()
        for second in 1...9 { limits.bytesRead(at: at(Double(second))) }
        #expect(limits.verdict(at: at(10)) == .close(.header))
    }

    @Test func aHeadStopsTheHeaderClockAndStartsTheBodyClock() {
        var limits = limits()
        limits.routerReadHead(at: at(8))
        #expect(limits.awaitingHeadSince == nil)
        #expect(limits.nextCheck == at(13))
        #expect(limits.verdict(at: at(12)) == .checkAgain(at: at(13)))
        #expect(limits.verdict(at: at(13)) == .close(.body))
    }

    @Test func aCompleteRequestIsNotClosedWhileTheRouterAnswersIt() {
        var limits = limits()
        limits.routerReadHead(at: at(1))
        limits.routerReadEnd()
        #expect(limits.routerRequestsInProgress == 1)
        // A minute and more of transform: no header, body or idle limit closes it; the idle clock is
        // looked at again one idle limit later.
        #expect(limits.verdict(at: at(61)) == .checkAgain(at: at(121)))
        #expect(limits.verdict(at: at(200)) == .checkAgain(at: at(260)))
    }

    @Test func theNextHeadIsDueFromTheEndOfEachResponse() {
        var limits = limits()
        limits.routerReadHead(at: at(1))
        limits.routerReadEnd()
        limits.routerAnswered(at: at(30))
        #expect(limits.routerRequestsInProgress == 0)
        #expect(limits.verdict(at: at(39)) == .checkAgain(at: at(40)))
        #expect(limits.verdict(at: at(40)) == .close(.header))
    }

    @Test func anAnswerInFrontOfTheDecoderRestartsTheHeaderClock() {
        var limits = limits()
        limits.answeredInFront(at: at(9))
        #expect(limits.verdict(at: at(10)) == .checkAgain(at: at(19)))
        #expect(limits.verdict(at: at(19)) == .close(.header))
    }

    @Test func theIdleLimitClosesAConnectionWithNothingInHand() {
        var limits = ConnectionTimeLimits(headerLimit: .seconds(100), bodyLimit: nil, idleLimit: .seconds(20), start: start)
        limits.bytesRead(at: at(15))
        #expect(limits.verdict(at: at(20)) == .checkAgain(at: at(35)))
        #expect(limits.verdict(at: at(35)) == .close(.idle))
    }

    @Test func withoutABodyOrIdleLimitOnlyTheHeaderLimitRuns() {
        var limits = limits(idle: nil)
        limits.routerReadHead(at: at(1))
        #expect(limits.nextCheck == at(6))
        limits = ConnectionTimeLimits(headerLimit: .seconds(10), bodyLimit: nil, idleLimit: nil, start: start)
        limits.routerReadHead(at: at(1))
        #expect(limits.nextCheck == nil)
        #expect(limits.verdict(at: at(1000)) == .checkAgain(at: nil))
    }

    @Test func trafficOnlyMovesTheNextCheckLater() {
        // The handler re-arms its timer only when an event brings the next check earlier: reads, answers
        // in front and responses never do.
        var limits = limits()
        var previous = limits.nextCheck!
        for second in stride(from: 0.5, through: 30, by: 0.5) {
            switch Int(second * 2) % 3 {
            case 0: limits.bytesRead(at: at(second))
            case 1: limits.answeredInFront(at: at(second))
            default: limits.routerAnswered(at: at(second))
            }
            let next = limits.nextCheck!
            #expect(next >= previous)
            previous = next
        }
    }
}
