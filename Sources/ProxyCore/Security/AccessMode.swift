import ProxyEngine

/// Who can make this deployment fetch and transform, decided once at start from the listen address, the
/// signing keys, the source allowlist, presets-only mode and `security.allowOpenProxy`.
///
/// A server that listens beyond loopback with neither a key nor an allowlist is an image proxy for every
/// public host on the internet (every source, every size, anyone's CPU): ``of(_:)`` refuses that unless
/// the operator says `security.allowOpenProxy: true`. In presets-only mode unsigned requests are answered
/// (a key verifies only the URLs that carry a `sig`), so there only an allowlist or the explicit setting
/// will do. A URL dialect that is on counts as signed only with its keys (`compat.imgproxy.keys`,
/// `compat.thumbor.securityKey`) and without thumbor's `unsafe/` URLs. The mode is shown on the status page and as `imageproxy_access_mode{mode}`.
public enum AccessMode: String, Sendable, CaseIterable {
    /// Every request signed (`security.signingKeys`), any source.
    case signed
    /// Sources only from `security.allowedHosts`.
    case allowlist
    /// Signed requests, and sources only from the allowlist.
    case signedAllowlist = "signed_allowlist"
    /// Neither, listening on loopback only: reachable from this machine alone (the README's run command).
    case localOnly = "local_only"
    /// Neither, on a public address, because `security.allowOpenProxy` says so.
    case open

    /// What the status page says of the mode.
    public var summary: String {
        switch self {
        case .signed: "signed URLs only"
        case .allowlist: "sources from security.allowedHosts only"
        case .signedAllowlist: "signed URLs, sources from security.allowedHosts only"
        case .localOnly: "open, but listening on loopback only"
        case .open: "OPEN PROXY: any source for anyone (security.allowOpenProxy)"
        }
    }

    /// The mode of `configuration`.
    /// - Throws: ``ConfigurationError`` naming the three ways out, for a public listen address with no key
    ///   (or presets-only mode) and no allowlist, unless `security.allowOpenProxy` is on.
    public static func of(_ configuration: ProxyConfiguration) throws(ConfigurationError) -> AccessMode {
        let presetsOnly = configuration.presets.presetsOnly
        let signed = !configuration.security.signingKeys.filter { !$0.isEmpty }.isEmpty && !presetsOnly
            && configuration.compat.everyDialectSigned
        let listed = !configuration.fetch.allowlist.patterns.isEmpty
        switch (signed, listed) {
        case (true, true): return .signedAllowlist
        case (true, false): return .signed
        case (false, true): return .allowlist
        case (false, false): break
        }
        if isLoopback(configuration.bind.host) { return .localOnly }
        if configuration.security.allowOpenProxy { return .open }
        let names = ["signingKey", "security.allowedHosts", "security.allowOpenProxy"].map(Self.named)
        if presetsOnly {
            throw ConfigurationError(
                "refusing to start: listening on \(configuration.bind) in presets-only mode (http.presetsOnly) with no source "
                    + "allowlist answers unsigned requests for any public host's images. Set \(names[1]) to the hosts your "
                    + "images come from, or \(names[2]): true if an open proxy is what you mean")
        }
        if !configuration.compat.everyDialectSigned {
            throw ConfigurationError(
                "refusing to start: listening on \(configuration.bind) with a URL dialect that takes unsigned URLs (compat.imgproxy "
                    + "without keys, or compat.thumbor without a securityKey or with allowUnsafe) and no source allowlist makes this an "
                    + "open image proxy for every public host. Sign the dialect's URLs, or set \(names[1]), or \(names[2]): true if an "
                    + "open proxy is what you mean")
        }
        throw ConfigurationError(
            "refusing to start: listening on \(configuration.bind) with neither a signing key nor a source allowlist makes "
                + "this an open image proxy for every public host. Set one of: \(names[0]) (sign your URLs: "
                + "ImageProxy sign), \(names[1]) (the hosts your images come from), or \(names[2]): true if an open "
                + "proxy is what you mean")
    }

    /// Whether `host` (a listen address) reaches this machine alone: `localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let parts = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in UInt8(part) != nil }
    }

    /// A key with its environment variable: `security.allowOpenProxy (IMAGEPROXY_SECURITY_ALLOW_OPEN_PROXY)`.
    static func named(_ key: String) -> String {
        let environment = ProxyConfiguration.settings.first { $0.key == key }?.environmentName
        return environment.map { "\(key) (\($0))" } ?? key
    }
}
