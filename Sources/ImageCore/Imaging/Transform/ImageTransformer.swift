import CVipsShim

/// Turns source bytes into an encoded variant, as an ordered list of steps: scale-on-load
/// (``ScaleOnLoadStep``) or crop (``CropStep``), resize (``ResizeStep``), then the image steps of
/// ``imageSteps(for:overlay:)`` (colour, pad, filters, watermark, text), then encode (``EncodeStep``).
/// Animated GIF/WebP sources stay animated (up to `maxFrames`) when the output is GIF or WebP and every
/// step works frame by frame (contain/fill, colour-only filters).
///
/// Two phases: ``plan(_:request:choice:overlay:)`` reads the header and decides the box, the format and
/// the memory to reserve (cheap, no decode); ``run(_:source:overlay:reserved:grow:)`` does the work,
/// synchronous and CPU-bound, on the transform pool, never on an event loop. The pool reserves the
/// plan's memory before a job takes a thread (ProxyEngine's `TransformPool`).
public struct ImageTransformer: Sendable {
    /// Largest source accepted, in pixels (width x height x frames), checked before any decode.
    public var maxSourcePixels: Int
    /// Most frames kept from an animated source.
    public var maxFrames: Int
    /// Most frames a source may have (counted from its container before any decode).
    public var maxSourceFrames: Int
    /// Longest a transform may take in milliseconds (0: no limit); libvips' kill flag stops it.
    public var maxTransformMilliseconds: Int
    /// Encoder defaults.
    public var encoding: EncodingSettings
    /// The font family of text overlays.
    public var textFont = "DejaVu Sans"
    /// Whether JPEG XL sources are read (libvips 8.14 marks `jxlload` untrusted).
    public var allowJXLInput = false
    /// Whether SVG sources are read (rendered by librsvg into pixels; never answered as SVG).
    public var allowSVGInput = false
    /// Whether `g=smart` crops around faces when it finds any (`image.smartFaces`).
    public var smartFaces = false
    /// Longest side of any output, given or derived from the aspect ratio (`image.maxDimension`):
    /// every plan's box is held to it (``ResizeBox/bounded(toMaxDimension:for:)``).
    public var maxOutputDimension = 4096
    /// Most CPU milliseconds a transform may be estimated to cost (``TransformCost``); 0: no limit.
    public var maxTransformCpuMilliseconds = 0
    /// The memory all running transforms may reserve together (`image.maxTransformBytes`; 0: none),
    /// reserved by the transform pool's admission.
    public var maxTransformBytes: Int

    /// The longest side of a placeholder (`lqip=1`), its blur and quality.
    static let placeholderSize = 32
    static let placeholderBlur = 1.2
    static let placeholderQuality = 40

    /// What a transformer is allowed; the defaults are the service's (`config/imageproxy.yaml`, `image.*`).
    public struct Settings: Sendable, Equatable {
        /// Largest source in pixels (width x height x frames), checked from the header. Default 50 MP, so
        /// that 48 MP phone photos (8064×6048) pass.
        public var maxSourcePixels = 50_000_000
        /// Most frames kept from an animated source (the rest are dropped). Default 100.
        public var maxFrames = 100
        /// Most frames a source may have, counted from its container before any decode (more is a 422).
        /// Default 1000.
        public var maxSourceFrames = 1000
        /// Longest a transform may take in milliseconds, then it is stopped (503); 0 = no limit. Default 10000.
        public var maxTransformMilliseconds = 10_000
        /// Bytes all running transforms may hold together, each job's working set estimated from its
        /// header before decoding; a job waits for its share, one larger than the whole budget runs alone
        /// (`maxSourcePixels` caps any one job); 0 = no budget. Default 256 MiB: the default memory
        /// tier's budget, which the tier lends to transforms whole, so the tier and the transforms running
        /// beside it hold at most the tier's budget together. (192 MiB until 2026-11-27 (the transforms' budget is the tier's): with it a srcset
        /// of large PNG/WebP sources kept few decodes and ran 20-23% slower, `bench/RESULTS.md`.)
        public var maxTransformBytes = 268_435_456
        /// Encoder defaults.
        public var encoding = EncodingSettings()
        /// The font family `text=` overlays are drawn in (`overlays.font`). Default `DejaVu Sans` (Debian's
        /// fonts-dejavu-core, installed by the setup script and the Dockerfile).
        public var textFont = "DejaVu Sans"
        /// Read JPEG XL sources (`image.allowJXLInput`). Off by default: libvips 8.14 marks `jxlload`
        /// untrusted; a JPEG XL source is then a 415 naming the key.
        public var allowJXLInput = false
        /// Read SVG sources (`image.allowSVGInput`): rendered by librsvg from memory at the size the output
        /// needs, into pixels only (never answered as SVG), after a check that refuses references outside
        /// the document, entities and XInclude (`svg_check.c`). Off by default: a source format is an attack
        /// surface, turned on by those who serve logos and icons. An SVG source is then a 415 naming the key.
        public var allowSVGInput = false
        /// Whether `g=smart` looks for faces first and crops around them when it finds any, as `g=face` does
        /// (`image.smartFaces`). Off by default: `g=smart` stays libvips' attention strategy, with no
        /// face search's CPU (bench/faces-svg.py).
        public var smartFaces = false
        /// The OpenCV cascade file faces are found with (`image.faceCascade`; ``FaceDetector``). Default:
        /// Debian's opencv-data improved LBP frontal-face cascade (`lbpcascade_frontalface_improved.xml`).
        public var faceCascade = FaceDetector.defaultCascade
        /// Longest side of any output, given in the request or derived from the source's aspect ratio
        /// (`image.maxDimension`, which also bounds `w` and `h`). Default 4096.
        public var maxOutputDimension = 4096
        /// Most CPU a transform may be estimated to cost before it starts, in milliseconds
        /// (`image.maxTransformCpuMs`; ``TransformCost``: the decode and every encode `max_bytes` may
        /// take, at rates measured per format); above it the request is a 422 naming the limit, before any
        /// work. 0 = no limit. Default 5000: half the transform deadline, so that an estimate off by
        /// 2x still ends in time.
        public var maxTransformCpuMilliseconds = 5_000

