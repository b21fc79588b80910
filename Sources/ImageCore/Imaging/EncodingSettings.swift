/// Encoder defaults, per format.
public struct EncodingSettings: Sendable, Equatable {
    public var jpegQuality = 80
    public var webpQuality = 80
    public var avifQuality = 55
    /// AVIF encoder effort 0 (fastest) ... 9.
    public var avifEffort = 2
    /// PNG zlib level 0...9.
    public var pngCompression = 6

    public init() {}
}
