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
        var choice = choice
        var box = ResizeBox(request: request, frames: animatedFrames(header: header, request: request, choice: choice))
        if choice == .fixed(.jxl), box.estimatedOutputPixels(for: header) > encoding.jxlMaxPixels {
            // libjxl holds ~50 bytes an output pixel: a negotiated JPEG XL becomes WebP, an asked-for one a 422.
            guard request.format == .auto else { throw .outputTooLarge(format: "jxl", limit: encoding.jxlMaxPixels) }
            choice = .fixed(.webp)
            box = ResizeBox(request: request, frames: animatedFrames(header: header, request: request, choice: choice))
        }
        let format = SourceFormat(sniffing: source)
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
        // From 7x on the resize is `thumbnail`'s either way, and decoding whole first costs more than
        // `thumbnail` reading the file as it decodes: only a kept decode is used there.
        if whole, makesWholeDecode(of: header, box: box, format: format) {
            // Reserved for an opaque alpha first; a real one (found once decoded) grows the reservation.
            let opaque = box.estimatedBytesDecodingWhole(for: header, format: format, realAlpha: false, reduceEncoded: encodesReduce)
                + extraBytes
            let full = box.estimatedBytesDecodingWhole(for: header, format: format, realAlpha: header.hasAlpha, reduceEncoded: encodesReduce)
                + extraBytes
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
                triesEighthFirst: true, triesScaledFirst: false, decoded: nil, decodesWhole: false, reservation: first,
                fullReservation: full)
        }
        // A JPEG libjpeg decodes into memory and the pool thread reduces to a forced size reserves that
        // path's working set, and libvips' loader's only if libjpeg declines the file (CMYK, damage).
        // A JPEG kept at its size (the decode is the variant) for another encoder than libjpeg's goes through
        // libvips' loader as before, under its reservation: those encoders' estimates (``EncoderWorkingSet``)
        // were measured on that path.
        let encoderCoefficientBytes = jpegEncoderCoefficientBytes(request, choice)
        let keptSizeForAnotherEncoder = format == .jpeg && encoderCoefficientBytes == 0 && box.wholeDecodeIsTheVariant(for: header)
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

    /// The largest decode held whole in memory: 64 MiB (16 MP of 8-bit RGBA). A larger PNG or GIF (up to
    /// `maxSourcePixels`; 16-bit, up to 400 MB decoded) is resized by libvips' `thumbnail` as it is
    /// decoded, as before, and never kept.
    static let maxWholeDecodeBytes = 64 << 20

    /// Whether `bytes` are of a format whose variants may be made from a whole decode (PNG, GIF, WebP),
    /// from their first bytes: the sources a decode may be kept of.
    public static func decodesWhole(_ bytes: [UInt8]) -> Bool {
        switch SourceFormat(sniffing: bytes) {
        case .png, .gif, .webp: true
        default: false
        }
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
    /// (``ResizeStep/apply(toWhole:header:deadline:)``). A JPEG's DCT-scaled decode costs less than
    /// resizing a whole decode; HEIC, AVIF and JPEG XL decoders hold more memory than their estimates
    /// allow for a decode kept in memory. Those are decoded per variant.
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
            eighth = try ScaleOnLoadStep.decodeEighth(source, header: plan.header, deadline: deadline).map { .decoded($0) } ?? .declined
            if case .declined = eighth, reserved < plan.fullReservation, !grow(plan.fullReservation) {
                return .needsFullReservation
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
                let decoded = try DecodedSource.decoding(source, header: plan.header, deadline: deadline)
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

    /// Frames to load: all (up to `maxFrames`) when the animation can be kept, else 1.
    func animatedFrames(header: SourceHeader, request: ImageRequest, choice: FormatChoice) -> Int {
        guard header.frames > 1, choice == .fixed(.gif) || choice == .fixed(.webp), !request.placeholder, request.crop == nil,
            request.fit == .contain || request.fit == .fill, request.filters.allSatisfy(\.isColourOnly)
        else { return 1 }
        return min(header.frames, maxFrames)
    }
}