        /// The defaults.
        public init() {}
    }

    /// A transformer with `settings`.
    public init(settings: Settings) {
        self.init(
            maxSourcePixels: settings.maxSourcePixels, maxFrames: settings.maxFrames, maxSourceFrames: settings.maxSourceFrames,
            maxTransformMilliseconds: settings.maxTransformMilliseconds, maxTransformBytes: settings.maxTransformBytes,
            encoding: settings.encoding)
        textFont = settings.textFont
        allowJXLInput = settings.allowJXLInput
        maxOutputDimension = settings.maxOutputDimension
        maxTransformCpuMilliseconds = settings.maxTransformCpuMilliseconds
        allowSVGInput = settings.allowSVGInput
        smartFaces = settings.smartFaces
        if settings.faceCascade != FaceDetector.defaultCascade { FaceDetector.use(cascade: settings.faceCascade) }
        if allowJXLInput { Vips.allowJXLInput() }
        if allowSVGInput { Vips.allowSVGInput() }
    }

    public init(
        maxSourcePixels: Int, maxFrames: Int = 100, maxSourceFrames: Int = 1000, maxTransformMilliseconds: Int = 0,
        maxTransformBytes: Int = 0, encoding: EncodingSettings
    ) {
        self.maxTransformBytes = maxTransformBytes
        self.maxSourcePixels = maxSourcePixels
        self.maxFrames = maxFrames
        self.maxSourceFrames = maxSourceFrames
        self.maxTransformMilliseconds = maxTransformMilliseconds
        self.encoding = encoding
    }

    /// Produces the variant `request` asks for, planning and running at once with no memory budget (tools
    /// and tests; the service goes through the transform pool, which reserves the plan's memory first).
    /// - Parameter overlay: the encoded image of `request.watermark` (fetched by the caller).
    /// - Throws: ``ImagingError`` (not an image, undecodable, too many pixels, too slow, ...).
    public func transform(
        _ source: [UInt8], request: ImageRequest, choice: FormatChoice, overlay: [UInt8]? = nil
    ) throws(ImagingError) -> EncodedImage {
        let plan = try plan(source, request: request, choice: choice, overlay: overlay)
        switch try run(plan, source: source, overlay: overlay, reserved: plan.fullReservation, grow: { _ in true }) {
        case .encoded(let encoded, _): return encoded
        case .needsFullReservation: throw .memoryBudgetBusy  // not reached: the full reservation is held
        }
    }

    /// The faces in `source` (checked as for a transform), upright (``FaceDetector``).
    /// - Throws: ``ImagingError`` (not an image, a format turned off, too many pixels, face detection unavailable).
    public func faceSearch(_ source: [UInt8]) throws(ImagingError) -> FaceSearch {
        let (_, header) = try SourceHeader.checked(
            source, maxSourcePixels: maxSourcePixels, maxSourceFrames: maxSourceFrames, allowJXL: allowJXLInput,
            allowSVG: allowSVGInput)
        return try FaceDetector.search(source: source, header: header)
    }
}
