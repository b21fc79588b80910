import Dispatch
import Foundation
import HTTPTypes
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// The memory-hit fast path (in front of NIO's HTTP decoder) against the decoder and router alone
/// (`server.memoryHitFastPath: false`): the same byte sequences, sent whole, byte by byte and in 1- and
/// 7-byte pieces, must get the same bytes back, except `Date`, `X-Request-Id` and `Server-Timing` (and the
/// remaining seconds of `max-age`, which may tick between the two).
@Suite(.timeLimit(.minutes(3))) struct FastPathDifferentialTests {
    /// How a sequence reaches the server.
    enum Delivery: String, CaseIterable, Sendable {
        case whole, byteByByte, pieces1, pieces7
    }

    static func corpus(hit target: String, etag: String) -> [(String, [UInt8])] {
        let hit = "GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n"
        let health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        let chunkedBody = String(hit.utf8.count, radix: 16) + "\r\n" + hit + "\r\n0\r\n\r\n"
        let sequences: [(String, String)] = [
            ("hit", hit),
            ("three pipelined hits", hit + hit + hit),
            ("router then hit", health + hit),
            ("conditional hit", "GET \(target) HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(etag)\r\n\r\n" + hit),
            ("chunked GET whose body is a hit", "GET \(target) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunkedBody + hit),
            ("Content-Length body that is a hit", "POST /prefetch HTTP/1.1\r\nHost: x\r\nContent-Length: \(hit.utf8.count)\r\n\r\n" + hit + hit),
            ("CL and TE", "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hit),
            ("duplicate Content-Length", "GET \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n" + hit),
            ("bare LF", "GET \(target) HTTP/1.1\nHost: x\n\n" + hit),
            ("bare CR", "GET \(target) HTTP/1.1\rHost: x\r\n\r\n" + hit),
            ("obs-fold", "GET /health HTTP/1.1\r\nHost: x\r\nX-A: b\r\n c\r\n\r\n" + hit),
            ("NUL in a header", "GET \(target) HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n" + hit),
            ("HEAD then hit", "HEAD \(target) HTTP/1.1\r\nHost: x\r\n\r\n" + hit),
            ("HTTP/1.0 then hit", "GET \(target) HTTP/1.0\r\n\r\n" + hit),
            ("HTTP/1.0 keep-alive then hit", "GET \(target) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + hit),
            ("HTTP/1.0 404 then hit", "GET /nowhere HTTP/1.0\r\n\r\n" + hit),
            ("Connection: close then hit", "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + hit),
            ("CONNECT, health, hit", "CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n" + health + hit),
            ("unknown method then hit", "FOO / HTTP/1.1\r\nHost: x\r\n\r\n" + hit),
            ("long head then hit", "GET /health HTTP/1.1\r\nHost: x\r\nX-Long: \(String(repeating: "l", count: 6000))\r\n\r\n" + hit),
            ("oversized head", "GET \(target) HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 20_000))\r\n\r\n"),
            ("half-closed after a hit", hit),
        ]
        return sequences.map { ($0.0, Array($0.1.utf8)) }
    }

    /// Sends `bytes` as `delivery` says, then reads until the server closes or is quiet for a second.
    static func exchange(port: Int, bytes: [UInt8], delivery: Delivery, halfClose: Bool) async -> [UInt8] {
        // A thread of its own: blocking dispatch threads would starve the Swift concurrency pool the
        // router's handlers run on (on Linux both live in libdispatch).
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                guard let connection = try? RawConnection(port: port, receiveTimeoutMilliseconds: 1_000) else {
                    return continuation.resume(returning: Array("cannot connect".utf8))
                }
                let piece = switch delivery {
                case .whole: bytes.count
                case .byteByByte, .pieces1: 1
                case .pieces7: 7
                }
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + max(1, piece))
                    guard connection.send(bytes: Array(bytes[offset..<end])) else { break }
                    offset = end
                    if delivery != .whole { usleep(delivery == .byteByByte ? 300 : 1_000) }
                }
                if halfClose { connection.finishSending() }
                continuation.resume(returning: connection.receive { _ in false }.bytes)
            }
        }
    }

    /// The answer with `Date`, `X-Request-Id`, `Server-Timing` lines dropped and `max-age` values blanked
    /// (bodies as Latin-1, so that images compare byte for byte).
    static func normalised(_ bytes: [UInt8]) -> String {
        let text = String(bytes.map { Character(Unicode.Scalar($0)) })
        let ignored = ["date:", "x-request-id:", "server-timing:"]
        return text.components(separatedBy: "\r\n").filter { line in
            !ignored.contains { line.lowercased().hasPrefix($0) }
        }.map { line in
            line.replacingOccurrences(of: #"max-age=\d+"#, with: "max-age=N", options: .regularExpression)
        }.joined(separator: "\r\n")
    }

    @Test func bothPathsAnswerEverySequenceAlike() async throws {
        let photo = try TestImages.jpeg(width: 320, height: 240)
        let origin = TestOrigin(["/p.jpg": .image(photo, headers: [("Cache-Control", "max-age=3600")])])
        try await origin.run { base in
            var fast = testConfiguration()
            fast.server.headerTimeoutMilliseconds = 5_000
            var router = fast
            router.server.memoryHitFastPath = false
            router.cache.disk.directory += "-router"
            let slow = router
            defer {
                try? FileManager.default.removeItem(atPath: fast.cache.disk.directory)
                try? FileManager.default.removeItem(atPath: slow.cache.disk.directory)
            }
            let target = "/img?url=\(StatusPage.percentEncode(base + "/p.jpg"))&w=64"
            try await withProxy(fast) { fastProxy, _ in
                try await withProxy(slow) { slowProxy, _ in
                    let ports = [fastProxy.port!, slowProxy.port!]
                    var etag = ""
                    for port in ports {
                        // Warm both memory tiers (the same encoder makes the same bytes and ETag).
                        let warm = try await httpRequest(port: port, path: target)
                        #expect(warm.status == 200)
                        etag = warm.headers["Etag"] ?? warm.headers["ETag"] ?? etag
                    }
                    let corpus = Self.corpus(hit: target, etag: etag)
                    let cases = corpus.flatMap { entry in Delivery.allCases.map { (entry.0, entry.1, $0) } }
                    let selected = cases.filter { $0.2 == .whole || $0.1.count < 700 }
                    var results: [(String, Delivery, String, String)] = []
                    // Eight sequences at a time (each holds two blocking connections on a dispatch thread).
                    for batch in stride(from: 0, to: selected.count, by: 8) {
                        results += await withTaskGroup(of: (String, Delivery, String, String).self) { group in
                        for (name, bytes, delivery) in selected[batch..<min(selected.count, batch + 8)] {
                            group.addTask {
                                let halfClose = name.hasPrefix("half-closed")
                                async let viaFront = Self.exchange(port: ports[0], bytes: bytes, delivery: delivery, halfClose: halfClose)
                                async let viaRouter = Self.exchange(port: ports[1], bytes: bytes, delivery: delivery, halfClose: halfClose)
                                return (name, delivery, Self.normalised(await viaFront), Self.normalised(await viaRouter))
                            }
                        }
                        return await group.reduce(into: []) { $0.append($1) }
                        }
                    }
                    #expect(results.count >= corpus.count * 2)
                    for (name, delivery, front, router) in results {
                        let heads = { (text: String) -> String in
                            text.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/") || $0.contains(": ") && $0.count < 200 }
                                .joined(separator: " | ")
                        }
                        let same = front == router, answered = !front.isEmpty
                        #expect(same, "\(name), \(delivery): fast path [\(heads(front))] vs router [\(heads(router))]")
                        #expect(answered, "\(name), \(delivery): no answer")
                    }
                }
            }
        }
    }
}
