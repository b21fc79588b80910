import Foundation

/// Reading imgproxy's options, one `name:argument:…` segment at a time, into ``ImgproxyURL/State``.
extension ImgproxyURL.State {
    mutating func apply(_ option: [Substring], choices: ImgproxyURL.Choices) throws(RequestError) {
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
            throw RequestError(parameter: label, problem: "not supported by this service (see docs/dialects.md)")
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
        if type == "obj" {
            // Object-oriented gravity (imgproxy Pro): the face class maps onto g=face; other classes have no detector here.
            guard arguments.count == 2, arguments[1] == "face" else {
                throw RequestError(parameter: option, problem: "obj is supported for the face class alone (obj:face)")
            }
            gravity = (.face, option)
            focalPoint = nil
            return
        }
        guard let named = ImgproxyURL.gravities[type] else {
            throw RequestError(parameter: option, problem: "must be one of no, so, ea, we, noea, nowe, soea, sowe, ce, sm, obj:face, fp:x:y")
        }
        guard arguments.count <= 3, arguments.dropFirst().allSatisfy({ $0.isEmpty || Double($0) == 0 }) else {
            throw RequestError(parameter: option, problem: "offsets are not supported (only 0)")
        }
        gravity = (named, option)
        focalPoint = nil
    }

    mutating func setWatermark(_ arguments: [Substring], choices: ImgproxyURL.Choices, option: String) throws(RequestError) {
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
}
