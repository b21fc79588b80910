import Foundation
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// Framing requests from raw bytes: what may be a memory hit, what goes to the router whole, and
/// what the HTTP decoder must take over.
@Suite struct RawRequestHeadTests {
    private func frame(_ text: String, limit: Int = 4096) -> RawRequestHead.Framing {
        Array(text.utf8).withUnsafeBytes { RawRequestHead.frame($0, maxHeadBytes: limit) }
    }

    @Test func aPlainImageRequestIsACandidateWithTheHeadersItsAnswerNeeds() {
        let head = "GET /img?url=x&w=3 HTTP/1.1\r\nHost: a\r\naccept: image/webp\r\nIf-None-Match:  \"e1\" \r\n"
            + "X-Request-Id: r-1\r\nCache-Control: only-if-cached\r\n\r\n"
        let expected = RawRequestHead(
            path: "/img?url=x&w=3", accept: "image/webp", ifNoneMatch: "\"e1\"", cacheControl: "only-if-cached", requestID: "r-1")
        #expect(frame(head + "GET /next") == .candidate(expected, length: head.utf8.count))
        let closing = "GET /img?a HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n"
        #expect(frame(closing) == .candidate(RawRequestHead(path: "/img?a", close: true), length: closing.utf8.count))
    }

    @Test func headRequestsForImagesAreCandidatesToo() {
        let head = "HEAD /img?url=x HTTP/1.1\r\n\r\n"
        #expect(frame(head) == .candidate(RawRequestHead(path: "/img?url=x", isHead: true), length: head.utf8.count))
    }

    @Test func otherCompleteRequestsWithoutABodyGoToTheRouterWhole() {
        for head in [
            "GET /health HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /img?url=x HTTP/1.1\r\nAccept: a\r\naccept: b\r\n\r\n",
            "GET /img?url=x HTTP/1.1\r\nX-ImageProxy-Hop: 1\r\n\r\n",
            "POST /prefetch HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
        ] {
            #expect(frame(head + "GET /img?y HTTP/1.1\r\n\r\n") == .ordinary(length: head.utf8.count), "\(head)")
        }
    }

    @Test func partialHeadsWaitAndEverythingUnusualIsLeftToTheDecoder() {
        #expect(frame("GET /img?url=x HTTP/1.1\r\nHost: a\r\n") == .incomplete)
        #expect(frame("GET /img?url=x HT") == .incomplete)
        for head in [
            "POST /prefetch HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde",
            "POST /prefetch HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET /img?url=x HTTP/1.1\nHost: a\n\n",
            "GET /img?url=x HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n",
            "GET /img?url=x HTTP/1.1\r\nBad Name: 1\r\n\r\n",
            "GET /img?url=x HTTP/1.1\r\nNoColon\r\n\r\n",
            "GET  /img?url=x HTTP/1.1\r\n\r\n",
            "GET /img?url=x HTTP/2.0\r\n\r\n",
            "GET /img?url=x HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            "GET /img?url=x HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            // HTTP/1.0 keep-alive rules, tunnels and unknown methods belong to the decoder.
            "GET /img?url=x HTTP/1.0\r\n\r\n", "GET /img?url=x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
            "CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n", "FOO / HTTP/1.1\r\n\r\n", "TRACE / HTTP/1.1\r\n\r\n",
        ] {
            #expect(frame(head) == .unframed, "\(head)")
        }
        let long = "GET /img?url=x HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 200)
        #expect(frame(long, limit: 100) == .tooLarge, "a head past the limit, complete or not")
        #expect(frame(long + "\r\n\r\n", limit: 100) == .tooLarge)
    }
}

