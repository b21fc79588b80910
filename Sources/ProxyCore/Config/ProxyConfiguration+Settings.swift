import Foundation
import ImageCore
import ProxyEngine

extension ProxyConfiguration {
    /// Every key the service understands, each mapped onto the field it sets: a component's own
    /// `Settings` (``OriginFetcher/Settings``, ``ImageTransformer/Settings``, the caches' settings) or a
    /// service setting of ``ProxyConfiguration``. A new key is its line here plus its line in
    /// `config/imageproxy.yaml` (the field and its documented default live with the component).
    static let settings: [ConfigurationSetting] = [
        ConfigurationSetting.parsed("bind", "host:port, e.g. 127.0.0.1:8080", \.bind, ListenAddress.init(parsing:))
            .reading { "\($0.bind.host):\($0.bind.port)" },
        .list("signingKey", \.security.signingKeys).secret(),
        .boolean("security.allowOpenProxy", \.security.allowOpenProxy),
        .integer("queue.maxPending", 1...1_000_000, \.queue.maxPending),
        .choice("queue.order", "one of fifo, lifo", \.queue.order),
        .integer("queue.requestTimeoutMs", 100...600_000, \.queue.requestTimeoutMilliseconds),
        .integer("queue.sourceHostSharePercent", 1...100, \.queue.sourceHostSharePercent),
        .integer("server.headerTimeoutMs", 100...600_000, \.server.headerTimeoutMilliseconds),
        .integer("server.idleTimeoutMs", 100...3_600_000, \.server.idleTimeoutMilliseconds),
        .integer("server.maxConnections", 1...1_000_000, \.server.maxConnections),
        .integer("server.maxHeaderBytes", 1_024...1_048_576, \.server.maxHeaderBytes),
        .integer("server.bodyTimeoutMs", 100...600_000, \.server.bodyTimeoutMilliseconds),
        .boolean("server.memoryHitFastPath", \.server.memoryHitFastPath),
        .parsedList(
            "security.allowedHosts", \.fetch.allowlist, expectation: "a list of host patterns",
            parse: { HostAllowlist(patterns: $0) }, show: \.patterns),
        .parsedList(
            "security.originHeaders", \.fetch.originHeaders, expectation: "a list of pattern=Name: value",
            parse: { items in
                let headers = items.compactMap(OriginHeader.init(parsing:))
                return headers.count == items.count ? headers : nil
            }, show: { $0.map(\.description) }).secret(),
        .list(
            "fetch.resolve", \.fetch.resolve, expectation: "a list of host:port:address",
            isValid: { $0.split(separator: ":", maxSplits: 2).count == 3 }),
        .text("fetch.proxy", "a proxy URL or empty", \.fetch.proxy, allowEmpty: true),
        .text(
            "sources.s3.endpoint", "an http(s) URL or empty (AWS)", \.fetch.s3.endpoint.endpoint, allowEmpty: true,
            accepts: { $0.isEmpty || $0.hasPrefix("http://") || $0.hasPrefix("https://") }),
        .text("sources.s3.region", "a region name", \.fetch.s3.endpoint.region),
        .choice("sources.s3.pathStyle", "one of auto, true, false", \.fetch.s3.endpoint.pathStyle),
        .list("sources.s3.buckets", \.fetch.s3.buckets, expectation: "a list of bucket names", isValid: SourceURL.isBucketName),
        .text("sources.s3.accessKeyId", "an access key id or empty", \.fetch.s3.endpoint.accessKeyId, allowEmpty: true).secret(),
        .text("sources.s3.secretAccessKey", "a secret or empty", \.fetch.s3.endpoint.secretAccessKey, allowEmpty: true).secret(),
        .text("logLevel", "one of trace, debug, info, notice, warning, error, critical", \.logLevel,
              allowed: ["trace", "debug", "info", "notice", "warning", "error", "critical"]),
        .text("cache.dir", "a folder path", \.cache.disk.directory),
        .choice("cache.storeOriginals", "one of always, repeat, never", \.cache.storeOriginals),
        .integer("cache.memoryBytes", 0...(1 << 40), \.cache.memory.capacityBytes),
        .integer("cache.diskBytes", 0...(1 << 50), \.cache.disk.capacityBytes),
        .integer("cache.inlineBytes", 0...(16 << 20), \.cache.disk.inlineBytes),
        .integer("cache.defaultTtl", 0...315_360_000, \.cache.freshness.defaultTTL),
        .integer("cache.minTtl", 0...315_360_000, \.cache.freshness.minTTL),
        .integer("cache.maxTtl", 0...315_360_000, \.cache.freshness.maxTTL),
        .integer("cache.negativeTtl", 0...86_400, \.cache.negative.negativeTTL),
        .integer("cache.errorTtl", 0...3_600, \.cache.negative.errorTTL),
        .integer("cache.staleRetention", 0...315_360_000, \.cache.disk.staleRetentionSeconds),
        .integer("cache.janitorInterval", 1...86_400, \.cache.janitorInterval),
        .list("cache.ignoredSourceParams", \.cache.ignoredSourceParameters),
        .text(
            "cache.shared.endpoint", "an http(s) URL or empty (AWS)", \.cache.shared.endpoint.endpoint, allowEmpty: true,
            accepts: { $0.isEmpty || $0.hasPrefix("http://") || $0.hasPrefix("https://") }),
        .text(
            "cache.shared.bucket", "a bucket name or empty (off)", \.cache.shared.bucket, allowEmpty: true,
            accepts: { $0.isEmpty || SourceURL.isBucketName($0) }),
        .text("cache.shared.prefix", "a key prefix (may be empty)", \.cache.shared.prefix, allowEmpty: true),
        .text("cache.shared.region", "a region name", \.cache.shared.endpoint.region),
        .choice("cache.shared.pathStyle", "one of auto, true, false", \.cache.shared.endpoint.pathStyle),
        .text("cache.shared.accessKeyId", "an access key id or empty", \.cache.shared.endpoint.accessKeyId, allowEmpty: true).secret(),
        .text("cache.shared.secretAccessKey", "a secret or empty", \.cache.shared.endpoint.secretAccessKey, allowEmpty: true).secret(),
        .integer("cache.shared.timeoutMs", 1...60_000, \.cache.shared.timeoutMilliseconds),
        .integer("cache.shared.writeTimeoutMs", 1...600_000, \.cache.shared.writeTimeoutMilliseconds),
        .integer("cache.shared.maxPendingWriteBytes", 0...(1 << 34), \.cache.shared.maxPendingWriteBytes),
        .integer("cache.shared.purgePollMs", 100...600_000, \.cache.shared.purgePollMilliseconds),
        .boolean("cache.shared.storeOriginals", \.cache.shared.storeOriginals),
        .text("cache.adminToken", "a token (empty turns the admin routes off)", \.cache.adminToken, allowEmpty: true).secret(),
        .boolean("allow.loopbackSources", \.fetch.policy.allowLoopback),
        .boolean("allow.privateSources", \.fetch.policy.allowPrivate),
        .parsedList(
            "allow.addressClasses", \.fetch.policy.extraClasses,
            expectation: "a list of address classes (\(AddressPolicy.AddressClass.allCases.map(\.rawValue).joined(separator: ", ")))",
            parse: { items in
                let classes = items.compactMap(AddressPolicy.AddressClass.init(rawValue:))
                return classes.count == items.count ? Set(classes) : nil
            }, show: { $0.map(\.rawValue).sorted() }),
        .integer("fetch.connectTimeoutMs", 1...600_000, \.fetch.connectTimeoutMilliseconds),
        .integer("fetch.timeoutMs", 1...3_600_000, \.fetch.timeoutMilliseconds),
        .integer("fetch.maxSourceBytes", 1...(1 << 34), \.fetch.maxSourceBytes),
        .integer("fetch.concurrency", 1...1024, \.fetch.concurrency),
        .integer("fetch.resumeBytes", 0...(1 << 34), \.fetch.resumeBudgetBytes),
        .integer("fetch.maxRedirects", 0...20, \.fetch.maxRedirects),
        .integer("fetch.retries", 0...10, \.fetch.retries),
        .integer("fetch.retryBackoffMs", 0...60_000, \.fetch.retryBackoffMilliseconds),
        .text("fetch.userAgent", "a non-empty string", \.fetch.userAgent),
        .integer("image.maxDimension", 1...65_535, \.image.maxDimension),
        .integer("image.maxSourcePixels", 1...1_000_000_000, \.image.transformer.maxSourcePixels),
        .integer("image.maxFrames", 1...10_000, \.image.transformer.maxFrames),
        .integer("image.maxSourceFrames", 1...100_000, \.image.transformer.maxSourceFrames),
        .integer("image.maxTransformMs", 0...600_000, \.image.transformer.maxTransformMilliseconds),
        .integer("image.maxTransformBytes", 0...(1 << 40), \.image.transformer.maxTransformBytes),
        .integer("image.workers", 0...256, \.image.workers),
        .integer("image.decodedSourceBytes", 0...(1 << 40), \.image.decodedSourceBytes),
        .integer("image.decodedSourceSeconds", 1...3600, \.image.decodedSourceSeconds),
        .boolean("image.autoAVIF", \.image.autoAVIF),
        .integer("image.jpegQuality", 1...100, \.image.transformer.encoding.jpegQuality),
        .integer("image.webpQuality", 1...100, \.image.transformer.encoding.webpQuality),
        .integer("image.avifQuality", 1...100, \.image.transformer.encoding.avifQuality),
        .integer("image.avifEffort", 0...9, \.image.transformer.encoding.avifEffort),
        .integer("image.pngCompression", 0...9, \.image.transformer.encoding.pngCompression),
        .boolean("image.autoJXL", \.image.autoJXL),
        .integer("image.jxlQuality", 1...100, \.image.transformer.encoding.jxlQuality),
        .integer("image.jxlEffort", 3...9, \.image.transformer.encoding.jxlEffort),
        .integer("image.jxlMaxPixels", 1...(1 << 28), \.image.transformer.encoding.jxlMaxPixels),
        .integer("image.avifMaxPixels", 1...(1 << 28), \.image.transformer.encoding.avifMaxPixels),
        .integer("image.maxTransformCpuMs", 0...600_000, \.image.transformer.maxTransformCpuMilliseconds),
        .boolean("image.allowJXLInput", \.image.transformer.allowJXLInput),
        .boolean("image.allowSVGInput", \.image.transformer.allowSVGInput),
        .boolean("image.smartFaces", \.image.transformer.smartFaces),
        .text("image.faceCascade", "the path of an OpenCV cascade file", \.image.transformer.faceCascade),
        .choice("image.colour", "one of srgb, keep", \.image.colour),
        .integer("http.staleWhileRevalidate", 0...31_536_000, \.http.staleWhileRevalidate),
        .text("http.timingAllowOrigin", "an origin, * or empty", \.http.timingAllowOrigin, allowEmpty: true),
        .list("http.corsOrigins", \.http.corsOrigins, expectation: "* or origins like https://app.example.com") { item in
            item == "*" || ((item.hasPrefix("http://") || item.hasPrefix("https://")) && !item.dropFirst(8).contains("/"))
        },
        .boolean("http.clientHints", \.http.clientHints),
        .integers("http.clientHintWidths", 1...65_535, \.http.clientHintWidths),
        .integer("http.saveDataQuality", 0...100, \.http.saveDataQuality),
        .boolean("http.contentDisposition", \.http.contentDisposition),
        .boolean("http.presetsOnly", \.presets.presetsOnly),
        .text("http.defaultPreset", "the name of a preset or empty", \.presets.defaultPreset, allowEmpty: true),
        .boolean("overlays.allowUrl", \.overlays.allowURL),
        .boolean("compat.imgproxy.enabled", \.compat.imgproxy.enabled),
        .list("compat.imgproxy.keys", \.compat.imgproxy.keys, expectation: "a list of hex keys", isValid: { ImgproxySigner.hexBytes($0) != nil }).secret(),
        .list("compat.imgproxy.salts", \.compat.imgproxy.salts, expectation: "a list of hex salts", isValid: { ImgproxySigner.hexBytes($0) != nil }).secret(),
        .integer("compat.imgproxy.signatureSize", 1...32, \.compat.imgproxy.signatureSize),
        .text("compat.imgproxy.prefix", "a path prefix starting with /", \.compat.imgproxy.prefix, accepts: DialectPrefix.isValid),
        .text("compat.imgproxy.watermark", "the name of an overlay or empty", \.compat.imgproxy.watermark, allowEmpty: true),
        .boolean("compat.thumbor.enabled", \.compat.thumbor.enabled),
        .text("compat.thumbor.securityKey", "a key or empty", \.compat.thumbor.securityKey, allowEmpty: true).secret(),
        .boolean("compat.thumbor.allowUnsafe", \.compat.thumbor.allowUnsafe),
        .text("compat.thumbor.prefix", "a path prefix starting with /", \.compat.thumbor.prefix, accepts: DialectPrefix.isValid),
        .boolean("overlays.allowText", \.overlays.allowText),
        .text(
            "overlays.font", "a font family name (letters, digits, spaces, hyphens)", \.image.transformer.textFont,
            accepts: { $0.utf8.count <= 64 && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" } }),
        .text("log.format", "logfmt or json", \.observability.logFormat, allowed: ["logfmt", "json"]),
        .boolean("log.sourceUrls", \.observability.logSourceURLs),
        .text(
            "metrics.bind", "host:port or empty", \.observability.metricsBind, allowEmpty: true,
            accepts: { $0.isEmpty || ListenAddress(parsing: $0) != nil }),
        .integer("status.sampleSeconds", 1...600, \.observability.statusSampleSeconds),
        .boolean("tracing.enabled", \.tracing.enabled),
        .text(
            "tracing.endpoint", "an http(s) URL", \.tracing.endpoint,
            accepts: { ($0.hasPrefix("http://") || $0.hasPrefix("https://")) && URL(string: $0)?.host != nil }),
        .list("tracing.headers", \.tracing.headers, expectation: "a list of name=value", isValid: { TracingSettings.headerPairs([$0]) != nil })
            .secret(),
        .text("tracing.serviceName", "a service name", \.tracing.serviceName),
        .typed(
            "tracing.sampleRatio", expectation: "a number in 0...1", \.tracing.sampleRatio,
            value: { reader, key in reader.double(forKey: key) ?? reader.string(forKey: key).flatMap(Double.init) },
            accepts: { (0...1).contains($0) }
        ).reading { String($0.tracing.sampleRatio) },
        .integer("tracing.queueSize", 1...1_000_000, \.tracing.queueSize),
        .integer("tracing.exportTimeoutMs", 100...120_000, \.tracing.exportTimeoutMilliseconds),
        .boolean("tracing.exposeToClients", \.tracing.exposeToClients),
        .integer("shutdown.drainDelayMs", 0...600_000, \.shutdown.drainDelayMilliseconds),
        .integer("shutdown.gracePeriodMs", 0...3_600_000, \.shutdown.gracePeriodMilliseconds),
    ]
}
