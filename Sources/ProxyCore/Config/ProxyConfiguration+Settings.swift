import ImageCore
import ProxyEngine

extension ProxyConfiguration {
    /// Every key the service understands. `config/imageproxy.yaml` documents the same list.
    static let settings: [ConfigurationSetting] = [
        ConfigurationSetting(key: "bind", expectation: "host:port, e.g. 127.0.0.1:8080") { configuration, text in
            guard let address = ListenAddress(parsing: text) else { return false }
            configuration.bind = address
            return true
        }.reading { "\($0.bind.host):\($0.bind.port)" },
        .list("signingKey", \.security.signingKeys).secret(),
        .integer("queue.maxPending", 1...1_000_000, \.queue.maxPending),
        ConfigurationSetting(key: "queue.order", expectation: "one of fifo, lifo") { configuration, text in
            guard let order = WorkQueueState.Order(rawValue: text) else { return false }
            configuration.queue.order = order
            return true
        }.reading { $0.queue.order.rawValue },
        .integer("queue.requestTimeoutMs", 100...600_000, \.queue.requestTimeoutMilliseconds),
        .integer("server.headerTimeoutMs", 100...600_000, \.server.headerTimeoutMilliseconds),
        .integer("server.idleTimeoutMs", 100...3_600_000, \.server.idleTimeoutMilliseconds),
        .integer("server.maxConnections", 1...1_000_000, \.server.maxConnections),
        .integer("server.maxHeaderBytes", 1_024...1_048_576, \.server.maxHeaderBytes),
        .integer("server.bodyTimeoutMs", 100...600_000, \.server.bodyTimeoutMilliseconds),
        .boolean("server.memoryHitFastPath", \.server.memoryHitFastPath),
        .list("security.allowedHosts", \.security.allowedHosts),
        .list(
            "security.originHeaders", \.security.originHeaders, expectation: "a list of pattern=Name: value",
            isValid: { OriginHeader(parsing: $0) != nil }).secret(),
        .list(
            "fetch.resolve", \.fetch.resolve, expectation: "a list of host:port:address",
            isValid: { $0.split(separator: ":", maxSplits: 2).count == 3 }),
        .text("fetch.proxy", "a proxy URL or empty", \.fetch.proxy, allowEmpty: true),
        .text("logLevel", "one of trace, debug, info, notice, warning, error, critical", \.logLevel,
              allowed: ["trace", "debug", "info", "notice", "warning", "error", "critical"]),
        .text("cache.dir", "a folder path", \.cache.directory),
        ConfigurationSetting(key: "cache.storeOriginals", expectation: "one of always, repeat, never") { configuration, text in
            guard let policy = OriginalAdmission.Policy(rawValue: text) else { return false }
            configuration.cache.storeOriginals = policy
            return true
        }.reading { $0.cache.storeOriginals.rawValue },
        .integer("cache.memoryBytes", 0...(1 << 40), \.cache.memoryBytes),
        .integer("cache.diskBytes", 0...(1 << 50), \.cache.diskBytes),
        .integer("cache.defaultTtl", 0...315_360_000, \.cache.defaultTTL),
        .integer("cache.minTtl", 0...315_360_000, \.cache.minTTL),
        .integer("cache.maxTtl", 0...315_360_000, \.cache.maxTTL),
        .integer("cache.negativeTtl", 0...86_400, \.cache.negativeTTL),
        .integer("cache.errorTtl", 0...3_600, \.cache.errorTTL),
        .integer("cache.staleRetention", 0...315_360_000, \.cache.staleRetention),
        .integer("cache.janitorInterval", 1...86_400, \.cache.janitorInterval),
        .list("cache.ignoredSourceParams", \.cache.ignoredSourceParameters),
        .text("cache.adminToken", "a token (empty turns the admin routes off)", \.cache.adminToken, allowEmpty: true).secret(),
        .boolean("allow.loopbackSources", \.allow.loopbackSources),
        .boolean("allow.privateSources", \.allow.privateSources),
        .list(
            "allow.addressClasses", \.allow.addressClasses,
            expectation: "a list of address classes (\(AddressPolicy.AddressClass.allCases.map(\.rawValue).joined(separator: ", ")))",
            isValid: { AddressPolicy.AddressClass(rawValue: $0) != nil }),
        .integer("fetch.connectTimeoutMs", 1...600_000, \.fetch.connectTimeoutMilliseconds),
        .integer("fetch.timeoutMs", 1...3_600_000, \.fetch.timeoutMilliseconds),
        .integer("fetch.maxSourceBytes", 1...(1 << 34), \.fetch.maxSourceBytes),
        .integer("fetch.concurrency", 1...1024, \.fetch.concurrency),
        .integer("fetch.resumeBytes", 0...(1 << 34), \.fetch.resumeBytes),
        .integer("fetch.maxRedirects", 0...20, \.fetch.maxRedirects),
        .integer("fetch.retries", 0...10, \.fetch.retries),
        .integer("fetch.retryBackoffMs", 0...60_000, \.fetch.retryBackoffMilliseconds),
        .text("fetch.userAgent", "a non-empty string", \.fetch.userAgent),
        .integer("image.maxDimension", 1...65_535, \.image.maxDimension),
        .integer("image.maxSourcePixels", 1...1_000_000_000, \.image.maxSourcePixels),
        .integer("image.maxFrames", 1...10_000, \.image.maxFrames),
        .integer("image.maxSourceFrames", 1...100_000, \.image.maxSourceFrames),
        .integer("image.maxTransformMs", 0...600_000, \.image.maxTransformMilliseconds),
        .integer("image.maxTransformBytes", 0...(1 << 40), \.image.maxTransformBytes),
        .integer("image.workers", 0...256, \.image.workers),
        .boolean("image.autoAVIF", \.image.autoAVIF),
        .integer("image.jpegQuality", 1...100, \.image.jpegQuality),
        .integer("image.webpQuality", 1...100, \.image.webpQuality),
        .integer("image.avifQuality", 1...100, \.image.avifQuality),
        .integer("image.avifEffort", 0...9, \.image.avifEffort),
        .integer("image.pngCompression", 0...9, \.image.pngCompression),
        .integer("http.staleWhileRevalidate", 0...31_536_000, \.http.staleWhileRevalidate),
        .text("http.timingAllowOrigin", "an origin, * or empty", \.http.timingAllowOrigin, allowEmpty: true),
        .list("http.corsOrigins", \.http.corsOrigins, expectation: "* or origins like https://app.example.com") { item in
            item == "*" || ((item.hasPrefix("http://") || item.hasPrefix("https://")) && !item.dropFirst(8).contains("/"))
        },
        .boolean("http.clientHints", \.http.clientHints),
        ConfigurationSetting.items("http.clientHintWidths", expectation: "widths in 1...65535") { configuration, items in
            let widths = items.map { Int($0) }
            guard !widths.isEmpty, widths.allSatisfy({ $0.map { (1...65_535).contains($0) } ?? false }) else { return false }
            configuration.http.clientHintWidths = widths.compactMap { $0 }.sorted()
            return true
        }.reading { $0.http.clientHintWidths.map(String.init).joined(separator: ", ") },
        .integer("http.saveDataQuality", 0...100, \.http.saveDataQuality),
        .boolean("http.contentDisposition", \.http.contentDisposition),
        .text("log.format", "logfmt or json", \.observability.logFormat, allowed: ["logfmt", "json"]),
        .boolean("log.sourceUrls", \.observability.logSourceURLs),
        ConfigurationSetting(key: "metrics.bind", expectation: "host:port or empty") { configuration, text in
            guard text.isEmpty || ListenAddress(parsing: text) != nil else { return false }
            configuration.observability.metricsBind = text
            return true
        }.reading { $0.observability.metricsBind },
        .integer("status.sampleSeconds", 1...600, \.observability.statusSampleSeconds),
        .integer("shutdown.drainDelayMs", 0...600_000, \.shutdown.drainDelayMilliseconds),
        .integer("shutdown.gracePeriodMs", 0...3_600_000, \.shutdown.gracePeriodMilliseconds),
    ]
}
