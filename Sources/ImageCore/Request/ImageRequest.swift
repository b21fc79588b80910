/// A validated `/img` request: what to fetch and what to make of it. Pure data, no I/O.
public struct ImageRequest: Sendable, Hashable {
    /// The canonical absolute http(s) source URL.
    public var source: SourceURL
    /// Output width in pixels (already multiplied by `dpr`), nil when not constrained.
    public var width: Int?
    /// Output height in pixels (already multiplied by `dpr`), nil when not constrained.
    public var height: Int?
    /// How the output fills the w×h box.
    public var fit: FitMode = .contain
    /// Whether the output may be larger than the source.
    public var enlarge = false
    /// The requested output format.
    public var format: RequestedFormat = .auto
    /// Encoder quality 1...100; nil means the format's configured default.
    public var quality: Int?
    /// A byte budget for the output (`max_bytes`, 1 KiB...10 MiB): JPEG, WebP and AVIF are encoded at
    /// lower qualities until they fit (``SizeTargetEncoder``); PNG and GIF ignore it.
    public var maxBytes: Int?
    /// Filters applied after resizing, in order.
    public var filters: [ImageFilter] = []
    /// Where `fit=cover` crops around.
    public var gravity: Gravity = .centre
    /// A focal point overriding `gravity`.
    public var focalPoint: FocalPoint?
    /// Background for `fit=pad` and for flattening alpha into formats without it.
    public var background: RGBAColour = .white
    /// Progressive (interlaced) JPEG.
    public var progressive = false
    /// A tiny blurred placeholder (≤ 32 px) instead of the full image.
    public var placeholder = false
    /// A rectangle of the upright source cut out before resizing (`crop=x,y,w,h`).
    public var crop: CropRectangle?
    /// Device pixels per CSS pixel that `width` and `height` were multiplied by.
    public var pixelRatio = 1.0
    /// Whether the query gave `dpr` (a client hint then does not change it).
    public var pixelRatioGiven = false
    /// sRGB output, or a wide-gamut source kept in its own space (`colour`, default `image.colour`).
    public var colour = ColourHandling.srgb
    /// An image drawn over the output (`wm`, `wmurl`), after the filters.
    public var watermark: Watermark?
    /// Text drawn over the output (`text` and its `text_*` parameters), after the watermark.
    public var text: TextOverlay?

    public init(source: SourceURL) {
        self.source = source
    }
}
