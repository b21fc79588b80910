import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import ProxyServer
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
@testable import ImageCore
@testable import ProxyEngine
#endif

/// Metrics, Server-Timing, request ids, the access log and the status page, end to end.
@Suite(.timeLimit(.minutes(2))) struct ObservabilityTests {
    private func scrape(_ proxy: any TestClientProtocol) async throws -> PrometheusText {
        let response = try await proxy.execute(uri: "/metrics", method: .get, headers: [:], body: nil)
        #expect(response.status == .ok)
        return try PrometheusText(String(buffer: response.body))
    }

    @Test func metricsMoveByExactlyTheExpectedAmounts() async throws {
        let configuration = testConfiguration()
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        let origin = TestOrigin()
        try await origin.makeApplication().test(.live) { originClient in
            let base = "http://127.0.0.1:\(originClient.port!)"
            try await withProxy(configuration) { proxy, runtime in
                let before = try await scrape(proxy)
                let photo = [("url", "\(base)/photo.jpg"), ("w", "100")]
                #expect(try await proxy.image(photo).headers[.serverTiming]?.hasPrefix("cache;desc=miss") == true)
                #expect(try await proxy.image(photo).headers[.serverTiming]?.hasPrefix("cache;desc=memory") == true)
                await runtime.diskCache.waitForPendingWrites()
                runtime.memoryCache.purge(sourceKey: "\(base)/photo.jpg")
                #expect(try await proxy.image(photo).headers[.serverTiming]?.hasPrefix("cache;desc=disk") == true)
                #expect(try await proxy.image([("url", "\(base)/missing"), ("w", "100")]).status == .notFound)
                #expect(try await proxy.image([("url", "\(base)/photo.jpg"), ("w", "0")]).status == .badRequest)
                // Five identical requests at once for an uncached variant of a slow source: one transform.
                let port = proxy.port!
                let storm = (0..<5).map { _ in
                    Task { try await httpGet(port: port, path: "/img?url=\(base)/slowish.jpg&w=77") }
                }
                for request in storm { #expect(try await request.value.status == 200) }
                await runtime.diskCache.waitForPendingWrites()

                let after = try await scrape(proxy)
                func delta(_ name: String, _ labels: [String: String] = [:]) -> Double {
                    after.value(name, labels) - before.value(name, labels)
                }
                #expect(delta("imageproxy_http_requests_total", ["route": "img", "status": "200"]) == 8)
                #expect(delta("imageproxy_http_requests_total", ["route": "img", "status": "404"]) == 1)
                #expect(delta("imageproxy_http_requests_total", ["route": "img", "status": "400"]) == 1)
                #expect(delta("imageproxy_http_request_duration_seconds_count", ["route": "img", "cache": "memory"]) == 1)
                #expect(delta("imageproxy_http_request_duration_seconds_count", ["route": "img", "cache": "disk"]) == 1)
                #expect(delta("imageproxy_http_request_duration_seconds_count", ["route": "img", "cache": "miss"]) == 6)
                #expect(delta("imageproxy_cache_lookups_total", ["tier": "memory", "result": "hit"]) == 1)
                #expect(delta("imageproxy_cache_lookups_total", ["tier": "disk", "result": "hit"]) == 1)
                #expect(delta("imageproxy_origin_requests_total", ["result": "ok"]) == 2)
                #expect(delta("imageproxy_origin_requests_total", ["result": "source_not_found"]) == 1)
                #expect(delta("imageproxy_rejected_total", ["reason": "source_not_found"]) == 1)
                #expect(delta("imageproxy_rejected_total", ["reason": "bad_request"]) == 1)
                #expect(delta("imageproxy_dedup_joins_total", ["stage": "transform"]) == 4)
                #expect(delta("imageproxy_transform_duration_seconds_count", ["format": "jpeg"]) == 2)
                #expect(delta("imageproxy_output_bytes_count") == 2)
                #expect(after.value("imageproxy_cache_entries", ["tier": "disk"]) == 2, "two variants; originals seen once are not stored")
                #expect(after.value("imageproxy_queue_depth", ["stage": "transform"]) == 0)
                #expect(after.value("imageproxy_inflight", ["stage": "fetch"]) == 0)
                #expect(after.value("process_resident_memory_bytes") > 10_000_000)
                #expect(after.value("process_start_time_seconds") > 1_700_000_000)
                #expect(after.value("imageproxy_vips_memory_highwater_bytes") > 0)
                #expect(after.value("imageproxy_malloc_in_use_bytes") > 1_000_000, "malloc's live bytes (mallinfo2)")
                #expect(after.value("imageproxy_cache_pending_write_bytes") == 0, "every background write done and uncounted")

                // Every family has HELP and TYPE lines.
                for series in after.samples.keys {
                    let name = String(series.prefix { $0 != "{" })
                    let family = after.family(of: name)
                    #expect(after.helped.contains(family), "\(family) has # HELP")
                    #expect(after.typed[family] != nil, "\(family) has # TYPE")
                }
            }
        }
    }

    @Test func requestIdsAreEchoedOrMadeAndErrorsCarryServerTiming() async throws {
        try await withOriginAndProxy { proxy, origin, _ in
            let echoed = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "20")], headers: [.xRequestID: "trace-42"])
            #expect(echoed.headers[.xRequestID] == "trace-42")
            #expect(echoed.headers[.timingAllowOrigin] == "*")
            let timing = try #require(echoed.headers[.serverTiming])
            for stage in ["cache;desc=miss", "fetch;dur=", "transform;dur=", "queue;dur=", "total;dur="] {
                #expect(timing.contains(stage), "\(timing) has \(stage)")
            }
            let made = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "20")], headers: [.xRequestID: "bad id with spaces"])
            #expect(made.headers[.xRequestID] != "bad id with spaces")
            let madeID = try #require(made.headers[.xRequestID])
            #expect(madeID.wholeMatch(of: /[0-9a-f]+-[0-9a-f]+/) != nil, "a made id: process prefix and counter")
            let next = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "20")])
            #expect(next.headers[.xRequestID] != madeID, "unique")
            let failed = try await proxy.image([("url", "\(origin)/missing")])
            #expect(failed.headers[.serverTiming]?.contains("total;dur=") == true)
            #expect(failed.headers[.init("X-Imageproxy-Error-Reason")!] == nil, "internal headers are not sent")
        }
    }

    @Test func accessLogHasOneStructuredLinePerRequest() async throws {
        let recorder = RecordingLogHandler.Store()
        let accessLogger = Logger(label: "access", factory: { _ in RecordingLogHandler(store: recorder) })
        let configuration = testConfiguration()
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        try await TestOrigin().makeApplication().test(.live) { originClient in
            let url = "http://127.0.0.1:\(originClient.port!)/photo.jpg"
            try await withProxy(configuration, accessLogger: accessLogger) { proxy, _ in
                _ = try await proxy.image([("url", url), ("w", "33")], headers: [.xRequestID: "log-1"])
                _ = try await proxy.execute(uri: "/health", method: .get, headers: [:], body: nil)
            }
        }
        let entries = recorder.entries
        #expect(entries.count == 2)
        let line = try #require(entries.first { $0["request_id"] == "log-1" })
        #expect(line["method"] == "GET")
        #expect(line["route"] == "img")
        #expect(line["status"] == "200")
        #expect(Int(line["bytes"] ?? "") ?? 0 > 0)
        #expect(line["cache"] == "miss")
        #expect(line["source_host"] == "127.0.0.1")
        #expect(line["source"] == nil, "no full URL unless log.sourceUrls")
        #expect(line["client"] == "127.0.0.1")
        for field in ["total_ms", "fetch_ms", "transform_ms"] { #expect(line[field] != nil, "\(field)") }
        #expect(entries.contains { $0["route"] == "health" })

        let rendered = StructuredLogHandler.render(
            time: Date(timeIntervalSince1970: 0), level: .info, label: "imageproxy.access", message: "request",
            metadata: ["route": "img", "note": "a b"], format: .logfmt)
        #expect(rendered == #"time=1970-01-01T00:00:00Z level=info label=imageproxy.access msg=request route=img note="a b""#)
        let json = StructuredLogHandler.render(
            time: Date(timeIntervalSince1970: 0), level: .info, label: "l", message: "m",
            metadata: ["route": "img", "text": "quote \" back \\ new\nline \u{1}"], format: .json)
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        #expect(object?["route"] == "img" && object?["msg"] == "m" && object?["time"] == "1970-01-01T00:00:00Z")
        #expect(object?["text"] == "quote \" back \\ new\nline \u{1}", "escaped by hand, parsed back whole")
    }

    @Test func statusPageShowsLiveFiguresAndMasksSecrets() async throws {
        try await withOriginAndProxy(configure: { $0.cache.adminToken = "very-secret" }) { proxy, origin, _ in
            _ = try await proxy.image([("url", "\(origin)/photo.jpg"), ("w", "30")])
            _ = try await proxy.image([("url", "\(origin)/missing")])
            let page = try await proxy.execute(uri: "/status", method: .get, headers: [:], body: nil)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.hasPrefix("<!doctype html>") && html.hasSuffix("</html>\n"))
            #expect(html.contains("<td id=\"requests\">2</td>"))
            #expect(html.contains("<td id=\"memory-entries\">1</td>"))
            #expect(html.contains("source_not_found"))
            #expect(!html.contains("very-secret"))
            #expect(!html.contains("http://") || html.contains("form"), "no external assets")
            #expect(html.components(separatedBy: "<table>").count == html.components(separatedBy: "</table>").count)
            let tryIt = try await proxy.execute(uri: "/status?url=\(origin)/photo.jpg&w=50", method: .get, headers: [:], body: nil)
            #expect(String(buffer: tryIt.body).contains("src=\"/img?url="))
        }
    }
}

