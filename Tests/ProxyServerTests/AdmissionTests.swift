import Foundation
import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// The request deadline and prefetching (load shedding: ``DownloadQueueTests``).
@Suite(.timeLimit(.minutes(2))) struct AdmissionTests {
    @Test func theRequestDeadlineAnswers504AndItsAbandonedDownloadStops() async throws {
        try await withOriginAndRuntime(configure: { $0.queue.requestTimeoutMilliseconds = 300; $0.fetch.timeoutMilliseconds = 20_000 }) {
            proxy, origin, hits, runtime in
            let started = ContinuousClock.now
            let late = try await proxy.image([("url", "\(origin)/drip/late"), ("w", "44")])
            #expect(late.status == .gatewayTimeout)
            #expect(String(buffer: late.body).contains("300 ms"))
            #expect(ContinuousClock.now - started < .milliseconds(2000), "answered long before the 5 s the download takes")
            #expect(try await eventually { hits.log.contains("aborted:/drip/late") }, "nobody waits: the transfer was aborted")
            #expect(try await eventually { runtime.metrics.stageCounts(.fetch) == (0, 0) })
        }
    }

    @Test func prefetchWarmsTheCachesAndReportsBadEntries() async throws {
        try await withOriginAndProxy { proxy, origin, hits in
            let source = "\(origin)/counted.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let body = try JSONSerialization.data(withJSONObject: ["urls": [
                "/img?url=\(source)&w=120", "/img?url=\(source)&w=240", "/img?url=\(source)&w=0", "/nope?url=x",
            ]])
            let answer = try await httpRequest(port: proxy.port!, path: "/prefetch", method: "POST", body: body)
            #expect(answer.status == 202)
            let json = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
            #expect(json?["accepted"] as? Int == 2)
            let rejected = json?["rejected"] as? [[String: String]] ?? []
            #expect(rejected.count == 2)
            #expect(rejected.contains { $0["error"]?.contains("'w'") == true })

            for width in ["120", "240"] {
                var cached = false
                for _ in 0..<100 where !cached {
                    let probe = try await proxy.image([("url", "\(origin)/counted.jpg"), ("w", width)], headers: [.cacheControl: "only-if-cached"])
                    cached = probe.status == .ok
                    if !cached { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(cached, "w=\(width) was produced in the background")
            }
            let real = try await proxy.image([("url", "\(origin)/counted.jpg"), ("w", "240")])
            #expect(real.headers[.init("X-Cache")!] == "memory")
            #expect(hits.count("/counted.jpg") == 1, "one download served the prefetch and the request")

            let malformed = try await httpRequest(port: proxy.port!, path: "/prefetch", method: "POST", body: Data("nope".utf8))
            #expect(malformed.status == 400)
        }
    }
}
