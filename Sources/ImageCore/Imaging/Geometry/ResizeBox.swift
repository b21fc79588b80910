/// The box arithmetic of a resize: where `fit` puts the source in the box (contain and pad: inside it;
/// cover: fills it, cropped around the gravity, focal point or the salient region; fill: stretched),
/// what libvips' `thumbnail` is asked for, and how much smaller than the source the output is. Pure
/// arithmetic on the header: the steps that decode and resize (``ScaleOnLoadStep``, ``CropStep``,
/// ``ResizeStep``) and the memory estimate (``ResizeBox/estimatedWorkingSetBytes(for:format:eighthDecoded:)``)
/// all read it.
struct ResizeBox: Sendable {
    var width: Int?
    var height: Int?
    var fit: FitMode
    var enlarge: Bool
    var gravity: Gravity
    var focalPoint: FocalPoint?
    /// Frames to load (1 = the first only).
    var frames: Int = 1
    /// A rectangle of the upright source cut out first; the box arithmetic is then the rectangle's.
    var crop: CropRectangle?

    /// libvips' "no limit" for one side of the box.
    static let unbounded = 10_000_000

    /// libvips' `VipsSize`: whether `thumbnail` may enlarge, reduce, or force the size.
    enum Size: Int32 { case both = 0, up = 1, down = 2, force = 3 }
    /// libvips' `VipsInteresting` as `thumbnail` takes it (none: no crop).
    enum Crop: Int32 { case none = -1, centre = 1, attention = 3 }

    /// A plain resize into a box (no crop anchors), one frame.
    init(width: Int?, height: Int?, fit: FitMode) {
        self.width = width
        self.height = height
        self.fit = fit
        self.enlarge = false
        self.gravity = .centre
        self.focalPoint = nil
    }

    /// The box of `request`, loading `frames` frames (one when it crops).
    init(request: ImageRequest, frames: Int = 1) {
        width = request.width
        height = request.height
        fit = request.fit
        enlarge = request.enlarge
        gravity = request.gravity
        focalPoint = request.focalPoint
        crop = request.crop
        self.frames = crop == nil ? frames : 1
    }

    /// How the cover crop happens: inside `thumbnail` (centre, smart) or afterwards around an anchor.
    enum CoverPlan {
        case none
        case thumbnail(Crop)
        case anchored(x: Double, y: Double, focal: Bool)
    }

    var coverPlan: CoverPlan {
        guard fit == .cover, width != nil, height != nil else { return .none }
        if let focalPoint { return .anchored(x: focalPoint.x, y: focalPoint.y, focal: true) }
        guard let anchor = gravity.anchor else { return .thumbnail(.attention) }
        if gravity == .centre { return .thumbnail(.centre) }
        return .anchored(x: anchor.x, y: anchor.y, focal: false)
    }

    /// The libvips thumbnail arguments for a source of the given header.
    func thumbnailArguments(for header: SourceHeader) -> (width: Int, height: Int, size: Int32, crop: Int32) {
        let growth: Size = enlarge ? .both : .down
        let source = header.orientedSize
        guard let width, let height else {
            if let exact = exactFit(source: source) { return (exact.width, exact.height, Size.force.rawValue, Crop.none.rawValue) }
            return (width ?? Self.unbounded, height ?? Self.unbounded, growth.rawValue, Crop.none.rawValue)
        }
        switch (fit, coverPlan) {
        case (.contain, _), (.pad, _), (.auto, _):  // auto is resolved before a box is made
            if let exact = exactFit(source: source) { return (exact.width, exact.height, Size.force.rawValue, Crop.none.rawValue) }
            return (width, height, growth.rawValue, Crop.none.rawValue)
        case (.cover, .thumbnail(let crop)):
            return (width, height, growth.rawValue, crop.rawValue)
        case (.cover, _):
            // Scale so the image covers the box; the anchored crop follows (``CoverCropStep``).
            var scale = max(Double(width) / Double(source.width), Double(height) / Double(source.height))
            if !enlarge { scale = min(scale, 1) }
            // Both sides forced to the nearest pixel of the same scale: `thumbnail` deriving the height from a width
            // rounded up scaled the picture up to a pixel more than the box at its far edge.
            let coverWidth = Self.side(Double(source.width) * scale), coverHeight = Self.side(Double(source.height) * scale)
            return (coverWidth, coverHeight, Size.force.rawValue, Crop.none.rawValue)
        case (.fill, _):
            guard !enlarge else { return (width, height, Size.force.rawValue, Crop.none.rawValue) }
            let factor = min(1, Double(source.width) / Double(width), Double(source.height) / Double(height))
            return (
                Self.side(Double(width) * factor), Self.side(Double(height) * factor),
                Size.force.rawValue, Crop.none.rawValue
            )
        }
    }

    /// The output size of a reduction into the box with the aspect kept (contain, pad, or one side
    /// given), for `thumbnail` to force: nil when nothing is reduced (the source fits, `enlarge`, or an
    /// animation, whose frames libvips sizes itself).
    ///
    /// libvips' `thumbnail` reduces both axes by one factor and rounds the result, so the last row or
    /// column reaches past the source (1600 rows / 8.533 = 187.5, made 188). Forced to the rounded size,
    /// each axis is reduced by its own exact factor and every output pixel covers the same share of the
    /// source, as Pillow's resize does: on the benchmark's photographs this is worth up to 0.013 SSIM
    /// against a Lanczos3 reference of the full decode (`bench/RESULTS.md`).
    private func exactFit(source: (width: Int, height: Int)) -> (width: Int, height: Int)? {
        guard frames == 1, !enlarge, source.width > 0, source.height > 0 else { return nil }
        let across = width.map { Double(source.width) / Double($0) } ?? 0
        let down = height.map { Double(source.height) / Double($0) } ?? 0
        let scale = max(across, down)
        guard scale > 1 else { return nil }
        return (
            Self.side(Double(source.width) / scale), Self.side(Double(source.height) / scale)
        )
    }

    /// How many times smaller than the source the output is (1 when enlarging or animated).
    func reduction(for header: SourceHeader) -> Double {
        guard frames == 1, !enlarge else { return 1 }
        let arguments = thumbnailArguments(for: header)
        let source = header.orientedSize
        let across = Double(source.width) / Double(arguments.width)
        let down = Double(source.height) / Double(arguments.height)
        // Cropping and stretching keep the side that needs more pixels; contain the other.
        let coversBox = arguments.crop != Crop.none.rawValue || arguments.size == Size.force.rawValue
        return coversBox ? min(across, down) : max(across, down)
    }

    /// A cover box larger than the source without `enlarge`, shrunk (aspect kept) to the largest box the
    /// source fills: a 3000x3000 box over an 800x500 source is 500x500. Frontends laying out tiles get
    /// the box's aspect at the largest size the source allows (as `fill` does).
    func coverBoxFitted(to header: SourceHeader) -> ResizeBox {
        guard fit == .cover, !enlarge, let width, let height else { return self }
        let source = header.orientedSize
        let factor = min(Double(source.width) / Double(width), Double(source.height) / Double(height))
        guard factor < 1 else { return self }
        var fitted = self
        fitted.width = min(source.width, Self.side(Double(width) * factor))
        fitted.height = min(source.height, Self.side(Double(height) * factor))
        return fitted
    }

    /// The box without its crop rectangle, fitted to the rectangle `cropped` describes: the arithmetic
    /// of the resize that follows the cut.
    func afterCrop(_ cropped: SourceHeader) -> ResizeBox {
        var inner = self
        inner.crop = nil
        return inner.coverBoxFitted(to: cropped)
    }
}
