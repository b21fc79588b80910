import CVipsShim

/// An owned reference to a libvips image; released when the wrapper goes away.
///
/// Not Sendable on purpose: one image belongs to one transform job on one thread.
public final class VipsImage {
    let pointer: UnsafeMutablePointer<_VipsImage>

    init(taking pointer: UnsafeMutablePointer<_VipsImage>) {
        self.pointer = pointer
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }

    /// Width in pixels.
    public var width: Int { Int(vips_image_get_width(pointer)) }
    /// Height in pixels.
    public var height: Int { Int(vips_image_get_height(pointer)) }
    /// Number of bands, alpha included.
    public var bands: Int { Int(vips_image_get_bands(pointer)) }
    /// Whether the last band is alpha.
    public var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    /// Height of one frame (the whole height unless the image holds several frames).
    public var frameHeight: Int { Int(ipx_vips_page_height(pointer)) }
    /// Frames held (1 for still images).
    public var frames: Int { max(1, height / max(1, frameHeight)) }

    /// Interleaved 8-bit pixels (`width * height * bands` bytes for an 8-bit image).
    public func pixels() throws(ImagingError) -> [UInt8] {
        var length = 0
        guard let memory = ipx_vips_pixels(pointer, &length) else {
            _ = Vips.takeError()
            throw .processingFailed
        }
        defer { g_free(memory) }
        return Array(UnsafeRawBufferPointer(start: memory, count: length))
    }

    /// Decodes every frame of an encoded image into memory (frames stacked vertically).
    public static func decodeAllFrames(_ bytes: [UInt8]) throws(ImagingError) -> VipsImage {
        try decoding(bytes, with: ipx_vips_decode_all_pages)
    }

    /// Runs a libvips operation producing a new image.
    /// - Throws: ``ImagingError/processingFailed`` when libvips fails.
    func producing(
        _ operation: (UnsafeMutablePointer<_VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<_VipsImage>?>) -> Int32
    ) throws(ImagingError) -> VipsImage {
        var output: UnsafeMutablePointer<_VipsImage>?
        guard operation(pointer, &output) == 0, let output else {
            _ = Vips.takeError()
            throw .processingFailed
        }
        return VipsImage(taking: output)
    }

    /// Builds an image from interleaved 8-bit pixels (`width * height * bands` bytes).
    public static func fromPixels(_ pixels: [UInt8], width: Int, height: Int, bands: Int) throws(ImagingError) -> VipsImage {
        Vips.start()
        let image = pixels.withUnsafeBytes { raw in
            vips_image_new_from_memory_copy(raw.baseAddress, raw.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        }
        guard let image else { throw .processingFailed }
        return VipsImage(taking: image)
    }

    /// Decodes an encoded image fully into memory.
    /// - Throws: ``ImagingError/undecodable``.
    public static func decode(_ bytes: [UInt8]) throws(ImagingError) -> VipsImage {
        try decoding(bytes, with: ipx_vips_decode)
    }

    private static func decoding(
        _ bytes: [UInt8],
        with decoder: (UnsafeRawPointer?, Int, UnsafeMutablePointer<UnsafeMutablePointer<_VipsImage>?>) -> Int32
    ) throws(ImagingError) -> VipsImage {
        Vips.start()
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { decoder($0.baseAddress, $0.count, &output) }
        guard status == 0, let output else {
            _ = Vips.takeError()
            throw .undecodable
        }
        return VipsImage(taking: output)
    }

    /// The band values of one pixel.
    public func pixel(x: Int, y: Int) throws(ImagingError) -> [Double] {
        var values = [Double](repeating: 0, count: 8)
        var count: Int32 = 0
        guard ipx_vips_getpoint(pointer, Int32(x), Int32(y), &values, 8, &count) == 0 else {
            _ = Vips.takeError()
            throw .processingFailed
        }
        return Array(values.prefix(Int(count)))
    }

    /// A copy marked as an animation of frames `frameHeight` rows tall (frames stacked vertically).
    public func asAnimation(frameHeight: Int, delayMilliseconds: Int = 100) throws(ImagingError) -> VipsImage {
        try producing { ipx_vips_copy_as_animation($0, $1, Int32(frameHeight), Int32(delayMilliseconds)) }
    }

    /// A copy carrying an EXIF orientation tag (1...8), written by the JPEG encoder.
    public func withOrientation(_ orientation: Int) throws(ImagingError) -> VipsImage {
        try producing { ipx_vips_copy_with_orientation($0, $1, Int32(orientation)) }
    }
}
