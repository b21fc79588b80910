import Foundation

extension ImgproxyURL {
    /// imgproxy's resizing types onto the native `fit`: `fit` contains (or pads with `extend`), `fill` and
    /// `fill-down` cover, `force` stretches, `auto` covers when the box and the source share an orientation.
    static let resizingTypes: [Substring: String] = [
        "fit": "contain", "fill": "cover", "fill-down": "cover", "force": "fill", "auto": "auto",
    ]

    /// imgproxy's gravity names onto the native ones.
    static let gravities: [Substring: Gravity] = [
        "no": .north, "so": .south, "ea": .east, "we": .west, "noea": .northeast, "nowe": .northwest,
        "soea": .southeast, "sowe": .southwest, "ce": .centre, "sm": .smart,
    ]

    /// Options of imgproxy's that this service refuses by name (400), so a user learns which one it is.
    static let refusedOptions: Set<Substring> = [
        "min-width", "mw", "min-height", "mh", "zoom", "z", "padding", "pd", "extend_aspect_ratio", "extend_ar", "exar",
        "keep_copyright", "kcr", "strip_color_profile", "scp", "pixelate", "pix", "unsharp_masking", "ush",
        "adjust", "a", "brightness", "br", "contrast", "co", "saturation", "sa", "monochrome", "mc", "duotone", "dt",
        "skip_processing", "skp", "raw", "page", "pg", "pages", "pgs", "disable_animation", "da", "video_thumbnail_second",
        "vts", "fallback_image_url", "fiu", "style", "st", "dpi", "autoquality", "aq", "enforce_thumbnail", "eth",
        "watermark_url", "wmu", "watermark_text", "wmt", "watermark_size", "wms", "watermark_shadow", "wmsh",
        "objects_position", "obj_pos", "op", "hashsum", "hs", "max_src_resolution", "msr", "max_src_file_size", "msfs",
        "max_animation_frames", "maf", "max_animation_frame_resolution", "mafr", "max_result_dimension", "mrd",
        "colorize", "col", "gradient", "gr", "draw_detections", "dd", "crop_aspect_ratio", "crop_ar", "car",
    ]

    /// The operator's choices that the dialect's options refer to.
    public struct Choices: Sendable {
        /// The named overlay (`overlays.<name>`) that `watermark:1` draws; nil refuses `watermark`.
        public var watermarkOverlay: String?

        public init(watermarkOverlay: String? = nil) {
            self.watermarkOverlay = watermarkOverlay
        }
    }

    /// The native request this URL means.
    /// - Throws: ``RequestError`` naming the option (by the name the URL used) that is malformed or that
    ///   this service does not do.
    public func translated(choices: Choices = Choices()) throws(RequestError) -> DialectRequest {
        var state = State()
        for option in options {
            try state.apply(option, choices: choices)
        }
        if state.format == nil, let sourceExtension {
            state.format = (sourceExtension, "extension")
        }
        // imgproxy answers in the source's format when neither an option nor the extension names one.
        if state.format == nil { state.format = ("source", "format") }
        return try state.request(source: source)
    }

    /// The options read so far (later ones override earlier, as in imgproxy).
    struct State {
        var resizingType: (type: Substring, option: String) = ("fit", "resizing_type")
        var width: (value: Int, option: String) = (0, "width")
        var height: (value: Int, option: String) = (0, "height")
        var enlarge: String?
        var extend: String?
        var gravity: (gravity: Gravity, option: String)?
        var focalPoint: (x: Double, y: Double, option: String)?
        var crop: (width: Double, height: Double, gravity: [Substring], option: String)?
        var trim: String?
        var dpr: (value: String, option: String)?
        var background: (hex: String, option: String)?
        var quality: (value: Int, option: String)?
        var formatQuality: [String: Int] = [:]
        var formatQualityOption: String?
        var maxBytes: (value: Int, option: String)?
        var format: (name: String, option: String)?
        var blur: (sigma: Double, option: String)?
        var sharpen: (sigma: Double, option: String)?
        var rotate: (degrees: Int, option: String)?
        var watermark: (overlay: String, option: String)?
        var presets: [String] = []
        var presetOption = "preset"
        var expires: Int?
        var filename: String?
        var attachment = false

