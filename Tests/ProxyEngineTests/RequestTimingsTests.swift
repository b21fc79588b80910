import NIOCore
import Testing

@testable import ProxyEngine

/// `Server-Timing` written straight into the memory-hit front's buffer is the router's text, byte for byte.
@Suite struct RequestTimingsTests {
    @Test(arguments: [Duration.zero, .microseconds(40), .microseconds(12_350), .microseconds(99_960), .seconds(1234) + .milliseconds(567)])
    func theWrittenServerTimingIsTheRoutersText(total: Duration) {
        let timings = RequestTimings()
        timings.cacheTier = "memory"
        var buffer = ByteBufferAllocator().buffer(capacity: 64)
        timings.writeServerTiming(total: total, into: &buffer)
        #expect(String(buffer: buffer) == timings.serverTiming(total: total))
        timings.describe("quality", "62")
        timings.record("fetch", .microseconds(38_249))
        timings.record("transform", .milliseconds(1005))
        buffer.clear()
        timings.writeServerTiming(total: total, into: &buffer)
        #expect(String(buffer: buffer) == timings.serverTiming(total: total), "\(String(buffer: buffer))")
    }
}
