import Crypto
import Foundation

/// thumbor's URL signatures: URL-safe base64 (with padding) of HMAC-SHA1(security key, the path after the
/// signature and its `/`), as libthumbor makes them.
public struct ThumborSigner: Sendable {
    private let key: [UInt8]

    /// Nil when no key is configured (only `unsafe/` URLs can then be served, if allowed).
    public init?(securityKey: String) {
        guard !securityKey.isEmpty else { return nil }
        key = Array(securityKey.utf8)
    }

    /// The signature of `path` (`300x200/smart/example.com/a.jpg`).
    public func signature(of path: String) -> String {
        let code = HMAC<Insecure.SHA1>.authenticationCode(for: Array(path.utf8), using: SymmetricKey(data: key))
        return Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// Whether `signature` signs `path` (compared in constant time).
    public func verify(signature: String, path: String) -> Bool {
        let base64 = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard signature.utf8.count <= 64, let given = Data(base64Encoded: base64) else { return false }
        return HMAC<Insecure.SHA1>.isValidAuthenticationCode(given, authenticating: Array(path.utf8), using: SymmetricKey(data: key))
    }
}
