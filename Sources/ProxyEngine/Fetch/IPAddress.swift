import Foundation
import ImageCore

/// A resolved peer address, as libcurl is about to connect to it.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    /// 16 bytes, network order.
    case v6([UInt8])

    /// Parses dotted-quad IPv4 or RFC 4291 IPv6 text (with `::` and an embedded IPv4 tail).
    public init?(_ text: String) {
        if let v4 = Self.parseV4(Substring(text)) {
            self = .v4(v4)
        } else if let v6 = Self.parseV6(text) {
            self = .v6(v6)
        } else {
            return nil
        }
    }

    /// The IPv4 address an IPv6 address carries in its low 32 bits, for the mapped (::ffff:0:0/96)
    /// and compatible (::/96) forms; nil otherwise.
    var embeddedV4: UInt32? {
        guard case .v6(let bytes) = self else { return nil }
        let isMapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        let isCompatible = bytes[0..<12].allSatisfy { $0 == 0 } && !(bytes[12..<16].allSatisfy { $0 == 0 })
            && !(bytes[12..<15].allSatisfy { $0 == 0 } && bytes[15] == 1)
        guard isMapped || isCompatible else { return nil }
        return bytes[12..<16].reduce(0) { $0 << 8 | UInt32($1) }
    }

    public var description: String {
        switch self {
        case .v4(let value):
            return [24, 16, 8, 0].map { String((value >> UInt32($0)) & 0xff) }.joined(separator: ".")
        case .v6(let bytes):
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                .joined(separator: ":")
        }
    }

    private static func parseV4(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let byte = UInt8(part) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }

    private static func parseV6(_ text: String) -> [UInt8]? {
        var text = Substring(text)
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }  // zone index
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt16]? {
            guard !part.isEmpty else { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains("."), let v4 = parseV4(piece) {
                    result.append(UInt16(v4 >> 16))
                    result.append(UInt16(v4 & 0xffff))
                } else {
                    guard !piece.isEmpty, piece.count <= 4, let group = UInt16(piece, radix: 16) else { return nil }
                    result.append(group)
                }
            }
            return result
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count <= 7 else { return nil }
            all += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}
