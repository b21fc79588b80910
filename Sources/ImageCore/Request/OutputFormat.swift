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
}

/// The output format decided before the transform; `jpegOrPNG` picks PNG only when the result has alpha.
public enum FormatChoice: Sendable, Hashable, CustomStringConvertible {
    case fixed(OutputFormat)
    case jpegOrPNG

    public var description: String {
        switch self {
        case .fixed(let format): format.rawValue
        case .jpegOrPNG: "jpeg|png"
        }
    }
}
