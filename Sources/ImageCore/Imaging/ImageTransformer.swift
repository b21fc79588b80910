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
        /// beside it hold at most the tier's budget together. (192 MiB until session 41: with it a srcset
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
        if allowJXLInput { Vips.allowJXLInput() }
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

    /// Decides the transform from the source's header, decoding nothing: the request as it will be made,
    /// the output format (a JPEG XL too large for its encoder becomes WebP when negotiated), the box and
    /// the memory to reserve (the working set of the decoder that will run, the encoder's share and a
    /// watermark's).
    /// - Parameters:
    ///   - decoded: this source decoded whole by an earlier transform (same bytes): used instead of a decode
    ///     when the variant is made from a whole decode (``keepsWholeDecode(of:box:format:)``) and the
    ///     decode is of this source's size; the plan then reserves only the resize and the encoder.
    ///     Without it such a source is decoded whole, and the run hands the decode back
    ///     (``TransformRun/encoded(_:kept:)``) for the next variants.
    /// - Throws: ``ImagingError`` (not an image, a format turned off, too many pixels or frames, a JPEG XL
    ///   output too large).
    public func plan(
        _ source: [UInt8], request original: ImageRequest, choice: FormatChoice, overlay: [UInt8]? = nil,
        decoded: DecodedSource? = nil
    ) throws(ImagingError) -> TransformPlan {
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
        var choice = choice.resolved(forSource: SourceFormat(sniffing: source))
        var box = boundedBox(for: request, header: header, choice: choice)
        for (capped, limit) in [(OutputFormat.jxl, encoding.jxlMaxPixels), (.avif, encoding.avifMaxPixels)]
        where choice == .fixed(capped) && box.estimatedOutputPixels(for: header) > limit {
            // libjxl holds ~50 bytes an output pixel, libaom costs seconds a megapixel: a negotiated JPEG XL
            // or AVIF becomes WebP, an asked-for one a 422.
            guard request.format == .auto else { throw .outputTooLarge(format: capped.rawValue, limit: limit) }
            choice = .fixed(.webp)
            box = boundedBox(for: request, header: header, choice: choice)
        }
        let format = SourceFormat(sniffing: source)
        try checkCost(of: request, header: header, box: box, choice: choice, source: format)
        // The encoder's own buffers (AVIF's above all) and a watermark's are part of the working set too.
        let extraBytes = EncoderWorkingSet.bytes(for: choice, pixels: box.estimatedOutputPixels(for: header))
            + (request.watermark == nil ? 0 : overlay.map(OverlayStep.workingSetBytes(of:)) ?? 0)
        // A file the DC-only decoder may take reserves without libjpeg's coefficient buffer first and tries
        // it; if the decoder declines, the whole reservation (buffer included) is taken before libjpeg runs:
        // what is reserved always covers the decoder that actually runs.
        // Nothing between the reduce and the encoder: the reduced image is never held (and not reserved).
        let reduceEncoder = ReducedJPEGEncoder.forTransform(
            request: request, choice: choice, header: header, box: box, keepProfile: keepProfile,
            steps: imageSteps(for: request, overlay: overlay), settings: encoding)
        let encodesReduce = reduceEncoder != nil
        let whole = keepsWholeDecode(of: header, box: box, format: format)
        if whole, let decoded, decoded.matches(header) {
            let bytes = box.estimatedBytesFromWholeDecode(
                for: header, realAlpha: decoded.hasRealAlpha, reduceEncoded: encodesReduce) + extraBytes
            return TransformPlan(
                request: request, header: header, choice: choice, box: box, keepProfile: keepProfile, triesEighthFirst: false,
                triesScaledFirst: false, decoded: decoded, reduceEncoder: reduceEncoder, decodesWhole: false, reservation: bytes,
                fullReservation: bytes)
        }
        if format == .jpeg, let decoded, usesKeptJPEGDecode(decoded, header: header, box: box) {
            let bytes = box.estimatedBytesFromWholeDecode(
                for: header, decodedShrink: decoded.shrink, realAlpha: false, reduceEncoded: encodesReduce) + extraBytes
            return TransformPlan(
                request: request, header: header, choice: choice, box: box, keepProfile: keepProfile, triesEighthFirst: false,
                triesScaledFirst: false, decoded: decoded, reduceEncoder: reduceEncoder, decodesWhole: false, reservation: bytes,
                fullReservation: bytes)
        }
        // From 7x on the resize is `thumbnail`'s either way, and decoding whole first costs more than
        // `thumbnail` reading the file as it decodes: only a kept decode is used there.
        if whole, makesWholeDecode(of: header, box: box, format: format) {
            // Reserved for an opaque alpha first; a real one (found once decoded) grows the reservation.
            let pngDecoderBytes = Self.wholePNGDecoderBytes(sourceBytes: source.count, header: header, format: format)
            let opaque = box.estimatedBytesDecodingWhole(for: header, format: format, realAlpha: false, reduceEncoded: encodesReduce)
                + extraBytes + pngDecoderBytes
            let full = box.estimatedBytesDecodingWhole(for: header, format: format, realAlpha: header.hasAlpha, reduceEncoded: encodesReduce)
                + extraBytes + pngDecoderBytes
            return TransformPlan(
                request: request, header: header, choice: choice, box: box, keepProfile: keepProfile, triesEighthFirst: false,
                triesScaledFirst: false, decoded: nil, reduceEncoder: reduceEncoder, decodesWhole: true, reservation: opaque,
                fullReservation: full)
        }
        let full = box.estimatedWorkingSetBytes(for: header, format: format) + extraBytes
        let triesEighth = box.mayDecodeEighth(for: header, format: format)
        if triesEighth {
            let first = box.estimatedWorkingSetBytes(for: header, format: format, eighthDecoded: true) + extraBytes
            return TransformPlan(
                request: request, header: header, choice: choice, box: box, keepProfile: keepProfile,
                triesEighthFirst: true, triesScaledFirst: false, decoded: nil, reduceEncoder: reduceEncoder, decodesWhole: false,
                reservation: first, fullReservation: full)
        }
        // A JPEG libjpeg decodes into memory and the pool thread reduces to a forced size reserves that
        // path's working set, and libvips' loader's only if libjpeg declines the file (CMYK, damage).
        // A JPEG kept at its size (the decode is the variant) for another encoder than libjpeg's goes through
        // libvips' loader as before, under its reservation: those encoders' estimates (``EncoderWorkingSet``)
        // were measured on that path.
        let encoderCoefficientBytes = jpegEncoderCoefficientBytes(request, choice)
        let keptSizeForAnotherEncoder = format == .jpeg && encoderCoefficientBytes == 0 && box.wholeDecodeIsTheVariant(for: header)
        if !keptSizeForAnotherEncoder, let shrink = keptJPEGShrink(of: header, box: box, format: format) {
            // Decoded into memory of its own and held whole, then reduced (or encoded as it is), and kept.
            let holding = box.estimatedBytesDecodingJPEGInMemory(
                for: header, encoderCoefficientBytes: encoderCoefficientBytes, reduceEncoded: encodesReduce, holdingTheDecode: true)
                + extraBytes
            var plan = TransformPlan(
                request: request, header: header, choice: choice, box: box, keepProfile: keepProfile, triesEighthFirst: false,
                triesScaledFirst: false, decoded: nil, reduceEncoder: reduceEncoder, decodesWhole: true,
                reservation: min(holding, full), fullReservation: full)
            plan.wholeJPEGShrink = shrink
            return plan
        }
        let inMemory = box.mayDecodeJPEGInMemory(for: header, format: format) && !keptSizeForAnotherEncoder
            ? box.estimatedBytesDecodingJPEGInMemory(
                for: header, encoderCoefficientBytes: encoderCoefficientBytes, reduceEncoded: encodesReduce) + extraBytes : full
        var plan = TransformPlan(
            request: request, header: header, choice: choice, box: box, keepProfile: keepProfile, triesEighthFirst: false,
            triesScaledFirst: inMemory < full, decoded: nil, decodesWhole: false, reservation: min(inMemory, full),
            fullReservation: full)
        plan.leavesKeptSizeToLoader = keptSizeForAnotherEncoder
        // Only libjpeg's decode into memory takes it (the reservation left the reduced image out only there).
        if plan.triesScaledFirst { plan.reduceEncoder = reduceEncoder }
        return plan
    }

    /// libjpeg's coefficient buffer an output pixel when `choice` makes a JPEG of a JPEG source (no alpha)
    /// at the request's quality, else 0 (``ResizeBox/jpegEncoderCoefficientBytesPerPixel(quality:)``).
    private func jpegEncoderCoefficientBytes(_ request: ImageRequest, _ choice: FormatChoice) -> Int {
        guard choice == .fixed(.jpeg) || choice == .jpegOrPNG else { return 0 }
        let quality = request.maxBytes == nil ? request.quality ?? encoding.defaultQuality(for: .jpeg) : 100
        return ResizeBox.jpegEncoderCoefficientBytesPerPixel(quality: quality)
    }

    /// What a whole decode of a PNG by `png_decode.c` holds beside the image (0 for other formats): the
    /// image data copied into one block (at most the file's `sourceBytes`) and the rows' filter bytes.
    static func wholePNGDecoderBytes(sourceBytes: Int, header: SourceHeader, format: SourceFormat?) -> Int {
        format == .png ? sourceBytes + header.height : 0
    }

    /// The largest decode held whole in memory: 64 MiB (16 MP of 8-bit RGBA). A larger PNG or GIF (up to
    /// `maxSourcePixels`; 16-bit, up to 400 MB decoded) is resized by libvips' `thumbnail` as it is
    /// decoded, as before, and never kept.
    static let maxWholeDecodeBytes = 64 << 20

    /// Whether `bytes` are of a format a decode may be kept of (PNG, GIF, WebP whole; JPEG at a DCT
    /// scale), from their first bytes.
    public static func keepsDecodes(of bytes: [UInt8]) -> Bool {
        switch SourceFormat(sniffing: bytes) {
        case .png, .gif, .webp, .jpeg: true
        default: false
        }
    }

    /// The largest JPEG decode kept (3 bytes a pixel): 32 MiB, e.g. 1/1 of a 3840x2160 source or 1/2 of a
    /// 5120x2880 one. Larger ones (1/1 of a 5 K source, 44 MB) would push a few smaller ones out of
    /// ``DecodedSource``'s cache for the few widths only they serve.
    static let maxKeptJPEGDecodeBytes = 32 << 20

    /// Whether a JPEG's decode at 1/`shrink` is one to keep: a progressive (or multi-scan) file of 8-bit
    /// colour (3 bands), decoded to more than the thread's reused buffer (`IPX_THREAD_BUFFER_MAX_BYTES`, 8
    /// MiB: a thumbnail's decode is not kept, and its source's bytes are not hashed for it) and at most
    /// ``maxKeptJPEGDecodeBytes``. libjpeg reads every scan of such a
    /// file into its whole-image coefficient buffer whatever the scale, so each width decoded again costs
    /// most of a whole decode (200 ms for a 5120x2880 wallpaper, against 20 ms to reduce a kept 1/2 decode
    /// to 1080 px). A baseline file's DCT-scaled decode stays cheaper than holding and reducing a larger
    /// decode (`bench/RESULTS.md`, session 42: keeping baseline decodes too cost the web-like srcset 3%).
    static func keepsJPEGDecode(of header: SourceHeader, shrink: Int) -> Bool {
        guard header.bands == 3, header.frames == 1, header.jpegCoefficientBytes > 0 else { return false }
        let size = ScaleOnLoadStep.decodedSize(header, shrink: shrink)
        let bytes = 3 * size.width * size.height
        return bytes > Int(IPX_THREAD_BUFFER_MAX_BYTES) && bytes <= Self.maxKeptJPEGDecodeBytes
    }

    /// Whether the variant is made from a decode of `width` x `height` (the source's axes) in memory by the
    /// Lanczos3 reduce alone (``ResizeStep/lanczosShrink(width:height:header:arguments:)``), or is that
    /// decode as it is: what a kept JPEG decode is used for.
    private func variantIsReduced(fromWidth width: Int, height: Int, header: SourceHeader, box: ResizeBox) -> Bool {
        let fitted = box.coverBoxFitted(to: header)
        let arguments = fitted.thumbnailArguments(for: header)
        return ResizeStep(box: fitted).lanczosShrink(width: width, height: height, header: header, arguments: arguments) != nil
            || ResizeBox.thumbnailKeepsTheSize(width: width, height: height, arguments: arguments)
    }

    /// The DCT scale at which this JPEG variant's own decode is held whole and kept for the source's next
    /// widths (``DecodedSource``), or nil when it is decoded as before: a variant libjpeg decodes into
    /// memory (``ResizeBox/mayDecodeJPEGInMemory(for:format:)``), reduced from that decode by Lanczos3
    /// alone or equal to it, whose decode ``keepsJPEGDecode(of:shrink:)``. Such a decode would otherwise be
    /// reduced as its rows arrive (``ScaleOnLoadStep/reduceWhileDecoding(_:shrink:)``); held, it costs
    /// the same but for its pages.
    func keptJPEGShrink(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Int? {
        guard format == .jpeg, box.crop == nil, box.frames == 1, box.mayDecodeJPEGInMemory(for: header, format: format) else { return nil }
        let shrink = box.coverBoxFitted(to: header).jpegShrink(for: header)
        guard Self.keepsJPEGDecode(of: header, shrink: shrink) else { return nil }
        let size = ScaleOnLoadStep.decodedSize(header, shrink: shrink)
        return variantIsReduced(fromWidth: size.width, height: size.height, header: header, box: box) ? shrink : nil
    }

    /// Whether this JPEG variant is made from `decoded`, a decode of the same bytes kept by an earlier
    /// variant, instead of decoding: its own decode would be at the kept decode's scale or the next one
    /// down (1/4 from a kept 1/2: at most four times the pixels to reduce, which costs less than libjpeg's
    /// Huffman decoding of the whole file again), and the variant is reduced from the kept decode by
    /// Lanczos3 alone. A larger decode, reduced by Lanczos3, is at least as close to the source as a smaller
    /// DCT-scaled one (`KeptJPEGDecodeTests`); the bytes differ from the variant's own decode's.
    func usesKeptJPEGDecode(_ decoded: DecodedSource, header: SourceHeader, box: ResizeBox) -> Bool {
        guard box.crop == nil, box.frames == 1, decoded.matches(header), box.mayDecodeJPEGInMemory(for: header, format: .jpeg)
        else { return false }
        let own = box.coverBoxFitted(to: header).jpegShrink(for: header)
        guard decoded.shrink <= own, 2 * decoded.shrink >= own else { return false }
        return variantIsReduced(fromWidth: decoded.width, height: decoded.height, header: header, box: box)
    }

    /// Whether the variant `plan` makes of `source` may use a kept decode of it, or keep its own
    /// (``looksUpKeptDecode(of:box:format:)``).
    public func looksUpKeptDecode(for plan: TransformPlan, source: [UInt8]) -> Bool {
        looksUpKeptDecode(of: plan.header, box: plan.box, format: SourceFormat(sniffing: source))
    }

    /// Whether a variant may use a kept decode of its source, or keep its own: the pool then looks one up
    /// under the source's identity (whose bytes are hashed only then). PNG, GIF and WebP where
    /// ``keepsWholeDecode(of:box:format:)``; a JPEG whose own decode, or the next larger one, is one to keep.
    func looksUpKeptDecode(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Bool {
        if format == .jpeg {
            guard box.crop == nil, box.frames == 1, box.mayDecodeJPEGInMemory(for: header, format: format) else { return false }
            let own = box.coverBoxFitted(to: header).jpegShrink(for: header)
            return Self.keepsJPEGDecode(of: header, shrink: own) || (own > 1 && Self.keepsJPEGDecode(of: header, shrink: own / 2))
        }
        return keepsWholeDecode(of: header, box: box, format: format)
    }

    /// Whether a variant that finds no kept decode decodes the source whole (and keeps it) rather than
    /// scaling on load: PNG and GIF below ``ResizeStep/lanczosOnlyBelow`` (from 7x on the resize is
    /// `thumbnail`'s either way, and decoding whole first costs more than `thumbnail` reading the file as
    /// it decodes); a still WebP where libwebp decodes it whole anyway (``ResizeBox/webpScale(for:)`` is 1,
    /// a reduction within 3x), whose smaller variants are cheaper resized from the kept decode (a WebP
    /// decode costs the same at any scale) than decoded again.
    func makesWholeDecode(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Bool {
        let fitted = box.coverBoxFitted(to: header)
        if format == .webp { return fitted.webpScale(for: header) >= 1 }
        return fitted.reduction(for: header) < ResizeStep.lanczosOnlyBelow
    }

    /// Whether a variant of this source is made from a whole decode of it in memory (``DecodedSource``,
    /// kept for the next variants): a still image of a format whose decoder cannot scale at all (PNG,
    /// GIF: the loader decodes them whole anyway; WebP: libwebp decodes the whole frame at any scale) of
    /// at most ``maxWholeDecodeBytes`` decoded, with no crop rectangle and one frame loaded. A kept decode
    /// is used at any reduction; a new one is made where ``makesWholeDecode(of:box:format:)`` says. In
    /// memory an opaque alpha is found and not premultiplied, and the resize is Lanczos3 alone
    /// (``ResizeStep/apply(toWhole:header:deadline:)``). A JPEG is not decoded whole for this: its
    /// DCT-scaled decode costs less than resizing a whole decode (a progressive one keeps its scaled
    /// decode instead, ``keptJPEGShrink(of:box:format:)``); HEIC, AVIF and JPEG XL decoders hold more
    /// memory than their estimates allow for a decode kept in memory. Those are decoded per variant.
    func keepsWholeDecode(of header: SourceHeader, box: ResizeBox, format: SourceFormat?) -> Bool {
        guard box.crop == nil, box.frames == 1, header.frames == 1 else { return false }
        guard header.decodedPixelBytes * header.width * header.height <= Self.maxWholeDecodeBytes else { return false }
        return format == .png || format == .gif || format == .webp
    }

    /// Runs `plan` on this thread, holding `reserved` bytes of the memory budget.
    /// - Parameter grow: asked, without waiting, to grow the reservation to the plan's full reservation
    ///   when the DC-only decoder declines; when it cannot, the run ends with
    ///   ``TransformRun/needsFullReservation``.
    /// - Throws: ``ImagingError`` (undecodable, too slow, processing failed, ...).
    public func run(
        _ plan: TransformPlan, source: [UInt8], overlay: [UInt8]?, reserved: Int, grow: (Int) -> Bool
    ) throws(ImagingError) -> TransformRun {
        let deadline = TransformDeadline(limitMilliseconds: maxTransformMilliseconds)
        defer { deadline.finish() }
        do {
            return try run(plan, source: source, overlay: overlay, reserved: reserved, grow: grow, deadline: deadline)
        } catch {
            if deadline.hasExpired { throw .tooSlow(limitMilliseconds: maxTransformMilliseconds) }
            throw error
        }
    }

    private func run(
        _ plan: TransformPlan, source: [UInt8], overlay: [UInt8]?, reserved: Int, grow: (Int) -> Bool,
        deadline: TransformDeadline
    ) throws(ImagingError) -> TransformRun {
        let request = plan.request
        var eighth = ScaleOnLoadStep.EighthAttempt.untried
        if plan.eighthDeclined { eighth = .declined }
        if plan.leavesKeptSizeToLoader { eighth = .scaledDeclined }
        if plan.triesEighthFirst {
            eighth = try ScaleOnLoadStep.decodeEighth(
                source, header: plan.header, box: plan.box.coverBoxFitted(to: plan.header), deadline: deadline
            ).map { .decoded($0) } ?? .declined
            if case .declined = eighth, reserved < plan.fullReservation, !grow(plan.fullReservation) {
                return .needsFullReservation
            }
            // The 1/8 image reduced and encoded as one step, as libjpeg's own scaled decode is.
            if case .decoded(let image) = eighth, let encoder = plan.reduceEncoder,
                let encoded = try encoder.encoded(
                    reducing: image, box: plan.box.coverBoxFitted(to: plan.header), header: plan.header, deadline: deadline)
            {
                return .encoded(encoded, kept: nil)
            }
        }
        if plan.triesScaledFirst {
            let fitted = plan.box.coverBoxFitted(to: plan.header)
            let shrink = fitted.jpegShrink(for: plan.header)
            let scaleOnLoad = ScaleOnLoadStep(box: fitted)
            if let encoder = plan.reduceEncoder, let reduce = scaleOnLoad.reduceWhileDecoding(plan.header, shrink: shrink),
                let encoded = try encoder.encoded(decoding: source, shrink: shrink, reduce: reduce, header: plan.header, deadline: deadline)
            {
                return .encoded(encoded, kept: nil)
            }
            switch try scaleOnLoad.decodeJPEG(source, shrink: shrink, header: plan.header, deadline: deadline) {
            case .decoded(let image):
                eighth = .decoded(image)
            case .reduced(let image):
                eighth = .reduced(image)
            default:
                if reserved < plan.fullReservation, !grow(plan.fullReservation) { return .needsFullReservation }
                eighth = .scaledDeclined
            }
        }
        var image: VipsImage
        var kept: DecodedSource?
        do throws(ImagingError) {
            if let decoded = plan.decoded {
                if let encoded = try encodedReducing(decoded, plan: plan, deadline: deadline) { return .encoded(encoded, kept: nil) }
                image = try SourceSteps(box: plan.box).image(fromWhole: decoded, header: plan.header, deadline: deadline)
            } else if plan.decodesWhole {
                let decoded: DecodedSource
                if let shrink = plan.wholeJPEGShrink {
                    guard let jpeg = try DecodedSource.decodingJPEG(source, shrink: shrink, header: plan.header, deadline: deadline) else {
                        // libjpeg declined the file: libvips' loader reads it, under its reservation.
                        if reserved < plan.fullReservation, !grow(plan.fullReservation) { return .needsFullReservation }
                        return try run(plan.withFullReservation, source: source, overlay: overlay, reserved: reserved, grow: grow, deadline: deadline)
                    }
                    decoded = jpeg
                } else {
                    decoded = try DecodedSource.decoding(source, header: plan.header, deadline: deadline)
                }
                guard decoded.matches(plan.header) else { throw ImagingError.undecodable }
                if decoded.hasRealAlpha, reserved < plan.fullReservation, !grow(plan.fullReservation) {
                    return .needsFullReservation
                }
                if let encoded = try encodedReducing(decoded, plan: plan, deadline: deadline) { return .encoded(encoded, kept: decoded) }
                image = try SourceSteps(box: plan.box).image(fromWhole: decoded, header: plan.header, deadline: deadline)
                kept = decoded
            } else {
                image = try SourceSteps(box: plan.box).image(from: source, header: plan.header, deadline: deadline, eighth: eighth)
            }
        } catch .undecodable where plan.box.frames > 1 && !deadline.hasExpired {
            // A later frame is damaged: served from the first frame, as every one-frame variant of this
            // source is (one answer per source, whatever the output format).
            var first = plan.box
            first.frames = 1
            image = try SourceSteps(box: first).image(from: source, header: plan.header, deadline: deadline)
        }
        // The profile's bytes copied while the loader is still open (HEIF: see ipx_vips_with_own_profile).
        if plan.keepProfile { image = try image.producing { ipx_vips_with_own_profile($0, $1) } }
        for step in imageSteps(for: request, overlay: overlay) {
            image = try step.apply(to: image)
        }
        let encode = EncodeStep(
            choice: plan.choice, request: request, settings: encoding, keepProfile: plan.keepProfile,
            placeholderQuality: Self.placeholderQuality)
        return .encoded(try encode.apply(to: image, deadline: deadline), kept: kept)
    }

    /// The variant made from a whole decode by the reduce and the encoder as one step
    /// (``TransformPlan/reduceEncoder``), or nil when the plan has no such step or the decode is not
    /// reduced that way (a real alpha, grey, a reduction `thumbnail` makes).
    private func encodedReducing(
        _ decoded: DecodedSource, plan: TransformPlan, deadline: TransformDeadline
    ) throws(ImagingError) -> EncodedImage? {
        guard let encoder = plan.reduceEncoder, !decoded.hasRealAlpha else { return nil }
        return try encoder.encoded(reducing: decoded.image, box: plan.box.coverBoxFitted(to: plan.header), header: plan.header, deadline: deadline)
    }

    /// The steps between the resize and the encoder, in their order: sRGB, the pad canvas, the filters,
    /// the watermark, the text.
    func imageSteps(for request: ImageRequest, overlay: [UInt8]?) -> [any ImagingStep] {
        var steps: [any ImagingStep] = [ColourspaceStep()]
        if request.fit == .pad, let width = request.width, let height = request.height {
            steps.append(PadStep(width: width, height: height, background: request.background))
        }
        steps += request.filters.map { FilterStep(filter: $0) }
        if let watermark = request.watermark, let overlay {
            steps.append(OverlayStep(overlay: overlay, placement: watermark.placement))
        }
        if let text = request.text {
            steps.append(TextStep(overlay: text, font: textFont))
        }
        return steps
    }

    /// The CPU the transform is estimated to cost (``TransformCost``): the decode at the plan's scale and
    /// every encode of the output.
    func cost(of request: ImageRequest, header: SourceHeader, box: ResizeBox, choice: FormatChoice, source: SourceFormat?)
        -> TransformCost
    {
        let output: OutputFormat
        switch choice {
        case .fixed(let fixed): output = fixed
        case .jpegOrPNG, .source: output = header.hasAlpha ? .png : .jpeg
        }
        let shrink = source == .jpeg ? box.coverBoxFitted(to: header).jpegShrink(for: header) : 1
        let frames = max(1, min(box.frames, header.frames))
        let decoded = header.width / shrink * (header.height / shrink) * frames
        let encodes = request.maxBytes != nil && SizeTargetEncoder.applies(to: output) ? SizeTargetEncoder.maxEncodes : 1
        return TransformCost(
            source: source, decodedPixels: decoded, format: output, outputPixels: box.estimatedOutputPixels(for: header),
            encodes: encodes)
    }

    /// The CPU estimate of the variant `request` asks of `source` (``TransformCost``), from its header alone;
    /// nil when the header cannot be read (the transform itself then says why).
    public func estimatedCost(_ source: [UInt8], request: ImageRequest, choice: FormatChoice) -> TransformCost? {
        guard let (_, header) = try? SourceHeader.checked(
            source, maxSourcePixels: maxSourcePixels, maxSourceFrames: maxSourceFrames, allowJXL: allowJXLInput)
        else { return nil }
        let format = SourceFormat(sniffing: source)
        let choice = choice.resolved(forSource: format)
        let box = boundedBox(for: request, header: header, choice: choice)
        return cost(of: request, header: header, box: box, choice: choice, source: format)
    }

    /// Refuses a plan whose ``cost(of:header:box:choice:source:)`` is over ``maxTransformCpuMilliseconds``.
    /// - Throws: ``ImagingError/tooExpensive(estimateMilliseconds:limitMilliseconds:)``.
    func checkCost(of request: ImageRequest, header: SourceHeader, box: ResizeBox, choice: FormatChoice, source: SourceFormat?)
        throws(ImagingError)
    {
        guard maxTransformCpuMilliseconds > 0 else { return }
        let estimate = cost(of: request, header: header, box: box, choice: choice, source: source).milliseconds
        guard estimate <= maxTransformCpuMilliseconds else {
            throw .tooExpensive(estimateMilliseconds: estimate, limitMilliseconds: maxTransformCpuMilliseconds)
        }
    }

    /// The box of `request` for a source with `header`, every side held to ``maxOutputDimension``: the
    /// only way a plan makes its box.
    func boundedBox(for given: ImageRequest, header: SourceHeader, choice: FormatChoice) -> ResizeBox {
        var request = given
        let upright = header.orientedSize
        request.fit = given.fit.resolved(
            boxWidth: given.width, boxHeight: given.height, sourceWidth: upright.width, sourceHeight: upright.height)
        return ResizeBox(request: request, frames: animatedFrames(header: header, request: request, choice: choice))
            .bounded(toMaxDimension: maxOutputDimension, for: header)
    }

    /// Frames to load: all (up to `maxFrames`) when the animation can be kept, else 1.
    func animatedFrames(header: SourceHeader, request: ImageRequest, choice: FormatChoice) -> Int {
        guard header.frames > 1, choice == .fixed(.gif) || choice == .fixed(.webp), !request.placeholder, request.crop == nil,
            request.fit == .contain || request.fit == .fill, request.filters.allSatisfy(\.isColourOnly)
        else { return 1 }
        return min(header.frames, maxFrames)
    }
}
