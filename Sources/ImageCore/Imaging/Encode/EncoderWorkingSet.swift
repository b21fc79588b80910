/// What an encoder holds besides the image it encodes, reserved in the transform budget with the decode
/// (``ImageTransformer``): libaom's frame buffers and analysis for AVIF, libwebp's, libimagequant's
/// palette search and dither buffers for GIF.
///
/// Per output pixel, measured through the real server as the peak RSS growth of one transform of a
/// 4096×4096 JPEG into a 4096×4096 (and a 2164×2164) output at the default settings (AVIF effort 2),
/// less the same transform into JPEG (`bench/RESULTS.md`, "Encoder working sets"): AVIF ~16 bytes a
/// pixel, GIF ~10.5, WebP ~4.7, PNG and JPEG about nothing (they stream rows); in-process tests of a
/// 2048×2048 gradient saw up to 16 (AVIF) and 14 (GIF) more than the decode's estimate. Rounded up
/// for margin: a reservation too small lets the budget be overrun, one too large only admits fewer jobs.
///
/// JPEG XL (libjxl 0.7, effort 4) holds far more: `vips copy` of 2048×2048 and 4096×4096 noise and a
/// 4096×4096 flat image into JXL peaked 40–49 bytes a pixel above the same copy into JPEG (AVIF 20 on the
/// same files), so it reserves 56, and its outputs are capped (``EncodingSettings/jxlMaxPixels``).
public enum EncoderWorkingSet {
    /// Bytes per output pixel the encoder of `format` holds while it runs.
    public static func bytesPerPixel(_ format: OutputFormat) -> Int {
        switch format {
        case .avif: 24
        case .jxl: 56
        case .gif: 18
        case .webp: 8
        case .jpeg, .png: 1
        }
    }

    /// The encoder's working set for `choice` at `pixels` output pixels (every frame of an animation):
    /// the larger of the two for JPEG-or-PNG, decided after the transform.
    public static func bytes(for choice: FormatChoice, pixels: Int) -> Int {
        let perPixel = switch choice {
        case .fixed(let format): bytesPerPixel(format)
        case .jpegOrPNG, .source: max(bytesPerPixel(.jpeg), bytesPerPixel(.png))
        }
        return perPixel * max(0, pixels)
    }
}
