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
    /// Origin downloads: the fetcher's own settings (`fetch.*`, and `allow.*`, `security.allowedHosts`,
    /// `security.originHeaders`, which say what it may fetch and with which credentials).
    public var fetch = OriginFetcher.Settings()
    /// Decode, transform and encode settings.
    public var image = Image()
    /// Response header settings.
    public var http = ResponseSettings()
    /// Graceful shutdown settings.
    public var shutdown = Shutdown()
    /// Logging and metrics settings.
    public var observability = Observability()
    /// OpenTelemetry traces (`tracing.*`); off by default.
    public var tracing = TracingSettings()
    /// Signed URLs.
    public var security = Security()
    /// Connection limits of the HTTP server.
    public var server = ConnectionSettings()
    /// Admission control of uncached work.
    public var queue = Queue()
    /// Named sets of `/img` parameters (`presets.<name>: "w=300&h=300&fit=cover"`, from the file only) and
    /// whether requests may use only them (`http.presetsOnly`, default false). Default: none.
    public var presets = PresetTable.none
    /// Named watermark images (`overlays.<name>.*`, from the file only) and whether requests may give
    /// their own (`overlays.allowUrl`) or text (`overlays.allowText`); both off by default.
    public var overlays = OverlayCatalog.none
    /// Other image proxies' URL dialects answered beside the native API (`compat.*`); all off by default.
    public var compat = CompatibilitySettings()
    /// Deprecated spellings the configuration was given in (logged as warnings at start).
    public var deprecations: [String] = []

    /// Creates the embedded defaults.
    public init() {}

    /// Cache settings: the tiers' own settings, the freshness rules, and what the service adds.
    public struct Cache: Sendable, Equatable {
        /// The memory tier (`cache.memoryBytes`).
        public var memory = MemoryCache.Settings()
        /// The disk tier (`cache.dir`, `cache.diskBytes`, `cache.staleRetention`).
        public var disk = DiskCache.Settings()
        /// The fleet's shared result tier in an S3-compatible bucket (`cache.shared.*`); off by default.
        public var shared = SharedTier.Settings()
        /// Remembered origin failures (`cache.negativeTtl`, `cache.errorTtl`).
        public var negative = NegativeCache.Settings()
        /// Lifetimes of origin answers (`cache.defaultTtl`, `cache.minTtl`, `cache.maxTtl`).
        public var freshness = FreshnessPolicy()
        /// Which downloaded originals go to disk: `always`, `repeat` (a source's second download within
        /// the last 100000 sources) or `never`. Key `cache.storeOriginals`, default `repeat`.
        public var storeOriginals = OriginalAdmission.Policy.repeat
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

    /// Decode, transform and encode settings: the transformer's own, and what the service adds.
    public struct Image: Sendable, Equatable {
        /// Source limits, transform budget and encoder defaults (`image.maxSourcePixels`, `image.maxFrames`,
        /// `image.maxSourceFrames`, `image.maxTransformMs`, `image.maxTransformBytes`, `image.*Quality`,
        /// `image.avifEffort`, `image.pngCompression`).
        public var transformer = ImageTransformer.Settings()
        /// Largest output width or height: `w` and `h` above it are a 400, and a side derived from the
        /// source's aspect ratio is held to it (the transformer's `maxOutputDimension`, one value). Key
        /// `image.maxDimension`, default 4096.
        public var maxDimension: Int {
            get { transformer.maxOutputDimension }
            set { transformer.maxOutputDimension = newValue }
        }
        /// Transform threads; 0 means one per core. Key `image.workers`, default 0.
        public var workers = 0
        /// Bytes of whole decodes of PNG, GIF and WebP sources kept for their next variants (one decode for
        /// a srcset), inside `image.maxTransformBytes` (running transforms take it back first); 0 keeps
        /// none. Key `image.decodedSourceBytes`, default 134217728 (128 MiB).
        public var decodedSourceBytes = 134_217_728
        /// Seconds a kept decode nobody uses stays. Key `image.decodedSourceSeconds`, default 20.
        public var decodedSourceSeconds = 20
        /// Whether `format=auto` may choose AVIF (about 3x the CPU of WebP). Key `image.autoAVIF`, default false.
        public var autoAVIF = false
        /// Whether `format=auto` may choose JPEG XL, ahead of AVIF, for clients whose `Accept` names
        /// `image/jxl` (Safari 17+). Off until browsers broadly send it. Key `image.autoJXL`, default false.
        public var autoJXL = false
        /// `colour` for requests that give none: `srgb` converts every source to sRGB, `keep` keeps a
        /// wide-gamut source in its own space with its profile. Key `image.colour`, default `srgb`.
        public var colour = ColourHandling.srgb
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
        /// The share, in percent, of the transform slots one source host may hold while another host's
        /// transform waits (100: no share). Work-conserving: alone, a host uses every slot. Key
        /// `queue.sourceHostSharePercent`, default 50.
        public var sourceHostSharePercent = 50
        public init() {}
    }

    /// Signed URLs (the source restrictions are the fetcher's: ``OriginFetcher/Settings``).
    public struct Security: Sendable, Equatable {
        /// HMAC-SHA256 keys for signed URLs; when any is set, `/img` and `/info` need a valid `sig`.
        /// The first signs (`ImageProxy sign`), all verify (rotation). Key `signingKey`
        /// (`IMAGEPROXY_SIGNING_KEY`, comma-separated), default none.
        public var signingKeys: [String] = []
        /// Start on a public listen address with neither a signing key nor a source allowlist (or in
        /// presets-only mode without an allowlist): an open image proxy, on purpose. Key
        /// `security.allowOpenProxy`, default false (such a start is refused, ``AccessMode/of(_:)``).
        public var allowOpenProxy = false
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
