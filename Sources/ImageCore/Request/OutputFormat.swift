/// An encoded image format the service can write.
public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp, avif, gif, jxl

    /// The `Content-Type` of this format.
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .gif: "image/gif"
        case .jxl: "image/jxl"
        }
    }
}

/// The `format` parameter: a fixed format, or `auto` (negotiated from `Accept`).
public enum RequestedFormat: Sendable, Hashable {
    case auto
    case fixed(OutputFormat)
    /// `format=source`: the source's own format (``FormatChoice/source``), as thumbor answers.
    case source
}

/// The output format decided before the transform; `jpegOrPNG` picks PNG only when the result has alpha.
public enum FormatChoice: Sendable, Hashable, CustomStringConvertible {
    case fixed(OutputFormat)
    case jpegOrPNG
    /// The source's format where it is cheap to write (JPEG, PNG, WebP, GIF); JPEG or PNG (alpha) for AVIF,
    /// HEIC and JPEG XL sources; PNG for SVG sources. Resolved from the source's bytes when the transform is planned
    /// (``resolved(forSource:)``); the variant key keeps `source`, which names one format per source.
    case source

    public var description: String {
        switch self {
        case .fixed(let format): format.rawValue
        case .jpegOrPNG: "jpeg|png"
        case .source: "source"
        }
    }
}

extension FormatChoice {
    /// The choice for a source in `format`: ``source`` becomes its format (or JPEG-or-PNG), others stay.
    public func resolved(forSource format: SourceFormat?) -> FormatChoice {
        guard self == .source else { return self }
        switch format {
        case .jpeg: return .fixed(.jpeg)
        case .png: return .fixed(.png)
        case .webp: return .fixed(.webp)
        case .gif: return .fixed(.gif)
        // An SVG's rendering has an alpha channel; PNG keeps it losslessly (an SVG is never answered as SVG).
        case .svg: return .fixed(.png)
        case .avif, .heic, .jxl, nil: return .jpegOrPNG
        }
    }
}
