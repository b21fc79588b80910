import CVipsShim

/// What an encoded image's header says, read without decoding pixels.
public struct SourceHeader: Sendable, Equatable {
    /// Stored width (before EXIF orientation).
    public var width: Int
    /// Stored height (before EXIF orientation).
    public var height: Int
    /// Frames (pages) in the file; 1 for still images.
    public var frames: Int
    /// EXIF orientation 1...8.
    public var orientation: Int
    /// The numbers are not sRGB: the image carries an ICC profile (RGB, grey or CMYK), or is CMYK.
    /// Such sources are converted to sRGB with their profile before it is removed.
    public var colourManaged: Bool
    /// An RGB image with an ICC profile other than sRGB (Display P3, Adobe RGB, ...): `colour=keep` keeps
    /// its numbers and its profile instead of converting to sRGB.
    public var wideGamutProfile = false
    /// Bytes libjpeg keeps for the whole image's DCT coefficients while decoding this source, whatever
    /// the output scale: a progressive or multi-scan JPEG (88 MB for a 5120x2880 4:4:4 file), allocated
    /// outside libvips' tracking. 0 for other sources and for JPEGs of one interleaved scan.
    public var jpegCoefficientBytes: Int
    /// A grey or three-component JPEG whose components share one sampling (4:4:4), progressive or of one
    /// interleaved sequential (baseline) scan: ``JPEGEighthDecoder`` can make its 1/8 image from the DC
    /// coefficients alone, without libjpeg's coefficient buffer or its IDCT.
    public var jpegEighthDecodable: Bool
    /// A JPEG of one interleaved sequential (baseline) scan: libjpeg decodes it row by row, so its scaled
    /// decode costs less the smaller the scale, and ``ResizeBox/jpegShrink(for:)`` keeps a margin above the
    /// output that a progressive file's DC-only 1/8 image does not.
    public var jpegSequential = false

    /// Bytes one decoded pixel takes, all bands (3 for 8-bit RGB, 8 for 16-bit RGBA): what a whole
    /// decode kept in memory (``DecodedSource``) holds per pixel. 4 unless read from a file.
    public var decodedPixelBytes = 4
    /// Bands of the decoded image (1 grey, 2 grey with alpha, 3 RGB, 4 RGBA): with
    /// ``decodedPixelBytes`` it tells 8-bit samples (one byte a band) from 16-bit ones. 0 unless read from
    /// a file.
    public var bands = 0
    /// The image has an alpha band (grey or RGB with alpha).
    public var hasAlpha = false

    /// Width and height as displayed, after EXIF orientation.
    public var orientedSize: (width: Int, height: Int) {
        (5...8).contains(orientation) ? (height, width) : (width, height)
    }

    /// A header with the given figures (for a part of an image, or tests).
    public init(
        width: Int, height: Int, frames: Int = 1, orientation: Int = 1, colourManaged: Bool = false,
        jpegCoefficientBytes: Int = 0, jpegEighthDecodable: Bool = false
    ) {
        self.width = width
        self.height = height
        self.frames = frames
        self.orientation = orientation
        self.colourManaged = colourManaged
        self.jpegCoefficientBytes = jpegCoefficientBytes
        self.jpegEighthDecodable = jpegEighthDecodable
    }

    /// Pixels a full decode would produce: width x height x frames.
    public var totalPixels: Int { width * height * max(1, frames) }

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
        // Each component's array is one block of libjpeg's; from 4 MiB on it is mapped rounded up to 2 MiB
        // (jpeg_memory.c), counted here for every component.
        let coefficients = Int(layout.coefficient_bytes)
        self.jpegCoefficientBytes = coefficients >= Int(IPX_JPEG_MAPPED_MIN_BYTES)
            ? coefficients + Int(layout.components) * Int(IPX_HUGE_PAGE_BYTES) : coefficients
        self.jpegSequential = layout.components > 0 && layout.progressive == 0 && layout.scans == 1
        self.jpegEighthDecodable = (layout.progressive != 0 || jpegSequential) && layout.uniform_sampling != 0
            && (layout.components == 1 || layout.components == 3)
    }
}
