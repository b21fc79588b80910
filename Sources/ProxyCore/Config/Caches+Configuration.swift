import ProxyEngine

extension MemoryCache.Settings {
    /// Takes `cache.memoryBytes`.
    public init(_ cache: ProxyConfiguration.Cache) {
        self.init()
        capacityBytes = cache.memoryBytes
    }
}

extension DiskCache.Settings {
    /// Takes `cache.dir`, `cache.diskBytes` and `cache.staleRetention`.
    public init(_ cache: ProxyConfiguration.Cache) {
        self.init()
        directory = cache.directory
        capacityBytes = cache.diskBytes
        staleRetentionSeconds = cache.staleRetention
    }
}

extension NegativeCache.Settings {
    /// Takes `cache.negativeTtl` and `cache.errorTtl`.
    public init(_ cache: ProxyConfiguration.Cache) {
        self.init()
        negativeTTL = cache.negativeTTL
        errorTTL = cache.errorTTL
    }
}

extension FreshnessPolicy {
    /// Takes `cache.defaultTtl`, `cache.minTtl` and `cache.maxTtl`.
    public init(_ cache: ProxyConfiguration.Cache) {
        self.init(defaultTTL: cache.defaultTTL, minTTL: cache.minTTL, maxTTL: cache.maxTTL)
    }
}
