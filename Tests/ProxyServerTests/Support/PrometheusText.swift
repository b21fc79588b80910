import Foundation

@testable import ImageCore
@testable import ProxyEngine

/// A parsed Prometheus text exposition: samples by `name{label="value",...}` (labels sorted), and
/// which families have `# HELP` and `# TYPE` lines.
struct PrometheusText {
    var samples: [String: Double] = [:]
    var helped: Set<String> = []
    var typed: [String: String] = [:]

    enum ParseError: Error { case malformed(String) }

    init(_ text: String) throws {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") {
                helped.insert(String(line.dropFirst(7).split(separator: " ")[0]))
                continue
            }
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2 else { throw ParseError.malformed(String(line)) }
                typed[String(parts[0])] = String(parts[1])
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                throw ParseError.malformed(String(line))
            }
            let series = String(line[..<space])
            samples[Self.canonical(series)] = value
        }
    }

    /// `name{b="2",a="1"}` → `name{a="1",b="2"}`.
    static func canonical(_ series: String) -> String {
        guard let open = series.firstIndex(of: "{"), series.hasSuffix("}") else { return series }
        let name = series[..<open]
        let inner = series[series.index(after: open)..<series.index(before: series.endIndex)]
        let labels = inner.split(separator: ",").map(String.init).sorted()
        return "\(name){\(labels.joined(separator: ","))}"
    }

    /// The value of a series (0 when absent).
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        let key = labels.isEmpty ? name : "\(name){\(labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ","))}"
        return samples[key] ?? 0
    }

    /// The family a sample name belongs to (`_bucket`, `_sum`, `_count` of histograms folded).
    func family(of name: String) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if typed[base] == "histogram" { return base }
        }
        return name
    }
}
