import Crypto
import Foundation
import Hummingbird
import ImageCore
import ProxyEngine

/// `GET /` and `GET /status`: a small self-contained HTML page for the people on call: uptime, version,
/// request rate and latency percentiles over the last five minutes, charts of the last hour (inline SVG,
/// see ``StatusCharts``), cache figures per tier, queues, the last errors, a "try it" form and the
/// effective configuration, to requests with the admin token only (a public page shows no URL, proxy,
/// resolve pin, allowlist, path or listen address: nothing that helps an attacker), credentials masked
/// even then, inside URLs too. No external assets. Its live part is fetched again from
/// `GET /status/live` every `status.sampleSeconds` by one inline script (allowed by its hash in the
/// page's CSP); without scripts the page reloads itself instead. With signed URLs on, the "try it" link
/// is signed only for a request carrying the admin token (a public page must not sign arbitrary sources);
/// otherwise the page says so.
struct StatusPage: Sendable {
    let runtime: ProxyRuntime

    /// The build version shown on the page.
    static let version = "0.1.0"

    /// The page's only script: replaces the live part every `data-refresh` milliseconds and marks the body
    /// with the time of the last update (`data-updated`).
    static let liveScript = """
        (function(){var b=document.body,l=document.getElementById('live');setInterval(function(){\
        fetch('/status/live',{cache:'no-store'}).then(function(r){return r.ok?r.text():Promise.reject(r.status)})\
        .then(function(h){l.innerHTML=h;b.dataset.updated=String(Date.now())}).catch(function(){})},\
        Number(b.dataset.refresh)||10000)})();
        """

    /// The CSP source that allows ``liveScript`` and nothing else: `'sha256-<base64>'`.
    static let liveScriptSource = "'sha256-" + Data(SHA256.hash(data: Data(liveScript.utf8))).base64EncodedString() + "'"

    func handle(_ request: Request, context: some RequestContext) async throws -> Response {
        let tryURL = request.uri.queryParameters["url"].map(String.init)
        let tryWidth = request.uri.queryParameters["w"].map(String.init) ?? "300"
        let html = await render(
            tryURL: tryURL, tryWidth: tryWidth,
            mayUseSigningKey: AdminAuthorization.allows(request, token: runtime.configuration.cache.adminToken))
        return Self.htmlResponse(html)
    }

    /// `GET /status/live`: the page's live part alone, for its script.
    func live(_ request: Request, context: some RequestContext) async throws -> Response {
        Self.htmlResponse(await liveSection())
    }

