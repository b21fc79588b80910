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
            if fit != "contain" { request.set("fit", fit, option: resizingType.option) }
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
                        throw RequestError(parameter: crop.option, problem: "smart and face gravities are not supported for crop")
                    }
                    anchor = point
                }
            } else if let focalPoint {
                centre = (focalPoint.x, focalPoint.y)
            } else if let gravity {
                guard let point = gravity.gravity.anchor else {
                    throw RequestError(parameter: gravity.option, problem: "smart and face gravities are not supported for crop")
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
