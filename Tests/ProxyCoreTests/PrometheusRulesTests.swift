import Foundation
import Testing

@testable import ProxyCore

/// The alert and recording rules in `deploy/prometheus/` name only metrics the binary exports: the real
/// `/metrics` is scraped after traffic that creates every labelled family, and compared by name.
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

    @Test func everyMetricInTheRulesIsExported() async throws {
        let rules = try String(
            contentsOf: Self.packageRoot.appendingPathComponent("deploy/prometheus/imageproxy-rules.yml"), encoding: .utf8)
        let named = Self.metricNames(in: rules)
        #expect(named.count >= 10, "\(named)")
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
                #expect(exported.contains(family) || histograms.contains(family), "\(name) is not exported by the binary")
            }
        }
    }
}
