import ImageCore
import ProxyEngine

/// Everything the service can be told at start-up, as value types with documented defaults.
///
/// `config/imageproxy.yaml` lists the same keys with the same defaults; environment variables
/// (`IMAGEPROXY_` + the key in upper snake case) override the file. See ``ProxyConfiguration/load(arguments:environment:)``.
public struct ProxyConfiguration: Sendable, Equatable {
    /// Where the HTTP server listens. Key `bind`, default `127.0.0.1:8080`.
    public var bind: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080)
    /// Minimum log level. Key `logLevel`, default `info`.
    public var logLevel: String = "info"
    /// Cache settings.
    public var cache = Cache()
    /// Which source addresses may be fetched.
    public var allow = SourcePolicy()
    /// Origin download settings.
    public var fetch = Fetch()
    /// Decode, transform and encode settings.
    public var image = Image()
    /// Response header settings.
    public var http = HTTP()
    /// Graceful shutdown settings.
    public var shutdown = Shutdown()
    /// Logging and metrics settings.
    public var observability = Observability()
    /// Signed URLs and source restrictions.
    public var security = Security()
    /// Connection limits of the HTTP server.
    public var server = Server()
    /// Admission control of uncached work.
    public var queue = Queue()

    /// Creates the embedded defaults.
    public init() {}

    /// Cache settings: memory and disk tiers, freshness rules, admin access.
    public struct Cache: Sendable, Equatable {
        /// Folder of the disk cache (files + SQLite index). Key `cache.dir`, default `./cache`.
        public var directory = DiskCache.Settings().directory
        /// Bytes of encoded variants kept in memory. Key `cache.memoryBytes`, default 256 MiB.
        public var memoryBytes = MemoryCache.Settings().capacityBytes
        /// Which downloaded originals go to disk: `always`, `repeat` (a source's second download within
        /// the last 100000 sources) or `never`. Key `cache.storeOriginals`, default `repeat`.
        public var storeOriginals = OriginalAdmission.Policy.repeat
        /// Bytes of originals and variants kept on disk. Key `cache.diskBytes`, default 2 GiB.
        public var diskBytes = DiskCache.Settings().capacityBytes
        /// Freshness when the origin gives none, in seconds. Key `cache.defaultTtl`, default 86400.
        public var defaultTTL = FreshnessPolicy().defaultTTL
        /// Lower bound on origin freshness, in seconds. Key `cache.minTtl`, default 60.
        public var minTTL = FreshnessPolicy().minTTL
        /// Upper bound on origin freshness, in seconds. Key `cache.maxTtl`, default 31536000 (1 year).
        public var maxTTL = FreshnessPolicy().maxTTL
        /// How long an origin 404/410 is remembered, in seconds. Key `cache.negativeTtl`, default 60.
        public var negativeTTL = NegativeCache.Settings().negativeTTL
        /// How long an origin failure (5xx, timeout) is remembered after its retries, in seconds.
        /// Key `cache.errorTtl`, default 5.
        public var errorTTL = NegativeCache.Settings().errorTTL
        /// How long expired entries with validators are kept for revalidation, in seconds.
        /// Key `cache.staleRetention`, default 604800 (7 days).
        public var staleRetention = DiskCache.Settings().staleRetentionSeconds
        /// Seconds between janitor runs (access times flushed, expired entries removed, budget enforced).
        /// Key `cache.janitorInterval`, default 30.
        public var janitorInterval = 30
        /// Source-URL query parameters left out of cache keys (`*` suffix = prefix match, case-insensitive).
        /// Key `cache.ignoredSourceParams`, default `X-Amz-*, X-Goog-*, Expires, Signature, Key-Pair-Id, Policy`.
        public var ignoredSourceParameters = ["X-Amz-*", "X-Goog-*", "Expires", "Signature", "Key-Pair-Id", "Policy"]
        /// Bearer token for `DELETE /cache` and `GET /cache/stats`; empty turns them off (404).
        /// Key `cache.adminToken`, default empty.
        public var adminToken = ""
        public init() {}
    }

    /// Address classes a source may resolve to, beyond public unicast addresses.
    public struct SourcePolicy: Sendable, Equatable {
        /// Allow 127.0.0.0/8 and ::1. Key `allow.loopbackSources`, default false.
        public var loopbackSources = false
        /// Allow private and link-local ranges. Key `allow.privateSources`, default false.
        public var privateSources = false
        /// Further address classes allowed by name: loopback, privateNetwork, linkLocal, unspecified,
        /// sharedCGNAT, multicast, reserved. Key `allow.addressClasses`, default none.
        public var addressClasses: [String] = []
        public init() {}
    }

    /// Origin download settings.
    public struct Fetch: Sendable, Equatable {
        /// Connect timeout in milliseconds. Key `fetch.connectTimeoutMs`, default 3000.
        public var connectTimeoutMilliseconds = OriginFetcher.Settings().connectTimeoutMilliseconds
        /// Whole-transfer timeout in milliseconds. Key `fetch.timeoutMs`, default 10000.
        public var timeoutMilliseconds = OriginFetcher.Settings().timeoutMilliseconds
        /// Largest source accepted, enforced while streaming. Key `fetch.maxSourceBytes`, default 25 MiB.
        public var maxSourceBytes = OriginFetcher.Settings().maxSourceBytes
        /// Transfers running at once. Key `fetch.concurrency`, default 16.
        public var concurrency = OriginFetcher.Settings().concurrency
        /// Bytes of aborted downloads kept in memory for resuming them. Key `fetch.resumeBytes`, default 64 MiB.
        public var resumeBytes = OriginFetcher.Settings().resumeBudgetBytes
        /// Redirects followed at most. Key `fetch.maxRedirects`, default 5.
        public var maxRedirects = OriginFetcher.Settings().maxRedirects
        /// Extra attempts after an origin 5xx, timeout or connection failure. Key `fetch.retries`, default 2.
        public var retries = OriginFetcher.Settings().retries
        /// Delay before the first retry in milliseconds, doubled each time. Key `fetch.retryBackoffMs`, default 200.
        public var retryBackoffMilliseconds = OriginFetcher.Settings().retryBackoffMilliseconds
        /// Fixed name resolutions `host:port:address` (libcurl's CURLOPT_RESOLVE), e.g. to pin an origin;
        /// the address policy still judges the address. Key `fetch.resolve`, default none.
        public var resolve: [String] = []
        /// Proxy for origin requests (`http://proxy:3128`); empty connects directly and ignores the
        /// environment's proxy variables. Key `fetch.proxy`, default empty.
        public var proxy = ""
        /// User-Agent sent to origins. Key `fetch.userAgent`, default `ImageProxy/0.1 (+https://github.com/imageproxy/imageproxy)`.
        public var userAgent = OriginFetcher.Settings().userAgent
        public init() {}
    }

    /// Decode, transform and encode settings.
    public struct Image: Sendable, Equatable {
        /// Largest output width or height. Key `image.maxDimension`, default 4096.
        public var maxDimension = 4096
        /// Largest source in pixels (width x height x frames), checked from the header. Key `image.maxSourcePixels`, default 40 MP.
        public var maxSourcePixels = ImageTransformer.Settings().maxSourcePixels
        /// Most frames kept from an animated source (the rest are dropped). Key `image.maxFrames`, default 100.
        public var maxFrames = ImageTransformer.Settings().maxFrames
        /// Most frames a source may have (counted from its container before any decode; more is a 422).
        /// Key `image.maxSourceFrames`, default 1000.
        public var maxSourceFrames = ImageTransformer.Settings().maxSourceFrames
        /// Longest a transform may take in milliseconds, then it is stopped (503); 0 = no limit.
        /// Key `image.maxTransformMs`, default 10000.
        public var maxTransformMilliseconds = ImageTransformer.Settings().maxTransformMilliseconds
        /// Bytes all running transforms may hold together, each job's working set estimated from its
        /// header before decoding; a job waits for its share (503 after `maxTransformMs`), one larger
        /// than the whole budget is 422; 0 = no budget. Key `image.maxTransformBytes`, default 384 MiB.
        public var maxTransformBytes = ImageTransformer.Settings().maxTransformBytes
        /// Transform threads; 0 means one per core. Key `image.workers`, default 0.
        public var workers = 0
        /// Whether `format=auto` may choose AVIF (about 3x the CPU of WebP). Key `image.autoAVIF`, default false.
        public var autoAVIF = false
        /// Default JPEG quality. Key `image.jpegQuality`, default 80.
        public var jpegQuality = EncodingSettings().jpegQuality
        /// Default WebP quality. Key `image.webpQuality`, default 80.
        public var webpQuality = EncodingSettings().webpQuality
        /// Default AVIF quality. Key `image.avifQuality`, default 55.
        public var avifQuality = EncodingSettings().avifQuality
        /// AVIF encoder effort 0 (fastest) .. 9 (smallest). Key `image.avifEffort`, default 2.
        public var avifEffort = EncodingSettings().avifEffort
        /// PNG zlib level 0..9. Key `image.pngCompression`, default 6.
        public var pngCompression = EncodingSettings().pngCompression
        public init() {}
    }

    /// Response header settings.
    public struct HTTP: Sendable, Equatable {
        /// `stale-while-revalidate` seconds added to image responses; 0 leaves it out.
        /// Key `http.staleWhileRevalidate`, default 0.
        public var staleWhileRevalidate = 0
        /// `Timing-Allow-Origin` value sent with every response (lets pages read Server-Timing
        /// cross-origin); empty sends none. Key `http.timingAllowOrigin`, default `*`.
        public var timingAllowOrigin = "*"
        /// Origins allowed to read `/img` and `/info` cross-origin (canvas, `fetch()`): `*` or exact
        /// origins (`https://app.example.com`); empty sends no CORS headers. Key `http.corsOrigins`, default empty.
        public var corsOrigins: [String] = []
        /// Read client hints (`Sec-CH-DPR`, `Sec-CH-Width`, `Sec-CH-Viewport-Width`, legacy `DPR`, `Width`,
        /// `Viewport-Width`) for requests without `w`/`dpr`, and send `Accept-CH`. Off by default: answers
        /// then vary on those headers, which splits shared caches. Key `http.clientHints`, default false.
        public var clientHints = false
        /// The widths a hinted width is rounded up to. Key `http.clientHintWidths`,
        /// default 160, 320, 480, 640, 750, 828, 1080, 1200, 1440, 1920, 2048, 2560, 3840.
        public var clientHintWidths = ClientHints.Policy.defaultWidths
        /// Quality for `Save-Data: on` requests without `q`; 0 ignores `Save-Data` (answers then do not
        /// vary on it). Key `http.saveDataQuality`, default 0.
        public var saveDataQuality = 0
        /// Send `Content-Disposition: inline; filename="<source name>.<ext>"` with images (a saved image
        /// gets its source's name and the right extension). Key `http.contentDisposition`, default false.
        public var contentDisposition = false
        public init() {}
    }

    /// Admission control: how much uncached work may wait, and how long a request may take.
    public struct Queue: Sendable, Equatable {
        /// Jobs waiting for a slot, per queue (downloads by source, transforms by variant; identical
        /// requests share one job). A request that needs a new job beyond it gets 503 with
        /// `Retry-After` at once. Key `queue.maxPending`, default 256.
        public var maxPending = 256
        /// Order of waiting jobs of the same priority. Key `queue.order`, default `fifo`.
        public var order = WorkQueueState.Order.fifo
        /// Milliseconds a request may take in all (queue, download, transform), then 504.
        /// Key `queue.requestTimeoutMs`, default 15000.
        public var requestTimeoutMilliseconds = 15_000
        public init() {}
    }

    /// Connection limits of the HTTP server.
    public struct Server: Sendable, Equatable {
        /// Milliseconds a connection may take to send its request headers, from connecting or from the
        /// end of the previous response (slowloris, idle keep-alive). Key `server.headerTimeoutMs`, default 10000.
        public var headerTimeoutMilliseconds = 10_000
        /// Milliseconds without any traffic before a connection is closed. Key `server.idleTimeoutMs`, default 60000.
        public var idleTimeoutMilliseconds = 60_000
        /// Open connections at most; beyond, new ones wait in the backlog. Key `server.maxConnections`, default 4096.
        public var maxConnections = 4096
        /// Largest request header block (request line included) in bytes. Key `server.maxHeaderBytes`, default 16384.
        public var maxHeaderBytes = 16_384
        /// Milliseconds a request body may take to arrive once its head is in (nginx's
        /// `client_body_timeout`); then the connection is closed. Key `server.bodyTimeoutMs`, default 10000.
        public var bodyTimeoutMilliseconds = 10_000
        /// Whether memory hits are answered from the connection's bytes in front of the HTTP decoder
        /// (off: every request goes through the decoder and the router; the answers are the same).
        /// Key `server.memoryHitFastPath`, default true.
        public var memoryHitFastPath = true
        public init() {}
    }

    /// Signed URLs and source restrictions.
    public struct Security: Sendable, Equatable {
        /// HMAC-SHA256 keys for signed URLs; when any is set, `/img` and `/info` need a valid `sig`.
        /// The first signs (`ImageProxy sign`), all verify (rotation). Key `signingKey`
        /// (`IMAGEPROXY_SIGNING_KEY`, comma-separated), default none.
        public var signingKeys: [String] = []
        /// Source host patterns allowed (`images.example.com`, `*.example.com`); empty allows any.
        /// Key `security.allowedHosts`, default empty.
        public var allowedHosts: [String] = []
        /// Per-origin request headers, `pattern=Name: value` (credentials for private origins), sent only
        /// to matching hosts, also after redirects. Key `security.originHeaders`, default empty.
        public var originHeaders: [String] = []
        public init() {}
    }

    /// Logging and metrics settings.
    public struct Observability: Sendable, Equatable {
        /// Log line format: `logfmt` or `json`. Key `log.format`, default `logfmt`.
        public var logFormat = "logfmt"
        /// Whether access log lines carry the full source URL (else only its host). Key `log.sourceUrls`, default false.
        public var logSourceURLs = false
        /// A separate `host:port` for `GET /metrics`; empty serves it on the main address.
        /// Key `metrics.bind`, default empty.
        public var metricsBind = ""
        /// Seconds per sample of the status page's charts (an hour of samples is kept).
        /// Key `status.sampleSeconds`, default 10.
        public var statusSampleSeconds = 10
        public init() {}
    }
}

extension ProxyConfiguration {
    /// Graceful shutdown: on SIGTERM `/ready` turns 503 at once, then after `drainDelay` the listener
    /// closes and in-flight requests finish; past `gracePeriod` (or on a second SIGTERM) the process exits.
    public struct Shutdown: Sendable, Equatable {
        /// Milliseconds between `/ready` turning 503 and the listener closing, so load balancers notice.
        /// Key `shutdown.drainDelayMs`, default 0.
        public var drainDelayMilliseconds = 0
        /// Milliseconds allowed for in-flight requests after SIGTERM before exiting anyway.
        /// Key `shutdown.gracePeriodMs`, default 25000.
        public var gracePeriodMilliseconds = 25_000
        public init() {}
    }
}

/// A `host:port` pair to listen on.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, `[v6]:port` or `:port` (all interfaces); nil when malformed.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
