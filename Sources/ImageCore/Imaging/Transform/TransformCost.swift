/// The CPU a transform will cost, estimated from the header and the plan before any work (issue #56): the
/// decode at the plan's scale and every encode the output may take (`max_bytes` up to
/// ``SizeTargetEncoder/maxEncodes``), at per-format rates kept here with their measurement. A plan over
/// `image.maxTransformCpuMs` is a 422 naming the limit, so that no request buys seconds of CPU and no
/// work is thrown away at the deadline.
///
/// Rates, in CPU milliseconds a megapixel, are twice what libvips 8.14 took on this project's machine
/// kind (2-core AMD EPYC VM, `VIPS_CONCURRENCY=1`, `vips copy` of 2048x2048 RGB Gaussian noise, the worst
/// case for every encoder; user + system time): JPEG q80 12, WebP q80 126, AVIF q55 effort 2 355,
/// JPEG XL q75 effort 4 57, PNG level 6 195, GIF 143; PNG decode 19. Twice, because a 2-core Intel Xeon VM
/// of the same kind took about twice as long for AVIF (issue #56's table: 11.6 CPU-s for a 4096x4096 AVIF,
/// 0.69 s a megapixel).
public struct TransformCost: Sendable, Equatable {
    /// Estimated CPU milliseconds.
    public var milliseconds: Int

    /// Encode cost in CPU milliseconds a megapixel of output.
    static func encodeRate(_ format: OutputFormat) -> Double {
        switch format {
        case .jpeg: 25
        case .webp: 250
        case .avif: 700
        case .jxl: 120
        case .png: 400
        case .gif: 300
        }
    }

    /// Decode cost in CPU milliseconds a megapixel decoded: libjpeg, our PNG decoder, libwebp and giflib at
    /// about 40 (PNG measured at 19); libheif and libjxl decode whole images, measured on 2048x2048 noise at
    /// HEIC 60, AVIF 43 and JPEG XL 33, counted at 1.5x (HEIC 90, the others 70), so that a 48 MP phone photo
    /// (8064x6048 HEIC, `image.maxSourcePixels`' reason) stays within the default budget.
    static func decodeRate(_ format: SourceFormat?) -> Double {
        switch format {
        case .heic: 90
        case .avif, .jxl: 70
        default: 40
        }
    }

    /// What one filtered render of an SVG costs (``SourceHeader/svgFilterRenders``), in canvases of plain
    /// drawing (40 ms a megapixel, as other decodes): librsvg 2.54 took 60 CPU-s for twenty Gaussian blurs
    /// over a 4000x4000 canvas (190 ms a megapixel each) on this project's machine kind (2-core AMD EPYC VM,
    /// libvips 8.14, `vips_concurrency_set(1)`), about five times plain drawing.
    static let svgFilterCanvases = 5.0

    /// What one element drawn through a surface of its own costs (``SourceHeader/svgSurfaces``), in canvases:
    /// 19,000 masked full-canvas rectangles took 78 CPU-s at 1000x1000 (4.1 ms a megapixel each), 19,000
    /// group opacities 12 s (0.6 ms), on the same machine; counted at the masks' rate.
    static let svgSurfaceCanvases = 0.1

    /// The canvases an SVG's drawing costs: one, and its filters' and surfaces' (an ordinary logo: about 1).
    static func svgCanvases(_ header: SourceHeader) -> Double {
        1 + svgFilterCanvases * Double(header.svgFilterRenders) + svgSurfaceCanvases * Double(header.svgSurfaces)
    }

    /// The estimate for decoding `decodedPixels` of a `source` file and encoding `outputPixels` as
    /// `format` `encodes` times.
    init(source: SourceFormat?, decodedPixels: Int, format: OutputFormat, outputPixels: Int, encodes: Int) {
        let decode = Double(max(0, decodedPixels)) / 1_000_000 * Self.decodeRate(source)
        let encode = Double(max(0, outputPixels)) / 1_000_000 * Self.encodeRate(format) * Double(max(1, encodes))
        milliseconds = Int(min(decode + encode, 1e12).rounded(.up))
    }
}
