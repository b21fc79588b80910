import ImageCore

/// What image answers' headers say and which request headers they read (`http.*`): caching extensions,
/// CORS, client hints and `Save-Data`, download names. A new `http.*` key is its field here (with its
/// documented default), its line in ``ProxyConfiguration/settings`` and its line in `config/imageproxy.yaml`.
public struct ResponseSettings: Sendable, Equatable {
    /// `stale-while-revalidate` seconds added to image responses; 0 leaves it out.
    /// Key `http.staleWhileRevalidate`, default 0.
    public var staleWhileRevalidate = 0
    /// `Timing-Allow-Origin` value sent with every response (lets pages read Server-Timing
    /// cross-origin); empty sends none. Key `http.timingAllowOrigin`, default `*`.
    public var timingAllowOrigin = "*"
    /// Origins allowed to read `/img` and `/info` cross-origin (canvas, `fetch()`): `*` or exact
    /// origins (`https://app.example.com`); empty sends no CORS headers. Key `http.corsOrigins`, default empty.
    public var corsOrigins: [String] = []
    /// Read client hints (`Sec-CH-DPR`, `Sec-CH-Width`, `Sec-CH-Viewport-Width`, legacy `DPR`, `Width`,
    /// `Viewport-Width`) for requests without `w`/`dpr`, and send `Accept-CH`. Off by default: answers
    /// then vary on those headers, which splits shared caches. Key `http.clientHints`, default false.
    public var clientHints = false
    /// The widths a hinted width is rounded up to. Key `http.clientHintWidths`,
    /// default 160, 320, 480, 640, 750, 828, 1080, 1200, 1440, 1920, 2048, 2560, 3840.
    public var clientHintWidths = ClientHints.Policy.defaultWidths
    /// Quality for `Save-Data: on` requests without `q`; 0 ignores `Save-Data` (answers then do not
    /// vary on it). Key `http.saveDataQuality`, default 0.
    public var saveDataQuality = 0
    /// Send `Content-Disposition: inline; filename="<source name>.<ext>"` with images (a saved image
    /// gets its source's name and the right extension). Key `http.contentDisposition`, default false.
    public var contentDisposition = false
    public init() {}
}
