import Foundation
import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// The download and transform queues against a live origin: deduplication, priorities,
/// cancellation, load shedding and resumed downloads.
@Suite(.timeLimit(.minutes(3))) struct DownloadQueueTests {
    @Test func concurrentRequestsShareOneDownloadAndOneTransform() async throws {
        try await withOriginAndRuntime(configure: { $0.fetch.timeoutMilliseconds = 5000 }) { _, origin, hits, runtime in
            let port = runtime.listeningPort.value
            // 100 clients, one uncached variant: one GET, one transform, 100 identical answers.
            let path = "/img?url=\(origin)/named/storm/900&w=200"
            let answers = try await withThrowingTaskGroup(of: (status: Int, body: Data).self) { group in
                for _ in 0..<100 { group.addTask { try await httpGet(port: port, path: path) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 100)
            #expect(answers.allSatisfy { $0.status == 200 })
            #expect(Set(answers.map(\.body)).count == 1, "byte-identical")
            #expect(hits.count("/named/storm/900") == 1)
            let metrics = try PrometheusText(runtime.metrics.exposition())
            #expect(metrics.value("imageproxy_transform_duration_seconds_count", ["format": "jpeg"]) == 1, "one transform")

            // 10 widths of one source: one GET.
            let widths = try await withThrowingTaskGroup(of: Int.self) { group in
                for width in 0..<10 {
                    group.addTask { try await httpGet(port: port, path: "/img?url=\(origin)/named/srcset/400&w=\(100 + width * 10)").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(widths.allSatisfy { $0 == 200 })
            #expect(hits.count("/named/srcset/400") == 1)
            #expect(runtime.metrics.stageCounts(.fetch) == (0, 0))
        }
    }

    @Test func aHighPriorityRequestStartsBeforeQueuedPrefetches() async throws {
        try await withOriginAndRuntime(configure: { $0.fetch.concurrency = 1; $0.fetch.timeoutMilliseconds = 5000 }) {
            _, origin, hits, runtime in
            let port = runtime.listeningPort.value
            let busy = Task { try await httpGet(port: port, path: "/img?url=\(origin)/named/busy/2000&w=50").status }
            #expect(try await eventually { hits.count("/named/busy/2000") == 1 }, "the only slot is busy")
            let prefetch = try JSONSerialization.data(withJSONObject: ["urls": (1...3).map {
                "/img?url=" + "\(origin)/named/low\($0)/10".addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&w=50"
            }])
            #expect(try await httpRequest(port: port, path: "/prefetch", method: "POST", body: prefetch).status == 202)
            #expect(try await eventually { runtime.metrics.stageCounts(.fetch).waiting == 3 }, "three low jobs wait")
            let urgent = Task { try await httpGet(port: port, path: "/img?url=\(origin)/named/high/10&w=50").status }
            #expect(try await eventually { runtime.metrics.stageCounts(.fetch).waiting == 4 }, "the client request waits too")
            #expect(try await busy.value == 200)
            #expect(try await urgent.value == 200)
            #expect(try await eventually { (1...3).allSatisfy { hits.count("/named/low\($0)/10") == 1 } }, "the prefetches ran after")
            let order = hits.log.filter { $0.hasPrefix("/named/") }
            #expect(order.count == 5)
            #expect(Array(order.prefix(2)) == ["/named/busy/2000", "/named/high/10"], "the client request went first: \(order)")
            #expect(Set(order.dropFirst(2)) == ["/named/low1/10", "/named/low2/10", "/named/low3/10"])
        }
    }

    @Test func aClientThatLeavesAbortsItsDownloadAndLeavesNothingBehind() async throws {
        try await withOriginAndRuntime(configure: {
            $0.fetch.concurrency = 1
            $0.fetch.timeoutMilliseconds = 20_000
            $0.fetch.maxSourceBytes = 8 * 1024 * 1024
        }) { _, origin, hits, runtime in
            let port = runtime.listeningPort.value
            // One client downloading (running), one queued behind it; both hang up.
            var running: RawConnection? = try RawConnection(port: port)
            running?.send("GET /img?url=\(origin)/drip/first&w=50 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await eventually { hits.count("/drip/first") == 1 })
            var queued: RawConnection? = try RawConnection(port: port)
            queued?.send("GET /img?url=\(origin)/drip/second&w=50 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await eventually { runtime.metrics.stageCounts(.fetch) == (1, 1) })
            queued = nil
            #expect(try await eventually { runtime.metrics.stageCounts(.fetch) == (0, 1) }, "the queued job is gone")
            running = nil
            #expect(try await eventually { hits.log.contains("aborted:/drip/first") }, "the origin saw the transfer aborted")
            #expect(try await eventually { runtime.metrics.stageCounts(.fetch) == (0, 0) })
            #expect(runtime.metrics.stageCounts(.transform) == (0, 0))
            #expect(hits.count("/drip/second") == 0, "the queued download never started")
            _ = (running, queued)
        }
    }

    @Test func aFullQueueShedsTheExcessAtOnceAndServesTheRest() async throws {
        try await withOriginAndRuntime(configure: {
            $0.queue.maxPending = 4
            $0.fetch.concurrency = 2
            $0.fetch.timeoutMilliseconds = 10_000
        }) { _, origin, _, runtime in
            let port = runtime.listeningPort.value
            let answers = try await withThrowingTaskGroup(of: (status: Int, retryAfter: String?, time: Duration).self) { group in
                for index in 0..<30 {
                    group.addTask {
                        let started = ContinuousClock.now
                        let answer = try await httpRequest(port: port, path: "/img?url=\(origin)/named/load\(index)/1200&w=40")
                        return (answer.status, answer.headers["retry-after"], ContinuousClock.now - started)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let shed = answers.filter { $0.status == 503 }
            let served = answers.filter { $0.status == 200 }
            #expect(served.count == 6, "2 running + 4 waiting were accepted and served")
            #expect(shed.count == 24)
            #expect(shed.allSatisfy { $0.retryAfter == "1" && $0.time < .milliseconds(1000) }, "refused at once, with Retry-After")
            #expect(runtime.metrics.stageCounts(.fetch) == (0, 0))
        }
    }

    @Test func anAbortedDownloadIsResumedWithRangeAndIfRange() async throws {
        try await withOriginAndRuntime(configure: {
            $0.fetch.timeoutMilliseconds = 20_000
            $0.fetch.maxSourceBytes = 8 * 1024 * 1024
        }) { proxy, origin, hits, runtime in
            let port = runtime.listeningPort.value
            var client: RawConnection? = try RawConnection(port: port)
            client?.send("GET /img?url=\(origin)/ranged.jpg&w=300 HTTP/1.1\r\nHost: x\r\n\r\n")
            // Part of the body arrives (32 KiB every 30 ms), then every client is gone.
            #expect(try await eventually(timeout: .seconds(20)) { hits.count("ranged-chunk") >= 8 })
            client = nil
            #expect(try await eventually { runtime.metrics.stageCounts(.fetch) == (0, 0) })

            let resumed = try await proxy.image([("url", "\(origin)/ranged.jpg"), ("w", "300")])
            #expect(resumed.status == .ok)
            let ranges = hits.log.filter { $0.hasPrefix("range:") }
            #expect(ranges.count == 1, "the second download asked for the rest only")
            let first = ranges.first.flatMap { Int($0.dropFirst("range:bytes=".count).dropLast()) } ?? 0
            #expect(first > 0 && first < TestOrigin.noiseJPEG.count)

            // The same image downloaded in one go (another URL of the same bytes) gives the same result.
            let whole = try await proxy.image([("url", "\(origin)/ranged.jpg?whole=1"), ("w", "300")])
            #expect(whole.status == .ok)
            #expect(resumed.body == whole.body, "byte-identical to an uninterrupted download")
            _ = client
        }
    }
}