/// The memory-hit handler in front of the HTTP decoder, over raw connections to the real server.
@Suite(.timeLimit(.minutes(1))) struct MemoryHitConnectionTests {
    private func imagePath(_ origin: String) -> String {
        "/img?url=" + "\(origin)/photo.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&w=90"
    }

    /// The status lines of the complete responses at the start of `bytes` (framed by Content-Length).
    private func statusLines(_ bytes: [UInt8]) -> [String] {
        var rest = bytes[...]
        var lines: [String] = []
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while let end = rest.firstRange(of: separator) {
            let head = String(decoding: rest[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let length = head.first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            guard rest.endIndex - end.upperBound >= length else { break }
            lines.append(head[0])
            rest = rest[(end.upperBound + length)...]
        }
        return lines
    }

    @Test func pipelinedSplitAndBodyCarryingRequestsAreAnsweredInOrder() async throws {
        try await withOriginAndRuntime { _, origin, _, runtime in
            let port = runtime.listeningPort.value
            let path = imagePath(origin)
            #expect(try await httpGet(port: port, path: path).status == 200, "warm the memory tier")
            let hit = "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n"

            // The router's request first, then hits: answered in the order asked.
            let pipelined = try RawConnection(port: port)
            pipelined.send("GET /nope HTTP/1.1\r\nHost: x\r\n\r\n" + hit + hit + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + hit)
            let answers = pipelined.receive { statusLines($0).count == 5 }
            #expect(statusLines(answers.bytes) == [
                "HTTP/1.1 404 Not Found", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK",
            ])

            // A head arriving in pieces.
            let split = try RawConnection(port: port)
            split.send(String(hit.prefix(10)))
            try await Task.sleep(for: .milliseconds(50))
            split.send(String(hit.dropFirst(10).prefix(20)))
            try await Task.sleep(for: .milliseconds(50))
            split.send(String(hit.dropFirst(30)))
            let pieced = split.receive { statusLines($0).count == 1 }
            #expect(statusLines(pieced.bytes) == ["HTTP/1.1 200 OK"])

            // A request with a body hands the connection to the decoder; later hits are still answered.
            let prefetch = #"{"urls":[]}"#
            let withBody = try RawConnection(port: port)
            withBody.send("POST /prefetch HTTP/1.1\r\nHost: x\r\nContent-Length: \(prefetch.utf8.count)\r\n\r\n\(prefetch)" + hit)
            let both = withBody.receive { statusLines($0).count == 2 }
            #expect(statusLines(both.bytes) == ["HTTP/1.1 202 Accepted", "HTTP/1.1 200 OK"])

            let metrics = try PrometheusText(runtime.metrics.exposition())
            #expect(metrics.value("imageproxy_http_requests_total", ["route": "img", "status": "200"]) == 6)
            #expect(metrics.value("imageproxy_cache_lookups_total", ["tier": "memory", "result": "hit"]) == 5)
        }
    }

    @Test func busyConnectionsStayOpenAndQuietOnesAreClosed() async throws {
        try await withOriginAndRuntime(configure: {
            $0.server.headerTimeoutMilliseconds = 600
            $0.server.idleTimeoutMilliseconds = 60_000
        }) { _, origin, _, runtime in
            let port = runtime.listeningPort.value
            let path = imagePath(origin)
            #expect(try await httpGet(port: port, path: path).status == 200, "warm the memory tier")
            // Memory hits every 150 ms for 1.5 s: each answer starts a new header deadline.
            let busy = try RawConnection(port: port, receiveTimeoutSeconds: 3)
            for round in 1...10 {
                #expect(busy.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n"), "round \(round)")
                let answer = busy.receive { statusLines($0).count == 1 }
                #expect(!answer.closed && statusLines(answer.bytes) == ["HTTP/1.1 200 OK"], "round \(round)")
                try await Task.sleep(for: .milliseconds(150))
            }
            // Then silence: closed after the header deadline.
            let started = ContinuousClock.now
            let end = busy.receiveAll()
            #expect(end.closed && end.text.isEmpty)
            #expect(ContinuousClock.now - started < .milliseconds(2500))
        }
        try await withOriginAndRuntime(configure: {
            $0.server.headerTimeoutMilliseconds = 60_000
            $0.server.idleTimeoutMilliseconds = 500
        }) { _, origin, _, runtime in
            let port = runtime.listeningPort.value
            let path = imagePath(origin)
            #expect(try await httpGet(port: port, path: path).status == 200, "warm the memory tier")
            let idle = try RawConnection(port: port, receiveTimeoutSeconds: 3)
            idle.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = idle.receive { statusLines($0).count == 1 }
            let started = ContinuousClock.now
            let end = idle.receiveAll()
            #expect(end.closed, "the idle timeout closes a connection served only by the memory-hit handler")
            #expect(ContinuousClock.now - started < .milliseconds(2500))
        }
    }
}

