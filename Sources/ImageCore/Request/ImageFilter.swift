/// One step of the `filter` parameter, applied to the resized image in the order given.
public enum ImageFilter: Sendable, Hashable, CustomStringConvertible {
    /// Gaussian blur, `blur:SIGMA` (0.1...100).
    case blur(sigma: Double)
    /// Unsharp mask, `sharpen` or `sharpen:SIGMA` (0.1...10, default 1).
    case sharpen(sigma: Double)
    /// Greyscale, `grayscale` (libvips' luminance).
    case grayscale
    /// Greyscale from Rec. 601 luma of the sRGB values, `grayscale:601` (as Pillow and thumbor make it).
    case grayscale601
    /// Sepia tone, `sepia`.
    case sepia
    /// Brightness multiplier, `brightness:F` (0...4; 1 unchanged).
    case brightness(Double)
    /// Contrast around mid-grey, `contrast:F` (0...4; 1 unchanged).
    case contrast(Double)
    /// A value added to every colour channel, `lighten:D` (-255...255; thumbor's and imgproxy's brightness).
    case lighten(Int)
    /// Clockwise rotation, `rotate:90|180|270`.
    case rotate(degrees: Int)
    /// Upside down, `flip`.
    case flip
    /// Left-right mirror, `flop`.
    case flop
    /// Rounded corners of the given radius in pixels, transparent outside, `round:RADIUS` (1...2048).
    case round(radius: Int)
    /// A circular mask (the largest circle that fits, centred), `circle`.
    case circle
    /// Removes a uniform border (the colour of the top-left pixel), `trim`.
    case trim
    /// Every face found in the image blurred or pixelated beyond recognition, `redact_faces[:blur|:pixelate]`
    /// (blur by default; ``FaceRedactionStep``).
    case redactFaces(FaceRedaction)

    /// The canonical spelling, used in the variant key.
    public var description: String {
        switch self {
        case .blur(let sigma): "blur:\(sigma)"
        case .sharpen(let sigma): "sharpen:\(sigma)"
        case .grayscale: "grayscale"
        case .grayscale601: "grayscale:601"
        case .sepia: "sepia"
        case .brightness(let factor): "brightness:\(factor)"
        case .contrast(let factor): "contrast:\(factor)"
        case .lighten(let delta): "lighten:\(delta)"
        case .rotate(let degrees): "rotate:\(degrees)"
        case .flip: "flip"
        case .flop: "flop"
        case .round(let radius): "round:\(radius)"
        case .circle: "circle"
        case .trim: "trim"
        case .redactFaces(let style): "redact_faces:\(style.rawValue)"
        }
    }

    /// Whether the filter only changes colours (so it can run on every frame of an animation).
    public var isColourOnly: Bool {
        switch self {
        case .blur, .sharpen, .grayscale, .grayscale601, .sepia, .brightness, .contrast, .lighten: true
        case .rotate, .flip, .flop, .round, .circle, .trim, .redactFaces: false
        }
    }

    static let names = "blur, sharpen, grayscale, sepia, brightness, contrast, lighten, rotate, flip, flop, round, circle, trim, redact_faces"

    /// Parses one comma-separated step of the `filter` parameter.
    static func parse(_ step: Substring) throws(RequestError) -> ImageFilter {
        let parts = step.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts[0]
        let argument = parts.count > 1 ? parts[1] : nil
        func number(_ range: ClosedRange<Double>, default fallback: Double? = nil) throws(RequestError) -> Double {
            guard let argument else {
                if let fallback { return fallback }
                throw RequestError(parameter: "filter", problem: "\(name) needs a value, e.g. \(name):2")
            }
            guard let value = Double(argument), value.isFinite, range.contains(value) else {
                throw RequestError(
                    parameter: "filter",
                    problem: "\(name) takes a number in \(range.lowerBound)...\(range.upperBound), not '\(argument)'")
            }
            return value
        }
        func none(_ filter: ImageFilter) throws(RequestError) -> ImageFilter {
            guard argument == nil else { throw RequestError(parameter: "filter", problem: "\(name) takes no value") }
            return filter
        }
        switch name {
        case "blur": return .blur(sigma: try number(0.1...100))
        case "sharpen": return .sharpen(sigma: try number(0.1...10, default: 1))
        case "grayscale", "greyscale":
            if argument == "601" { return .grayscale601 }
            return try none(.grayscale)
        case "sepia": return try none(.sepia)
        case "brightness": return .brightness(try number(0...4))
        case "contrast": return .contrast(try number(0...4))
        case "lighten":
            guard let argument, argument.utf8.count <= 4, let delta = Int(argument), (-255...255).contains(delta) else {
                throw RequestError(parameter: "filter", problem: "lighten takes a whole number in -255...255")
            }
            return .lighten(delta)
        case "rotate":
            guard let argument, let degrees = Int(argument), [90, 180, 270].contains(degrees) else {
                throw RequestError(parameter: "filter", problem: "rotate takes 90, 180 or 270")
            }
            return .rotate(degrees: degrees)
        case "flip": return try none(.flip)
        case "flop": return try none(.flop)
        case "round":
            guard let argument, let radius = Int(argument), (1...2048).contains(radius) else {
                throw RequestError(parameter: "filter", problem: "round takes a radius in pixels, 1...2048")
            }
            return .round(radius: radius)
        case "circle": return try none(.circle)
        case "trim": return try none(.trim)
        case "redact_faces":
            guard let argument else { return .redactFaces(.blur) }
            guard let style = FaceRedaction(rawValue: String(argument)) else {
                throw RequestError(parameter: "filter", problem: "redact_faces takes blur or pixelate")
            }
            return .redactFaces(style)
        default:
            throw RequestError(parameter: "filter", problem: "unknown filter '\(name)' (known: \(names))")
        }
    }
}

/// How ``ImageFilter/redactFaces(_:)`` hides a face.
public enum FaceRedaction: String, Sendable, Hashable {
    case blur, pixelate
}
