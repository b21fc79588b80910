import Foundation
import Hummingbird
import HummingbirdTesting
import ProxyCore
import Testing

/// Load shedding, the request deadline, and prefetching.
@Suite(.timeLimit(.minutes(2))) struct AdmissionTests {
    @Test func excessWorkIsShedAtOnceWithRetryAfter() async throws {
        try await withOriginAndProxy(configure: { $0.queue.maxPending = 2; $0.fetch.timeoutMilliseconds = 5000 }) { proxy, origin, _ in
            let port = proxy.port!
            let requests = (0..<6).map { index in
                Task { () -> (status: Int, headers: [String: String], seconds: Duration) in
                    let started = ContinuousClock.now
                    let answer = try await httpRequest(port: port, path: "/img?url=\(origin)/slow-ms/1500&w=\(30 + index)")
                    return (answer.status, answer.headers, ContinuousClock.now - started)
                }
            }
            var answers: [(status: Int, headers: [String: String], seconds: Duration)] = []
            for request in requests { answers.append(try await request.value) }
            let shed = answers.filter { $0.status == 503 }
            #expect(answers.filter { $0.status == 200 }.count >= 2, "what was accepted completes")
            #expect(shed.count >= 1)
            #expect(answers.allSatisfy { $0.status == 200 || $0.status == 503 })
            for answer in shed {
                #expect(answer.headers["retry-after"] == "1")
                #expect(answer.seconds < .milliseconds(1000), "shed at once, not after the 1.5 s the work takes")
            }
        }
    }

    @Test func theRequestDeadlineAnswers504AndTheWorkStillLands() async throws {
        try await withOriginAndProxy(configure: { $0.queue.requestTimeoutMilliseconds = 200; $0.fetch.timeoutMilliseconds = 5000 }) {
            proxy, origin, hits in
            let started = ContinuousClock.now
            let late = try await proxy.image([("url", "\(origin)/slow-ms/1200"), ("w", "44")])
            #expect(late.status == .gatewayTimeout)
            #expect(ContinuousClock.now - started < .milliseconds(1000), "answered before the 1.2 s the work takes")
            try await Task.sleep(for: .milliseconds(1600))
            let later = try await proxy.image([("url", "\(origin)/slow-ms/1200"), ("w", "44")])
            #expect(later.status == .ok)
            #expect(hits.count("/slow-ms/1200") == 1, "the abandoned work finished and was cached")
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
