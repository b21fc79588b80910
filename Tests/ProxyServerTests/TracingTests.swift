import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
@testable import ImageCore
@testable import ProxyServer
#endif

/// Traces from the real executable to a collector that decodes them with the official OTLP protobuf
/// definitions (`Scripts/otlp_receiver.py`, PyPI opentelemetry-proto), against an origin that records the
/// `traceparent` it is sent.
@Suite(.serialized, .timeLimit(.minutes(3))) struct TracingTests {
    /// A span as the receiver decoded it.
    struct ExportedSpan: Decodable {
        var service: String?
        var trace_id: String
        var span_id: String
        var parent_span_id: String
        var name: String
        var kind: Int
        var start: UInt64
        var end: UInt64
        var attributes: [String: AttributeValue]
        var status_code: Int
        var status_message: String
        var links: [Link]
        var content_type: String?
        var authorization: String?

        struct Link: Decodable {
            var trace_id: String
            var span_id: String
        }

        var milliseconds: Double { Double(end &- start) / 1e6 }
    }

    /// An attribute's value: text, a number or a flag.
    enum AttributeValue: Decodable, Equatable {
        case text(String), number(Int), flag(Bool), other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let number = try? container.decode(Int.self) {
                self = .number(number)
            } else if let text = try? container.decode(String.self) {
                self = .text(text)
            } else {
                self = .other
            }
        }
    }

    /// The receiver, run as a child process on 127.0.0.1.
    final class Receiver: Sendable {
        let process: Process
        let port: Int

        init(failing: Bool = false) throws {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/otlp_receiver.py")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script.path] + (failing ? ["--fail"] : [])
            let output = Pipe()
            process.standardOutput = output
            // Not the test runner's own stderr: a child left holding it would keep the runner's output open.
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            self.process = process
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                process.terminate()
                throw ReceiverError.didNotStart
            }
            self.port = port
        }

        enum ReceiverError: Error { case didNotStart }

        func spans() async throws -> [ExportedSpan] {
            let (_, body) = try await httpGet(port: port, path: "/spans")
            return try JSONDecoder().decode([ExportedSpan].self, from: body)
        }

        /// The spans once `done` holds for them (exports arrive in batches), at most 15 s.
        func spans(until done: ([ExportedSpan]) -> Bool) async throws -> [ExportedSpan] {
            let deadline = ContinuousClock.now + .seconds(15)
            var received = try await spans()
            while !done(received), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                received = try await spans()
            }
            return received
        }

        /// Ends the receiver (and waits for it).
        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        deinit { stop() }
    }

    /// An origin recording the `traceparent` of each request by path; `/slow.jpg` answers after 400 ms, `/broken.jpg` 500.
    final class TracedOrigin: Sendable {
        let seen = Mutex<[(path: String, traceparent: String?)]>([])

        func traceparents(_ path: String) -> [String?] { seen.withLock { $0.filter { $0.path == path }.map(\.traceparent) } }

        func makeApplication() -> some ApplicationProtocol {
            let router = Router()
            let jpeg = TestOrigin.jpeg
            router.get("/**") { [self] request, _ -> Response in
                let path = request.uri.path
                self.seen.withLock { $0.append((path, request.headers[HTTPField.Name("traceparent")!])) }
                if path == "/broken.jpg" { return Response(status: .internalServerError) }
                if path == "/slow.jpg" { try await Task.sleep(for: .milliseconds(400)) }
                return Response(
                    status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "max-age=3600"],
                    body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
            }
            return Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                logger: Logger(label: "traced-origin", factory: { _ in SwiftLogNoOpLogHandler() }))
        }
    }

    static func environment(receiver: Int, cache: String, extra: [String: String] = [:]) -> [String: String] {
        [
            "IMAGEPROXY_CACHE_DIR": cache, "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true", "IMAGEPROXY_LOG_LEVEL": "info",
            "IMAGEPROXY_FETCH_RETRIES": "0", "IMAGEPROXY_TRACING_ENABLED": "true",
            "IMAGEPROXY_TRACING_ENDPOINT": "http://127.0.0.1:\(receiver)/v1/traces",
            "IMAGEPROXY_TRACING_HEADERS": "Authorization=Bearer collector-token", "IMAGEPROXY_TRACING_EXPOSE_TO_CLIENTS": "true",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        ].merging(extra) { $1 }
    }

    static func temporaryCache() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ipx-trace-\(UUID().uuidString)").path
    }

    /// Runs `body` with a receiver, the recording origin (its test client gives the port) and the service
    /// tracing to the receiver; all three stopped afterwards.
    func withTracedService(
        _ body: @Sendable (Receiver, TracedOrigin, any TestClientProtocol, ServiceProcess) async throws -> Void
    ) async throws {
        let receiver = try Receiver()
        defer { receiver.stop() }
        let cache = Self.temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let origin = TracedOrigin()
        try await origin.makeApplication().test(.live) { client in
            let service = try await ServiceProcess(environment: Self.environment(receiver: receiver.port, cache: cache))
            defer { service.signal(SIGKILL) }
            try await body(receiver, origin, client, service)
        }
    }

    @Test func aMissIsATreeOfEveryStageContinuingTheClientsTraceToTheOrigin() async throws {
        try await withTracedService { receiver, origin, client, service in
            let clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736", clientSpan = "00f067aa0ba902b7"
            let path = "/img?url=http://127.0.0.1:\(client.port!)/photo.jpg%3Fsecret%3D1&w=120&format=webp"
            let (status, _, headers) = try await httpRequest(
                port: service.port, path: path, headers: ["traceparent": "00-\(clientTrace)-\(clientSpan)-01"])
            #expect(status == 200)
            // `tracing.exposeToClients`: Server-Timing names the request span.
            let timing = headers["server-timing"] ?? ""
            #expect(timing.contains("traceparent;desc=00-\(clientTrace)-"))

            let spans = try await receiver.spans { spans in
                spans.contains { $0.name == "GET /img" } && spans.contains { $0.name == "imageproxy.transform" }
                    && spans.contains { $0.name == "imageproxy.encode" || $0.name.hasSuffix("encode") }
            }
            let request = try #require(spans.first { $0.name == "GET /img" })
            #expect(request.trace_id == clientTrace, "the client's trace continues")
            #expect(request.parent_span_id == clientSpan)
            #expect(request.kind == 2, "server")
            #expect(request.service == "imageproxy")
            #expect(request.attributes["http.response.status_code"] == .number(200))
            #expect(request.attributes["http.request.method"] == .text("GET"))
            #expect(request.content_type == "application/x-protobuf")
            #expect(request.authorization == "Bearer collector-token", "tracing.headers go with the export")
            #expect(timing.contains("traceparent;desc=00-\(clientTrace)-\(request.span_id)-01"))

            let inTrace = spans.filter { $0.trace_id == clientTrace }
            func child(_ name: String, of parent: ExportedSpan) -> ExportedSpan? {
                inTrace.first { $0.name == name && $0.parent_span_id == parent.span_id }
            }
            let memory = try #require(child("imageproxy.memory", of: request))
            #expect(memory.attributes["imageproxy.hit"] == .flag(false))
            let disk = try #require(child("imageproxy.disk", of: request))
            #expect(disk.attributes["imageproxy.hit"] == .flag(false))
            let fetch = try #require(child("imageproxy.fetch", of: request))
            let originRequest = try #require(child("GET", of: fetch), "the origin request is a child of the fetch")
            #expect(originRequest.kind == 3, "client")
            #expect(originRequest.attributes["http.response.status_code"] == .number(200))
            #expect(originRequest.attributes["server.address"] == .text("127.0.0.1"))
            #expect(originRequest.attributes["http.response.body.size"] == .number(TestOrigin.jpeg.count))
            // `log.sourceUrls` is off: the origin's URL without its query.
            #expect(originRequest.attributes["url.full"] == .text("http://127.0.0.1:\(client.port!)/photo.jpg"))
            let queue = try #require(child("imageproxy.queue", of: request))
            let transform = try #require(child("imageproxy.transform", of: request))
            #expect(transform.attributes["imageproxy.output.format"] == .text("webp"))
            #expect(transform.attributes["imageproxy.output.width"] == .number(120))
            let phases = inTrace.filter { $0.parent_span_id == transform.span_id }
            #expect(phases.contains { $0.name.hasSuffix("encode") }, "the encode is a phase: \(phases.map(\.name))")
            #expect(phases.contains { $0.name.hasPrefix("imageproxy.decode") }, "the decode is a phase: \(phases.map(\.name))")
            #expect(phases.contains { $0.name == "imageproxy.memory_wait" }, "the wait for memory is a phase: \(phases.map(\.name))")
            let encode = phases.last { $0.name.hasSuffix("encode") }
            #expect(encode?.attributes["imageproxy.output.format"] == .text("webp"), "the encode carries the output")

            // The origin saw the origin request's span as the parent.
            let sent = try #require(origin.traceparents("/photo.jpg").first ?? nil)
            #expect(sent == "00-\(clientTrace)-\(originRequest.span_id)-01")

            // The stages add up to the request, within the gaps between them.
            let stages = [memory, disk, fetch, queue, transform].map(\.milliseconds).reduce(0, +)
            #expect(stages <= request.milliseconds + 0.5)
            #expect(stages >= request.milliseconds * 0.5, "stages \(stages) ms of \(request.milliseconds) ms")
            for span in [memory, disk, fetch, queue, transform] {
                #expect(span.start >= request.start && span.end <= request.end + 1_000_000, "\(span.name) inside the request")
            }

            // The access log line names the trace and the request span.
            try await Task.sleep(for: .milliseconds(200))
            let line = service.output.split(separator: "\n").first { $0.contains("route=img") && $0.contains("trace_id=") }
            #expect(line?.contains("trace_id=\(clientTrace) span_id=\(request.span_id)") == true, "\(line ?? "no line")")

            let page = String(decoding: try await httpGet(port: service.port, path: "/status").body, as: UTF8.self)
            #expect(page.contains("id=\"traces\" class=ok>on, 0 spans dropped, 0 exports failed"))

            // A memory hit (the front's path): a new trace, its request span saying memory.
            let (again, _, _) = try await httpRequest(port: service.port, path: path)
            #expect(again == 200)
            let withHit = try await receiver.spans { spans in spans.filter { $0.name == "GET /img" }.count >= 2 }
            let hit = try #require(withHit.first { $0.name == "GET /img" && $0.trace_id != clientTrace })
            #expect(hit.parent_span_id.isEmpty, "a new trace")
            #expect(hit.attributes["imageproxy.cache"] == .text("memory"))
            #expect(request.attributes["imageproxy.cache"] == .text("miss"))
            #expect(origin.traceparents("/photo.jpg").count == 1)
        }
    }

    @Test func aDeduplicatedDownloadAppearsOnceLinkedFromEachRequest() async throws {
        try await withTracedService { receiver, origin, client, service in
            let port = service.port, originPort = client.port!
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for width in [100, 110, 120, 130, 140] {
                    group.addTask {
                        try await httpGet(port: port, path: "/img?url=http://127.0.0.1:\(originPort)/slow.jpg&w=\(width)").status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == [200, 200, 200, 200, 200])
            #expect(origin.traceparents("/slow.jpg").count == 1, "one download")
            let spans = try await receiver.spans { spans in
                spans.filter { $0.name == "GET /img" }.count == 5 && spans.filter { $0.name == "imageproxy.fetch" }.count == 5
            }
            let downloads = spans.filter { $0.name == "GET" && $0.kind == 3 }
            #expect(downloads.count == 1, "the download appears once")
            let download = try #require(downloads.first)
            let fetches = spans.filter { $0.name == "imageproxy.fetch" }
            let joined = fetches.filter { $0.attributes["imageproxy.joined"] == .flag(true) }
            #expect(joined.count == 4)
            for fetch in joined {
                #expect(fetch.links.contains { $0.span_id == download.span_id && $0.trace_id == download.trace_id })
            }
            let requestTraces = Set(spans.filter { $0.name == "GET /img" }.map(\.trace_id))
            #expect(requestTraces.count == 5, "five requests, five traces")
        }
    }

    @Test func anOriginFailureIsRecordedOnTheSpanThatFailedWithThePublicMessage() async throws {
        try await withTracedService { receiver, origin, client, service in
            let (status, body) = try await httpGet(port: service.port, path: "/img?url=http://127.0.0.1:\(client.port!)/broken.jpg&w=100")
            #expect(status == 502)
            let spans = try await receiver.spans { spans in spans.contains { $0.name == "GET /img" } }
            let request = try #require(spans.first { $0.name == "GET /img" })
            #expect(request.attributes["http.response.status_code"] == .number(502))
            #expect(request.status_code == 2, "a 5xx is an error on the server span")
            let originRequest = try #require(spans.first { $0.name == "GET" && $0.kind == 3 })
            #expect(originRequest.status_code == 2)
            let message = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!originRequest.status_message.isEmpty && message.contains(originRequest.status_message), "the public message only")
            #expect(originRequest.attributes["error.type"] != nil)
        }
    }

    @Test func objectStoreRequestsAreSpansOfTheirOwnAndStillSigned() async throws {
        let receiver = try Receiver()
        defer { receiver.stop() }
        let cache = Self.temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await withObjectStore(buckets: ["images", "cache"]) { store in
            #expect(try store.put(TestOrigin.jpeg, bucket: "images", key: "traced/photo.jpg", contentType: "image/jpeg") == 200)
            let environment = SharedTierTests.replicaEnvironment(store, cache: cache)
                .merging(Self.environment(receiver: receiver.port, cache: cache)) { $1 }
            let service = try await ServiceProcess(environment: environment)
            defer { service.signal(SIGKILL) }
            let (status, _) = try await httpGet(port: service.port, path: "/img?url=s3%3A%2F%2Fimages%2Ftraced%2Fphoto.jpg&w=110")
            #expect(status == 200)
            let spans = try await receiver.spans { spans in spans.contains { $0.name == "imageproxy.shared_write" } }
            let request = try #require(spans.first { $0.name == "GET /img" })
            let lookup = try #require(spans.first { $0.name == "imageproxy.shared" })
            #expect(lookup.parent_span_id == request.span_id && lookup.attributes["imageproxy.hit"] == .flag(false))
            let fetch = try #require(spans.first { $0.name == "imageproxy.fetch" })
            let object = try #require(spans.first { $0.name == "GET" && $0.parent_span_id == fetch.span_id })
            #expect(object.attributes["http.response.status_code"] == .number(200), "the signed GET with a traceparent is accepted")
            // The background write, in the request's trace, signed with its traceparent and accepted.
            let write = try #require(spans.first { $0.name == "imageproxy.shared_write" })
            #expect(write.trace_id == request.trace_id && write.parent_span_id == request.span_id)
            #expect(write.attributes["http.response.status_code"] == .number(200))
        }
    }

    @Test func aCollectorThatIsDownOrFailingCostsNoRequestAnything() async throws {
        let failing = try Receiver(failing: true)
        defer { failing.stop() }
        // A port nothing listens on: the collector is down.
        let closed = try LoopbackListener()
        let downPort = closed.port
        closed.close()
        let cache = Self.temporaryCache()
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await TestOrigin().makeApplication().test(.live) { client in
            for collector in [failing.port, downPort] {
                let service = try await ServiceProcess(
                    environment: Self.environment(receiver: collector, cache: cache, extra: ["IMAGEPROXY_TRACING_QUEUE_SIZE": "16", "IMAGEPROXY_TRACING_EXPORT_TIMEOUT_MS": "500"]))
                defer { service.signal(SIGKILL) }
                let path = "/img?url=http://127.0.0.1:\(client.port!)/photo.jpg&w=90"
                #expect(try await httpGet(port: service.port, path: path).status == 200)
                // Hits while the exporter fails: each answered, within 5 ms at the server (`Server-Timing`'s total).
                // A request waiting on the exporter would take its timeout (500 ms here); a loaded test machine
                // may delay a stray request by a few milliseconds, so 1 in 100 may pass 5 ms, none 100 ms.
                var totals: [Double] = []
                for _ in 0..<200 {
                    let (status, _, headers) = try await httpRequest(port: service.port, path: path)
                    #expect(status == 200)
                    let total = headers["server-timing"]?.components(separatedBy: "total;dur=").last.flatMap { Double($0.prefix { $0 != "," }) }
                    totals.append(total ?? 999)
                }
                #expect(totals.filter { $0 >= 5 }.count <= 2, "hits over 5 ms: \(totals.filter { $0 >= 5 })")
                #expect(totals.max() ?? 999 < 100, "slowest hit \(totals.max() ?? 999) ms")
                // The lost spans are counted (once the exporter has given up on its batch: 500 ms here).
                var dropped = 0.0, failed = 0.0
                let deadline = ContinuousClock.now + .seconds(15)
                while dropped == 0 || failed == 0, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    let text = String(decoding: try await httpGet(port: service.port, path: "/metrics").body, as: UTF8.self)
                    let metrics = try PrometheusText(text)
                    dropped = metrics.value("imageproxy_trace_spans_dropped_total")
                    failed = metrics.value("imageproxy_trace_export_failures_total")
                }
                #expect(dropped > 0, "spans beyond the queue's 16 are dropped and counted")
                #expect(failed > 0, "batches the collector did not take are counted")
                // The status page says so.
                let page = String(decoding: try await httpGet(port: service.port, path: "/status").body, as: UTF8.self)
                #expect(page.contains("id=\"traces\" class=bad>on, "), "the status page names the lost spans")
            }
        }
    }
}

/// The sampling of new traces (`tracing.sampleRatio`), decided before any span is made.
struct TraceSamplingTests {
    @Test(arguments: [0.0, 0.01, 0.1, 0.5, 0.9])
    func theShareOfNewTracesKeptIsTheRatio(_ ratio: Double) {
        let draws = 200_000
        let kept = (1...draws).filter { RequestTracing.draw($0, below: ratio) }.count
        let share = Double(kept) / Double(draws)
        #expect(abs(share - ratio) <= max(0.002, ratio * 0.03), "kept \(share) of new traces at ratio \(ratio)")
    }

    @Test func consecutiveDrawsAreNotAPattern() {
        // Every tenth request kept would look right in the share and be wrong: runs of kept draws vary.
        let kept = (1...10_000).filter { RequestTracing.draw($0, below: 0.1) }
        let gaps = Set(zip(kept.dropFirst(), kept).map { $0 - $1 })
        #expect(gaps.count > 20, "gaps between kept draws: \(gaps.sorted().prefix(10))")
    }
}
