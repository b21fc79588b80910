import CCurlShim
import Foundation
import Logging
import NIOPosix

/// Downloads sources with libcurl: http(s) only (redirects too), bounded redirects, connect and total
/// timeouts, a size limit enforced while streaming, and the ``AddressPolicy`` applied to every address
/// libcurl connects to (`CURLOPT_OPENSOCKETFUNCTION`), redirects included.
///
/// Transfers run on a dedicated thread pool of `concurrency` threads, never on the event loops.
public final class OriginFetcher: Sendable {
    /// What a fetcher needs to know.
    public struct Settings: Sendable {
        public var policy: AddressPolicy
        public var connectTimeoutMilliseconds: Int
        public var timeoutMilliseconds: Int
        public var maxSourceBytes: Int
        public var maxRedirects: Int
        public var concurrency: Int
        public var userAgent: String
        /// Extra attempts after a 5xx, a timeout or a failed connection.
        public var retries: Int
        /// Delay before the first retry, doubled for each further one.
        public var retryBackoffMilliseconds: Int
        /// Hosts sources (and their redirects) may come from.
        public var allowlist: HostAllowlist
        /// Extra request headers for matching hosts only (per-origin credentials).
        public var originHeaders: [OriginHeader]
        /// Proxy URL for origin requests; empty connects directly (environment proxies are ignored).
        public var proxy: String
        /// Fixed resolutions `host:port:address` (CURLOPT_RESOLVE).
        public var resolve: [String]

        /// Takes the fetch-related parts of the service configuration.
        public init(_ configuration: ProxyConfiguration) {
            policy = AddressPolicy(
                allowLoopback: configuration.allow.loopbackSources, allowPrivate: configuration.allow.privateSources,
                extraClasses: Set(configuration.allow.addressClasses.compactMap(AddressPolicy.AddressClass.init(rawValue:))))
            resolve = configuration.fetch.resolve
            connectTimeoutMilliseconds = configuration.fetch.connectTimeoutMilliseconds
            timeoutMilliseconds = configuration.fetch.timeoutMilliseconds
            maxSourceBytes = configuration.fetch.maxSourceBytes
            maxRedirects = configuration.fetch.maxRedirects
            concurrency = configuration.fetch.concurrency
            userAgent = configuration.fetch.userAgent
            retries = configuration.fetch.retries
            retryBackoffMilliseconds = configuration.fetch.retryBackoffMilliseconds
            allowlist = HostAllowlist(patterns: configuration.security.allowedHosts)
            originHeaders = configuration.security.originHeaders.compactMap(OriginHeader.init(parsing:))
            proxy = configuration.fetch.proxy
        }
    }

    private let settings: Settings
    private let policyBox: PolicyBox
    private let threadPool: NIOThreadPool
    private let logger: Logger
    private let metrics: ProxyMetrics?

    /// Creates a fetcher; call ``start()`` before fetching and ``shutdown()`` at the end.
    public init(settings: Settings, logger: Logger, metrics: ProxyMetrics? = nil) {
        _ = Self.globalInit
        self.metrics = metrics
        self.settings = settings
        self.policyBox = PolicyBox(settings.policy)
        self.threadPool = NIOThreadPool(numberOfThreads: settings.concurrency)
        self.logger = logger
    }

    private static let globalInit: Void = { _ = ipx_curl_global_init() }()

    /// Starts the transfer threads.
    public func start() { threadPool.start() }

    /// Stops the transfer threads once running transfers finish.
    public func shutdown() async throws { try await threadPool.shutdownGracefully() }

    /// Sent with every origin request, so that a source pointing back at an image proxy is recognised there.
    public static let hopHeader = "X-ImageProxy-Hop"

    /// Downloads `source` completely; with `validators` the request is conditional and may answer 304
    /// (``FetchedSource/status`` tells). Origin 5xx, timeouts and failed connections are retried
    /// `retries` times with exponential backoff.
    /// - Throws: ``FetchError``.
    public func fetch(_ source: SourceURL, validators: OriginValidators? = nil) async throws -> FetchedSource {
        let settings = self.settings
        let policyBox = self.policyBox
        let metrics = self.metrics
        guard settings.allowlist.allows(source.host) else { throw FetchError.refused("its host is not allowed") }
        let started = ContinuousClock.now
        var attempt = 0
        while true {
            let queuedAt = metrics?.queuedJob(.fetch)
            let result = try await threadPool.runIfActive {
                if let queuedAt { metrics?.startedJob(.fetch, queuedAt: queuedAt) }
                defer { metrics?.finishedJob(.fetch) }
                return OriginTransfer(url: source.absoluteString, settings: settings, policyBox: policyBox, validators: validators)
                    .perform()
            }
            switch result {
            case .success(let fetched):
                metrics?.recordOrigin(
                    result: fetched.status == 304 ? "not_modified" : "ok", duration: ContinuousClock.now - started,
                    bytes: fetched.body.count)
                return fetched
            case .failure(let error):
                guard error.isTransient, attempt < settings.retries else {
                    metrics?.recordOrigin(result: error.reason, duration: ContinuousClock.now - started, bytes: 0)
                    logger.debug("origin fetch failed", metadata: ["host": "\(source.host)", "reason": "\(error.reason)"])
                    throw error
                }
                let delay = settings.retryBackoffMilliseconds << attempt
                attempt += 1
                logger.debug("origin fetch retry", metadata: ["host": "\(source.host)", "attempt": "\(attempt)"])
                try await Task.sleep(for: .milliseconds(delay))
            }
        }
    }
}

/// Holds the policy at a stable address for the C open-socket callback.
final class PolicyBox: Sendable {
    let policy: AddressPolicy
    init(_ policy: AddressPolicy) { self.policy = policy }
}
