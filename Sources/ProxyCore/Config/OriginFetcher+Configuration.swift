import ProxyEngine

extension OriginFetcher.Settings {
    /// Takes the fetch-related parts of the service configuration.
    public init(_ configuration: ProxyConfiguration) {
        self.init()
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
        resumeBudgetBytes = configuration.fetch.resumeBytes
    }
}