        mutating func apply(_ option: [Substring], choices: Choices) throws(RequestError) {
            let name = option[0]
            let arguments = option.dropFirst()
            let label = String(name.prefix(32))
            func argument(_ index: Int) -> Substring? {
                let position = arguments.startIndex + index
                return position < arguments.endIndex && !arguments[position].isEmpty ? arguments[position] : nil
            }
            func atMost(_ count: Int) throws(RequestError) {
                guard arguments.count <= count else {
                    throw RequestError(parameter: label, problem: "takes at most \(count) argument\(count == 1 ? "" : "s")")
                }
            }
            func needsOne() throws(RequestError) -> Substring {
                guard arguments.count == 1, let value = argument(0) else {
                    throw RequestError(parameter: label, problem: "takes one argument")
                }
                return value
            }
            switch name {
            case "resize", "rs":
                try atMost(6)
                if let type = argument(0) { try setResizingType(type, option: label) }
                if let text = argument(1) { width = (try DialectArguments.count(text, option: label), label) }
                if let text = argument(2) { height = (try DialectArguments.count(text, option: label), label) }
                if let text = argument(3) { enlarge = try DialectArguments.flag(text, option: label) ? label : nil }
                if arguments.count > 4 { try setExtend(Array(arguments.dropFirst(4)), option: label) }
            case "size", "s":
                try atMost(5)
                if let text = argument(0) { width = (try DialectArguments.count(text, option: label), label) }
                if let text = argument(1) { height = (try DialectArguments.count(text, option: label), label) }
                if let text = argument(2) { enlarge = try DialectArguments.flag(text, option: label) ? label : nil }
                if arguments.count > 3 { try setExtend(Array(arguments.dropFirst(3)), option: label) }
            case "resizing_type", "rt":
                try setResizingType(try needsOne(), option: label)
            case "width", "w":
                width = (try DialectArguments.count(try needsOne(), option: label), label)
            case "height", "h":
                height = (try DialectArguments.count(try needsOne(), option: label), label)
            case "dpr":
                let value = try DialectArguments.number(try needsOne(), option: label)
                dpr = value == 1 ? nil : (DialectArguments.text(value), label)
            case "enlarge", "el":
                enlarge = try DialectArguments.flag(try needsOne(), option: label) ? label : nil
            case "extend", "ex":
                try atMost(4)
                try setExtend(Array(arguments), option: label)
            case "gravity", "g":
                try setGravity(Array(arguments), option: label)
            case "crop", "c":
                guard (2...5).contains(arguments.count), let widthText = argument(0), let heightText = argument(1) else {
                    throw RequestError(parameter: label, problem: "takes width:height[:gravity]")
                }
                crop = (
                    try DialectArguments.number(widthText, option: label), try DialectArguments.number(heightText, option: label),
                    Array(arguments.dropFirst(2)), label
                )
            case "trim", "t":
                try atMost(4)
                if let threshold = argument(0), DialectArguments.text(try DialectArguments.number(threshold, option: label)) != "10" {
                    throw RequestError(parameter: label, problem: "threshold is 10 here (the libvips default); give trim:10 or leave it empty")
                }
                if arguments.dropFirst().contains(where: { !$0.isEmpty }) {
                    throw RequestError(parameter: label, problem: "colour and equal_hor/equal_ver are not supported: the border is the top-left pixel's colour")
                }
                trim = label
            case "background", "bg":
                background = (try Self.hexColour(Array(arguments), option: label), label)
            case "quality", "q":
                let value = try DialectArguments.count(try needsOne(), option: label)
                quality = value == 0 ? nil : (value, label)
            case "format_quality", "fq":
                guard arguments.count % 2 == 0, !arguments.isEmpty else {
                    throw RequestError(parameter: label, problem: "takes format:quality pairs")
                }
                var index = arguments.startIndex
                while index < arguments.endIndex {
                    let format = arguments[index] == "jpg" ? "jpeg" : String(arguments[index].prefix(8))
                    formatQuality[format] = try DialectArguments.count(arguments[index + 1], option: label)
                    index += 2
                }
                formatQualityOption = label
            case "max_bytes", "mb":
                let value = try DialectArguments.count(try needsOne(), option: label)
                maxBytes = value == 0 ? nil : (value, label)
            case "format", "f", "ext":
                format = (String(try needsOne().prefix(8)), label)
            case "blur", "bl":
                let sigma = try DialectArguments.number(try needsOne(), option: label)
                blur = sigma == 0 ? nil : (sigma, label)
            case "sharpen", "sh":
                let sigma = try DialectArguments.number(try needsOne(), option: label)
                sharpen = sigma == 0 ? nil : (sigma, label)
            case "rotate", "rot":
                let degrees = try DialectArguments.count(try needsOne(), option: label)
                guard degrees % 90 == 0 else { throw RequestError(parameter: label, problem: "must be a multiple of 90") }
                rotate = degrees % 360 == 0 ? nil : (degrees % 360, label)
            case "auto_rotate", "ar":
                guard try DialectArguments.flag(try needsOne(), option: label) else {
                    throw RequestError(parameter: label, problem: "cannot be turned off: sources are always turned upright by their EXIF orientation")
                }
            case "strip_metadata", "sm":
                guard try DialectArguments.flag(try needsOne(), option: label) else {
                    throw RequestError(parameter: label, problem: "cannot be turned off: metadata is always removed")
                }
            case "watermark", "wm":
                try setWatermark(Array(arguments), choices: choices, option: label)
            case "preset", "pr":
                guard !arguments.isEmpty, arguments.allSatisfy({ !$0.isEmpty }) else {
                    throw RequestError(parameter: label, problem: "takes one or more preset names")
                }
                presets += arguments.map(String.init)
                presetOption = label
            case "cachebuster", "cb":
                // Changes the URL (so CDNs and browsers fetch again) and nothing of the image, as in imgproxy.
                try atMost(1)
            case "expires", "exp":
                guard arguments.count == 1, let text = argument(0), text.utf8.count <= 12, let time = Int(text) else {
                    throw RequestError(parameter: label, problem: "takes a Unix time in seconds")
                }
                expires = time
            case "filename", "fn":
                try setFilename(Array(arguments), option: label)
            case "return_attachment", "att":
                attachment = try DialectArguments.flag(try needsOne(), option: label)
            default:
                guard ImgproxyURL.refusedOptions.contains(name) else {
                    throw RequestError(parameter: label, problem: "unknown option")
                }
                throw RequestError(parameter: label, problem: "not supported by this service (see the README's imgproxy table)")
            }
        }

