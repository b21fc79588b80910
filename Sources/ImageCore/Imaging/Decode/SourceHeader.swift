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
    /// A baseline JPEG whose 1/4 image ``JPEGEighthDecoder`` makes from the first coefficients: grey, or
    /// colour with restart markers. A colour file without them is left to libjpeg-turbo's 1/4 decode, which
    /// takes its fast Huffman path there and came within 3-5% of ours (`bench/jpeg_dc`, 2026-11-29).
    public var jpegQuarterDecodable = false

    /// Bytes one decoded pixel takes, all bands (3 for 8-bit RGB, 8 for 16-bit RGBA): what a whole
    /// decode kept in memory (``DecodedSource``) holds per pixel. 4 unless read from a file.
    public var decodedPixelBytes = 4
    /// Bands of the decoded image (1 grey, 2 grey with alpha, 3 RGB, 4 RGBA): with
    /// ``decodedPixelBytes`` it tells 8-bit samples (one byte a band) from 16-bit ones. 0 unless read from
    /// a file.
    public var bands = 0
    /// The image has an alpha band (grey or RGB with alpha).
    public var hasAlpha = false
    /// An SVG source's filtered renders (0 for rasters): filter primitives times filtered elements, and times
    /// one more than its `<use>`s (each may instance a filtered element); each may run a filter over the
    /// whole canvas (``TransformCost/svgFilterCanvases``). From the check of the document (`svg_check.c`).
    public var svgFilterRenders = 0
    /// An SVG source's elements drawn through a surface of their own (a mask, a clip path, a group opacity),
    /// times one more than its `<use>`s (``TransformCost/svgSurfaceCanvases``).
    public var svgSurfaces = 0

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
}
