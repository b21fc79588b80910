import Crypto
import Foundation
import ImageCore
import ProxyEngine

/// Signed URLs: `sig`, the last query parameter, is base64url (no padding) of
/// HMAC-SHA256(key, the request path and query exactly as sent, up to `&sig=`).
/// Several keys allow rotation: the first signs, any verifies.
public struct URLSigner: Sendable {
    private let keys: [[UInt8]]

    /// Nil when no key is configured (signatures are then not required).
    public init?(keys: [String]) {
        let usable = keys.filter { !$0.isEmpty }
        guard !usable.isEmpty else { return nil }
        self.keys = usable.map { Array($0.utf8) }
    }

    /// Appends `&sig=...` to a path and query (`/img?url=...&w=300`).
    public func sign(_ pathAndQuery: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(pathAndQuery.utf8), using: SymmetricKey(data: keys[0]))
        return pathAndQuery + "&sig=" + Self.base64URL(Data(code))
    }

    /// Checks the request target as sent (path and query).
    /// - Throws: ``SignatureError`` (403) when `sig` is missing, not last, or wrong for every key.
    public func verify(_ requestTarget: String) throws(SignatureError) {
        guard let marker = requestTarget.range(of: "&sig=", options: .backwards) else { throw .missing }
        let signature = requestTarget[marker.upperBound...]
        guard !signature.contains("&"), let code = Self.decodeBase64URL(String(signature)) else { throw .invalid }
        let message = Array(requestTarget[..<marker.lowerBound].utf8)
        // isValidAuthenticationCode compares in constant time.
        guard keys.contains(where: { HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: message, using: SymmetricKey(data: $0)) }) else {
            throw .invalid
        }
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// A missing or wrong URL signature: 403.
public enum SignatureError: PublicError, Equatable {
    case missing
    case invalid
    /// `/info` in presets-only mode, where only a signed URL may ask (and no key is configured to sign one).
    case infoNeedsSignature

    public var httpStatus: Int { 403 }
    public var publicMessage: String {
        switch self {
        case .missing: "signature required: add sig (HMAC-SHA256 of the path and query) as the last parameter"
        case .invalid: "invalid signature"
        case .infoNeedsSignature:
            "signature required: /info answers only signed URLs when http.presetsOnly is on (security.signingKeys signs them)"
        }
    }
    public var reason: String { "bad_signature" }
}