        mutating func setResizingType(_ type: Substring, option: String) throws(RequestError) {
            guard ImgproxyURL.resizingTypes[type] != nil else {
                throw RequestError(parameter: option, problem: "resizing type must be one of fit, fill, fill-down, force, auto")
            }
            resizingType = (type, option)
        }

        mutating func setExtend(_ arguments: [Substring], option: String) throws(RequestError) {
            guard let first = arguments.first else { return }
            let on = try DialectArguments.flag(first, option: option)
            if arguments.dropFirst().contains(where: { !$0.isEmpty }), arguments[1] != "ce" || arguments.dropFirst(2).contains(where: { !$0.isEmpty && $0 != "0" }) {
                throw RequestError(parameter: option, problem: "extends around the centre only (gravity ce, no offsets)")
            }
            extend = on ? option : nil
        }

        mutating func setGravity(_ arguments: [Substring], option: String) throws(RequestError) {
            guard let type = arguments.first else { throw RequestError(parameter: option, problem: "takes a gravity type") }
            if type == "fp" {
                guard arguments.count == 3, let x = Double(arguments[1]), let y = Double(arguments[2]), (0...1).contains(x), (0...1).contains(y)
                else { throw RequestError(parameter: option, problem: "fp takes x:y, both in 0...1") }
                focalPoint = (x, y, option)
                gravity = nil
                return
            }
            guard let named = ImgproxyURL.gravities[type] else {
                throw RequestError(parameter: option, problem: "must be one of no, so, ea, we, noea, nowe, soea, sowe, ce, sm, fp:x:y")
            }
            guard arguments.count <= 3, arguments.dropFirst().allSatisfy({ $0.isEmpty || Double($0) == 0 }) else {
                throw RequestError(parameter: option, problem: "offsets are not supported (only 0)")
            }
            gravity = (named, option)
            focalPoint = nil
        }

