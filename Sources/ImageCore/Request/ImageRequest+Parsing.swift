extension ImageRequest {
    /// Limits that parsing enforces, and the presets it expands.
    public struct Limits: Sendable {
        /// Largest output width or height after `dpr`.
        public var maxDimension: Int
        /// The named presets `preset=` expands (`presets.<name>`), and whether only they may be used.
        public var presets: PresetTable
        /// The named overlays `wm=` takes, and whether `wmurl=` and `text=` are allowed.
        public var overlays: OverlayCatalog
        /// `colour` when the request gives none (`image.colour`).
        public var defaultColour: ColourHandling

        public init(
            maxDimension: Int, presets: PresetTable = .none, overlays: OverlayCatalog = .none, defaultColour: ColourHandling = .srgb
        ) {
            self.defaultColour = defaultColour
            self.maxDimension = maxDimension
            self.presets = presets
            self.overlays = overlays
        }
    }

    /// The parameters `/img` accepts; anything else is a 400.
    static let knownParameters: Set<String> = Set<String>([
        "url", "w", "h", "fit", "format", "q", "dpr", "filter", "enlarge", "g", "fp", "bg", "progressive", "lqip", "crop",
        "max_bytes", "colour",
    ]).union(overlayParameters)

    /// The byte budgets `max_bytes` accepts: 1 KiB to 10 MiB.
    public static let maxBytesRange = 1_024...10_485_760

    /// Parses the decoded query parameters of `/img`, `preset=` expanded first (``PresetTable``).
    ///
    /// - Throws: ``RequestError`` naming the first unknown, repeated, missing or out-of-range parameter.
    public init(query given: [(name: String, value: String)], limits: Limits) throws(RequestError) {
        let query = try limits.presets.expand(given)
        var values: [String: String] = [:]
        for (name, value) in query {
            guard Self.knownParameters.contains(name) else {
                throw RequestError(parameter: name, problem: "unknown parameter")
            }
            guard values[name] == nil else {
                throw RequestError(parameter: name, problem: "given more than once")
            }
            values[name] = value
        }
        guard let url = values["url"] else {
            throw RequestError(parameter: "url", problem: "is required")
        }
        self.init(source: try SourceURL(parsing: url))

        let dpr = try Self.number(values["dpr"], name: "dpr", range: 1...4) ?? 1
        pixelRatio = dpr
        pixelRatioGiven = values["dpr"] != nil
        func dimension(_ name: String) throws(RequestError) -> Int? {
            guard let text = values[name] else { return nil }
            guard let value = Int(text), (1...limits.maxDimension).contains(value) else {
                throw RequestError(parameter: name, problem: "must be an integer in 1...\(limits.maxDimension)")
            }
            return min(limits.maxDimension, Int((Double(value) * dpr).rounded()))
        }
        width = try dimension("w")
        height = try dimension("h")

        if let text = values["fit"] {
            guard let mode = FitMode(rawValue: text) else {
                throw RequestError(parameter: "fit", problem: "must be one of contain, cover, fill, pad, auto")
            }
            fit = mode
        }
        if let text = values["format"] {
            if text == "auto" {
                format = .auto
            } else if text == "source" {
                format = .source
            } else if let fixed = OutputFormat(rawValue: text == "jpg" ? "jpeg" : text) {
                format = .fixed(fixed)
            } else {
                throw RequestError(parameter: "format", problem: "must be one of auto, source, jpeg, png, webp, avif, gif, jxl")
            }
        }
        if let text = values["q"] {
            guard let value = Int(text), (1...100).contains(value) else {
                throw RequestError(parameter: "q", problem: "must be an integer in 1...100")
            }
            quality = value
        }
        if let text = values["max_bytes"] {
            guard text.utf8.count <= 9, let value = Int(text), Self.maxBytesRange.contains(value) else {
                throw RequestError(
                    parameter: "max_bytes",
                    problem: "must be an integer in \(Self.maxBytesRange.lowerBound)...\(Self.maxBytesRange.upperBound) (bytes)")
            }
            maxBytes = value
        }
        enlarge = try Self.flag(values["enlarge"], name: "enlarge")
        progressive = try Self.flag(values["progressive"], name: "progressive")
        placeholder = try Self.flag(values["lqip"], name: "lqip")
        if let text = values["g"] {
            guard let parsed = Gravity(parameter: text) else {
                throw RequestError(
                    parameter: "g", problem: "must be one of \(Gravity.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            gravity = parsed
        }
        if let text = values["fp"] {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let x = Double(parts[0]), let y = Double(parts[1]), (0...1).contains(x), (0...1).contains(y)
            else {
                throw RequestError(parameter: "fp", problem: "must be x,y with both in 0...1, e.g. fp=0.3,0.6")
            }
            focalPoint = FocalPoint(x: x, y: y)
        }
        if let text = values["crop"] {
            guard let rectangle = CropRectangle(parameter: text) else {
                throw RequestError(
                    parameter: "crop",
                    problem: "must be x,y,w,h in source pixels (integers) or fractions with a decimal point (0.0...1.0), "
                        + "w and h above 0, e.g. crop=100,50,800,600 or crop=0.25,0,0.5,1.0")
            }
            crop = rectangle
        }
        if let text = values["bg"] {
            guard let colour = RGBAColour(hex: text) else {
                throw RequestError(parameter: "bg", problem: "must be RRGGBB or RRGGBBAA in hex")
            }
            background = colour
        }
        if let text = values["filter"] {
            guard !text.isEmpty else { throw RequestError(parameter: "filter", problem: "is empty") }
            let steps = text.split(separator: ",", omittingEmptySubsequences: false)
            guard steps.count <= 10 else { throw RequestError(parameter: "filter", problem: "has more than 10 steps") }
            for step in steps {
                filters.append(try ImageFilter.parse(step))
            }
        }
        colour = limits.defaultColour
        if let text = values["colour"] {
            guard let handling = ColourHandling(rawValue: text) else {
                throw RequestError(parameter: "colour", problem: "must be one of srgb, keep")
            }
            colour = handling
        }
        try parseOverlays(values, limits: limits)
    }

    private static func flag(_ text: String?, name: String) throws(RequestError) -> Bool {
        switch text {
        case nil, "0", "false": return false
        case "1", "true": return true
        default: throw RequestError(parameter: name, problem: "must be 0 or 1")
        }
    }

    private static func number(_ text: String?, name: String, range: ClosedRange<Double>) throws(RequestError) -> Double? {
        guard let text else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw RequestError(parameter: name, problem: "must be a number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}
