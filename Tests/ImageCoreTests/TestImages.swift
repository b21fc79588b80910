@testable import ImageCore

/// Images the imaging tests build with libvips.
enum TestImages {
    /// Smooth structure plus pseudo-random noise (`bands` 1 or 3) within 30...225, so that every block
    /// of a JPEG differs and no colour conversion clips.
    static func noise(width: Int, height: Int, bands: Int, seed: UInt32 = 88_172_645) throws -> ImageCore.VipsImage {
        var state = seed
        let pixels = (0..<(width * height * bands)).map { index -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            let x = (index / bands) % width, y = (index / bands) / width
            return UInt8(30 + x * 100 / width + y * 60 / height + Int(state % 36))
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: bands)
    }
}
