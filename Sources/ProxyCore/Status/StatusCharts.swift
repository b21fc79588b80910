import Foundation
import ImageCore
import ProxyEngine

/// The status page's charts of the last hour, drawn as inline SVG from ``StatusSample``s: requests per
/// second by status class, p50/p99 latency, cache hit ratio, queue depth and resident memory. No script
/// or external asset is needed to show them; gaps (intervals without answers) stay gaps.
struct StatusCharts {
    /// One line of a chart: a name for the legend, a colour and a value per sample (nil = no data).
    struct Series {
        var name: String
        var colour: String
        var values: [Double?]
    }

    /// One chart: an id (`chart-<id>`), a title, its lines, how its axis labels print, the smallest top.
    struct Chart {
        var id: String
        var title: String
        var series: [Series]
        var format: (Double) -> String
        var minimumTop: Double
    }

    static let width = 560.0
    static let height = 120.0
    static let left = 64.0
    static let top = 8.0
    static let bottom = 18.0
    static let right = 8.0

    let samples: [StatusSample]
    /// The seconds the x axis spans, ending at the newest sample.
    let span: Double

    init(samples: [StatusSample], span: Double = 3600) {
        self.samples = samples
        self.span = span
    }

    /// The five charts of the status page.
    var charts: [Chart] {
        let classColours = ["#2a7d2a", "#2a5db0", "#c07a00", "#c02020"]
        return [
            Chart(
                id: "requests", title: "Requests per second by status class",
                series: StatusSample.classNames.indices.map { index in
                    Series(
                        name: StatusSample.classNames[index], colour: classColours[index],
                        values: samples.map { $0.rate(ofClass: index) })
                }, format: Self.rate, minimumTop: 1),
            Chart(
                id: "latency", title: "Latency p50 and p99",
                series: [
                    Series(name: "p50", colour: "#2a5db0", values: samples.map(\.p50)),
                    Series(name: "p99", colour: "#c02020", values: samples.map(\.p99)),
                ], format: Self.duration, minimumTop: 0.001),
            Chart(
                id: "hit-ratio", title: "Cache hit ratio (images)",
                series: [Series(name: "hit ratio", colour: "#2a7d2a", values: samples.map { $0.hitRatio.map { $0 * 100 } })],
                format: { String(format: "%.0f%%", $0) }, minimumTop: 100),
            Chart(
                id: "queue", title: "Queue depth (waiting jobs)",
                series: [Series(name: "waiting", colour: "#c07a00", values: samples.map { Double($0.queueDepth) })],
                format: { String(format: "%.0f", $0) }, minimumTop: 2),
            Chart(
                id: "rss", title: "Resident memory",
                series: [Series(name: "RSS", colour: "#6a3db0", values: samples.map(\.residentBytes))],
                format: ByteCount.text, minimumTop: 1_048_576),
        ]
    }

    /// Every chart as a `<figure>` with an inline `<svg>`.
    func html() -> String {
        charts.map(svg).joined()
    }

    func svg(_ chart: Chart) -> String {
        let newest = samples.last?.time ?? 0
        let values = chart.series.flatMap { $0.values.compactMap { $0 } }
        let top = Self.niceCeiling(max(chart.minimumTop, values.max() ?? 0))
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        func x(_ time: Double) -> Double { Self.left + plotWidth * (1 - min(span, max(0, newest - time)) / span) }
        func y(_ value: Double) -> Double { Self.top + plotHeight * (1 - min(1, max(0, value / top))) }
        let legend = chart.series.map { series -> String in
            let latest = series.values.last.flatMap { $0 }.map(chart.format) ?? "–"
            return "<span style=\"color:\(series.colour)\">■ \(series.name) \(latest)</span>"
        }.joined(separator: " ")
        var svg = """
            <figure class=chart><figcaption>\(chart.title) \(legend)</figcaption>\
            <svg id="chart-\(chart.id)" data-samples="\(samples.count)" width="\(Int(Self.width))" height="\(Int(Self.height))" \
            viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" aria-label="\(chart.title), last hour">\
            <rect x="\(Self.left)" y="\(Self.top)" width="\(plotWidth)" height="\(plotHeight)" fill="#fafafa" stroke="#ccc"/>\
            <line x1="\(Self.left)" y1="\(y(top / 2))" x2="\(Self.width - Self.right)" y2="\(y(top / 2))" stroke="#e4e4e4"/>\
            <text x="\(Self.left - 4)" y="\(Self.top + 10)" text-anchor="end" font-size="10">\(chart.format(top))</text>\
            <text x="\(Self.left - 4)" y="\(y(top / 2) + 4)" text-anchor="end" font-size="10">\(chart.format(top / 2))</text>\
            <text x="\(Self.left - 4)" y="\(Self.top + plotHeight)" text-anchor="end" font-size="10">0</text>\
            <text x="\(Self.left)" y="\(Self.height - 4)" font-size="10">−\(Int(span / 60)) min</text>\
            <text x="\(Self.width - Self.right)" y="\(Self.height - 4)" text-anchor="end" font-size="10">now</text>
            """
        for series in chart.series {
            for segment in Self.segments(series.values) {
                let points = segment.map { index in
                    String(format: "%.1f,%.1f", x(samples[index].time), y(series.values[index] ?? 0))
                }
                // A lone point is drawn as a dot so that a single sample shows.
                if points.count == 1 {
                    let xy = points[0].split(separator: ",")
                    svg += "<circle data-series=\"\(series.name)\" cx=\"\(xy[0])\" cy=\"\(xy[1])\" r=\"2\" fill=\"\(series.colour)\"/>"
                } else {
                    svg += "<polyline data-series=\"\(series.name)\" fill=\"none\" stroke=\"\(series.colour)\" stroke-width=\"1.5\" points=\"\(points.joined(separator: " "))\"/>"
                }
            }
        }
        return svg + "</svg></figure>"
    }

    /// Runs of consecutive indices whose values are present.
    static func segments(_ values: [Double?]) -> [[Int]] {
        var runs: [[Int]] = []
        var current: [Int] = []
        for (index, value) in values.enumerated() {
            if value != nil {
                current.append(index)
            } else if !current.isEmpty {
                runs.append(current)
                current = []
            }
        }
        if !current.isEmpty { runs.append(current) }
        return runs
    }

    /// The smallest 1, 2 or 5 × 10ⁿ at or above `value`: the top of a chart's axis.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let magnitude = pow(10, floor(log10(value)))
        for step in [1.0, 2.0, 5.0, 10.0] where step * magnitude >= value * 0.999_999 {
            return step * magnitude
        }
        return 10 * magnitude
    }

    static func rate(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f/s", value) : String(format: "%.1f/s", value)
    }

    static func duration(_ seconds: Double) -> String {
        seconds >= 1 ? String(format: "%.1f s", seconds) : String(format: "%.1f ms", seconds * 1000)
    }
}
