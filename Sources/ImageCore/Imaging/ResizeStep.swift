import CVipsShim

/// Decodes and resizes in one libvips `thumbnail` call: shrink-on-load, EXIF auto-rotation, and the box
/// arithmetic of `fit` (contain and pad: inside the box; cover: fills it, cropped around the gravity,
/// focal point or the salient region; fill: stretched). Animated sources load `frames` frames.
struct ResizeStep {
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
    private static let unbounded = 10_000_000

    private enum Size: Int32 { case both = 0, up = 1, down = 2, force = 3 }
    private enum Crop: Int32 { case none = -1, centre = 1, attention = 3 }

    /// A plain resize into a box (no crop anchors), one frame.
    init(width: Int?, height: Int?, fit: FitMode) {
        self.width = width
        self.height = height
        self.fit = fit
        self.enlarge = false
        self.gravity = .centre
        self.focalPoint = nil
    }

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
    private enum CoverPlan {
        case none
        case thumbnail(Crop)
        case anchored(x: Double, y: Double, focal: Bool)
    }

    private var coverPlan: CoverPlan {
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
        case (.contain, _), (.pad, _):
            if let exact = exactFit(source: source) { return (exact.width, exact.height, Size.force.rawValue, Crop.none.rawValue) }
            return (width, height, growth.rawValue, Crop.none.rawValue)
        case (.cover, .thumbnail(let crop)):
            return (width, height, growth.rawValue, crop.rawValue)
        case (.cover, _):
            // Scale so the image covers the box; the anchored crop follows in `apply`.
            var scale = max(Double(width) / Double(source.width), Double(height) / Double(source.height))
            if !enlarge { scale = min(scale, 1) }
            let coverWidth = max(1, Int((Double(source.width) * scale).rounded(.up)))
            return (coverWidth, Self.unbounded, Size.both.rawValue, Crop.none.rawValue)
        case (.fill, _):
            guard !enlarge else { return (width, height, Size.force.rawValue, Crop.none.rawValue) }
            let factor = min(1, Double(source.width) / Double(width), Double(source.height) / Double(height))
            return (
                max(1, Int((Double(width) * factor).rounded())), max(1, Int((Double(height) * factor).rounded())),
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
            max(1, Int((Double(source.width) / scale).rounded())), max(1, Int((Double(source.height) / scale).rounded()))
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

    /// The JPEG shrink-on-load factor (1, 2, 4 or 8) for a baseline JPEG: the largest whose decoded
    /// image still has ``jpegShrinkMargin`` times the output's size, so the final Lanczos3 reduce has
    /// some detail to work with.
    ///
    /// libvips' own rule keeps twice the output's size, which for common thumbnail widths means 1/4
    /// where 1/8 would do; Pillow's draft mode (thumbor) keeps just the output's size, which costs
    /// sharpness when the source is barely 8x the output (2560 px to 300). With 1.25 (measured on the
    /// benchmark corpus, `bench/RESULTS.md`): 3840 px photos to 300 px decode at 1/8, 2560 px ones at
    /// 1/4, and the mean SSIM against a Lanczos3 reduce of the full decode is above thumbor's.
    func jpegShrink(for header: SourceHeader) -> Int {
        let reduction = self.reduction(for: header)
        return [8, 4, 2].first { Double($0) * Self.jpegShrinkMargin <= reduction } ?? 1
    }

    /// How many times the output's size a shrunk-on-load baseline JPEG keeps at least.
    static let jpegShrinkMargin = 1.25

    /// The memory a transform of a source with this header needs at most, estimated before decoding:
    /// the decoded image (every frame loaded; 4 bytes a pixel) twice (the decode and one intermediate),
    /// plus the output box. The decode is the source's size except where the loader shrinks on load: a
    /// JPEG at its shrink (plus libjpeg's whole-image coefficient buffer for a progressive or multi-scan
    /// file, ``SourceHeader/jpegCoefficientBytes``, unless the DC-only 1/8 image is in hand), a
    /// WebP at the output's size (libwebp scales while decoding; plus ``webpDecoderBytes``). Measured
    /// against the process's peak RSS per transform in `bench/RESULTS.md`.
    ///
    /// `eighthDecoded`: the DC-only 1/8 image is already in hand (``decodeEighth(_:header:deadline:)``), so
    /// libjpeg's coefficient buffer is not needed. Without it the buffer is counted whatever the header
    /// says, because the DC decoder declines many files its frame header looks right for (an Adobe
    /// segment with transform 0, a missing EOI, ...) and libjpeg then allocates the whole buffer.
    func estimatedWorkingSetBytes(for header: SourceHeader, format: SourceFormat?, eighthDecoded: Bool = false) -> Int {
        estimate(for: header, format: format, eighthDecoded: eighthDecoded).bytes
    }

    /// Pixels of the output (every frame), as ``estimatedWorkingSetBytes(for:format:eighthDecoded:)`` counts
    /// them: what the encoder works on (``EncoderWorkingSet``).
    func estimatedOutputPixels(for header: SourceHeader) -> Int {
        estimate(for: header, format: nil, eighthDecoded: false).outputPixels
    }

    private func estimate(for header: SourceHeader, format: SourceFormat?, eighthDecoded: Bool) -> (bytes: Int, outputPixels: Int) {
        if let crop, let cropped = Self.croppedHeader(header, crop: crop) {
            // The whole source is decoded at the shrink the rectangle allows (JPEG) or whole; the rest is
            // the rectangle's.
            var inner = self
            inner.crop = nil
            let shrink = format == .jpeg ? inner.coverBoxFitted(to: cropped).jpegShrink(for: cropped) : 1
            let decoded = 4 * (header.width / shrink + 1) * (header.height / shrink + 1)
            let rectangle = inner.estimate(for: cropped, format: nil, eighthDecoded: false)
            return (decoded + rectangle.bytes / 2 + header.jpegCoefficientBytes, rectangle.outputPixels)
        }
        let fitted = coverBoxFitted(to: header)
        let frameCount = max(1, min(frames, header.frames))
        let output: Int
        if enlarge {
            // The box, its missing side from the source's aspect (requests bound both by image.maxDimension).
            let source = header.orientedSize
            let aspect = Double(source.width) / Double(max(1, source.height))
            let width = fitted.width ?? fitted.height.map { Int(Double($0) * aspect) } ?? source.width
            let height = fitted.height ?? fitted.width.map { Int(Double($0) / aspect) } ?? source.height
            output = max(1, width) * max(1, height) * frameCount
        } else {
            let reduction = max(1, fitted.reduction(for: header))
            output = Int(Double(header.width * header.height) / (reduction * reduction)) * frameCount
        }
        let whole = (header.width + 1) * (header.height + 1) * frameCount
        let decoded: Int
        var extra = 0
        switch format {
        case .jpeg:
            let shrink = fitted.jpegShrink(for: header)
            decoded = (header.width / shrink + 1) * (header.height / shrink + 1)
            extra = eighthDecoded ? 0 : header.jpegCoefficientBytes
        case .webp:
            decoded = min(whole, output)
            extra = Self.webpDecoderBytes
        case .heic, .avif:
            // libheif decodes the whole image (no shrink-on-load) into its own YUV planes, then RGB: a
            // 48 MP HEIC's thumbnail peaked at 465 MB in `vips thumbnail` (~9.5 bytes a pixel).
            decoded = whole
            extra = 2 * whole
        default:
            decoded = whole
        }
        return (4 * (2 * decoded + output) + extra, output)
    }

    /// What libwebp holds besides the pixels while decoding (its bitstream and row buffers), measured at
    /// 5–6 MB for a 320 px thumbnail of a 4096x4096 file.
    static let webpDecoderBytes = 4 << 20

    /// A cover box larger than the source without `enlarge`, shrunk (aspect kept) to the largest box the
    /// source fills: a 3000x3000 box over an 800x500 source is 500x500. Frontends laying out tiles get
    /// the box's aspect at the largest size the source allows (as `fill` does).
    func coverBoxFitted(to header: SourceHeader) -> ResizeStep {
        guard fit == .cover, !enlarge, let width, let height else { return self }
        let source = header.orientedSize
        let factor = min(Double(source.width) / Double(width), Double(source.height) / Double(height))
        guard factor < 1 else { return self }
        var fitted = self
        fitted.width = max(1, min(source.width, Int((Double(width) * factor).rounded())))
        fitted.height = max(1, min(source.height, Int((Double(height) * factor).rounded())))
        return fitted
    }

    /// Whether this source is made from its DC scans alone when the DC decoder takes it: a progressive
    /// 4:4:4 or grey JPEG shrunk by 8 or more, without a crop.
    func mayDecodeEighth(for header: SourceHeader, format: SourceFormat?) -> Bool {
        crop == nil && format == .jpeg && header.jpegEighthDecodable && coverBoxFitted(to: header).reduction(for: header) >= 8
    }

    /// The DC-only 1/8 image of a JPEG (``JPEGEighthDecoder``), upright and with its profile, or nil when
    /// the decoder declines the file (libjpeg or libvips then decode it).
    /// - Throws: ``ImagingError/tooManyScans(limit:)``; ``ImagingError/undecodable`` past the deadline.
    func decodeEighth(_ bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline?) throws(ImagingError) -> VipsImage? {
        switch JPEGEighthDecoder.decode(
            bytes, orientation: header.orientation, deadlineNanoseconds: deadline?.monotonicNanoseconds ?? 0)
        {
        case .decoded(let image): return image
        case .notApplicable: return nil
        case .tooManyScans: throw .tooManyScans(limit: SourceHeader.maxJPEGScans)
        case .pastDeadline:
            deadline?.expireNow()
            throw .undecodable
        }
    }

    /// How the DC-only decoder was tried before ``apply(to:header:deadline:eighth:)``.
    enum EighthAttempt {
        /// Not tried: `apply` tries it where it may help.
        case untried
        /// Tried and declined: `apply` goes straight to libjpeg or libvips.
        case declined
        /// The 1/8 image to resize.
        case decoded(VipsImage)
    }

    /// Decodes `bytes` into a resized, upright image.
    /// - Throws: ``ImagingError/undecodable`` when the source cannot be decoded.
    func apply(
        to bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline? = nil, eighth: EighthAttempt = .untried
    ) throws(ImagingError) -> VipsImage {
        if let crop { return try resizeCropped(bytes, header: header, crop: crop, deadline: deadline) }
        return try coverBoxFitted(to: header).resize(bytes, header: header, deadline: deadline, eighth: eighth)
    }

    /// The header of the rectangle `crop` cuts from an upright `header` (upright, one frame); nil when
    /// the rectangle lies outside.
    static func croppedHeader(_ header: SourceHeader, crop: CropRectangle) -> SourceHeader? {
        let upright = header.orientedSize
        guard let rectangle = crop.resolved(width: upright.width, height: upright.height) else { return nil }
        return SourceHeader(
            width: rectangle.width, height: rectangle.height, frames: 1, orientation: 1, colourManaged: header.colourManaged)
    }

    /// `crop` first, then the usual resize of the rectangle: the source is loaded upright and in sRGB,
    /// shrunk on load as far as the rectangle (not the whole source) allows, the rectangle is cut out
    /// at that scale, and `thumbnail` resizes it into the box.
    private func resizeCropped(
        _ bytes: [UInt8], header: SourceHeader, crop: CropRectangle, deadline: TransformDeadline?
    ) throws(ImagingError) -> VipsImage {
        let upright = header.orientedSize
        guard let rectangle = crop.resolved(width: upright.width, height: upright.height),
            let cropped = Self.croppedHeader(header, crop: crop)
        else { throw .cropOutside(crop: crop.description, width: upright.width, height: upright.height) }
        var inner = self
        inner.crop = nil
        inner = inner.coverBoxFitted(to: cropped)
        let shrink = SourceFormat(sniffing: bytes) == .jpeg ? inner.jpegShrink(for: cropped) : 1
        var loaded: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            ipx_vips_thumbnail_buffer_pages(
                raw.baseAddress, raw.count, &loaded, Int32(max(1, upright.width / shrink)), Int32(Self.unbounded),
                Size.down.rawValue, Crop.none.rawValue, 1, header.colourManaged ? 1 : 0)
        }
        guard status == 0, let loaded else {
            _ = Vips.takeError()
            throw .undecodable
        }
        // The profile's bytes copied before the pixels are read (HEIF: ipx_vips_with_own_profile).
        let source = try VipsImage(taking: loaded).producing { ipx_vips_with_own_profile($0, $1) }
        deadline?.watch(source)
        let scaleX = Double(source.width) / Double(upright.width)
        let scaleY = Double(source.height) / Double(upright.height)
        let left = min(source.width - 1, Int((Double(rectangle.x) * scaleX).rounded(.down)))
        let top = min(source.height - 1, Int((Double(rectangle.y) * scaleY).rounded(.down)))
        let width = max(1, min(source.width - left, Int((Double(rectangle.width) * scaleX).rounded())))
        let height = max(1, min(source.height - top, Int((Double(rectangle.height) * scaleY).rounded())))
        let cut: VipsImage
        do {
            cut = try source.producing { ipx_vips_extract_area($0, $1, Int32(left), Int32(top), Int32(width), Int32(height)) }
                .producing { ipx_vips_copy_memory($0, $1) }
        } catch {
            throw .undecodable
        }
        let cutHeader = SourceHeader(width: cut.width, height: cut.height, frames: 1, orientation: 1, colourManaged: false)
        let arguments = inner.thumbnailArguments(for: cutHeader)
        let resized: VipsImage
        do {
            resized = try cut.producing {
                ipx_vips_thumbnail_image(
                    $0, $1, Int32(arguments.width), Int32(arguments.height), arguments.size, arguments.crop, 0)
            }
        } catch {
            throw .processingFailed
        }
        if case .anchored(let x, let y, let focal) = inner.coverPlan, let boxWidth = inner.width, let boxHeight = inner.height {
            return try CoverCropStep(width: boxWidth, height: boxHeight, anchorX: x, anchorY: y, centredOnAnchor: focal)
                .apply(to: resized)
        }
        return resized
    }

    private func resize(
        _ bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline?, eighth: EighthAttempt
    ) throws(ImagingError) -> VipsImage {
        let arguments = thumbnailArguments(for: header)
        let isJPEG = SourceFormat(sniffing: bytes) == .jpeg
        let shrink = isJPEG ? jpegShrink(for: header) : 1
        // Sources with a profile (or CMYK) are converted to sRGB by `thumbnail` itself, after shrinking.
        let toSRGB: Int32 = header.colourManaged ? 1 : 0
        var preShrunk: VipsImage?
        switch eighth {
        case .decoded(let image): preShrunk = image
        case .declined: preShrunk = nil
        case .untried where isJPEG && reduction(for: header) >= 8:
            // Progressive JPEGs: the DC scans alone make the 1/8 image, and most of the file (the AC
            // scans, whose Huffman decoding is most of the work) is never read. Used whenever 1/8 still
            // covers the output, as Pillow's draft mode does: without AC terms there is nothing finer.
            preShrunk = try decodeEighth(bytes, header: header, deadline: deadline)
        case .untried: preShrunk = nil
        }
        if isJPEG, shrink > 1, preShrunk == nil {
            // Baseline (and other) JPEGs: libjpeg's scaled decode straight into memory on this thread.
            preShrunk = try Self.decodeScaled(bytes, shrink: shrink, header: header, deadline: deadline)
        }
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            if let preShrunk {
                return ipx_vips_thumbnail_image(
                    preShrunk.pointer, &output, Int32(arguments.width), Int32(arguments.height), arguments.size,
                    arguments.crop, toSRGB)
            }
            if shrink > 1 {
                return ipx_vips_thumbnail_jpeg_shrunk(
                    raw.baseAddress, raw.count, &output, Int32(arguments.width), Int32(arguments.height),
                    arguments.size, arguments.crop, Int32(shrink), toSRGB)
            }
            return ipx_vips_thumbnail_buffer_pages(
                raw.baseAddress, raw.count, &output, Int32(arguments.width), Int32(arguments.height),
                arguments.size, arguments.crop, Int32(frames), toSRGB)
        }
        guard status == 0, let output else {
            _ = Vips.takeError()
            throw .undecodable
        }
        // Materialise now: decode errors surface here as 422, not later in the encoder.
        let lazy = VipsImage(taking: output)
        deadline?.watch(lazy)
        let image: VipsImage
        do {
            image = try lazy.producing { ipx_vips_copy_memory($0, $1) }
        } catch {
            throw .undecodable
        }
        if case .anchored(let x, let y, let focal) = coverPlan, let width, let height {
            return try CoverCropStep(width: width, height: height, anchorX: x, anchorY: y, centredOnAnchor: focal)
                .apply(to: image)
        }
        return image
    }

