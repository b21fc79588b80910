import CVipsShim

@testable import ImageCore

/// The test images of every test target, generated with libvips at test time, and the one test JPEG
/// encoder (``jpeg(_:quality:progressive:subsample:restartInterval:keepMetadata:)``: libjpeg's layout
/// choices, which the service's own encoder does not expose).
public enum TestImages {
    /// An RGB gradient (red grows left to right, green top to bottom).
    public static func gradient(width: Int, height: Int) throws -> ImageCore.VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 3
                pixels[offset] = UInt8(x * 255 / max(1, width - 1))
                pixels[offset + 1] = UInt8(y * 255 / max(1, height - 1))
                pixels[offset + 2] = 128
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// RGBA: opaque red on the left half, fully transparent on the right half.
    public static func halfTransparent(width: Int, height: Int) throws -> ImageCore.VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<(width / 2) {
                let offset = (y * width + x) * 4
                pixels[offset] = 255
                pixels[offset + 3] = 255
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 4)
    }

    /// Black left half, white right half: a hard vertical edge in the middle.
    public static func edge(width: Int, height: Int) throws -> ImageCore.VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in (width / 2)..<width {
                let offset = (y * width + x) * 3
                pixels[offset] = 255
                pixels[offset + 1] = 255
                pixels[offset + 2] = 255
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// Left half flat grey, right half random noise: detail on one side only.
    public static func busyOnTheRight(width: Int, height: Int) throws -> ImageCore.VipsImage {
        var generator = SystemRandomNumberGenerator()
        var pixels = [UInt8](repeating: 128, count: width * height * 3)
        for y in 0..<height {
            for x in (width / 2)..<width {
                let offset = (y * width + x) * 3
                for band in 0..<3 { pixels[offset + band] = UInt8.random(in: 0...255, using: &generator) }
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// A `inner` coloured rectangle inside a uniform white border of `border` pixels.
    public static func bordered(innerWidth: Int, innerHeight: Int, border: Int) throws -> ImageCore.VipsImage {
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
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// `frames` frames of `width`×`height`, each a different solid colour, as one animated image.
    public static func animation(width: Int, height: Int, frames: Int) throws -> ImageCore.VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * frames * 3)
        for frame in 0..<frames {
            for index in 0..<(width * height) {
                let offset = (frame * width * height + index) * 3
                pixels[offset] = UInt8(frame * 255 / max(1, frames - 1))
                pixels[offset + 1] = 80
                pixels[offset + 2] = UInt8(255 - frame * 255 / max(1, frames - 1))
            }
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height * frames, bands: 3)
            .asAnimation(frameHeight: height)
    }

    /// A solid colour.
    public static func solid(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8) throws -> ImageCore.VipsImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for index in 0..<(width * height) {
            pixels[index * 3] = red
            pixels[index * 3 + 1] = green
            pixels[index * 3 + 2] = blue
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }

    /// A JPEG of pseudo-random noise: large for its size (about 1 MB at 1000×800, quality 95).
    public static func noiseJPEG(width: Int = 1000, height: Int = 800) throws -> [UInt8] {
        var state: UInt32 = 2_463_534_242
        let pixels = (0..<(width * height * 3)).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
        return try ImageCore.VipsImage.fromPixels(pixels, width: width, height: height, bands: 3).encoded(as: .jpeg, quality: 95).bytes
    }

    public static func jpeg(width: Int = 800, height: Int = 600) throws -> [UInt8] {
        try gradient(width: width, height: height).encoded(as: .jpeg, quality: 90).bytes
    }

    /// A JPEG stored `width`×`height` with EXIF orientation 6 (displayed rotated 90°: height×width).
    public static func rotatedJPEG(width: Int = 200, height: Int = 100) throws -> [UInt8] {
        try gradient(width: width, height: height).withOrientation(6).encoded(as: .jpeg, keepJPEGMetadata: true).bytes
    }

    /// Smooth structure plus pseudo-random noise (`bands` 1 or 3) within 30...225, so that every block
    /// of a JPEG differs and no colour conversion clips.
    public static func noise(width: Int, height: Int, bands: Int, seed: UInt32 = 88_172_645) throws -> ImageCore.VipsImage {
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

    /// A JPEG written with libjpeg's layout choices: `progressive` (interlaced), `subsample` (4:2:0), a
    /// restart marker every `restartInterval` MCU rows (0: none; Huffman tables optimised), and the image's
    /// metadata and profile kept or stripped.
    public static func jpeg(
        _ image: ImageCore.VipsImage, quality: Int = 88, progressive: Bool = false, subsample: Bool = true, restartInterval: Int = 0,
        keepMetadata: Bool = false
    ) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let status = restartInterval > 0 || !keepMetadata
            ? ipx_vips_jpegsave_layout(
                image.pointer, &buffer, &length, Int32(quality), progressive ? 1 : 0, subsample ? 1 : 0, Int32(restartInterval))
            : ipx_vips_jpegsave_metadata(image.pointer, &buffer, &length, Int32(quality), progressive ? 1 : 0, subsample ? 1 : 0, 1)
        guard status == 0, let buffer else { throw ImagingError.processingFailed }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// A PNG written by libvips (libpng) with a chosen layout: `filter` 0-4 for every row (none, sub, up,
    /// average, Paeth), 5 for libpng's choice per row; Adam7 `interlaced`; `bitDepth`; a `palette` image.
    public static func png(
        _ image: ImageCore.VipsImage, filter: Int = 5, interlaced: Bool = false, bitDepth: Int = 8, palette: Bool = false
    ) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard ipx_vips_pngsave_layout(image.pointer, &buffer, &length, Int32(filter), interlaced ? 1 : 0, Int32(bitDepth), palette ? 1 : 0) == 0,
            let buffer
        else { throw ImagingError.processingFailed }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    /// A HEIC made by libheif's own encoder (through libvips), keeping the image's profile.
    public static func heic(_ image: ImageCore.VipsImage, quality: Int = 90, bitDepth: Int = 8) throws -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard ipx_vips_heicsave_metadata(image.pointer, &buffer, &length, Int32(quality), Int32(bitDepth)) == 0, let buffer else {
            throw ImagingError.processingFailed
        }
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }
}
