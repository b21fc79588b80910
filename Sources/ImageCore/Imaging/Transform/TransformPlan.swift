/// A transform decided from the source's header before anything is decoded: the request as it will be
/// made (a placeholder's own box), the output format, the box, and the memory to reserve. Made by
/// ``ImageTransformer/plan(_:request:choice:overlay:)`` off the transform pool, so the pool's admission
/// reserves ``reservation`` before a job takes a thread; run by ``ImageTransformer/run(_:source:overlay:reserved:grow:)``.
public struct TransformPlan: Sendable {
    /// Whether this plan resizes from a kept whole decode of the source (no decode of its own).
    public var usesDecodedSource: Bool { decoded != nil }

    let request: ImageRequest
    let header: SourceHeader
    let choice: FormatChoice
    let box: ResizeBox
    /// `colour=keep` applies: the source's wide-gamut profile goes into the output.
    let keepProfile: Bool
    /// The DC-only decoder is tried first, under ``reservation`` (smaller than ``fullReservation``).
    let triesEighthFirst: Bool
    /// libjpeg's scaled decode into memory is tried first, under ``reservation`` (its own working set,
    /// smaller than libvips' loader's in ``fullReservation``).
    let triesScaledFirst: Bool
    /// The DC-only decoder declined this source in an earlier run: it is not tried again.
    var eighthDeclined = false
    /// libvips' loader reads the JPEG, under the loader's reservation: one asked for at its own size for an
    /// encoder other than libjpeg's (as before the decode could be the variant), or one whose decode to
    /// keep (``wholeJPEGShrink``) libjpeg declined.
    var leavesKeptSizeToLoader = false
    /// With ``decodesWhole``, a JPEG decoded by libjpeg at 1/this scale into memory of its own, held whole
    /// and kept (``ImageTransformer/keptJPEGShrink(of:box:format:)``); nil for a whole decode of another format.
    var wholeJPEGShrink: Int?
    /// The source decoded whole by an earlier transform, resized from instead of decoding (its memory is
    /// held by whoever keeps it, not by this plan's reservation).
    let decoded: DecodedSource?
    /// The reduce to the forced size and the JPEG encoder are one step (nothing happens between them): the
    /// reduced image is never held, and ``reservation`` leaves it out.
    var reduceEncoder: ReducedJPEGEncoder?
    /// The source is decoded whole into memory and the run hands the decode back
    /// (``TransformRun/encoded(_:kept:)``) to be kept for the source's next variants.
    public let decodesWhole: Bool

    /// Bytes to reserve before the transform runs.
    public let reservation: Int
    /// Bytes the transform needs when the DC-only decoder declines the source (libjpeg's coefficient
    /// buffer included), when libjpeg's scaled decode declines it (libvips' loader then decodes it), or
    /// when a source decoded whole has a real alpha (premultiplied in floating point); ``reservation``
    /// when none can happen.
    public let fullReservation: Int

    /// The plan for running again after a decoder tried first declined and the run asked for
    /// ``fullReservation``: the DC-only decoder is not tried again, and all of it is reserved up front.
    public var withFullReservation: TransformPlan {
        var plan = TransformPlan(
            request: request, header: header, choice: choice, box: box, keepProfile: keepProfile, triesEighthFirst: false,
            triesScaledFirst: false, decoded: decoded, decodesWhole: decodesWhole && wholeJPEGShrink == nil,
            reservation: fullReservation, fullReservation: fullReservation)
        plan.eighthDeclined = triesEighthFirst || eighthDeclined
        // A JPEG decode to keep is asked for all of it only when libjpeg declined the file: the loader's turn.
        plan.leavesKeptSizeToLoader = leavesKeptSizeToLoader || wholeJPEGShrink != nil
        plan.reduceEncoder = reduceEncoder
        return plan
    }
}

/// What a run of a plan gave.
public enum TransformRun: Sendable {
    /// The variant, and the source's whole decode when the plan made one to keep
    /// (``TransformPlan/decodesWhole``).
    case encoded(EncodedImage, kept: DecodedSource?)
    /// The DC-only decoder declined the source (or a whole decode found a real alpha) and the budget
    /// could not grow to the plan's ``TransformPlan/fullReservation`` at once: reserve it (waiting off the
    /// pool) and run ``TransformPlan/withFullReservation``.
    case needsFullReservation
}
