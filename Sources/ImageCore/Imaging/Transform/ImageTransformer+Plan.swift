import CVipsShim

/// Planning: the header read, the box, the format and the memory a transform reserves, before any decode.
extension ImageTransformer {
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
            source, maxSourcePixels: maxSourcePixels, maxSourceFrames: maxSourceFrames, allowJXL: allowJXLInput,
            allowSVG: allowSVGInput)
        var request = original
        let format = SourceFormat(sniffing: source)
        // format=source becomes the source's own format before anything reads the choice.
        var choice = choice.resolved(forSource: format)
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
        if format == .svg { vectorSourceChoices(&request, &choice) }
        var box = boundedBox(for: request, header: header, choice: choice)
        // An SVG's pixels are those it is drawn at (its declared size says nothing of the work).
        if format == .svg, box.svgRenderPixels(for: header) > maxSourcePixels { throw .tooManyPixels(limit: maxSourcePixels) }
        for (capped, limit) in [(OutputFormat.jxl, encoding.jxlMaxPixels), (.avif, encoding.avifMaxPixels)]
        where choice == .fixed(capped) && box.estimatedOutputPixels(for: header) > limit {
            // libjxl holds ~50 bytes an output pixel, libaom costs seconds a megapixel: a negotiated JPEG XL
            // or AVIF becomes WebP, an asked-for one a 422.
            guard request.format == .auto else { throw .outputTooLarge(format: capped.rawValue, limit: limit) }
            choice = .fixed(.webp)
            box = boundedBox(for: request, header: header, choice: choice)
        }
        try checkCost(of: request, header: header, box: box, choice: choice, source: format)
        // The encoder's own buffers (AVIF's above all) and a watermark's are part of the working set too.
        let extraBytes = EncoderWorkingSet.bytes(for: choice, pixels: box.estimatedOutputPixels(for: header))
            + (request.watermark == nil ? 0 : overlay.map(OverlayStep.workingSetBytes(of:)) ?? 0)
            + (request.filters.contains { if case .redactFaces = $0 { true } else { false } } ? FaceDetector.workingSetBytes : 0)
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

    /// An SVG source is drawn at the size the output needs (``ResizeBox/svgScale(for:)``), so it grows as
    /// readily as it shrinks (`enlarge` is implied); a negotiated AVIF or JPEG XL becomes WebP (flat colours
    /// and sharp edges, which WebP and PNG keep at a fraction of the CPU). A placeholder keeps its own box.
    private func vectorSourceChoices(_ request: inout ImageRequest, _ choice: inout FormatChoice) {
        if !request.placeholder { request.enlarge = true }
        if request.format == .auto, choice == .fixed(.avif) || choice == .fixed(.jxl) { choice = .fixed(.webp) }
    }

    /// libjpeg's coefficient buffer an output pixel when `choice` makes a JPEG of a JPEG source (no alpha)
    /// at the request's quality, else 0 (``ResizeBox/jpegEncoderCoefficientBytesPerPixel(quality:)``).
    private func jpegEncoderCoefficientBytes(_ request: ImageRequest, _ choice: FormatChoice) -> Int {
        guard choice == .fixed(.jpeg) || choice == .jpegOrPNG else { return 0 }
        let quality = request.maxBytes == nil ? request.quality ?? encoding.defaultQuality(for: .jpeg) : 100
        return ResizeBox.jpegEncoderCoefficientBytesPerPixel(quality: quality)
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