/// Collects log entries' metadata (values as text) for assertions.
struct RecordingLogHandler: LogHandler {
    final class Store: Sendable {
        private let recorded = Mutex<[[String: String]]>([])
        func append(_ entry: [String: String]) { recorded.withLock { $0.append(entry) } }
        var entries: [[String: String]] { recorded.withLock { $0 } }
    }

    let store: Store
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var entry: [String: String] = ["message": "\(event.message)"]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { entry[key] = "\(value)" }
        store.append(entry)
    }
}

extension HTTPField.Name {
    static let serverTiming = HTTPField.Name("Server-Timing")!
    static let xRequestID = HTTPField.Name("X-Request-Id")!
    static let timingAllowOrigin = HTTPField.Name("Timing-Allow-Origin")!
}

/// `metrics.bind`: `/metrics` moves to its own listener.
@Suite(.timeLimit(.minutes(1))) struct SeparateMetricsAddressTests {
    @Test func metricsAreServedOnTheirOwnAddressOnly() async throws {
        let port = try freeLoopbackPort()
        var configuration = testConfiguration()
        configuration.observability.metricsBind = "127.0.0.1:\(port)"
        let finalConfiguration = configuration
        defer { try? FileManager.default.removeItem(atPath: configuration.cache.disk.directory) }
        try await withProxy(finalConfiguration) { proxy, _ in
            let main = try await proxy.execute(uri: "/metrics", method: .get, headers: [:], body: nil)
            #expect(main.status == .notFound)
            var separate: (status: Int, body: Data)?
            for _ in 0..<50 where separate == nil {
                separate = try? await httpGet(port: port, path: "/metrics", timeout: 2)
                if separate == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let scraped = try #require(separate)
            #expect(scraped.status == 200)
            let text = try PrometheusText(String(decoding: scraped.body, as: UTF8.self))
            #expect(text.helped.contains("imageproxy_http_requests_total"))
        }
    }
}

/// A port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
        }
    }
    guard bound else { throw ServiceProcessError.didNotStart("no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Memory hits answered before the router carry the router's headers and are counted the same.
@Suite(.timeLimit(.minutes(1))) struct MemoryHitFastPathTests {
    @Test func memoryHitsAnsweredOnTheEventLoopLookLikeTheRoutersAnswers() async throws {
        try await withOriginAndRuntime { _, origin, _, runtime in
            let port = runtime.listeningPort.value
            let path = "/img?url=" + "\(origin)/photo.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)! + "&w=90"
            let miss = try await httpRequest(port: port, path: path)
            let hit = try await httpRequest(port: port, path: path)
            #expect(miss.headers["x-cache"] == "miss")
            #expect(hit.headers["x-cache"] == "memory")
            #expect(hit.body == miss.body)
            let sameHeaders = [
                "etag", "content-type", "content-length", "x-content-type-options", "content-security-policy",
                "timing-allow-origin", "server",
            ]
            for name in sameHeaders { #expect(hit.headers[name] == miss.headers[name], "\(name)") }
            for name in ["x-request-id", "server-timing", "date", "cache-control"] { #expect(hit.headers[name] != nil, "\(name)") }
            #expect(hit.headers["server-timing"]?.contains("cache;desc=memory") == true)

            // A conditional hit is a 304, and the counters see every answer.
            // Asked with Connection: close, the connection is closed after the answer.
            let connection = try RawConnection(port: port)
            connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(miss.headers["etag"] ?? "")\r\nConnection: close\r\n\r\n")
            let answer = connection.receiveAll()
            #expect(answer.text.hasPrefix("HTTP/1.1 304"), "\(answer.text.prefix(60))")
            #expect(answer.closed)
            let metrics = try PrometheusText(runtime.metrics.exposition())
            #expect(metrics.value("imageproxy_http_requests_total", ["route": "img", "status": "200"]) == 2)
            #expect(metrics.value("imageproxy_http_requests_total", ["route": "img", "status": "304"]) == 1)
        }
    }
}
