import Crypto
import Foundation

/// Lower-case hex SHA-256 of some bytes.
public func sha256Hex(_ bytes: some DataProtocol) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(64)
    for byte in SHA256.hash(data: bytes) {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
}
