import CVipsShim

/// Resizes into the box with libvips' `thumbnail` (from the decoded image ``ScaleOnLoadStep`` or
/// ``CropStep`` made, or from the bytes through libvips' loader: shrink-on-load, EXIF auto-rotation,
/// animated sources' frames), then, for a cover box anchored off-centre or on a focal point, the crop
/// around the anchor (``CoverCropStep``).
struct ResizeStep {
    typealias Size = ResizeBox.Size
    typealias Crop = ResizeBox.Crop

    /// The box, fitted to the source.
    let box: ResizeBox

    /// The resized, upright image of what ``ScaleOnLoadStep`` handed on.
    /// - Throws: ``ImagingError/undecodable`` when the source cannot be decoded.
    func apply(
        to loaded: ScaleOnLoadStep.Loaded, bytes: [UInt8], header: SourceHeader, deadline: TransformDeadline?
    ) throws(ImagingError) -> VipsImage {
        let arguments = box.thumbnailArguments(for: header)
        // Sources with a profile (or CMYK) are converted to sRGB by `thumbnail` itself, after shrinking.
        let toSRGB: Int32 = header.colourManaged ? 1 : 0
        // Decoded at the output's size already (a srcset width capped at the source's): nothing to resize,
        // and `thumbnail` premultiplies an alpha only when it resizes.
        if case .decoded(let image) = loaded, Self.thumbnailKeepsTheSize(of: image, arguments: arguments),
            let finished = try Self.finishedWithoutThumbnail(image, header: header, deadline: deadline)
        {
            return try coverCropped(finished)
        }
        // A decode in memory without alpha is reduced to a forced size by Lanczos3 alone on this thread,
        // as a whole decode is (``reducedToForcedSize(_:header:arguments:premultiply:)``).
        // libjpeg's decode reduced so as its rows arrived is that reduce's image.
        var reducedAhead: VipsImage?
        if case .reduced(let image) = loaded {
            reducedAhead = image
        } else if case .decoded(let image) = loaded, !image.hasAlpha {
            reducedAhead = try reducedToForcedSize(image, header: header, arguments: arguments, premultiply: 0)
        }
        if let reducedAhead, let finished = try Self.finishedWithoutThumbnail(reducedAhead, header: header, deadline: deadline) {
            return try coverCropped(finished)
        }
        var output: UnsafeMutablePointer<_VipsImage>?
        let status = bytes.withUnsafeBytes { raw in
            switch loaded {
            case .decoded(let image), .reduced(let image):
                return ipx_vips_thumbnail_image(
                    (reducedAhead ?? image).pointer, &output, Int32(clamping: arguments.width), Int32(clamping: arguments.height), arguments.size,
                    arguments.crop, toSRGB)
            case .webp(let scale):
                return ipx_vips_thumbnail_webp_scaled(
                    raw.baseAddress, raw.count, &output, Int32(clamping: arguments.width), Int32(clamping: arguments.height),
                    arguments.size, arguments.crop, scale, toSRGB)
            case .toLoader(let shrink) where shrink > 1:
                return ipx_vips_thumbnail_jpeg_shrunk(
                    raw.baseAddress, raw.count, &output, Int32(clamping: arguments.width), Int32(clamping: arguments.height),
                    arguments.size, arguments.crop, Int32(shrink), toSRGB)
            case .toLoader:
                return ipx_vips_thumbnail_buffer_pages(
                    raw.baseAddress, raw.count, &output, Int32(clamping: arguments.width), Int32(clamping: arguments.height),
                    arguments.size, arguments.crop, Int32(clamping: box.frames), toSRGB)
            }
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
        return try coverCropped(image)
    }

    /// The resized, upright image of a source decoded whole into memory (``DecodedSource``), which is
    /// only read (other transforms may be reading it too) and never watched by `deadline`.
    ///
    /// libvips 8.14's `thumbnail` of a whole image in memory is slow: its resize box-shrinks first from a
    /// 4x reduction on, and it resizes an RGBA image premultiplied in floating point; either costs more
    /// than the decode (`bench/RESULTS.md`, 2026-11-26 (one decode for a srcset)). Below ``lanczosOnlyBelow`` the reduction is made
    /// by Lanczos3 alone (`ipx_vips_reduce_lanczos`, premultiplied when the alpha is real):
    /// straight to the output's size when it is forced (a contain or fill reduction), to twice the output
    /// before a crop in `thumbnail` from a 4x reduction on. `thumbnail` then does the rest: the
    /// orientation, the colour conversion and, for a crop, the last factor of two. From
    /// ``lanczosOnlyBelow`` on (only a kept decode is resized from there) Lanczos3 reduces to about three
    /// times the output and `thumbnail` does the rest.
    /// - Throws: ``ImagingError/processingFailed`` when libvips fails.
    func apply(toWhole decoded: DecodedSource, header: SourceHeader, deadline: TransformDeadline?) throws(ImagingError) -> VipsImage {
        let whole = decoded.image
        let premultiply: Int32 = decoded.hasRealAlpha ? 1 : 0
        let arguments = box.thumbnailArguments(for: header)
        let toSRGB: Int32 = header.colourManaged ? 1 : 0
        // From the decode (a JPEG's is at its DCT scale).
        let reduction = box.reduction(for: header) / Double(decoded.shrink)
        var input = whole
        if Self.thumbnailKeepsTheSize(of: whole, arguments: arguments), !header.colourManaged, header.orientation <= 1 {
            // The decode is the variant: handed on through a lazy copy of its own, which the encoder reads and
            // the deadline may kill, so that a kill flag never lands on the decode other transforms read.
            return try coverCropped(try whole.producing { ipx_vips_copy_lazy($0, $1) })
        }
        if let reduced = try reducedToForcedSize(whole, header: header, arguments: arguments, premultiply: premultiply) {
            if let finished = try Self.finishedWithoutThumbnail(reduced, header: header, deadline: deadline) { return try coverCropped(finished) }
            input = reduced
        } else if reduction < Self.lanczosOnlyBelow {
            if arguments.crop != Crop.none.rawValue, reduction >= 4 {
                input = try whole.producing { ipx_vips_reduce_lanczos($0, $1, reduction / 2, reduction / 2, premultiply) }
            }
        } else {
            // A kept decode from 7x on: Lanczos3 to about three times the output first (at most 6x), as a
            // WebP's own decode scales to three times the output, so that `thumbnail`'s box shrink does
            // not alias what the kept decode's full resolution holds.
            let first = min(reduction / 3, 6)
            input = try whole.producing { ipx_vips_reduce_lanczos($0, $1, first, first, premultiply) }
        }
        let lazy = try input.producing {
            ipx_vips_thumbnail_image(
                $0, $1, Int32(clamping: arguments.width), Int32(clamping: arguments.height), arguments.size, arguments.crop, toSRGB)
        }
        deadline?.watch(lazy)
        return try coverCropped(try lazy.producing { ipx_vips_copy_memory($0, $1) })
    }

    /// `image` (a decode in memory, in the source's axes) reduced by Lanczos3 alone straight to the output's
    /// size when `thumbnail` is to force it (a contain or fill reduction) and the reduction is below
    /// ``lanczosOnlyBelow``; nil otherwise (`thumbnail` does the reduction). The reduce down is libvips'
    /// reducev and the reduce across `reduce_across.c`, both on this thread (libvips 8.14's own reduce
    /// across costs ten times its reduce down); `thumbnail` then has only the orientation and the colour
    /// conversion left to do.
    /// - Throws: ``ImagingError/processingFailed`` when libvips fails.
    private func reducedToForcedSize(
        _ image: VipsImage, header: SourceHeader, arguments: (width: Int, height: Int, size: Int32, crop: Int32), premultiply: Int32
    ) throws(ImagingError) -> VipsImage? {
        guard let (across, down) = lanczosShrink(width: image.width, height: image.height, header: header, arguments: arguments)
        else { return nil }
        return try image.producing { ipx_vips_reduce_lanczos($0, $1, across, down, premultiply) }
    }

    /// The shrink across and down by which Lanczos3 alone reduces a decode of `width` x `height` (in the
    /// source's axes) to the forced output size of `arguments` (``box``'s `thumbnail` arguments for
    /// `header`); nil when the size is not forced, a side would grow, or the reduction is from
    /// ``lanczosOnlyBelow`` on (`thumbnail` reduces then). The memory estimate of a whole decode asks it
    /// too (``ResizeBox/estimatedBytesFromWholeDecode(for:realAlpha:)``), so that it follows the path taken.
    func lanczosShrink(
        width: Int, height: Int, header: SourceHeader, arguments: (width: Int, height: Int, size: Int32, crop: Int32)
    ) -> (Double, Double)? {
        guard arguments.size == Size.force.rawValue,
            let (across, down) = forcedShrink(width: width, height: height, header: header, arguments: arguments),
            max(across, down) < Self.lanczosOnlyBelow
        else { return nil }
        return (across, down)
    }

    /// ``lanczosShrink(width:height:header:arguments:)`` when it reduces both sides, else nil: what the
    /// row-by-row reduce (`reduce_across.c`) takes as libjpeg's rows arrive and into the JPEG encoder. A
    /// side kept at its size (a `fill` of the source's width) is left to libvips' reduce of a decode held
    /// whole, and the memory estimates count that image.
    func lanczosShrinkOfBothSides(
        width: Int, height: Int, header: SourceHeader, arguments: (width: Int, height: Int, size: Int32, crop: Int32)
    ) -> (Double, Double)? {
        guard let (across, down) = lanczosShrink(width: width, height: height, header: header, arguments: arguments),
            across > 1, down > 1
        else { return nil }
        return (across, down)
    }

    /// An image already reduced to its forced size, in memory, when `thumbnail` would have nothing left to
    /// do with it: no colour conversion (the source is not colour-managed) and no turn (orientation 1).
    /// `thumbnail` then leaves every sample as it is, so its pipeline and its copy into memory (on
    /// libvips' worker threads) are skipped. Nil otherwise. A reduce still to be evaluated (premultiplied
    /// around the reduce when the alpha is real) is watched by `deadline`, as `thumbnail` was.
    /// - Throws: ``ImagingError/processingFailed`` when libvips fails to materialise the image (or the
    ///   deadline stopped it).
    private static func finishedWithoutThumbnail(
        _ reduced: VipsImage, header: SourceHeader, deadline: TransformDeadline?
    ) throws(ImagingError) -> VipsImage? {
        guard !header.colourManaged, header.orientation <= 1 else { return nil }
        deadline?.watch(reduced)
        // Free for the reduce's own memory image (libvips hands the same image back).
        return try reduced.producing { ipx_vips_copy_memory($0, $1) }
    }

    /// Whether `thumbnail` with `arguments` hands `image` back at its own size
    /// (``ResizeBox/thumbnailKeepsTheSize(width:height:arguments:)``). With no colour conversion and no turn
    /// left (``finishedWithoutThumbnail(_:header:deadline:)``), the image is then the variant as it is: a
    /// srcset width capped at the source's width, decoded whole, skips `thumbnail`'s pipeline and its copy
    /// of every pixel into fresh memory.
    static func thumbnailKeepsTheSize(of image: VipsImage, arguments: (width: Int, height: Int, size: Int32, crop: Int32)) -> Bool {
        ResizeBox.thumbnailKeepsTheSize(width: image.width, height: image.height, arguments: arguments)
    }

    /// The shrink across and down from the whole decode to a forced output size, in the decode's own axes
    /// (before the orientation turns it); nil when either side would grow.
    private func forcedShrink(
        width: Int, height: Int, header: SourceHeader, arguments: (width: Int, height: Int, size: Int32, crop: Int32)
    ) -> (Double, Double)? {
        let swapsAxes = (5...8).contains(header.orientation)
        let across = Double(width) / Double(swapsAxes ? arguments.height : arguments.width)
        let down = Double(height) / Double(swapsAxes ? arguments.width : arguments.height)
        guard across >= 1, down >= 1, across > 1 || down > 1 else { return nil }
        return (across, down)
    }

    /// The reduction below which a whole decode is reduced by Lanczos3 alone. Measured on 8 PNG photographs
    /// (the benchmark's and the Plasma wallpapers) at 200–2048 px, SSIM against Pillow's Lanczos of the
    /// whole image: Lanczos3 alone is closer than `thumbnail`'s box shrink and Lanczos3 at every reduction
    /// from 1.8x to 8x (0.9994 against 0.9980 at 640 px), and further from 8.5x on (libvips' reduce with
    /// very wide kernels); on a synthetic picture with a known ideal (`WholeDecodeTests`) it is 3% further
    /// at 7x and 8% at 7.7x. So `thumbnail` keeps doing it from 7x on (`bench/RESULTS.md`, 2026-11-26 (one decode for a srcset)).
    static let lanczosOnlyBelow = 7.0

    /// The rectangle ``CropStep`` cut out, resized into the box.
    /// - Throws: ``ImagingError/processingFailed`` when libvips fails.
    func apply(toCut cut: VipsImage) throws(ImagingError) -> VipsImage {
        let cutHeader = SourceHeader(width: cut.width, height: cut.height, frames: 1, orientation: 1, colourManaged: false)
        let arguments = box.thumbnailArguments(for: cutHeader)
        let resized: VipsImage
        do {
            resized = try cut.producing {
                ipx_vips_thumbnail_image(
                    $0, $1, Int32(clamping: arguments.width), Int32(clamping: arguments.height), arguments.size, arguments.crop, 0)
            }
        } catch {
            throw .processingFailed
        }
        return try coverCropped(resized)
    }

    /// A cover box anchored off-centre or on a focal point: the crop around the anchor.
    private func coverCropped(_ image: VipsImage) throws(ImagingError) -> VipsImage {
        guard case .anchored(let x, let y, let focal) = box.coverPlan, let width = box.width, let height = box.height else {
            return image
        }
        return try CoverCropStep(width: width, height: height, anchorX: x, anchorY: y, centredOnAnchor: focal).apply(to: image)
    }
}
