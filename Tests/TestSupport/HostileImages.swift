@testable import ImageCore

/// Inputs built to hurt an image proxy, generated in the tests.
public enum HostileImages {
    /// A valid PNG signature and IHDR declaring `width`×`height` RGB, then a tiny IDAT: a few hundred
    /// bytes that would decode to gigabytes.
    public static func hugeDeclaredPNG(width: UInt32, height: UInt32) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typeBytes = Array(type.utf8)
            var crc = CRC32()
            crc.update(typeBytes + data)
            return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc.value)
        }
        let header = bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]
        // zlib stream of a few zero bytes (stored block): valid framing, far too little data.
        let idat: [UInt8] = [0x78, 0x01, 0x01, 0x05, 0x00, 0xFA, 0xFF, 0, 0, 0, 0, 0, 0x00, 0x05, 0x00, 0x01]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", idat)
            + chunk("IEND", [])
    }

    public static let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="100" height="100" fill="red"/></svg>"#.utf8)

    /// 300 frames of 4×4: more than `image.maxFrames` keeps, fewer than `image.maxSourceFrames` allows.
    public static let manyFramesGIF: [UInt8] = try! TestImages.animation(width: 4, height: 4, frames: 300).encoded(as: .gif).bytes

    public static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// CRC-32 as PNG chunks use it.
    struct CRC32 {
        private(set) var value: UInt32 = 0
        mutating func update(_ bytes: [UInt8]) {
            var crc = ~value
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
            }
            value = ~crc
        }
    }
}
