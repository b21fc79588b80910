import ImageCore

/// `Cache-Control: only-if-cached` asked for something the caches do not hold: 504, as RFC 9111 says.
public struct CacheMissError: PublicError {
    public init() {}
    public var httpStatus: Int { 504 }
    public var publicMessage: String { "not in the cache (the request said only-if-cached)" }
    public var reason: String { "not_cached" }
}
