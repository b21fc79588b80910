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

    /// Creates the embedded defaults.
    public init() {}

    /// Cache settings.
    public struct Cache: Sendable, Equatable {
        /// Folder of the disk cache. Key `cache.dir`, default `./cache`.
        public var directory: String = "./cache"
        /// Bytes of encoded variants kept in memory. Key `cache.memoryBytes`, default 256 MiB.
        public var memoryBytes: Int = 256 * 1024 * 1024
        public init() {}
    }

    /// Address classes a source may resolve to, beyond public unicast addresses.
    public struct SourcePolicy: Sendable, Equatable {
        /// Allow 127.0.0.0/8 and ::1. Key `allow.loopbackSources`, default false.
        public var loopbackSources = false
        /// Allow private and link-local ranges. Key `allow.privateSources`, default false.
        public var privateSources = false
        public init() {}
    }

    /// Origin download settings.
    public struct Fetch: Sendable, Equatable {
        /// Connect timeout in milliseconds. Key `fetch.connectTimeoutMs`, default 3000.
        public var connectTimeoutMilliseconds = 3000
        /// Whole-transfer timeout in milliseconds. Key `fetch.timeoutMs`, default 10000.
        public var timeoutMilliseconds = 10_000
        /// Largest source accepted, enforced while streaming. Key `fetch.maxSourceBytes`, default 25 MiB.
        public var maxSourceBytes = 25 * 1024 * 1024
        /// Transfers running at once. Key `fetch.concurrency`, default 16.
        public var concurrency = 16
        /// Redirects followed at most. Key `fetch.maxRedirects`, default 5.
        public var maxRedirects = 5
        /// User-Agent sent to origins. Key `fetch.userAgent`.
        public var userAgent = "ImageProxy/0.1 (+https://github.com/imageproxy/imageproxy)"
        public init() {}
    }

    /// Decode, transform and encode settings.
    public struct Image: Sendable, Equatable {
        /// Largest output width or height. Key `image.maxDimension`, default 4096.
        public var maxDimension = 4096
        /// Largest source in pixels (width x height x frames), checked from the header. Key `image.maxSourcePixels`, default 40 MP.
        public var maxSourcePixels = 40_000_000
        /// Transform threads; 0 means one per core. Key `image.workers`, default 0.
        public var workers = 0
        /// Whether `format=auto` may choose AVIF (about 3x the CPU of WebP). Key `image.autoAVIF`, default false.
        public var autoAVIF = false
        /// Default JPEG quality. Key `image.jpegQuality`, default 80.
        public var jpegQuality = 80
        /// Default WebP quality. Key `image.webpQuality`, default 80.
        public var webpQuality = 80
        /// Default AVIF quality. Key `image.avifQuality`, default 55.
        public var avifQuality = 55
        /// AVIF encoder effort 0 (fastest) .. 9 (smallest). Key `image.avifEffort`, default 2.
        public var avifEffort = 2
        /// PNG zlib level 0..9. Key `image.pngCompression`, default 6.
        public var pngCompression = 6
        public init() {}
    }

    /// Response header settings.
    public struct HTTP: Sendable, Equatable {
        /// `max-age` of successful image responses, in seconds. Key `http.maxAge`, default 86400.
        public var maxAgeSeconds = 86_400
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
