import Foundation
import Testing
import TestSupport

@testable import ImageCore
@testable import ProxyServer
@testable import ProxyEngine

/// The alert and recording rules in `deploy/prometheus/` and the Grafana dashboard in `deploy/grafana/`
/// name only metrics the binary exports: the real `/metrics` is scraped after traffic that creates every
/// labelled family, and compared by name.
@Suite(.timeLimit(.minutes(1))) struct PrometheusRulesTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Metric names an expression file mentions (`imageproxy_*`, `process_*`), recording-rule names
    /// (`imageproxy:...`) left out.
    static func metricNames(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"\b(imageproxy_[a-z_]+|process_[a-z_]+)\b"#)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } })
    }

    @Test(arguments: ["deploy/prometheus/imageproxy-rules.yml", "deploy/grafana/imageproxy.json"])
    func everyMetricInTheRulesAndTheDashboardIsExported(file: String) async throws {
        let text = try String(contentsOf: Self.packageRoot.appendingPathComponent(file), encoding: .utf8)
        let named = Self.metricNames(in: text)
        #expect(named.count >= 10, "\(file): \(named)")
        let photo = try TestImages.jpeg(width: 320, height: 240)
        try await withFixturesAndRuntime(["/p.jpg": .image(photo)]) { runtime, base in
            let port = runtime.listeningPort.value
            _ = try await httpRequest(port: port, path: "/img?url=\(StatusPage.percentEncode(base + "/p.jpg"))&w=50")
            _ = try await httpRequest(port: port, path: "/img?url=\(StatusPage.percentEncode(base + "/missing.jpg"))&w=50")
            await runtime.collectMetrics()
            let exposition = try PrometheusText(runtime.metrics.exposition())
            let exported = Set(exposition.samples.keys.map { exposition.family(of: String($0.prefix { $0 != "{" })) })
            let histograms = Set(exposition.typed.filter { $0.value == "histogram" }.keys)
            for name in named {
                let family = name.hasSuffix("_bucket") ? String(name.dropLast(7)) : name
                #expect(exported.contains(family) || histograms.contains(family), "\(file): \(name) is not exported by the binary")
            }
        }
    }
}

/// A fresh instance, before any request, already exports the families the alert rules and the dashboard
/// read with their known label values at zero (issue #31: `imageproxy_rejected_total` was absent until
/// the first error, and its panel showed no data).
@Suite(.timeLimit(.minutes(1))) struct FreshInstanceMetricsTests {
    @Test func rejectionsAndTheSharedTierAreExportedAtZeroFromTheStart() async throws {
        try await withFixturesAndRuntime([:]) { runtime, _ in
            await runtime.collectMetrics()
            let exposition = try PrometheusText(runtime.metrics.exposition())
            for reason in ProxyMetrics.knownRejectionReasons {
                #expect(exposition.samples["imageproxy_rejected_total{reason=\"\(reason)\"}"] == 0, "\(reason)")
            }
            for result in ["hit", "miss", "error", "skipped"] {
                #expect(exposition.samples["imageproxy_shared_tier_reads_total{result=\"\(result)\"}"] == 0, "\(result)")
            }
        }
    }
}

/// The dashboard imports: JSON with a datasource variable, every panel bound to it, every target a query.
@Suite struct GrafanaDashboardTests {
    @Test func theDashboardIsImportableWithADatasourceVariable() throws {
        let url = PrometheusRulesTests.packageRoot.appendingPathComponent("deploy/grafana/imageproxy.json")
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let variables = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]]) ?? []
        #expect(variables.contains { $0["name"] as? String == "datasource" && $0["type"] as? String == "datasource" })
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        #expect(panels.count >= 10)
        for panel in panels {
            let source = (panel["datasource"] as? [String: Any])?["uid"] as? String
            #expect(source == "${datasource}", "\(panel["title"] ?? "?") uses the datasource variable")
            let targets = (panel["targets"] as? [[String: Any]]) ?? []
            #expect(!targets.isEmpty && targets.allSatisfy { !(($0["expr"] as? String) ?? "").isEmpty })
        }
        let titles = panels.compactMap { $0["title"] as? String }.joined(separator: " | ")
        for topic in ["Requests per second", "Latency", "hit ratio", "Queue", "Origin", "Transform", "RSS"] {
            #expect(titles.contains(topic), "a panel on \(topic)")
        }
    }
}
