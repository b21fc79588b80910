import CCurlShim
import Foundation
import ImageCore
import Logging

/// Downloads sources with libcurl: http(s) only (redirects too), bounded redirects, connect and total
/// timeouts, a size limit enforced while streaming, and the ``AddressPolicy`` applied to every address
/// libcurl connects to (`CURLOPT_OPENSOCKETFUNCTION`), redirects included. `s3://` sources are read
/// from the operator's endpoint (``S3Sources``), signed with AWS Signature V4 by libcurl, through the
/// same queue, limits, conditional requests and retries; only listed buckets, no redirects.
///
/// Every transfer runs on one libcurl multi handle (``CurlMultiDriver``): one thread, shared
/// keep-alive connections. How many run at once is the download queue's business (`fetch.concurrency`).
/// Cancelling the calling task aborts the transfer (and keeps its beginning for resuming).
public final class OriginFetcher: Sendable {
    /// What a fetcher needs to know; the defaults are the service's (`config/imageproxy.yaml`).
    public struct Settings: Sendable, Equatable {
        /// Which address classes sources may resolve to beyond public unicast ones. Default: none
        /// (loopback, private and the other special classes refused).
        public var policy = AddressPolicy()
        /// Milliseconds to establish a connection. Default 3000.
        public var connectTimeoutMilliseconds = 3_000
        /// Milliseconds for a whole download. Default 10000.
        public var timeoutMilliseconds = 10_000
        /// Largest source, enforced while streaming. Default 25 MiB.
        public var maxSourceBytes = 25 * 1024 * 1024
        /// Redirects followed at most. Default 5.
        public var maxRedirects = 5
        /// Downloads running at once. Default 16.
        public var concurrency = 16
        /// `User-Agent` sent to origins. Default `ImageProxy/0.1 (+https://github.com/imageproxy/imageproxy)`.
        public var userAgent = "ImageProxy/0.1 (+https://github.com/imageproxy/imageproxy)"
        /// Extra attempts after a 5xx, a timeout or a failed connection. Default 2.
        public var retries = 2
        /// Milliseconds before the first retry, doubled for each further one. Default 200.
        public var retryBackoffMilliseconds = 200
        /// Hosts sources (and their redirects) may come from. Default empty: any host.
        public var allowlist = HostAllowlist(patterns: [])
        /// Extra request headers sent only to matching hosts, also after redirects (per-origin
        /// credentials). Default none.
        public var originHeaders: [OriginHeader] = []
        /// Proxy URL for origin requests (`http://proxy:3128`). Default empty: connect directly, ignoring
        /// the environment's proxy variables.
        public var proxy = ""
        /// Fixed resolutions `host:port:address` (libcurl's CURLOPT_RESOLVE), e.g. to pin an origin; the
        /// address policy still judges the address. Default none.
        public var resolve: [String] = []
        /// Bytes of interrupted downloads kept for resuming them; 0 turns resuming off. Default 64 MiB.
        public var resumeBudgetBytes = 64 * 1024 * 1024
        /// `s3://` sources (`sources.s3.*`). Default: none allowed.
        public var s3 = S3Sources()

        public init() {}
    }

    private let settings: Settings
    private let policyBox: PolicyBox
    /// The S3 endpoint is the operator's: every address it resolves to may be connected to.
    private let endpointPolicyBox = PolicyBox(AddressPolicy(allowLoopback: true, allowPrivate: true, extraClasses: Set(AddressPolicy.AddressClass.allCases)))
    private let driver: CurlMultiDriver
    let partials: PartialDownloads
    private let logger: Logger
    private let metrics: ProxyMetrics?

    /// Creates a fetcher; call ``start()`` before fetching and ``shutdown()`` at the end.
    public init(settings: Settings, logger: Logger, metrics: ProxyMetrics? = nil) {
        _ = Self.globalInit
        self.metrics = metrics
        self.settings = settings
        self.policyBox = PolicyBox(settings.policy)
        self.driver = CurlMultiDriver()
        self.partials = PartialDownloads(budget: settings.resumeBudgetBytes)
        self.logger = logger
    }

    private static let globalInit: Void = { _ = ipx_curl_global_init() }()

    /// Aborts what still runs and stops the transfer thread.
    public func shutdown() async throws { await driver.shutdown() }

    /// Sent with every origin request, so that a source pointing back at an image proxy is recognised there.
    public static let hopHeader = "X-ImageProxy-Hop"

    /// Downloads `source` completely; with `validators` the request is conditional and may answer 304
    /// (``FetchedSource/status`` tells). Origin 5xx, timeouts and failed connections are retried
    /// `retries` times with exponential backoff.
    /// - Throws: ``FetchError``, or `CancellationError` when the calling task is cancelled.
    /// - Parameter headers: further request header lines (the trace context, `traceparent`), sent to every hop.
    public func fetch(_ source: SourceURL, validators: OriginValidators? = nil, headers: [String] = []) async throws -> FetchedSource {
        let settings = self.settings
        let metrics = self.metrics
        let url: String
        if let object = source.object {
            url = try settings.s3.url(of: object).get()
        } else {
            guard settings.allowlist.allows(source.host) else { throw FetchError.refused("its host is not allowed") }
            url = source.absoluteString
        }
        let started = ContinuousClock.now
        var attempt = 0
        while true {
            let transfer = OriginTransfer(
                url: url, settings: settings, policyBox: source.object == nil ? policyBox : endpointPolicyBox, driver: driver,
                partials: partials, validators: validators, s3: source.object == nil ? nil : settings.s3.endpoint, extraHeaderLines: headers)
            let result: Result<FetchedSource, FetchError>
            do {
                result = try await transfer.perform()
            } catch {
                metrics?.recordOrigin(result: "aborted", duration: ContinuousClock.now - started, bytes: 0)
                logger.debug("origin fetch aborted", metadata: ["host": "\(source.host)"])
                throw error
            }
            switch result {
            case .success(let fetched):
                metrics?.recordOrigin(
                    result: fetched.status == 304 ? "not_modified" : "ok", duration: ContinuousClock.now - started,
                    bytes: fetched.body.count - fetched.resumedFrom)
                return fetched
            case .failure(let error):
                guard error.isTransient, attempt < settings.retries else {
                    metrics?.recordOrigin(result: error.reason, duration: ContinuousClock.now - started, bytes: 0)
                    logger.debug("origin fetch failed", metadata: ["host": "\(source.host)", "reason": "\(error.reason)"])
                    if error == .accessDenied, let object = source.object {
                        // The operator's credentials or bucket policy: worth a warning, naming the bucket only.
                        logger.warning("s3 access denied", metadata: ["bucket": "\(object.bucket)"])
                    }
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
