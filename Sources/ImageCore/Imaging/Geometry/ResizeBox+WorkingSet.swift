/// The memory a transform needs, estimated from the header and the box before anything is decoded: what
/// the transform pool reserves from the memory budget before a job takes a thread.
extension ResizeBox {
    /// The memory a transform of a source with this header needs at most, estimated before decoding:
    /// the decoded image (every frame loaded; 4 bytes a pixel) twice (the decode and one intermediate),
    /// plus the output box. The decode is the source's size except where the loader shrinks on load: a
    /// JPEG at its shrink (plus libjpeg's whole-image coefficient buffer for a progressive or multi-scan
    /// file, ``SourceHeader/jpegCoefficientBytes``, unless the DC-only 1/8 image is in hand), a still
    /// WebP once at its decode scale (``webpScale(for:)``: libwebp scales while decoding; plus
    /// ``webpDecoderBytes``). Measured
    /// against the process's peak RSS per transform in `bench/RESULTS.md`.
    ///
    /// `eighthDecoded`: the DC-only 1/8 image is already in hand (``ScaleOnLoadStep``), so libjpeg's
    /// coefficient buffer is not needed. Without it the buffer is counted whatever the header says,
    /// because the DC decoder declines many files its frame header looks right for (an Adobe segment
    /// with transform 0, a missing EOI, ...) and libjpeg then allocates the whole buffer.
    func estimatedWorkingSetBytes(for header: SourceHeader, format: SourceFormat?, eighthDecoded: Bool = false) -> Int {
        estimate(for: header, format: format, eighthDecoded: eighthDecoded).bytes
    }

    /// The memory a transform needs that decodes the source whole into memory (``DecodedSource``): the
    /// decode (``SourceHeader/decodedPixelBytes`` a pixel), GIF's decoder's own RGBA frame or libwebp's
    /// buffers (``webpDecoderBytes``), and the resize from it (``estimatedBytesFromWholeDecode(for:realAlpha:)``). `realAlpha`: the alpha is not opaque
    /// (known once decoded; a transform of a source with alpha reserves for an opaque one first and
    /// grows when it is not).
    func estimatedBytesDecodingWhole(for header: SourceHeader, format: SourceFormat?, realAlpha: Bool, reduceEncoded: Bool = false) -> Int {
        let whole = header.width * header.height
        let decoder = format == .gif ? 4 * whole : format == .webp ? Self.webpDecoderBytes : 0
        return header.decodedPixelBytes * whole + decoder
            + estimatedBytesFromWholeDecode(for: header, realAlpha: realAlpha, reduceEncoded: reduceEncoded)
    }

