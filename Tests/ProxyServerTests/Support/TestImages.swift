import ProxyServer

@testable import ImageCore
@testable import ProxyEngine

/// Test images generated with libvips at test time.
enum TestImages {
    /// An RGB gradient (red grows left to right, green top to bottom).
    static func gradient(width: Int, height: Int) throws -> VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 3
                pixels[offset] = UInt8(x * 255 / max(1, width - 1))
                pixels[offset + 1] = UInt8(y * 255 / max(1, height - 1))
                pixels[offset + 2] = 128
            }
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// RGBA: opaque red on the left half, fully transparent on the right half.
    static func halfTransparent(width: Int, height: Int) throws -> VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<(width / 2) {
                let offset = (y * width + x) * 4
                pixels[offset] = 255
                pixels[offset + 3] = 255
            }
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 4)
    }

    /// Black left half, white right half: a hard vertical edge in the middle.
    static func edge(width: Int, height: Int) throws -> VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in (width / 2)..<width {
                let offset = (y * width + x) * 3
                pixels[offset] = 255
                pixels[offset + 1] = 255
                pixels[offset + 2] = 255
            }
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// Left half flat grey, right half random noise: detail on one side only.
    static func busyOnTheRight(width: Int, height: Int) throws -> VipsImage {
        var generator = SystemRandomNumberGenerator()
        var pixels = [UInt8](repeating: 128, count: width * height * 3)
        for y in 0..<height {
            for x in (width / 2)..<width {
                let offset = (y * width + x) * 3
                for band in 0..<3 { pixels[offset + band] = UInt8.random(in: 0...255, using: &generator) }
            }
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// A `inner` coloured rectangle inside a uniform white border of `border` pixels.
    static func bordered(innerWidth: Int, innerHeight: Int, border: Int) throws -> VipsImage {
        let width = innerWidth + 2 * border, height = innerHeight + 2 * border
        var pixels = [UInt8](repeating: 255, count: width * height * 3)
        for y in border..<(border + innerHeight) {
            for x in border..<(border + innerWidth) {
                let offset = (y * width + x) * 3
                pixels[offset] = 200
                pixels[offset + 1] = 30
                pixels[offset + 2] = 60
            }
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// `frames` frames of `width`×`height`, each a different solid colour, as one animated image.
    static func animation(width: Int, height: Int, frames: Int) throws -> VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * frames * 3)
        for frame in 0..<frames {
            for index in 0..<(width * height) {
                let offset = (frame * width * height + index) * 3
                pixels[offset] = UInt8(frame * 255 / max(1, frames - 1))
                pixels[offset + 1] = 80
                pixels[offset + 2] = UInt8(255 - frame * 255 / max(1, frames - 1))
            }
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height * frames, bands: 3)
            .asAnimation(frameHeight: height)
    }

    /// A solid colour.
    static func solid(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8) throws -> VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for index in 0..<(width * height) {
            pixels[index * 3] = red
            pixels[index * 3 + 1] = green
            pixels[index * 3 + 2] = blue
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// A JPEG of pseudo-random noise: large for its size (about 1 MB at 1000×800, quality 95).
    static func noiseJPEG(width: Int = 1000, height: Int = 800) throws -> [UInt8] {
        var state: UInt32 = 2_463_534_242
        let pixels = (0..<(width * height * 3)).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
        return try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3).encoded(as: .jpeg, quality: 95).bytes
    }

    static func jpeg(width: Int = 800, height: Int = 600) throws -> [UInt8] {
        try gradient(width: width, height: height).encoded(as: .jpeg, quality: 90).bytes
    }

    /// A JPEG stored `width`×`height` with EXIF orientation 6 (displayed rotated 90°: height×width).
    static func rotatedJPEG(width: Int = 200, height: Int = 100) throws -> [UInt8] {
        try gradient(width: width, height: height).withOrientation(6).encoded(as: .jpeg, keepJPEGMetadata: true).bytes
    }
}