    static func htmlResponse(_ html: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    func render(tryURL: String?, tryWidth: String, mayUseSigningKey: Bool = false) async -> String {
        let now = Date().timeIntervalSince1970
        let refreshSeconds = runtime.configuration.observability.statusSampleSeconds
        var page = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>ImageProxy status</title>
            \(tryURL == nil ? "<noscript><meta http-equiv=\"refresh\" content=\"\(max(5, refreshSeconds))\"></noscript>" : "")
            <style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
            td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f3f3f3}h1{font-size:20px}
            h2{font-size:16px;margin-top:1.5em}.ok{color:#070}.bad{color:#b00}img{max-width:45%;border:1px solid #ccc;margin-right:1em}
            .charts{display:flex;flex-wrap:wrap;gap:0 1.5em}figure{margin:.3em 0}figcaption{font-size:12px;margin-bottom:2px}
            svg text{fill:#555;font-family:system-ui,sans-serif}</style>
            </head><body data-refresh="\(refreshSeconds * 1000)"><h1>ImageProxy status</h1>
            <p>version \(Self.version) · up \(Self.duration(now - runtime.startedAt)) · \(runtime.readiness.isReady ? "<span class=ok>ready</span>" : "<span class=bad>not ready</span>") · access: <span id="access-mode" class=\(runtime.accessMode == .open ? "bad" : "ok")>\(Self.escape(runtime.accessMode.summary))</span> · \(Self.tracesSummary(runtime.tracing))</p>
            <div id="live">\(await liveSection())</div>
            """
        page += "<h2>Try it</h2><form method=get action=\"/status\">source URL <input name=url size=60 value=\"\(Self.escape(tryURL ?? ""))\"> width <input name=w size=5 value=\"\(Self.escape(tryWidth))\"> <button>show</button></form>"
        if let tryURL {
            var path = "/img?url=\(Self.percentEncode(tryURL))&w=\(Self.percentEncode(tryWidth))"
            let signer = URLSigner(keys: runtime.configuration.security.signingKeys)
            if let signer, mayUseSigningKey { path = signer.sign(path) }
            if signer != nil, !mayUseSigningKey {
                page += "<p>Signed URLs are on: the variant link is signed only for requests with the admin token "
                    + "(<code>Authorization: Bearer</code>, <code>cache.adminToken</code>).</p>"
            }
            page += "<p><img alt=source src=\"\(Self.escape(tryURL))\"><img alt=variant src=\"\(Self.escape(path))\"></p>"
        }
        page += "<h2>Configuration</h2>"
        if mayUseSigningKey {
            page += "<table>"
            for (key, value) in effectiveConfiguration() {
                page += "<tr><td>\(key)</td><td>\(Self.escape(value))</td></tr>"
            }
            page += "</table>"
        } else {
            page += "<p id=\"configuration-hidden\">The effective configuration is shown to requests with the admin token "
                + "(<code>Authorization: Bearer</code>, <code>cache.adminToken</code>), or by "
                + "<code>ImageProxy serve --check-config</code> on the host.</p>"
        }
        page += "<script>\(Self.liveScript)</script></body></html>\n"
        return page
    }

    /// The part of the page that changes: request figures, charts, caches, queues, last errors.
    func liveSection() async -> String {
        await runtime.collectMetrics()
        let now = Date().timeIntervalSince1970
        let summary = runtime.statusHistory.summary(window: 300, now: now)
        let tiers = await runtime.cacheStatistics()
        var section = """
            <h2>Requests, last 5 minutes</h2>
            <table><tr><th>requests</th><th>per second</th><th>p50</th><th>p95</th><th>p99</th><th>errors</th></tr>
            <tr><td id="requests">\(summary.requests)</td><td>\(Self.number(summary.perSecond))</td><td>\(Self.milliseconds(summary.p50))</td>
            <td>\(Self.milliseconds(summary.p95))</td><td>\(Self.milliseconds(summary.p99))</td><td>\(summary.errors)</td></tr></table>
            <h2>Last hour</h2><div class=charts>\(StatusCharts(samples: runtime.statusHistory.samples).html())</div>
            <h2>Caches</h2><table><tr><th>tier</th><th>entries</th><th>size</th><th>capacity</th><th>hit ratio</th></tr>
            """
        for name in ["memory", "disk"] {
            guard let tier = tiers[name] else { continue }
            section += "<tr><td>\(name)</td><td id=\"\(name)-entries\">\(tier.entries)</td><td>\(ByteCount.text(Double(tier.bytes)))</td>"
                + "<td>\(ByteCount.text(Double(tier.capacityBytes)))</td><td>\(Self.number(tier.hitRatio * 100))%</td></tr>"
        }
        if let tier = runtime.sharedTier {
            let counts = tier.resultCounts
            let hits = counts["hit"] ?? 0, lookups = hits + (counts["miss"] ?? 0) + (counts["error"] ?? 0) + (counts["skipped"] ?? 0)
            section += "</table><h2>Shared tier</h2><table><tr><th>state</th><th>hits</th><th>misses</th><th>errors</th>"
                + "<th>skipped</th><th>hit ratio</th><th>writes</th><th>writes dropped</th><th>write errors</th></tr>"
                + "<tr><td id=\"shared-state\">\(tier.isSkipped ? "<span class=bad>skipped (breaker open)</span>" : "<span class=ok>in use</span>")</td>"
                + "<td>\(hits)</td><td>\(counts["miss"] ?? 0)</td><td>\(counts["error"] ?? 0)</td><td>\(counts["skipped"] ?? 0)</td>"
                + "<td>\(Self.number(lookups == 0 ? 0 : Double(hits) / Double(lookups) * 100))%</td><td>\(counts["write_ok"] ?? 0)</td>"
                + "<td>\(counts["write_dropped"] ?? 0)</td><td>\(counts["write_error"] ?? 0)</td></tr>"
        }
        section += "</table><h2>Queues</h2><table><tr><th>stage</th><th>waiting</th><th>running</th></tr>"
        for stage in ProxyMetrics.Stage.allCases {
            let counts = runtime.metrics.stageCounts(stage)
            section += "<tr><td>\(stage.rawValue)</td><td>\(counts.waiting)</td><td>\(counts.running)</td></tr>"
        }
        section += "</table><h2>Last errors</h2><table><tr><th>time (UTC)</th><th>route</th><th>status</th><th>reason</th><th>request id</th></tr>"
        for error in runtime.requestLog.lastErrors {
            section += "<tr><td>\(Self.timestamp(error.time))</td><td>\(error.route)</td><td>\(error.status)</td><td>\(Self.escape(error.reason))</td><td>\(Self.escape(error.requestID))</td></tr>"
        }
        return section + "</table>"
    }

    /// Every setting by its configuration key (as in `config/imageproxy.yaml`), credentials masked: secret
    /// settings whole, and the user information of any URL in a value (`http://user:pass@proxy` shows as
    /// `http://••••••@proxy`).
    func effectiveConfiguration() -> [(String, String)] {
        let configuration = runtime.configuration
        return ProxyConfiguration.settings.map { setting in
            let value = setting.read(configuration)
            guard setting.isSecret else { return (setting.key, Self.maskingURLCredentials(value)) }
            return (setting.key, value.isEmpty ? "(not set)" : "••••••")
        }
    }

    /// `text` with the user information of every URL in it (`scheme://user:pass@host`) masked.
    static func maskingURLCredentials(_ text: String) -> String {
        text.replacing(#/(?<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s,\]]*@/#) { match in "\(match.output.scheme)••••••@" }
    }

    /// Whether traces are exported, and the spans lost so far.
    static func tracesSummary(_ tracing: RequestTracing?) -> String {
        guard let health = tracing?.health else { return "traces: <span id=\"traces\">off</span>" }
        let dropped = health.droppedSpans.value, failed = health.failedExports.value
        let lost = dropped + failed > 0
        return "traces: <span id=\"traces\" class=\(lost ? "bad" : "ok")>on, \(dropped) spans dropped, \(failed) exports failed</span>"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    static func number(_ value: Double) -> String { String(format: "%.2f", value) }
    static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds)
        return String(format: "%dd %02dh %02dm %02ds", total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60)
    }

    static func timestamp(_ time: Double) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }
}
