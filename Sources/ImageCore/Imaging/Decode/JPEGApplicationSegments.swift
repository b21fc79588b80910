/// Removes the APP1 segments (EXIF, XMP) from a JPEG libjpeg just wrote for us: with `colour=keep` the
/// encoder must not strip (the ICC profile, in APP2, would go too), and libvips 8.14 then writes a
/// minimal EXIF block of its own. Only the service's own encoder output is read here, never a source.
enum JPEGApplicationSegments {
    /// `jpeg` without APP1 segments; unchanged when its markers are not as libjpeg writes them.
    static func removingAPP1(_ jpeg: [UInt8]) -> [UInt8] {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        var output: [UInt8] = [0xFF, 0xD8]
        output.reserveCapacity(jpeg.count)
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
            let marker = jpeg[offset + 1]
            // Start of scan: the rest is entropy-coded data and the trailer.
            if marker == 0xDA { break }
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            guard length >= 2, offset + 2 + length <= jpeg.count else { return jpeg }
            if marker != 0xE1 { output += jpeg[offset..<(offset + 2 + length)] }
            offset += 2 + length
        }
        guard offset < jpeg.count, jpeg[offset] == 0xFF, jpeg[offset + 1] == 0xDA else { return jpeg }
        output += jpeg[offset...]
        return output
    }
}