    /// The memory a transform needs to resize from a source decoded whole into memory, the decode itself
    /// not counted when another holds it (a kept decode): libvips' buffers and malloc's arenas while it
    /// resizes, 2 bytes a source pixel (7 with a real alpha, premultiplied in floating point), and three
    /// images the output's size (4 bytes a pixel: the output, its copy, a cover's image before the crop)
    /// with 8 MiB (32 MiB with a real alpha). Measured through the pool as peak RSS growth, repeated runs of 3000×2000 PNGs made
    /// into 300 to 3000 px (`TransformMemoryBudgetTests`): a miss of RGBA with real alpha 30–63 MB (this
    /// estimate, with the decode: 75–140 MB), of RGB 20–32 MB (38–92 MB); a variant from the kept RGBA
    /// decode up to 48 MB (51–122 MB).
    ///
    /// Where the variant is the pool thread's reduce itself (an opaque decode that
    /// ``ResizeStep/lanczosShrink(width:height:header:arguments:)`` reduces, no colour conversion, no
    /// turn), the output is one
    /// 3-byte image that the encoder reads in place, so 6 bytes an output pixel are counted instead of 12:
    /// the image and the encoder's buffer with its copy. Measured (2026-11-26 (encode on the pool thread), 4096×2731 RGB noise, 3 runs
    /// each): to 640 / 1200 / 2048 / 3840 px the process grew by 45–49 / 45–50 / 52–58 / 71–96 MiB with
    /// the decode, against 64 / 73 / 96 / 183 MiB reserved before and 63 / 66 / 78 / 124 now. An opaque
    /// decode that is the variant as it is (``wholeDecodeIsTheVariant(for:)``: no resize) is counted the
    /// same way, the decode standing for the reduce's image.
    ///
    /// `reduceEncoded`: the reduce hands its rows straight to the JPEG encoder (``ReducedJPEGEncoder``), so
    /// where the variant is the reduce itself, of both sides, its image is not held: 3 bytes an output pixel, the encoder's
    /// buffer, and 12 MiB. Measured the same way (2026-11-27 (the reduce and the JPEG encoder as one step), three runs each): a 4096x4096 RGB WebP to
    /// 3840 px grew the process by 94–96 MiB (138 the earlier way; 148 reserved now, 190 before); a
    /// 2400x2400 one to 1100 px by 21–44 MiB either way, which 3 bytes an output pixel less with 8 MiB
    /// would have covered by 4 KiB, so the constant is 4 MiB larger than the earlier way's.
    ///
    /// `decodedShrink`: the decode is a JPEG's at that DCT scale (``DecodedSource/shrink``), whose pixels
    /// stand for the source's.
    func estimatedBytesFromWholeDecode(for header: SourceHeader, decodedShrink: Int = 1, realAlpha: Bool, reduceEncoded: Bool = false) -> Int {
        let fitted = coverBoxFitted(to: header)
        let step = ResizeStep(box: fitted), arguments = fitted.thumbnailArguments(for: header)
        let (width, height) = ScaleOnLoadStep.decodedSize(header, shrink: decodedShrink)
        let reducedIsTheVariant = !realAlpha && !header.colourManaged && header.orientation <= 1
            && step.lanczosShrink(width: width, height: height, header: header, arguments: arguments) != nil
        let keptAtItsSize = !realAlpha
            && (decodedShrink == 1 ? wholeDecodeIsTheVariant(for: header) : ResizeBox.thumbnailKeepsTheSize(width: width, height: height, arguments: arguments))
        // The step takes a reduce of both sides only; a side kept is reduced into an image as before.
        let encodedAsReduced = reducedIsTheVariant && reduceEncoded
            && step.lanczosShrinkOfBothSides(width: width, height: height, header: header, arguments: arguments) != nil
        let outputBytesPerPixel = encodedAsReduced ? 3 : reducedIsTheVariant || keptAtItsSize ? 6 : 4 * 3
        // A real alpha is resized premultiplied in floating point by libvips' threads, whose buffers vary
        // most: a 3000x3000 RGBA WebP to 1000 px grew 139.0 MB in a fresh-clone CI run, against 124.6
        // reserved with 8 MiB (2026-11-27 (the transforms' budget is the tier's)), so 32 MiB.
        let slack = realAlpha ? 32 << 20 : encodedAsReduced ? 12 << 20 : 8 << 20
        return (realAlpha ? 7 : 2) * width * height + outputBytesPerPixel * estimatedOutputPixels(for: header) + slack
    }

