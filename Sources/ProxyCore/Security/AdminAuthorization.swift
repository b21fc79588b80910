import Crypto
import Hummingbird
import ImageCore
import ProxyEngine

/// The admin credential check: `Authorization: Bearer <cache.adminToken>`, compared in constant time.
enum AdminAuthorization {
    /// Whether `request` carries the admin token; always false when no token is configured.
    static func allows(_ request: Request, token: String) -> Bool {
        guard !token.isEmpty else { return false }
        let given = request.headers[.authorization] ?? ""
        let expected = "Bearer " + token
        // Constant-time comparison of digests (the lengths of the inputs do not leak either).
        return SHA256.hash(data: Array(given.utf8)) == SHA256.hash(data: Array(expected.utf8))
    }
}
