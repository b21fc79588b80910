import Foundation
import ImageCore

/// Turns an origin's caching headers into how long the service may reuse its answer.
///
/// Shared-cache rules: `s-maxage` over `max-age` over `Expires - Date`; `no-store` and `private` are not
/// stored; `no-cache` is stored but stale at once (revalidated on each use); nothing → `defaultTTL`.
/// Lifetimes are clamped to `minTTL...maxTTL`, except that `no-cache`, `must-revalidate` and
/// `proxy-revalidate` are never lengthened by `minTTL` (the origin asked to be consulted).
///
/// The policy is its own settings value; `FreshnessPolicy()` gives the service's defaults.
public struct FreshnessPolicy: Sendable, Equatable {
    /// Seconds of freshness when the origin gives none. Default 86400 (a day).
    public var defaultTTL: Int
    /// Shortest lifetime given to an origin's answer, in seconds. Default 60.
    public var minTTL: Int
    /// Longest lifetime given to an origin's answer, in seconds (never below `minTTL`). Default 31536000 (a year).
    public var maxTTL: Int

    /// A policy (a `maxTTL` below `minTTL` acts as `minTTL`: ``upperBound``).
    public init(defaultTTL: Int = 86_400, minTTL: Int = 60, maxTTL: Int = 31_536_000) {
        self.defaultTTL = defaultTTL
        self.minTTL = minTTL
        self.maxTTL = maxTTL
    }

    /// The verdict for one origin response.
    public struct Verdict: Sendable, Equatable {
        /// Whether the answer may be kept (and shared).
        public var storable: Bool
        /// Seconds it stays fresh (0 when not storable).
        public var lifetime: Int
        /// What reusing it takes.
        public var revalidation: Revalidation

        public init(storable: Bool, lifetime: Int, revalidation: Revalidation = .none) {
            self.storable = storable
            self.lifetime = lifetime
            self.revalidation = revalidation
        }
    }

    /// The longest lifetime given: `maxTTL`, raised to `minTTL` when set below it.
    var upperBound: Int { max(minTTL, maxTTL) }

    /// Judges a response from its header fields (lower-case names).
    public func verdict(cacheControl: String?, expires: String?, date: String?, now: Date = Date()) -> Verdict {
        let directives = Self.directives(cacheControl)
        if directives["no-store"] != nil || directives["private"] != nil {
            return Verdict(storable: false, lifetime: 0)
        }
        if directives["no-cache"] != nil {
            return Verdict(storable: true, lifetime: 0, revalidation: .always)
        }
        let lifetime: Int
        if let value = directives["s-maxage"].flatMap({ $0.flatMap { Int($0) } }) {
            lifetime = value
        } else if let value = directives["max-age"].flatMap({ $0.flatMap { Int($0) } }) {
            lifetime = value
        } else if let expires {
            let reference = date.flatMap(Self.parseHTTPDate) ?? now
            lifetime = Self.parseHTTPDate(expires).map { Int($0.timeIntervalSince(reference)) } ?? 0
        } else {
            lifetime = defaultTTL
        }
        if directives["must-revalidate"] != nil || directives["proxy-revalidate"] != nil {
            return Verdict(storable: true, lifetime: min(max(lifetime, 0), upperBound), revalidation: .whenStale)
        }
        return Verdict(storable: true, lifetime: min(max(lifetime, minTTL), upperBound))
    }

    /// `Cache-Control` directives, names lower-cased, values unquoted.
    static func directives(_ header: String?) -> [String: String?] {
        guard let header else { return [:] }
        var result: [String: String?] = [:]
        for item in header.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = parts.first?.lowercased(), !name.isEmpty else { continue }
            result[name] = parts.count > 1 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
        }
        return result
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); nil for anything else (treated as expired).
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
