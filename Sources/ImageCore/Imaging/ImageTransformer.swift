import CVipsShim

/// Turns source bytes into an encoded variant: sniff, header check, resize (and crop), sRGB, pad,
/// filters, encode. Animated GIF/WebP sources stay animated (up to `maxFrames`) when the output is GIF
/// or WebP and every step works frame by frame (contain/fill, colour-only filters).
///
/// Synchronous and CPU-bound: call it on the transform pool (``TransformPool``), never on an event loop.
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
    /// The memory all running transforms may reserve together (`image.maxTransformBytes`; 0: none).
    let memoryBudget: TransformMemoryBudget

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
        /// (`maxSourcePixels` caps any one job); 0 = no budget. Default 192 MiB: three quarters of the
        /// default memory tier, the most the tier lends (``TransformMemoryLender``), so the tier and the
        /// transforms running beside it hold at most the tier's budget together.
        public var maxTransformBytes = 201_326_592
        /// Encoder defaults.
        public var encoding = EncodingSettings()
        /// The font family `text=` overlays are drawn in (`overlays.font`). Default `DejaVu Sans` (Debian's
        /// fonts-dejavu-core, installed by the setup script and the Dockerfile).
        public var textFont = "DejaVu Sans"
        /// Read JPEG XL sources (`image.allowJXLInput`). Off by default: libvips 8.14 marks `jxlload`
        /// untrusted; a JPEG XL source is then a 415 naming the key.
        public var allowJXLInput = false

        /// The defaults.
        public init() {}
    }

    /// A transformer with `settings`; `memoryLender` (the memory tier) is told of every transform's
    /// reserved memory while it runs.
    public init(settings: Settings, memoryLender: (any TransformMemoryLender)? = nil) {
        self.init(
            maxSourcePixels: settings.maxSourcePixels, maxFrames: settings.maxFrames, maxSourceFrames: settings.maxSourceFrames,
            maxTransformMilliseconds: settings.maxTransformMilliseconds, maxTransformBytes: settings.maxTransformBytes,
            encoding: settings.encoding, memoryLender: memoryLender)
        textFont = settings.textFont
        allowJXLInput = settings.allowJXLInput
        if allowJXLInput { Vips.allowJXLInput() }
    }

    public init(
        maxSourcePixels: Int, maxFrames: Int = 100, maxSourceFrames: Int = 1000, maxTransformMilliseconds: Int = 0,
        maxTransformBytes: Int = 0, encoding: EncodingSettings, memoryLender: (any TransformMemoryLender)? = nil
    ) {
        self.memoryBudget = TransformMemoryBudget(capacity: maxTransformBytes, lender: memoryLender)
        self.maxSourcePixels = maxSourcePixels
        self.maxFrames = maxFrames
        self.maxSourceFrames = maxSourceFrames
        self.maxTransformMilliseconds = maxTransformMilliseconds
        self.encoding = encoding
    }

    /// Produces the variant `request` asks for.
    /// - Parameter overlay: the encoded image of `request.watermark` (fetched by the caller).
    /// - Throws: ``ImagingError`` (415 not an image, 422 undecodable or too many pixels).
    public func transform(
        _ source: [UInt8], request original: ImageRequest, choice: FormatChoice, overlay: [UInt8]? = nil
    ) throws(ImagingError) -> EncodedImage {
        let deadline = TransformDeadline(limitMilliseconds: maxTransformMilliseconds)
        defer { deadline.finish() }
        do {
            return try transform(source, request: original, choice: choice, overlay: overlay, deadline: deadline)
        } catch {
            if deadline.hasExpired { throw .tooSlow(limitMilliseconds: maxTransformMilliseconds) }
            throw error
        }
    }

    private func transform(
        _ source: [UInt8], request original: ImageRequest, choice: FormatChoice, overlay: [UInt8]?, deadline: TransformDeadline
    ) throws(ImagingError) -> EncodedImage {
        let (_, checkedHeader) = try SourceHeader.checked(
            source, maxSourcePixels: maxSourcePixels, maxSourceFrames: maxSourceFrames, allowJXL: allowJXLInput)

        var request = original
        // colour=keep: a wide-gamut RGB source is not converted to sRGB, and its profile goes into the output.
        // Not for GIF (no profiles).
        let keepProfile = request.colour == .keep && checkedHeader.wideGamutProfile && !request.placeholder
            && choice != .fixed(.gif)
        var header = checkedHeader
        if keepProfile { header.colourManaged = false }
        if request.placeholder {
            request.width = Self.placeholderSize
            request.height = Self.placeholderSize
            request.fit = .contain
            request.enlarge = false
            request.filters = [.blur(sigma: Self.placeholderBlur)]
            request.watermark = nil
            request.text = nil
        }
        var choice = choice
        var frames = animatedFrames(header: header, request: request, choice: choice)
        var resize = ResizeStep(request: request, frames: frames)
        if choice == .fixed(.jxl), resize.estimatedOutputPixels(for: header) > encoding.jxlMaxPixels {
            // libjxl holds ~50 bytes an output pixel: a negotiated JPEG XL becomes WebP, an asked-for one a 422.
            guard request.format == .auto else { throw .outputTooLarge(format: "jxl", limit: encoding.jxlMaxPixels) }
            choice = .fixed(.webp)
            frames = animatedFrames(header: header, request: request, choice: choice)
            resize = ResizeStep(request: request, frames: frames)
        }
        let format = SourceFormat(sniffing: source)
        // Memory is reserved before anything is decoded, and waited for at most the transform time limit.
        // A file the DC-only decoder may take first reserves without libjpeg's coefficient buffer and tries
        // it; if the decoder declines, that reservation is given back and the whole one (buffer included)
        // taken before libjpeg runs: what is reserved always covers the decoder that actually runs.
        let wait = Duration.milliseconds(maxTransformMilliseconds > 0 ? maxTransformMilliseconds : 10_000)
        // The encoder's own buffers (AVIF's above all) are part of the working set too.
        let encoderBytes = EncoderWorkingSet.bytes(for: choice, pixels: resize.estimatedOutputPixels(for: header))
            + (request.watermark == nil ? 0 : overlay.map(OverlayStep.workingSetBytes(of:)) ?? 0)
        var reserved = 0
        defer { memoryBudget.release(reserved) }
        var eighth = ResizeStep.EighthAttempt.untried
        if resize.mayDecodeEighth(for: header, format: format) {
            reserved = try memoryBudget.reserve(
                resize.estimatedWorkingSetBytes(for: header, format: format, eighthDecoded: true) + encoderBytes, wait: wait)
            eighth = try resize.decodeEighth(source, header: header, deadline: deadline).map { .decoded($0) } ?? .declined
        }
        if case .decoded = eighth {} else {
            memoryBudget.release(reserved)
            reserved = 0
            reserved = try memoryBudget.reserve(
                resize.estimatedWorkingSetBytes(for: header, format: format) + encoderBytes, wait: wait)
        }
        var image: VipsImage
        do {
            image = try resize.apply(to: source, header: header, deadline: deadline, eighth: eighth)
        } catch .undecodable where frames > 1 && !deadline.hasExpired {
            // A later frame is damaged: served from the first frame, as every one-frame variant of this
            // source is (one answer per source, whatever the output format).
            image = try ResizeStep(request: request, frames: 1).apply(to: source, header: header, deadline: deadline)
        }
        // The profile's bytes copied while the loader is still open (HEIF: see ipx_vips_with_own_profile).
        if keepProfile { image = try image.producing { ipx_vips_with_own_profile($0, $1) } }
        image = try ColourspaceStep().apply(to: image)
        if request.fit == .pad, let width = request.width, let height = request.height {
            image = try PadStep(width: width, height: height, background: request.background).apply(to: image)
        }
        for filter in request.filters {
            image = try FilterStep(filter: filter).apply(to: image)
        }
        if let watermark = request.watermark, let overlay {
            image = try OverlayStep(overlay: overlay, placement: watermark.placement).apply(to: image)
        }
        if let text = request.text {
            image = try TextStep(overlay: text, font: textFont).apply(to: image)
        }
        let output: OutputFormat = switch choice {
        case .fixed(let fixed): fixed
        case .jpegOrPNG: image.hasAlpha ? .png : .jpeg
        }
        deadline.watch(image)
        if let budget = request.maxBytes, !request.placeholder, SizeTargetEncoder.applies(to: output) {
            // Several encodes of one image: materialised once (a lazy pipeline can be saved only once).
            let ready = try image.producing { ipx_vips_copy_memory($0, $1) }
            let start = request.quality ?? encoding.defaultQuality(for: output)
            return try SizeTargetEncoder(budget: budget, startQuality: start).search { (quality) throws(ImagingError) in
                try ready.encoded(
                    as: output, quality: quality, settings: encoding, background: request.background,
                    progressive: request.progressive, keepProfile: keepProfile)
            }
        }
        return try image.encoded(
            as: output, quality: request.placeholder ? Self.placeholderQuality : request.quality, settings: encoding,
            background: request.background, progressive: request.progressive, keepProfile: keepProfile)
    }

    /// Frames to load: all (up to `maxFrames`) when the animation can be kept, else 1.
    func animatedFrames(header: SourceHeader, request: ImageRequest, choice: FormatChoice) -> Int {
        guard header.frames > 1, choice == .fixed(.gif) || choice == .fixed(.webp), !request.placeholder, request.crop == nil,
            request.fit == .contain || request.fit == .fill, request.filters.allSatisfy(\.isColourOnly)
        else { return 1 }
        return min(header.frames, maxFrames)
    }
}
