import CVipsShim

/// Running a plan: the decode, the steps and the encode, on the transform pool.
extension ImageTransformer {
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
        let phases = TransformPhaseRecorder()
        do {
            let result = try run(plan, source: source, overlay: overlay, reserved: reserved, grow: grow, deadline: deadline, phases: phases)
            phases.finish()
            guard case .encoded(var encoded, let kept) = result else { return result }
            encoded.phases = phases.phases
            return .encoded(encoded, kept: kept)
        } catch {
            if deadline.hasExpired { throw .tooSlow(limitMilliseconds: maxTransformMilliseconds) }
            throw error
        }
    }

    private func run(
        _ plan: TransformPlan, source: [UInt8], overlay: [UInt8]?, reserved: Int, grow: (Int) -> Bool,
        deadline: TransformDeadline, phases: TransformPhaseRecorder
    ) throws(ImagingError) -> TransformRun {
        let request = plan.request
        var eighth = ScaleOnLoadStep.EighthAttempt.untried
        if plan.eighthDeclined { eighth = .declined }
        if plan.leavesKeptSizeToLoader { eighth = .scaledDeclined }
        if plan.triesEighthFirst {
            phases.begin("decode", [("imageproxy.decoder", .text("jpeg-dc")), ("imageproxy.decode.scale", .integer(8))])
            eighth = try ScaleOnLoadStep.decodeEighth(
                source, header: plan.header, box: plan.box.coverBoxFitted(to: plan.header), deadline: deadline
            ).map { .decoded($0) } ?? .declined
            if case .declined = eighth, reserved < plan.fullReservation, !grow(plan.fullReservation) {
                return .needsFullReservation
            }
            // The 1/8 image reduced and encoded as one step, as libjpeg's own scaled decode is.
            if case .decoded = eighth, plan.reduceEncoder != nil { phases.begin("resize_encode") }
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
            phases.begin("decode_resize_encode", [("imageproxy.decoder", .text("libjpeg")), ("imageproxy.decode.scale", .integer(shrink))])
            if let encoder = plan.reduceEncoder, let reduce = scaleOnLoad.reduceWhileDecoding(plan.header, shrink: shrink),
                let encoded = try encoder.encoded(decoding: source, shrink: shrink, reduce: reduce, header: plan.header, deadline: deadline)
            {
                return .encoded(encoded, kept: nil)
            }
            phases.begin("decode", [("imageproxy.decoder", .text("libjpeg")), ("imageproxy.decode.scale", .integer(shrink))])
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
                phases.begin("resize_encode", [("imageproxy.decoder", .text("kept"))])
                if let encoded = try encodedReducing(decoded, plan: plan, deadline: deadline) { return .encoded(encoded, kept: nil) }
                phases.begin("resize", [("imageproxy.decoder", .text("kept"))])
                image = try SourceSteps(box: plan.box).image(fromWhole: decoded, header: plan.header, deadline: deadline)
            } else if plan.decodesWhole {
                let decoded: DecodedSource
                phases.begin("decode", [("imageproxy.decoder", .text(plan.wholeJPEGShrink == nil ? "whole" : "libjpeg"))])
                if let shrink = plan.wholeJPEGShrink {
                    phases.note("imageproxy.decode.scale", .integer(shrink))
                    guard let jpeg = try DecodedSource.decodingJPEG(source, shrink: shrink, header: plan.header, deadline: deadline) else {
                        // libjpeg declined the file: libvips' loader reads it, under its reservation.
                        if reserved < plan.fullReservation, !grow(plan.fullReservation) { return .needsFullReservation }
                        return try run(
                            plan.withFullReservation, source: source, overlay: overlay, reserved: reserved, grow: grow, deadline: deadline,
                            phases: phases)
                    }
                    decoded = jpeg
                } else {
                    decoded = try DecodedSource.decoding(source, header: plan.header, deadline: deadline)
                }
                guard decoded.matches(plan.header) else { throw ImagingError.undecodable }
                if decoded.hasRealAlpha, reserved < plan.fullReservation, !grow(plan.fullReservation) {
                    return .needsFullReservation
                }
                phases.begin("resize_encode")
                if let encoded = try encodedReducing(decoded, plan: plan, deadline: deadline) { return .encoded(encoded, kept: decoded) }
                phases.begin("resize")
                image = try SourceSteps(box: plan.box).image(fromWhole: decoded, header: plan.header, deadline: deadline)
                kept = decoded
            } else {
                switch eighth {
                case .decoded, .reduced: phases.begin("resize")
                default: phases.begin("decode", [("imageproxy.decoder", .text("libvips")), ("imageproxy.pipeline", .text("lazy"))])
                }
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
        let steps = imageSteps(for: request, overlay: overlay)
        if steps.count > 1 {
            // The steps after the resize: named for the overlays when there are any (they cost most).
            phases.begin(request.watermark != nil || request.text != nil ? "overlays" : "filters", [("imageproxy.steps", .integer(steps.count))])
        }
        for step in steps {
            image = try step.apply(to: image)
        }
        phases.begin("encode")
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
}
