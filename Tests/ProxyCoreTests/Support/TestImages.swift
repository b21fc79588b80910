import ProxyCore

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

    static func jpeg(width: Int = 800, height: Int = 600) throws -> [UInt8] {
        try gradient(width: width, height: height).encoded(as: .jpeg, quality: 90).bytes
    }

    /// A JPEG stored `width`×`height` with EXIF orientation 6 (displayed rotated 90°: height×width).
    static func rotatedJPEG(width: Int = 200, height: Int = 100) throws -> [UInt8] {
        try gradient(width: width, height: height).withOrientation(6).encoded(as: .jpeg, keepJPEGMetadata: true).bytes
    }
}
