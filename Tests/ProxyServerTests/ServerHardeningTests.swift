import Foundation
import Hummingbird
import HummingbirdTesting
import ProxyServer
import Testing

@testable import ImageCore
@testable import ProxyEngine

/// The HTTP server's own limits, probed byte by byte over raw connections.
@Suite(.timeLimit(.minutes(1))) struct ServerHardeningTests {
    private func configuration() -> ProxyConfiguration {
        var configuration = testConfiguration()
        configuration.server.headerTimeoutMilliseconds = 1000
        configuration.server.maxHeaderBytes = 4096
        return configuration
    }

    @Test func slowHeadersAreCutOffWhileOthersAreServed() async throws {
        let configuration = configuration()
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        try await withProxy(configuration) { proxy, _ in
            let port = proxy.port!
            let slow = Task.detached { () -> (closedAfter: Duration, closed: Bool) in
                let connection = try RawConnection(port: port)
                let started = ContinuousClock.now
                for character in "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n" {
                    guard connection.send(String(character)) else { break }
                    try await Task.sleep(for: .milliseconds(100))
                    if ContinuousClock.now - started > .seconds(4) { break }
                }
                let result = connection.receiveAll()
                return (ContinuousClock.now - started, result.closed && result.text.isEmpty)
            }
            // Meanwhile normal requests are answered.
            for _ in 0..<5 {
                let health = try await httpGet(port: port, path: "/health")
                #expect(health.status == 200)
                try await Task.sleep(for: .milliseconds(150))
            }
            let outcome = try await slow.value
            #expect(outcome.closed, "the slow client was disconnected without an answer")
            #expect(outcome.closedAfter < .seconds(3))
        }
    }

    @Test func aBodyThatNeverArrivesIsCutOff() async throws {
        var configuration = configuration()
        configuration.server.bodyTimeoutMilliseconds = 800
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        try await withProxy(configuration) { proxy, _ in
            let started = ContinuousClock.now
            let stalled = try RawConnection(port: proxy.port!, receiveTimeoutSeconds: 10)
            stalled.send("POST /prefetch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"urls\"")
            let reply = stalled.receiveAll()
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(5), "closed after server.bodyTimeoutMs, not held open (\(elapsed))")
            #expect(elapsed >= .milliseconds(700), "but not before it")
            #expect(!reply.text.contains("202"), "\(reply.text.prefix(80))")
            // A body that does arrive in time is served.
            let body = #"{"urls": []}"#
            let prompt = try RawConnection(port: proxy.port!)
            prompt.send("POST /prefetch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
            #expect(prompt.receiveAll().text.hasPrefix("HTTP/1.1 202"))
        }
    }

    @Test func smugglingShapesAndHugeHeadersAreRejected() async throws {
        let configuration = configuration()
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        try await withProxy(configuration) { proxy, _ in
            let port = proxy.port!
            let both = try RawConnection(port: port)
            both.send("POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /ready HTTP/1.1\r\nHost: x\r\n\r\n")
            let reply = both.receiveAll()
            #expect(!reply.text.contains("200 OK"), "Content-Length with Transfer-Encoding is not processed: \(reply.text.prefix(80))")

            let huge = try RawConnection(port: port)
            huge.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 8192))\r\n\r\n")
            let hugeReply = huge.receiveAll()
            #expect(hugeReply.text.hasPrefix("HTTP/1.1 431 "), "an 8 KB header is refused: \(hugeReply.text.prefix(80))")
            #expect(hugeReply.text.contains("server.maxHeaderBytes") && hugeReply.closed)
            // Arriving in pieces changes nothing.
            let pieces = try RawConnection(port: port)
            pieces.send("GET /img?url=x HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 3000))")
            try await Task.sleep(for: .milliseconds(50))
            pieces.send(String(repeating: "c", count: 3000) + "\r\n\r\n")
            #expect(pieces.receiveAll().text.hasPrefix("HTTP/1.1 431 "))

            let fine = try RawConnection(port: port)
            fine.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(fine.receiveAll().text.hasPrefix("HTTP/1.1 200"))
        }
    }
}
