/// Encoder defaults, per format (a request's `q` overrides the quality).
public struct EncodingSettings: Sendable, Equatable {
    /// JPEG quality 1...100. Default 80.
    public var jpegQuality = 80
    /// WebP quality 1...100. Default 80.
    public var webpQuality = 80
    /// AVIF quality 1...100. Default 55.
    public var avifQuality = 55
    /// AVIF encoder effort 0 (fastest) ... 9 (smallest). Default 2.
    public var avifEffort = 2
    /// PNG zlib level 0...9. Default 6.
    public var pngCompression = 6
    /// JPEG XL quality 1...100 (libvips maps it to libjxl's distance). Default 75.
    public var jxlQuality = 75
    /// JPEG XL encoder effort 3 (fastest libvips 8.14 takes) ... 9 (smallest). Default 4: libjxl's own default (7) costs
    /// several times the CPU for a few percent of bytes.
    public var jxlEffort = 4
    /// Largest JPEG XL output in pixels (every frame): its encoder holds ~50 bytes a pixel. A larger
    /// `format=jxl` answer is a 422; `format=auto` answers WebP instead. Default 4194304 (2048×2048).
    public var jxlMaxPixels = 4_194_304
    /// Largest AVIF output in pixels (every frame): libaom costs ~0.35-0.7 CPU-s a megapixel at effort 2
    /// (``TransformCost``), so a 4096x4096 AVIF took 11.6 CPU-s. A larger `format=avif` answer is a 422;
    /// `format=auto` answers WebP instead. Default 4194304 (2048×2048).
    public var avifMaxPixels = 4_194_304

    /// The defaults.
    public init() {}

    /// The default quality of a lossy format (PNG and GIF have none: 100).
    func defaultQuality(for format: OutputFormat) -> Int {
        switch format {
        case .jpeg: jpegQuality
        case .webp: webpQuality
        case .avif: avifQuality
        case .jxl: jxlQuality
        case .png, .gif: 100
        }
    }
}
