/// A colour from `bg=RRGGBB` or `bg=RRGGBBAA` (hex).
public struct RGBAColour: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white, the default background.
    public static let white = RGBAColour(red: 255, green: 255, blue: 255)

    /// Parses 6 or 8 hex digits (a leading `#` allowed).
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard digits.count == 6 || digits.count == 8, let value = UInt32(digits, radix: 16) else { return nil }
        let full = digits.count == 6 ? value << 8 | 0xff : value
        self.init(red: UInt8(full >> 24), green: UInt8(full >> 16 & 0xff), blue: UInt8(full >> 8 & 0xff), alpha: UInt8(full & 0xff))
    }

    /// Lower-case `rrggbbaa`.
    public var description: String {
        [red, green, blue, alpha].map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}
