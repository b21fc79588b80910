import CVipsShim

/// What `GET /info` tells a frontend before the image arrives: the size to reserve (after EXIF
/// orientation), the format, alpha, frames, the source's bytes, a dominant colour and a BlurHash.
public struct ImageInfo: Sendable, Codable, Equatable {
    public var width: Int
    public var height: Int
    public var format: String
    public var hasAlpha: Bool
    public var frames: Int
    public var bytes: Int
    /// `#rrggbb`.
    public var dominantColor: String
    public var blurhash: String
    /// The faces found in the source (`/info?faces=1`), in its upright pixels, largest first; nil when not
    /// asked for (the key is then absent).
    public var faces: [FaceRectangle]?

    /// A face in the source's upright pixels.
    public struct FaceRectangle: Sendable, Codable, Equatable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        /// `box` (fractions) in an upright image of `width` x `height`.
        public init(_ box: FaceBox, width imageWidth: Int, height imageHeight: Int) {
            let pixels = box.pixels(width: imageWidth, height: imageHeight)
            (x, y, width, height) = (pixels.x, pixels.y, pixels.width, pixels.height)
        }
    }

    enum CodingKeys: String, CodingKey {
        case width, height, format, frames, bytes, blurhash, faces
        case hasAlpha = "has_alpha"
        case dominantColor = "dominant_color"
    }

    /// The side of the small image the colour figures are computed from.
    static let sampleSize = 32

    /// Reads `source`: header checks as for `/img`, then a 32 px sample for the colours.
    /// - Throws: ``ImagingError`` (415, 422).
    public init(
        source: [UInt8], maxSourcePixels: Int, maxSourceFrames: Int = 1000, allowJXL: Bool = false, allowSVG: Bool = false
    ) throws(ImagingError) {
        let (format, header) = try SourceHeader.checked(
            source, maxSourcePixels: maxSourcePixels, maxSourceFrames: maxSourceFrames, allowJXL: allowJXL, allowSVG: allowSVG)
        var sample = try SourceSteps(box: ResizeBox(width: Self.sampleSize, height: Self.sampleSize, fit: .contain))
            .image(from: source, header: header, deadline: nil)
        let hasAlpha = sample.hasAlpha
        sample = try ColourspaceStep().apply(to: sample)
        if sample.hasAlpha {
            sample = try sample.producing { ipx_vips_flatten($0, $1, 255, 255, 255) }
            sample = try sample.producing { ipx_vips_cast_uchar($0, $1) }
        }
        let pixels = try sample.pixels()
        let oriented = header.orientedSize
        self.width = oriented.width
        self.height = oriented.height
        self.format = format.rawValue
        self.hasAlpha = hasAlpha
        self.frames = header.frames
        self.bytes = source.count
        self.dominantColor = Self.dominantColour(rgb: pixels)
        let landscape = sample.width >= sample.height
        self.blurhash = BlurHash.encode(
            rgb: pixels, width: sample.width, height: sample.height, componentsX: landscape ? 4 : 3, componentsY: landscape ? 3 : 4)
    }

    /// The average of the most common colour bucket (4 bits per channel).
    static func dominantColour(rgb pixels: [UInt8]) -> String {
        var counts: [Int: (count: Int, r: Int, g: Int, b: Int)] = [:]
        for offset in stride(from: 0, to: pixels.count - 2, by: 3) {
            let r = Int(pixels[offset]), g = Int(pixels[offset + 1]), b = Int(pixels[offset + 2])
            let bucket = (r >> 4) << 8 | (g >> 4) << 4 | (b >> 4)
            let current = counts[bucket] ?? (0, 0, 0, 0)
            counts[bucket] = (current.count + 1, current.r + r, current.g + g, current.b + b)
        }
        guard let top = counts.values.max(by: { $0.count < $1.count }) else { return "#000000" }
        return "#" + [top.r, top.g, top.b].map { total in
            let value = total / top.count
            return (value < 16 ? "0" : "") + String(value, radix: 16)
        }.joined()
    }
}
