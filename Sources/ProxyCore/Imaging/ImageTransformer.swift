/// Turns source bytes into an encoded variant: sniff, header check, resize, sRGB, filters, encode.
///
/// Synchronous and CPU-bound: call it on the transform pool (``TransformPool``), never on an event loop.
public struct ImageTransformer: Sendable {
    /// Largest source accepted, in pixels (width x height x frames), checked before any decode.
    public var maxSourcePixels: Int
    /// Encoder defaults.
    public var encoding: EncodingSettings

    public init(maxSourcePixels: Int, encoding: EncodingSettings) {
        self.maxSourcePixels = maxSourcePixels
        self.encoding = encoding
    }

    /// Produces the variant `request` asks for.
    /// - Throws: ``ImagingError`` (415 not an image, 422 undecodable or too many pixels).
    public func transform(_ source: [UInt8], request: ImageRequest, choice: FormatChoice) throws(ImagingError) -> EncodedImage {
        guard SourceFormat(sniffing: source) != nil else { throw .unsupportedFormat }
        let header = try SourceHeader(reading: source)
        guard header.totalPixels <= maxSourcePixels else { throw .tooManyPixels(limit: maxSourcePixels) }

        var image = try ResizeStep(request: request).apply(to: source, header: header)
        image = try ColourspaceStep().apply(to: image)
        for filter in request.filters {
            image = try FilterStep(filter: filter).apply(to: image)
        }
        let format: OutputFormat = switch choice {
        case .fixed(let fixed): fixed
        case .jpegOrPNG: image.hasAlpha ? .png : .jpeg
        }
        return try image.encoded(as: format, quality: request.quality, settings: encoding)
    }
}
