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

    /// The defaults.
    public init() {}

    /// The default quality of a lossy format (PNG and GIF have none: 100).
    func defaultQuality(for format: OutputFormat) -> Int {
        switch format {
        case .jpeg: jpegQuality
        case .webp: webpQuality
        case .avif: avifQuality
        case .png, .gif: 100
        }
    }
}
