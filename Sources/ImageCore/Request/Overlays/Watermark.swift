/// An image overlay a request asks for: a named one (`wm=`), or a per-request image (`wmurl=`) placed as
/// the named one is, or at the default placement.
public struct Watermark: Sendable, Hashable, CustomStringConvertible {
    /// The overlay's image.
    public var source: SourceURL
    public var placement: OverlayPlacement

    public init(source: SourceURL, placement: OverlayPlacement) {
        self.source = source
        self.placement = placement
    }

    /// Largest overlay image, in pixels, checked from its header before it is decoded.
    public static let maxPixels = 16_000_000

    public var description: String { "\(source.absoluteString)|\(placement)" }
}
