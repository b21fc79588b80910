import Crypto
import Foundation

/// imgproxy's URL signatures: URL-safe base64 (no padding) of HMAC-SHA256(key, salt + the path after
/// the signature), both given in hex, the digest cut to `signatureSize` bytes when that is below 32.
/// Several key/salt pairs verify (rotation), the first signs.
public struct ImgproxySigner: Sendable {
    private let pairs: [(key: [UInt8], salt: [UInt8])]
    /// Bytes of the digest that the signature carries (1...32).
    public let signatureSize: Int

    /// Nil when no key is given (imgproxy then checks no signature).
    /// - Throws: ``ConfigurationError`` for keys or salts that are not hex, or unequal counts.
    public init?(keys: [String], salts: [String], signatureSize: Int = 32) throws(ConfigurationError) {
        let usableKeys = keys.filter { !$0.isEmpty }
        guard !usableKeys.isEmpty else { return nil }
        let usableSalts = salts.filter { !$0.isEmpty }
        guard usableKeys.count == usableSalts.count else {
            throw ConfigurationError(
                "compat.imgproxy.keys and compat.imgproxy.salts (IMGPROXY_KEY, IMGPROXY_SALT) must come in pairs: "
                    + "\(usableKeys.count) keys, \(usableSalts.count) salts")
        }
        var pairs: [(key: [UInt8], salt: [UInt8])] = []
        for (key, salt) in zip(usableKeys, usableSalts) {
            guard let keyBytes = Self.hexBytes(key), let saltBytes = Self.hexBytes(salt) else {
                throw ConfigurationError("compat.imgproxy.keys and compat.imgproxy.salts must be hex-encoded, as imgproxy's are")
            }
            pairs.append((keyBytes, saltBytes))
        }
        self.pairs = pairs
        self.signatureSize = min(max(signatureSize, 1), 32)
    }

    /// The signature of `path` (from the `/` after the signature: `/rs:fit:300:0/plain/…`) with the first pair.
    public func signature(of path: String) -> String {
        URLSigner.base64URL(Data(digest(of: path, pair: pairs[0]).prefix(signatureSize)))
    }

    /// Whether `signature` signs `path` under any pair (compared in constant time).
    public func verify(signature: String, path: String) -> Bool {
        guard let given = URLSigner.decodeBase64URL(signature), given.count == signatureSize else { return false }
        var matched = false
        for pair in pairs {
            let expected = digest(of: path, pair: pair).prefix(signatureSize)
            var difference: UInt8 = 0
            for (a, b) in zip(expected, given) { difference |= a ^ b }
            if difference == 0 { matched = true }
        }
        return matched
    }

    private func digest(of path: String, pair: (key: [UInt8], salt: [UInt8])) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: pair.key))
        hmac.update(data: pair.salt)
        hmac.update(data: Array(path.utf8))
        return Array(hmac.finalize())
    }

    /// Bytes of a hex string; nil for odd lengths or other characters.
    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, digits.count <= 1024 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