    /// The memory a transform needs whose JPEG libjpeg decodes into memory at its shrink and the pool
    /// thread reduces to a forced size (``mayDecodeJPEGInMemory(for:format:)``): the decode (3 bytes a
    /// pixel), libjpeg's coefficient buffer for a progressive or multi-scan file, the reduce's output (3
    /// bytes a pixel; twice when a profile or a turn sends it through `thumbnail` and its copy), the
    /// encoder's output buffer (2 bytes an output pixel: it doubles as it fills), and 16 MiB for libjpeg's
    /// and the reduce's row buffers and malloc's arenas. libvips' loader, `thumbnail` and their copies
    /// (``estimatedWorkingSetBytes(for:format:eighthDecoded:)``, about twice this) are reserved only when
    /// libjpeg declines the file. Measured through the pool as peak RSS growth in
    /// `TransformMemoryBudgetTests` (`bench/RESULTS.md`, 2026-11-26 (encode on the pool thread)).
    ///
    /// When that decode is the variant as it is (``wholeDecodeIsTheVariant(for:)``) there is no reduce's
    /// output, but the encoder holds what is otherwise covered by it: for a JPEG output libjpeg's whole
    /// coefficient buffer (optimised Huffman tables need the whole image first), `encoderCoefficientBytes`
    /// an output pixel (``jpegEncoderCoefficientBytesPerPixel(quality:)``; 0 for another format, whose
    /// encoder ``EncoderWorkingSet`` covers). Measured the same way (2026-11-26 (libjpeg's large blocks in huge pages)): a 3840x2160 JPEG kept at
    /// its size grew the process by 49 MiB at quality 80 (87 MiB reserved) and 73 MiB at 95.
    ///
    /// Where the decode is reduced as its rows arrive (``ScaleOnLoadStep/reduceWhileDecoding(_:shrink:)``,
    /// the common case) the decode is never held whole: counted instead are the rows the reduce's taps span
    /// (3 bytes a pixel, 6 x the shrink down plus one rows) and its row of sums and widened row (28 bytes a
    /// decoded column).
    ///
    /// `reduceEncoded`: the reduce hands its rows straight to the JPEG encoder (``ReducedJPEGEncoder``), so
    /// when the decode is reduced as its rows arrive the reduce's output is not held and not counted.
    ///
    /// `holdingTheDecode`: the decode is held whole to be kept (``ImageTransformer/keptJPEGShrink(of:box:format:)``)
    /// and reduced afterwards: the decode counted whole, and the reduce's output unless the reduce hands
    /// its rows to the encoder.
    func estimatedBytesDecodingJPEGInMemory(
        for header: SourceHeader, encoderCoefficientBytes: Int, reduceEncoded: Bool = false, holdingTheDecode: Bool = false
    ) -> Int {
        let fitted = coverBoxFitted(to: header)
        let shrink = fitted.jpegShrink(for: header)
        let decoded = (header.width / shrink + 1) * (header.height / shrink + 1)
        let output = estimatedOutputPixels(for: header)
        if wholeDecodeIsTheVariant(for: header) {
            return 3 * decoded + header.jpegCoefficientBytes + (encoderCoefficientBytes + 2) * output + (16 << 20)
        }
        let decodeBytes: Int
        let reduce = holdingTheDecode ? nil : ScaleOnLoadStep(box: fitted).reduceWhileDecoding(header, shrink: shrink)
        if let reduce {
            let columns = header.width / shrink + 1
            decodeBytes = 3 * columns * (Int((6 * reduce.down).rounded(.up)) + 1) + 28 * columns
        } else {
            decodeBytes = 3 * decoded
        }
        let outputCopies = header.colourManaged || header.orientation > 1 ? 2 : 1
        let encodedAsReduced = reduceEncoded && (reduce != nil || holdingTheDecode)
        let outputImageBytes = encodedAsReduced ? 0 : 3 * outputCopies * output
        return decodeBytes + header.jpegCoefficientBytes + outputImageBytes + 2 * output + (16 << 20)
    }

    /// The bytes an output pixel of libjpeg's coefficient buffer for an encode at `quality`: 2 a sample,
    /// three samples a pixel without chroma subsampling (from quality 90 on, as libvips' jpegsave does),
    /// one and a half with 4:2:0 below.
    static func jpegEncoderCoefficientBytesPerPixel(quality: Int) -> Int { quality >= 90 ? 6 : 3 }

    /// Pixels of the output (every frame), as ``estimatedWorkingSetBytes(for:format:eighthDecoded:)`` counts
    /// them: what the encoder works on (``EncoderWorkingSet``).
    func estimatedOutputPixels(for header: SourceHeader) -> Int {
        estimate(for: header, format: nil, eighthDecoded: false).outputPixels
    }