    /// A JPEG decoded by libjpeg at 1/`shrink` into memory on this thread (`jpeg_scaled.c`), or nil when
    /// libvips' loader should take it (a colour space or precision it does not convert, a frame larger
    /// than `header` says, any warning or error: libvips then decides how the file is answered, for every
    /// variant alike). The image carries the source's ICC profile and `header`'s orientation.
    /// - Throws: ``ImagingError/undecodable`` when the deadline passed (the deadline is expired first);
    ///   ``ImagingError/tooManyScans(limit:)`` when libjpeg reached more scans than the limit.
    static func decodeScaled(
        _ bytes: [UInt8], shrink: Int, header: SourceHeader, deadline: TransformDeadline?
    ) throws(ImagingError) -> VipsImage? {
        var image: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            ipx_jpeg_decode_scaled(
                raw.baseAddress, raw.count, Int32(shrink), Int32(header.orientation), Int64(header.width * header.height),
                deadline?.monotonicNanoseconds ?? 0, &image)
        }
        switch status {
        case 0: return image.map { VipsImage(taking: $0) }
        case 2:
            deadline?.expireNow()
            throw .undecodable
        case 3:
            throw .tooManyScans(limit: SourceHeader.maxJPEGScans)
        default:
            _ = Vips.takeError()
            return nil
        }
    }
}