@Suite struct RawRequestHeadHopHeaderTests {
    @Test func theFramingParserKnowsTheHopHeaderByItsName() {
        #expect(RawRequestHead.hopHeaderName == OriginFetcher.hopHeader.lowercased())
    }
}

@Suite struct PendingHeadTests {
    private func decides(_ text: String, newFrom start: Int) -> Bool {
        Array(text.utf8).withUnsafeBytes { RawRequestHead.mayDecideFraming($0, newFrom: start) }
    }

    @Test func onlyBytesThatCanEndAHeadTriggerFramingAgain() {
        let partial = "GET /img?url=x HTTP/1.1\r\nHost: a\r\nX-Slow: abc"
        #expect(!decides(partial, newFrom: partial.utf8.count - 1), "one more header byte decides nothing")
        #expect(!decides(partial + "\r\n", newFrom: partial.utf8.count), "a CRLF-ended line neither")
        #expect(decides(partial + "\r\n\r\n", newFrom: partial.utf8.count + 2), "the end of the head")
        #expect(decides(partial + "\n", newFrom: partial.utf8.count), "a bare LF")
        #expect(decides(partial + "\r\n ", newFrom: partial.utf8.count + 2), "a folded line")
        #expect(decides("GET / HTTP/1.1\n\n", newFrom: 15), "bare LF end")
    }
}

@Suite struct ParsedRequestCacheTests {
    @Test func theCacheIsBoundedByBytesNotEntries() async throws {
        let configuration = testConfiguration()
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        try await withProxy(configuration) { _, runtime in
            let cache = ParsedRequestCache(capacityBytes: 64 * 1024)
            let images = ProxyApplication.imageHandler(runtime)
            let long = String(repeating: "a", count: 6_000)
            for index in 0..<200 {
                let path = "/img?url=http%3A%2F%2Fexample.com%2F\(long)\(index).jpg&w=10"
                #expect(cache.request(for: path, accept: "image/webp", images: images) != nil)
                #expect(cache.heldBytes <= 64 * 1024)
            }
            #expect(cache.heldBytes > 0)
        }
    }
}

/// Signed URLs and HEAD requests are memory hits for the front too; a wrong signature never is.
@Suite(.timeLimit(.minutes(1))) struct SignedFastPathTests {
    @Test func signedAndHeadHitsAreAnsweredInFrontAndForgeriesAreNot() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        try await withFixturesAndRuntime(["/p.jpg": .image(photo)], configure: { $0.security.signingKeys = ["k1"] }) { runtime, base in
            let port = runtime.listeningPort.value
            let signer = try #require(URLSigner(keys: ["k1"]))
            let path = signer.sign("/img?url=\(StatusPage.percentEncode(base + "/p.jpg"))&w=50")
            let miss = try await httpRequest(port: port, path: path)
            #expect(miss.status == 200 && miss.headers["x-cache"] == "miss")
            let before = runtime.frontAnswers.value
            let hit = try await httpRequest(port: port, path: path)
            #expect(hit.status == 200 && hit.headers["x-cache"] == "memory" && hit.body == miss.body)
            #expect(runtime.frontAnswers.value == before + 1, "the signed hit was answered in front")
            let head = try await httpRequest(port: port, path: path, method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == miss.headers["content-length"])
            #expect(runtime.frontAnswers.value == before + 2, "HEAD too")
            let forged = String(path.dropLast(3)) + "AAA"
            let refused = try await httpRequest(port: port, path: forged)
            #expect(refused.status == 403)
            #expect(runtime.frontAnswers.value == before + 2, "a wrong signature goes to the router, which refuses it")
            let unsigned = try await httpRequest(port: port, path: "/img?url=\(StatusPage.percentEncode(base + "/p.jpg"))&w=50")
            #expect(unsigned.status == 403)
        }
    }
}
