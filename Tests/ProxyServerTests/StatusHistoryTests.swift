import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// The status page's history: histogram percentiles, the ring, interval accounting and the SVG charts.
@Suite struct StatusHistoryTests {
    @Test func histogramPercentilesLieWithinOneBinAboveTheTruth() {
        var histogram = LatencyHistogram()
        #expect(histogram.percentile(0.5) == nil)
        for millisecond in 1...100 { histogram.record(Double(millisecond) / 1000) }
        let p50 = try! #require(histogram.percentile(0.5))
        let p99 = try! #require(histogram.percentile(0.99))
        #expect(p50 >= 0.050 && p50 <= 0.050 * 1.19, "p50 \(p50)")
        #expect(p99 >= 0.099 && p99 <= 0.099 * 1.19, "p99 \(p99)")
        histogram.record(10_000)  // past the last bin: counted there, not lost
        #expect(histogram.total == 101)
        #expect(try! #require(histogram.percentile(1)) > 60)
    }

    @Test func ringKeepsTheNewestInOrder() {
        var ring = StatusSampleRing(capacity: 3)
        func sample(_ time: Double) -> StatusSample {
            StatusSample(time: time, interval: 1, answersByClass: [0, 0, 0, 0], queueDepth: 0, residentBytes: 0)
        }
        for time in 1...2 { ring.append(sample(Double(time))) }
        #expect(ring.samples.map(\.time) == [1, 2])
        for time in 3...7 { ring.append(sample(Double(time))) }
        #expect(ring.samples.map(\.time) == [5, 6, 7])
        #expect(ring.count == 3)
    }

    @Test func anIntervalCountsClassesLatencyAndHits() {
        let history = StatusHistory(interval: 10, span: 30, now: 100)
        history.record(status: 200, seconds: 0.002, cacheTier: "memory")
        history.record(status: 200, seconds: 0.004, cacheTier: "disk")
        history.record(status: 200, seconds: 0.300, cacheTier: "miss")
        history.record(status: 304, seconds: 0.001, cacheTier: "memory")
        history.record(status: 404, seconds: 0.010, cacheTier: "miss")
        history.record(status: 503, seconds: 1.000, cacheTier: "none")
        let sample = history.close(at: 110, queueDepth: 3, residentBytes: 5e8)
        #expect(sample.answersByClass == [3, 1, 1, 1])
        #expect(sample.rate(ofClass: 0) == 0.3)
        #expect(sample.hitRatio == 3.0 / 5.0)
        #expect(sample.queueDepth == 3 && sample.residentBytes == 5e8)
        #expect(try! #require(sample.p99) >= 1.0)
        #expect(try! #require(sample.p50) < 0.012)
        let quiet = history.close(at: 120, queueDepth: 0, residentBytes: 5e8)
        #expect(quiet.answersByClass == [0, 0, 0, 0] && quiet.p50 == nil && quiet.hitRatio == nil)
        for time in [130.0, 140.0] { history.close(at: time, queueDepth: 0, residentBytes: 0) }
        #expect(history.samples.map(\.time) == [120, 130, 140], "an hour's worth (here 30 s) is kept")
    }

    @Test func theFiveMinuteFiguresComeFromTheIntervalsInTheWindow() {
        let history = StatusHistory(interval: 10, now: 0)
        for _ in 0..<5 { history.record(status: 200, seconds: 0.001, cacheTier: "memory") }
        history.close(at: 10, queueDepth: 0, residentBytes: 0)  // outside a 300 s window at 400
        for _ in 0..<3 { history.record(status: 200, seconds: 0.002, cacheTier: "memory") }
        history.record(status: 404, seconds: 0.5, cacheTier: "miss")
        history.close(at: 200, queueDepth: 0, residentBytes: 0)
        history.record(status: 503, seconds: 2, cacheTier: "none")  // still open
        let summary = history.summary(window: 300, now: 400)
        #expect(summary.requests == 5 && summary.errors == 2)
        #expect(summary.perSecond == 5.0 / 300)
        #expect(summary.p50 >= 0.002 && summary.p50 < 0.003, "\(summary.p50)")
        #expect(summary.p99 >= 2, "the open interval counts")
        #expect(history.summary(window: 300, now: 10_000).requests == 1, "only the open interval")
    }

    @Test func chartsDrawEachSeriesAndLeaveGaps() throws {
        let samples = (0..<6).map { index in
            StatusSample(
                time: 1000 + Double(index) * 10, interval: 10, answersByClass: [index * 10, 0, index == 5 ? 10 : 0, 0],
                p50: index == 2 ? nil : 0.005, p99: index == 2 ? nil : 0.05, hitRatio: 0.5, queueDepth: index,
                residentBytes: 300 * 1_048_576)
        }
        let html = StatusCharts(samples: samples).html()
        for id in ["requests", "latency", "hit-ratio", "queue", "rss"] {
            #expect(html.contains("<svg id=\"chart-\(id)\" data-samples=\"6\""), "\(id)")
        }
        let latencyStart = try #require(html.range(of: "<svg id=\"chart-latency\"")).lowerBound
        let latency = html[latencyStart...].components(separatedBy: "</svg>")[0]
        // p50 has a gap at the third sample: two runs, the second of three points, the first of two.
        #expect(latency.components(separatedBy: "data-series=\"p50\"").count - 1 == 2)
        #expect(html.contains("data-series=\"2xx\""))
        #expect(html.contains("5.0/s"), "the newest 2xx rate in the legend")
        #expect(html.contains("300.0 MiB"), "bytes in MiB")
        #expect(StatusCharts.niceCeiling(0.3) == 0.5 && StatusCharts.niceCeiling(7) == 10 && StatusCharts.niceCeiling(100) == 100)
        #expect(StatusCharts.segments([1, nil, 2, 3, nil]) == [[0], [2, 3]])
    }

    @Test func theLivePartCarriesChartsAndTheScriptIsAllowedByHash() async throws {
        try await withOriginAndRuntime { proxy, origin, _, runtime in
            for width in [30, 40, 30] { _ = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "\(width)")]) }
            _ = try await proxy.image([("url", "\(origin)/missing")])
            runtime.sampleStatus()
            let live = try await proxy.execute(uri: "/status/live", method: .get, headers: [:], body: nil)
            #expect(live.status == .ok)
            let fragment = String(buffer: live.body)
            #expect(fragment.contains("<svg id=\"chart-requests\" data-samples=\"1\""))
            #expect(fragment.contains("data-series=\"2xx\"") && fragment.contains("data-series=\"4xx\""))
            #expect(fragment.contains("■ hit ratio 33%"), "1 memory hit of 3 image lookups: \(fragment)")
            #expect(!fragment.contains("<html"))

            let page = try await proxy.execute(uri: "/status", method: .get, headers: [:], body: nil)
            let html = String(buffer: page.body)
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src \(StatusPage.liveScriptSource);") && policy.contains("connect-src 'self'"))
            #expect(html.contains("<script>\(StatusPage.liveScript)</script>"), "the hashed script is the one on the page")
            #expect(html.contains("<div id=\"live\">") && html.contains("chart-rss"))
            let scriptSources = policy.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.hasPrefix("script-src ") }
            #expect(scriptSources == ["script-src \(StatusPage.liveScriptSource)"], "one script, by hash, nothing else")
        }
    }
}
