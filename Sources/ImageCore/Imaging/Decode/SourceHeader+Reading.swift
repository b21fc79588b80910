import CVipsShim

/// Reading a header from the bytes (libjpeg and libexif for JPEG, libvips for the rest), and counting
/// frames and scans from the containers first. Kept apart from ``SourceHeader`` itself, a plain value that
/// the box arithmetic (and its fuzz target) uses without the C.
extension SourceHeader {
    /// Most scans a JPEG may have (``ImagingError/tooManyScans(limit:)``).
    public static let maxJPEGScans = Int(IPX_JPEG_MAX_SCANS)

    /// Reads the header of `bytes`. Before libvips sees them, JPEG scans are counted (marker segments
    /// only), PNG chunk lengths checked against the bytes present, and GIF/WebP frames (from the container, by giflib and libwebpdemux: libvips' own header
    /// read walks every frame, and its count stops at 4097 for GIF and says 1 past 999).
    /// - Throws: ``ImagingError/undecodable`` when libvips cannot read it,
    ///   ``ImagingError/tooManyScans(limit:)`` for a JPEG of more than ``maxJPEGScans`` scans,
    ///   ``ImagingError/tooManyFrames(limit:)`` for more than `maxFrames` frames.
    public init(reading bytes: [UInt8], maxFrames: Int = Int(Int32.max)) throws(ImagingError) {
        Vips.start()
        let limit = Int32(clamping: maxFrames)
        var layout = ipx_jpeg_layout()
        let containerFrames: Int32? = bytes.withUnsafeBytes { raw -> Int32? in
            switch SourceFormat(sniffing: bytes) {
            case .webp: ipx_webp_frame_count(raw.baseAddress, raw.count)
            case .gif: ipx_gif_frame_count(raw.baseAddress, raw.count, limit)
            case .jpeg: ipx_jpeg_read_layout(raw.baseAddress, raw.count, IPX_JPEG_MAX_SCANS, &layout) > IPX_JPEG_MAX_SCANS ? -2 : nil
            case .png: ipx_png_check_chunks(raw.baseAddress, raw.count) < 0 ? -3 : nil
            default: nil
            }
        }
        var svgFilterRenders = 0, svgSurfaces = 0
        if SourceFormat(sniffing: bytes) == .svg {
            // What the document refers to, before librsvg reads it (svg_check.c).
            var census = ipx_svg_census()
            let verdict = bytes.withUnsafeBytes { raw in ipx_svg_check(raw.baseAddress, raw.count, &census) }
            if let refusal = SVGRefusal(status: verdict) { throw .unsafeSVG(refusal) }
            (svgFilterRenders, svgSurfaces) = Self.svgRenders(census)
        }
        if containerFrames == -2 { throw .tooManyScans(limit: Self.maxJPEGScans) }
        // A chunk declaring more bytes than the file holds: libpng would allocate it whole first.
        if containerFrames == -3 { throw .undecodable }
        if let containerFrames, containerFrames > limit { throw .tooManyFrames(limit: maxFrames) }
        var width: Int32 = 0, height: Int32 = 0, pages: Int32 = 0, orientation: Int32 = 0, bands: Int32 = 0
        var colourManaged: Int32 = 0, pixelBytes: Int32 = 0
        // A JPEG's header from libjpeg and libexif (the same figures, without libvips' loader search and
        // EXIF formatting); libvips reads whatever that declines.
        let readByLibjpeg = layout.components > 0 && bytes.withUnsafeBytes { raw in
            ipx_jpeg_header(raw.baseAddress, raw.count, &width, &height, &orientation, &bands, &colourManaged) == 0
        }
        if readByLibjpeg {
            pages = 1
            pixelBytes = bands
        }
        let status = readByLibjpeg ? 0 : bytes.withUnsafeBytes { raw in
            ipx_vips_header(raw.baseAddress, raw.count, &width, &height, &pages, &orientation, &bands, &colourManaged, &pixelBytes)
        }
        guard status == 0 else {
            _ = Vips.takeError()
            throw .undecodable
        }
        self.width = Int(width)
        self.height = Int(height)
        // HEIF and AVIF files may hold several images (bursts, depth maps, sequences): only the primary
        // image is used, and only it is counted.
        let format = SourceFormat(sniffing: bytes)
        let onePrimaryImage = format == .heic || format == .avif
        self.frames = onePrimaryImage ? 1 : Int(max(1, containerFrames.map { max($0, pages) } ?? pages))
        self.orientation = (1...8).contains(Int(orientation)) ? Int(orientation) : 1
        self.colourManaged = colourManaged != 0
        self.wideGamutProfile = colourManaged == 2
        self.decodedPixelBytes = (1...64).contains(Int(pixelBytes)) ? Int(pixelBytes) : 4
        self.bands = (1...64).contains(Int(bands)) ? Int(bands) : 0
        self.hasAlpha = bands == 2 || bands == 4
        self.svgFilterRenders = svgFilterRenders
        self.svgSurfaces = svgSurfaces
        // Each component's array is one block of libjpeg's; from 4 MiB on it is mapped rounded up to 2 MiB
        // (jpeg_memory.c), counted here for every component.
        let coefficients = Int(layout.coefficient_bytes)
        self.jpegCoefficientBytes = coefficients >= Int(IPX_JPEG_MAPPED_MIN_BYTES)
            ? coefficients + Int(layout.components) * Int(IPX_HUGE_PAGE_BYTES) : coefficients
        self.jpegSequential = layout.components > 0 && layout.progressive == 0 && layout.scans == 1
        self.jpegEighthDecodable = (layout.progressive != 0 || jpegSequential) && layout.uniform_sampling != 0
            && (layout.components == 1 || layout.components == 3)
        self.jpegQuarterDecodable = jpegEighthDecodable && jpegSequential && (layout.components == 1 || layout.restart_interval > 0)
    }

    /// The filtered renders and the surfaces of an SVG (``svgFilterRenders``, ``svgSurfaces``): any `<use>`
    /// may instance any of them, so both are multiplied by one more than the `<use>`s (an over-estimate for
    /// an ordinary document, the bound for a bomb); capped so that the arithmetic stays small.
    static func svgRenders(_ census: ipx_svg_census) -> (filterRenders: Int, surfaces: Int) {
        let instances = 1 + Int(census.uses)
        let filterRenders = census.filter_primitives > 0 ? Int(census.filtered_elements) * Int(census.filter_primitives) * instances : 0
        return (min(filterRenders, 1 << 30), min(Int(census.offscreen_elements) * instances, 1 << 30))
    }
}
