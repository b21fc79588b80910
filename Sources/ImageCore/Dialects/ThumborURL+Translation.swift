extension ThumborURL {
    /// Colour names `fill()` and `background_color()` take beside hex.
    static let colourNames: [Substring: String] = [
        "white": "ffffff", "black": "000000", "red": "ff0000", "green": "008000", "blue": "0000ff", "yellow": "ffff00",
        "gray": "808080", "grey": "808080", "transparent": "ffffff00",
    ]

    /// The native request this URL means.
    /// - Throws: ``RequestError`` naming the part or filter that is malformed or that this service does not do.
    public func translated() throws(RequestError) -> DialectRequest {
        var request = DialectRequest()
        request.set("url", image, option: "image")
        request.metadata = metadata
        var filters: [String] = []
        var enlarge = fitIn == nil
        var fill: String?
        if let trim {
            guard trim == "trim" || trim == "trim:top-left" else {
                throw RequestError(parameter: "trim", problem: "only trim (or trim:top-left) is supported: the border is the top-left pixel's colour")
            }
            filters.append("trim")
        }
        if let crop, crop != (0, 0, 0, 0) {
            guard crop.right > crop.left, crop.bottom > crop.top else {
                throw RequestError(parameter: "crop", problem: "must be left x top : right x bottom with right > left and bottom > top")
            }
            request.set("crop", "\(crop.left),\(crop.top),\(crop.right - crop.left),\(crop.bottom - crop.top)", option: "crop")
        }
        if let fitIn, fitIn != "fit-in" {
            throw RequestError(parameter: String(fitIn), problem: "not supported by this service (fit-in is)")
        }
        func side(_ text: Substring?, _ name: String, option: String) throws(RequestError) {
            guard let text else { return }
            guard text != "orig" else { throw RequestError(parameter: option, problem: "orig is not supported; give the size or 0") }
            if let value = Int(text), value > 0 { request.set(name, String(value), option: option) }
        }
        try side(width, "w", option: "width")
        try side(height, "h", option: "height")
        if flipHorizontally { filters.append("flop") }
        if flipVertically { filters.append("flip") }
        let bothSides = request.value(of: "w") != nil && request.value(of: "h") != nil
        if fitIn == nil, bothSides { request.set("fit", "cover", option: "size") }
        if smart {
            // thumbor's smart crop looks for faces first and falls back to features: g=face does the same
            // (libvips' attention where no face is found).
            request.set("g", "face", option: "smart")
        } else if horizontalAlign != nil || verticalAlign != nil {
            let vertical: String = switch verticalAlign { case "top": "north"; case "bottom": "south"; default: "" }
            let horizontal: String = switch horizontalAlign { case "left": "west"; case "right": "east"; default: "" }
            let gravity = vertical + horizontal  // northwest, north, west, …; centre when both are centred
            if !gravity.isEmpty { request.set("g", gravity, option: horizontalAlign != nil ? "halign" : "valign") }
        }
        var background: (hex: String, option: String)?
        for (name, arguments) in self.filters {
            let label = "filters:" + name.prefix(32)
            func one() throws(RequestError) -> Substring {
                guard arguments.count == 1, !arguments[0].isEmpty else { throw RequestError(parameter: label, problem: "takes one argument") }
                return arguments[0]
            }
            func none() throws(RequestError) {
                guard arguments.isEmpty else { throw RequestError(parameter: label, problem: "takes no argument") }
            }
            func number(_ text: Substring) throws(RequestError) -> Double { try DialectArguments.number(text, option: label) }
            switch name {
            case "quality": request.set("q", String(try DialectArguments.count(try one(), option: label)), option: label)
            case "format":
                let format = try one()
                request.set("format", format == "jpg" ? "jpeg" : String(format.prefix(8)), option: label)
            case "max_bytes": request.set("max_bytes", String(try DialectArguments.count(try one(), option: label)), option: label)
            case "blur":
                guard (1...2).contains(arguments.count) else { throw RequestError(parameter: label, problem: "takes radius[,sigma]") }
                let radius = try number(arguments[0])
                let sigma = arguments.count == 2 ? try number(arguments[1]) : 0
                if let native = ThumborBlur.nativeSigma(radius: radius, sigma: sigma) { filters.append("blur:\(DialectArguments.text(native))") }
            case "sharpen":
                guard arguments.count == 3 else { throw RequestError(parameter: label, problem: "takes amount,radius,luminance_only") }
                let radius = try number(arguments[1])
                if try number(arguments[0]) > 0 { filters.append("sharpen:\(DialectArguments.text(min(max(radius, 0.1), 10)))") }
            case "grayscale":
                try none()
                filters.append("grayscale:601")
            case "brightness", "contrast":
                let text = try one()
                guard text.utf8.count <= 4, let amount = Int(text), (-100...100).contains(amount) else {
                    throw RequestError(parameter: label, problem: "takes a whole number in -100...100")
                }
                // As thumbor's: brightness adds 255·n/100 to each channel; contrast scales around 128 by
                // ((n+100)²/100)/100, both in integer steps.
                if name == "brightness" {
                    filters.append("lighten:\(255 * amount / 100)")
                } else {
                    filters.append("contrast:\(DialectArguments.text(Double((amount + 100) * (amount + 100) / 100) / 100))")
                }
            case "rotate":
                let angle = try DialectArguments.count(try one(), option: label)
                guard angle % 90 == 0 else { throw RequestError(parameter: label, problem: "must be a multiple of 90") }
                // thumbor turns counter-clockwise, the native filter clockwise.
                let clockwise = (360 - angle % 360) % 360
                if clockwise != 0 { filters.append("rotate:\(clockwise)") }
            case "fill":
                guard (1...2).contains(arguments.count), let colour = Self.hex(arguments[0]) else {
                    throw RequestError(parameter: label, problem: "takes a hex colour or one of \(Self.colourNames.keys.sorted().joined(separator: ", "))")
                }
                fill = label
                background = (colour, label)
            case "background_color":
                guard let colour = Self.hex(try one()) else {
                    throw RequestError(parameter: label, problem: "takes a hex colour or one of \(Self.colourNames.keys.sorted().joined(separator: ", "))")
                }
                background = (colour, label)
            case "round_corner":
                guard (4...5).contains(arguments.count) else { throw RequestError(parameter: label, problem: "takes a|b,r,g,b[,transparent]") }
                let radii = arguments[0].split(separator: "|")
                guard radii.count == 1 || (radii.count == 2 && radii[0] == radii[1]), let radius = Int(radii[0]) else {
                    throw RequestError(parameter: label, problem: "takes one radius (a or a|a)")
                }
                filters.append("round:\(radius)")
                let transparent = arguments.count == 5 && arguments[4] == "1"
                if !transparent {
                    var hex = ""
                    for part in arguments[1...3] {
                        guard let value = Int(part), (0...255).contains(value) else {
                            throw RequestError(parameter: label, problem: "r, g and b are 0...255")
                        }
                        hex += String(value, radix: 16).count == 1 ? "0" + String(value, radix: 16) : String(value, radix: 16)
                    }
                    background = (hex, label)
                }
            case "watermark":
                guard arguments.count == 4, let url = arguments.first, !url.isEmpty else {
                    throw RequestError(parameter: label, problem: "takes url,x,y,alpha")
                }
                guard arguments[1] == "-0", arguments[2] == "-0", arguments[3] == "0" else {
                    throw RequestError(
                        parameter: label,
                        problem: "is drawn in the bottom-right corner, opaque: give watermark(url,-0,-0,0) or use a named overlay")
                }
                request.set("wmurl", url.removingPercentEncoding ?? String(url), option: label)
            case "strip_icc", "strip_exif":
                // Always so: outputs are sRGB without metadata.
                try none()
            case "no_upscale":
                try none()
                enlarge = false
            case "upscale":
                try none()
                // thumbor grows the image as the filters before it left it: after a quarter turn, into the box
                // turned with it, which the native box (applied before the filters) cannot say.
                if filters.contains(where: { $0 == "rotate:90" || $0 == "rotate:270" }) {
                    throw RequestError(parameter: label, problem: "after rotate(90) or rotate(270) is not supported; put upscale() first")
                }
                enlarge = true
            default:
                throw RequestError(parameter: label, problem: "unknown or unsupported filter (see docs/dialects.md)")
            }
        }
        if fill != nil {
            guard fitIn != nil else { throw RequestError(parameter: fill ?? "fill", problem: "pads only with fit-in") }
            if bothSides { request.set("fit", "pad", option: "fit-in") }
        }
        if let background { request.set("bg", background.hex, option: background.option) }
        // thumbor's upscale() grows a fit-in image only into a box with both sides.
        if fitIn != nil, !bothSides { enlarge = false }
        if enlarge, request.value(of: "w") != nil || request.value(of: "h") != nil { request.set("enlarge", "1", option: "upscale") }
        if !filters.isEmpty { request.set("filter", filters.joined(separator: ","), option: "filters") }
        // thumbor answers in the source's format unless format() says otherwise.
        if request.value(of: "format") == nil { request.set("format", "source", option: "format") }
        return request
    }

    /// A colour of `fill()`/`background_color()` as hex: `rgb`, `rrggbb`, or a name.
    static func hex(_ text: Substring) -> String? {
        if let named = colourNames[text] { return named }
        let digits = text.hasPrefix("#") ? text.dropFirst() : text
        guard digits.utf8.allSatisfy({ $0.isASCIIHexDigit }) else { return nil }
        switch digits.count {
        case 6: return digits.lowercased()
        case 3: return digits.map { "\($0)\($0)" }.joined().lowercased()
        default: return nil
        }
    }
}

extension UInt8 {
    var isASCIIHexDigit: Bool {
        (48...57).contains(self) || (65...70).contains(self) || (97...102).contains(self)
    }
}