        mutating func setWatermark(_ arguments: [Substring], choices: Choices, option: String) throws(RequestError) {
            guard let opacityText = arguments.first else { throw RequestError(parameter: option, problem: "takes an opacity") }
            let opacity = try DialectArguments.number(opacityText, option: option)
            guard opacity != 0 else {
                watermark = nil
                return
            }
            guard opacity == 1, arguments.dropFirst().allSatisfy(\.isEmpty) else {
                throw RequestError(
                    parameter: option, problem: "takes opacity 1 or 0 alone: position, offsets, scale and opacity are the overlay's own")
            }
            guard let overlay = choices.watermarkOverlay else {
                throw RequestError(parameter: option, problem: "no overlay is configured for it (compat.imgproxy.watermark)")
            }
            watermark = (overlay, option)
        }

        mutating func setFilename(_ arguments: [Substring], option: String) throws(RequestError) {
            guard (1...2).contains(arguments.count), let text = arguments.first, !text.isEmpty, text.utf8.count <= 512 else {
                throw RequestError(parameter: option, problem: "takes a file name and an optional encoded flag")
            }
            var name = String(text).removingPercentEncoding ?? String(text)
            if arguments.count == 2, try DialectArguments.flag(arguments[1], option: option) {
                guard let decoded = ImgproxyURL.decodeBase64URL(String(text)) else {
                    throw RequestError(parameter: option, problem: "encoded file name is not URL-safe base64")
                }
                name = decoded
            }
            filename = name
        }

        static func hexColour(_ arguments: [Substring], option: String) throws(RequestError) -> String {
            if arguments.count == 1, arguments[0].utf8.count == 6, RGBAColour(hex: String(arguments[0])) != nil {
                return String(arguments[0]).lowercased()
            }
            guard arguments.count == 3 else { throw RequestError(parameter: option, problem: "takes R:G:B (0...255 each) or a hex colour") }
            var hex = ""
            for part in arguments {
                guard part.utf8.count <= 3, let value = Int(part), (0...255).contains(value) else {
                    throw RequestError(parameter: option, problem: "takes R:G:B (0...255 each) or a hex colour")
                }
                hex += String(format: "%02x", value)
            }
            return hex
        }

