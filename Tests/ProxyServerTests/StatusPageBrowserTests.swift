import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyEngine

/// The status page of the real binary in headless Chromium (Debian's `chromium`, installed by
/// `scripts/setup.sh --tests`): after generated traffic the charts have data, and the page's one script
/// runs under its CSP and replaces the live part.
@Suite(.serialized, .timeLimit(.minutes(2))) struct StatusPageBrowserTests {
    static let chromium = "/usr/bin/chromium"

    /// Loads `url` in headless Chromium and returns the DOM after `budget` milliseconds of virtual time
    /// (timers run). Anything but loopback would go to a proxy that does not exist (127.0.0.1:9).
    static func renderedDOM(_ url: String, budget: Int) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        process.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--no-first-run", "--proxy-server=http://127.0.0.1:9", "--virtual-time-budget=\(budget)", "--dump-dom", url,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = try output.fileHandleForReading.readToEnd() ?? Data()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// The `<svg id="chart-<id>" …>…</svg>` element of a chart in `dom`.
    static func chart(_ id: String, in dom: String) -> String? {
        guard let start = dom.range(of: "<svg id=\"chart-\(id)\"") else { return nil }
        return dom[start.lowerBound...].components(separatedBy: "</svg>").first
    }

    @Test func chartsHaveDataAndUpdateLiveInARealBrowser() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.chromium),
            "headless Chromium is needed: bash scripts/setup.sh --tests installs it")
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("ipx-status-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: cache) }
        try await TestOrigin().makeApplication().test(.live) { origin in
            let originPort = origin.port!
            let service = try await ServiceProcess(environment: [
                "IMAGEPROXY_CACHE_DIR": cache, "IMAGEPROXY_ALLOW_LOOPBACK_SOURCES": "true",
                "IMAGEPROXY_STATUS_SAMPLE_SECONDS": "1",
            ])
            let source = "http://127.0.0.1:\(originPort)"
            for width in [60, 80, 60, 80, 60] {
                #expect(try await httpGet(port: service.port, path: "/img?url=\(source)/photo.jpg&w=\(width)").status == 200)
            }
            #expect(try await httpGet(port: service.port, path: "/img?url=\(source)/missing").status == 404)
            #expect(try await httpGet(port: service.port, path: "/img?url=\(source)/photo.jpg&w=0").status == 400)
            try await Task.sleep(for: .milliseconds(2500))  // two one-second samples closed

            let dom = try Self.renderedDOM("http://127.0.0.1:\(service.port)/status", budget: 2500)
            #expect(dom.contains("ImageProxy status"), "the page rendered: \(dom.prefix(300))")
            for id in ["requests", "latency", "hit-ratio", "queue", "rss"] {
                let svg = try #require(Self.chart(id, in: dom), "chart \(id)")
                let samples = svg.firstMatch(of: /data-samples="(\d+)"/).flatMap { Int($0.1) } ?? 0
                #expect(samples >= 2, "chart \(id) has \(samples) samples")
                #expect(svg.contains("<polyline") || svg.contains("<circle"), "chart \(id) draws something")
            }
            let requests = try #require(Self.chart("requests", in: dom))
            #expect(requests.contains("data-series=\"2xx\"") && requests.contains("data-series=\"4xx\""))
            let hits = try #require(Self.chart("hit-ratio", in: dom))
            #expect(hits.contains("data-series=\"hit ratio\""), "3 hits of 5 image lookups were charted")
            // The script ran (its hash is in the CSP), fetched /status/live and marked the body.
            #expect(dom.firstMatch(of: /<body[^>]* data-updated="\d+"/) != nil, "live update under the CSP")
            service.signal(SIGTERM)
            _ = await service.waitForExit(timeout: .seconds(10))
        }
    }
}
