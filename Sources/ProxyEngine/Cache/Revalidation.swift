import ImageCore

/// What the origin's `Cache-Control` asks of a cache reusing its answer, kept with every entry made
/// from it and passed on to clients.
public enum Revalidation: String, Sendable, Codable, Equatable {
    /// Reused while fresh; `cache.minTtl` may lengthen the freshness, `stale-while-revalidate` is sent.
    case none
    /// `must-revalidate` or `proxy-revalidate`: never reused once stale (not even for `only-if-cached`),
    /// `cache.minTtl` does not lengthen the freshness, clients get `must-revalidate` and no
    /// `stale-while-revalidate`.
    case whenStale
    /// `no-cache`: stored, but the origin is asked (a conditional GET when it gave validators) before
    /// every reuse, and clients get `no-cache`.
    case always
}