        /// The native request of the options read.
        func request(source: String) throws(RequestError) -> DialectRequest {
            var request = DialectRequest()
            request.set("url", source, option: "url")
            if !presets.isEmpty { request.set("preset", presets.joined(separator: ","), option: presetOption) }
            // imgproxy turns the source first and sizes the turned image; the native rotate filter turns the
            // output, so a quarter turn swaps the box's sides (the crop and gravity would turn too: refused).
            let quarterTurn = rotate.map { $0.degrees % 180 != 0 } ?? false
            if let rotate, rotate.degrees != 0, crop != nil || focalPoint != nil || (gravity.map { $0.gravity != .centre } ?? false) {
                throw RequestError(parameter: rotate.option, problem: "is supported without crop, focal point or gravity other than ce")
            }
            let (boxWidth, boxHeight) = quarterTurn ? (height, width) : (width, height)
            if boxWidth.value > 0 { request.set("w", String(boxWidth.value), option: boxWidth.option) }
            if boxHeight.value > 0 { request.set("h", String(boxHeight.value), option: boxHeight.option) }
            if let dpr { request.set("dpr", dpr.value, option: dpr.option) }
            var fit = ImgproxyURL.resizingTypes[resizingType.type] ?? "contain"
            if let extend {
                guard fit == "contain" else {
                    throw RequestError(parameter: extend, problem: "extend is supported with resizing type fit only")
                }
                fit = "pad"
            }
            if fit != "contain" || resizingType.option != "resizing_type" { request.set("fit", fit, option: resizingType.option) }
            if let enlarge { request.set("enlarge", "1", option: enlarge) }
            if let gravity { request.set("g", gravity.gravity.rawValue, option: gravity.option) }
            if let focalPoint { request.set("fp", "\(focalPoint.x),\(focalPoint.y)", option: focalPoint.option) }
            if let crop, let rectangle = try cropRectangle(crop) { request.set("crop", rectangle, option: crop.option) }
            var filters: [String] = []
            if trim != nil { filters.append("trim") }
            if let rotate { filters.append("rotate:\(rotate.degrees)") }
            if let blur { filters.append("blur:\(DialectArguments.text(blur.sigma))") }
            if let sharpen { filters.append("sharpen:\(DialectArguments.text(sharpen.sigma))") }
            if !filters.isEmpty {
                request.set("filter", filters.joined(separator: ","), option: [trim, rotate?.option, blur?.option, sharpen?.option].compactMap { $0 }.first ?? "filter")
            }
            if let background { request.set("bg", background.hex, option: background.option) }
            if let format { request.set("format", format.name, option: format.option) }
            if let quality { request.set("q", String(quality.value), option: quality.option) }
            if let formatQualityOption, !formatQuality.isEmpty {
                // imgproxy picks the quality of the output format; a negotiated format has none to pick.
                guard let format, format.name != "source" else {
                    throw RequestError(parameter: formatQualityOption, problem: "needs a fixed output format (format or an extension)")
                }
                if let chosen = formatQuality[format.name == "jpg" ? "jpeg" : format.name], chosen > 0 {
                    request.set("q", String(chosen), option: formatQualityOption)
                }
            }
            return finish(request)
        }

        private func finish(_ partial: DialectRequest) -> DialectRequest {
            var request = partial
            if let maxBytes { request.set("max_bytes", String(maxBytes.value), option: maxBytes.option) }
            if let watermark { request.set("wm", watermark.overlay, option: watermark.option) }
            request.expires = expires
            request.filename = filename
            request.attachment = attachment
            return request
        }

        /// `crop:w:h:gravity` as the native `crop=x,y,w,h` in fractions of the source: sides below 1 are
        /// fractions, 0 is the whole side; the gravity (its own, else the `gravity` option's) places it.
        func cropRectangle(_ crop: (width: Double, height: Double, gravity: [Substring], option: String)) throws(RequestError) -> String? {
            func fraction(_ side: Double) throws(RequestError) -> Double {
                guard side >= 0 else { throw RequestError(parameter: crop.option, problem: "sides must be ≥ 0") }
                if side == 0 { return 1 }
                guard side < 1 else {
                    throw RequestError(
                        parameter: crop.option,
                        problem: "sides in pixels are not supported; give fractions of the source (below 1, e.g. c:0.5:0.5)")
                }
                return side
            }
            let width = try fraction(crop.width)
            let height = try fraction(crop.height)
            if width == 1, height == 1 { return nil }
            var anchor = (x: 0.5, y: 0.5)
            var centre: (x: Double, y: Double)?
            if !crop.gravity.isEmpty {
                var local = State()
                try local.setGravity(crop.gravity, option: crop.option)
                if let point = local.focalPoint { centre = (point.x, point.y) }
                if let named = local.gravity?.gravity {
                    guard let point = named.anchor else {
                        throw RequestError(parameter: crop.option, problem: "smart gravity is not supported for crop")
                    }
                    anchor = point
                }
            } else if let focalPoint {
                centre = (focalPoint.x, focalPoint.y)
            } else if let gravity {
                guard let point = gravity.gravity.anchor else {
                    throw RequestError(parameter: gravity.option, problem: "smart gravity is not supported for crop")
                }
                anchor = point
            }
            var x = (1 - width) * anchor.x
            var y = (1 - height) * anchor.y
            if let centre {
                x = min(max(centre.x - width / 2, 0), 1 - width)
                y = min(max(centre.y - height / 2, 0), 1 - height)
            }
            func decimal(_ value: Double) -> String { String(format: "%.6f", min(max(value, 0), 1)) }
            return [x, y, width, height].map(decimal).joined(separator: ",")
        }
    }
}