    private func estimate(for header: SourceHeader, format: SourceFormat?, eighthDecoded: Bool) -> (bytes: Int, outputPixels: Int) {
        if let crop, let cropped = CropStep.croppedHeader(header, crop: crop) {
            // The whole source is decoded at the shrink the rectangle allows (JPEG) or whole; the rest is
            // the rectangle's.
            let inner = afterCrop(cropped)
            let shrink = format == .jpeg ? inner.jpegShrink(for: cropped) : 1
            let decoded = 4 * (header.width / shrink + 1) * (header.height / shrink + 1)
            var rectangleBox = self
            rectangleBox.crop = nil
            let rectangle = rectangleBox.estimate(for: cropped, format: nil, eighthDecoded: false)
            return (decoded + rectangle.bytes / 2 + header.jpegCoefficientBytes, rectangle.outputPixels)
        }
        let fitted = coverBoxFitted(to: header)
        let frameCount = max(1, min(frames, header.frames))
        let output: Int
        if enlarge {
            // The box, its missing side from the source's aspect (requests bound both by image.maxDimension).
            let source = header.orientedSize
            let aspect = Double(source.width) / Double(max(1, source.height))
            var width = fitted.width ?? fitted.height.map { Int(Double($0) * aspect) } ?? source.width
            var height = fitted.height ?? fitted.width.map { Int(Double($0) / aspect) } ?? source.height
            if fit == .contain, let boxWidth = fitted.width, let boxHeight = fitted.height {
                // Contained: the source's aspect inside the box, not the box (pad's canvas is the box).
                let scale = min(Double(boxWidth) / Double(max(1, source.width)), Double(boxHeight) / Double(max(1, source.height)))
                width = Self.side(Double(source.width) * scale)
                height = Self.side(Double(source.height) * scale)
            }
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
        case .webp where frameCount == 1:
            // A still WebP: libwebp decodes it scaled into one memory image (``ScaleOnLoadStep``,
            // `webp_scaled.c`; RGB, or RGBA with alpha), which `thumbnail` reduces as it streams into the
            // output (and a cover's crop copies once more). Measured through the pool as peak RSS growth,
            // 3 to 5 runs each (noise, so the encoder's output is large too): 4096x4096 RGB to 640 / 1080
            // / 1200 / 1920 / 3840 px grew the process by 14–19 / 26–45 / 10–48 / 2–34 / 109–134 MiB,
            // 2400x1600 to 1100 px by 9 MiB in most runs and up to 35 (libvips' threads and malloc's arenas,
            // whatever the size); RGBA with a real alpha (premultiplied in floating point while reduced)
            // to 1200 / 3840 px by 113–119 / 131–137 MiB; 2400x2400 RGBA to a 500x500 cover by 66–67 MiB
            // (2026-11-27 (memory and a thread admitted together), on a thread whose reused buffer had not grown yet: within 3x WebPs are decoded
            // whole into memory of their own now). Counted: 4 bytes a decoded pixel (14 with an alpha), the
            // output once (twice for a cover), libwebp's own buffers and 36 MiB (32 until 2026-11-27 (a JPEG reduced as libjpeg's rows arrive), when
            // a fresh-clone CI run measured that cover at 72.2 MB against 71.5 reserved), 48 with an alpha (2026-11-27 (the reduce and the JPEG encoder as one step)'s
            // fresh-clone CI run measured it at 78.8 MB against 75.7 reserved).
            let scale = fitted.webpScale(for: header)
            let decodedPixels = min(whole, Int(Double(whole) * scale * scale) + 1)
            let perPixel = header.hasAlpha ? 14 : 4
            let outputCopies = fit == .cover ? 2 : 1
            return (perPixel * decodedPixels + 4 * outputCopies * output + Self.webpDecoderBytes + ((header.hasAlpha ? 48 : 36) << 20), output)
        case .webp:
            // An animation's frames, decoded by libvips' loader at the output's size.
            decoded = min(whole, output)
            extra = Self.webpDecoderBytes
        case .svg:
            // Drawn at the output's scale (``svgRenderPixels(for:)``): the tiles libvips' loader caches as
            // cairo draws them, and their copy into memory; no frames, no shrink-on-load.
            decoded = svgRenderPixels(for: header)
            extra = 4 * decoded
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
}
