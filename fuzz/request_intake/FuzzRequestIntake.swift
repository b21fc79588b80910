// libFuzzer target for the image-request intake: every value a request brings (query parameters,
// client-hint and Save-Data headers, Accept) through the code that turns it into an `ImageRequest`, its
// hints and its variant key (Sources/ImageCore/Request/*.swift, compiled here with the real SHA-256),
// and the memory-hit front's framing checks (Sources/ProxyCore/FastPath/RawRequestHead.swift). Built with
// swiftc -sanitize=fuzzer,address by fuzz/run.sh. A trap anywhere (an overflowing conversion or
// arithmetic) is a crash libFuzzer reports; besides, it checks that a parsed request stays within the
// documented ranges whatever the hints say. Each request's resize box is then held to the output bound on
// a source header of a random size (a `size: W H ORIENTATION` line, or sizes drawn from the bytes, up to
// 2^31 - 1 a side) and its thumbnail arguments computed (Sources/ImageCore/Imaging/Geometry/ResizeBox*.swift and
// SourceHeader.swift, issue #63): no trap, every side within Int32 and the given sides within maxDimension.
//
// The URL dialects too (Sources/ImageCore/Dialects, issue #59): a first line starting with `/` is a request
// target, read as an imgproxy URL and as a thumbor URL, each turned into the native query that then goes
// the same way.
//
// Input layout: lines. The first is the query string (`name=value&...`, percent-encoded) or a dialect's
// request target (`/insecure/rs:fill:300:200/plain/...`, `/unsafe/300x200/smart/...`); each further line is
// a header `Name: value`. The same bytes are also framed as a raw request head.

import Foundation

/// Limits with presets and overlays (URL and text allowed), so that `preset`, `wm`, `wmurl` and `text_*`
/// are parsed too.
let fuzzLimits: ImageRequest.Limits = {
    let presets = try! PresetTable(definitions: ["a": "w=10&fit=cover", "b": "format=webp&wm=logo", "c": "text=hi&text_size=30"])
    var placement = OverlayPlacement()
    placement.opacity = 0.5
    let overlays = OverlayCatalog(
        definitions: ["logo": .init(source: try! SourceURL(parsing: "https://example.com/logo.png"), placement: placement)],
        allowURL: true, allowText: true)
    return ImageRequest.Limits(maxDimension: 4096, presets: presets, overlays: overlays)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestIntake(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: count)
    _ = RawRequestHead.frame(bytes, maxHeadBytes: 16384)
    for start in [0, count / 2, count] { _ = RawRequestHead.mayDecideFraming(bytes, newFrom: start) }

    let text = String(decoding: bytes, as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard !lines.isEmpty else { return 0 }
    let queryLine = lines.removeFirst()
    var headers: [String: String] = [:]
    for line in lines {
        guard let colon = line.firstIndex(of: ":") else { continue }
        let name = line[..<colon].lowercased()
        headers[name] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
    }
    guard !queryLine.hasPrefix("/") else {
        if let url = try? ImgproxyURL(target: queryLine), let dialect = try? url.translated(choices: .init(watermarkOverlay: "logo")) {
            precondition(dialect.value(of: "url") == url.source, "the imgproxy source is the native url")
            fuzzNativeQuery(dialect.query, headers: headers, bytes: bytes)
        }
        if let url = try? ThumborURL(target: queryLine), let dialect = try? url.translated() {
            precondition(dialect.value(of: "url") == url.image, "the thumbor image is the native url")
            fuzzNativeQuery(dialect.query, headers: headers, bytes: bytes)
        }
        return 0
    }
    let query: [(name: String, value: String)] = queryLine.split(separator: "&").map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        func decoded(_ part: Substring) -> String { String(part).removingPercentEncoding ?? String(part) }
        return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
    }
    fuzzNativeQuery(query, headers: headers, bytes: bytes)
    return 0
}

/// A native query through parsing, the hints, the box arithmetic and the variant key.
func fuzzNativeQuery(_ query: [(name: String, value: String)], headers: [String: String], bytes: UnsafeRawBufferPointer) {
    let limits = fuzzLimits
    guard var request = try? ImageRequest(query: query, limits: limits) else { return }
    let hints = ClientHints(header: { headers[$0.lowercased()] })
    if let dpr = hints.dpr { precondition(ClientHints.dprRange.contains(dpr), "a DPR hint within its range") }
    for policy in [ClientHints.Policy(clientHints: true, saveDataQuality: 40), .none] {
        var adapted = request
        _ = adapted.adapt(to: hints, policy: policy, limits: limits)
        precondition((adapted.width ?? 1) >= 1 && (adapted.width ?? 1) <= limits.maxDimension, "width within 1...maxDimension")
        precondition((adapted.height ?? 1) >= 1 && (adapted.height ?? 1) <= limits.maxDimension, "height within 1...maxDimension")
        precondition(adapted.pixelRatio >= 1 && adapted.pixelRatio <= 4, "pixel ratio within 1...4")
        request = adapted
    }
    checkBoxArithmetic(request, headers: headers, bytes: bytes, maxDimension: limits.maxDimension)
    for allowAVIF in [true, false] {
        let (choice, _) = request.formatChoice(accept: headers["accept"], allowAVIF: allowAVIF)
        precondition(request.variantKey(choice: choice, overlayIdentity: "x").hex.utf8.count == 64, "a variant key is 64 hex digits")
        if let text = request.text {
            precondition(!text.markup.contains("<") && TextOverlay.sizeRange.contains(text.size), "text is escaped and sized")
        }
    }
}

/// Source sizes for the box arithmetic: the `size` line's, else sides drawn from the input's bytes (FNV-1a),
/// often extreme.
func fuzzHeaderSizes(_ headers: [String: String], bytes: UnsafeRawBufferPointer) -> [(Int, Int, Int)] {
    let given = headers["size"]?.split(separator: " ").compactMap { Int($0) } ?? []
    if given.count >= 2 {
        return [(max(1, min(given[0], Int(Int32.max))), max(1, min(given[1], Int(Int32.max))), given.count > 2 ? given[2] : 1)]
    }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    let sides = [1, 2, 3, 17, 1000, 4096, 65_535, 524_288, 600_000, 1_000_000, Int(Int32.max)]
    let a = sides[Int(hash % UInt64(sides.count))], b = sides[Int((hash >> 8) % UInt64(sides.count))]
    let drawn = 1 + Int((hash >> 16) % 2_000_000)
    return [(a, b, 1), (b, a, 6), (drawn, a, 1), (a, drawn, 8)]
}

/// The box of `request` held to the bound for each header, and its thumbnail arguments.
func checkBoxArithmetic(_ request: ImageRequest, headers: [String: String], bytes: UnsafeRawBufferPointer, maxDimension: Int) {
    for (width, height, orientation) in fuzzHeaderSizes(headers, bytes: bytes) {
        let header = SourceHeader(width: width, height: height, orientation: (1...8).contains(orientation) ? orientation : 1)
        var resolved = request
        resolved.fit = request.fit.resolved(
            boxWidth: request.width, boxHeight: request.height, sourceWidth: header.orientedSize.width, sourceHeight: header.orientedSize.height)
        let box = ResizeBox(request: resolved).bounded(toMaxDimension: maxDimension, for: header)
        precondition((box.width ?? 1) <= maxDimension && (box.height ?? 1) <= maxDimension, "the box within maxDimension")
        let fitted = box.coverBoxFitted(to: header)
        let arguments = fitted.thumbnailArguments(for: header)
        precondition((1...Int(Int32.max)).contains(arguments.width) && (1...Int(Int32.max)).contains(arguments.height), "thumbnail arguments within Int32")
        precondition(fitted.reduction(for: header) > 0, "a positive reduction")
        let upright = header.orientedSize
        if let crop = box.crop, let rectangle = crop.resolved(width: upright.width, height: upright.height) {
            let cut = SourceHeader(width: rectangle.width, height: rectangle.height)
            let inner = box.afterCrop(cut).thumbnailArguments(for: cut)
            precondition((1...Int(Int32.max)).contains(inner.width) && (1...Int(Int32.max)).contains(inner.height), "the cut's arguments within Int32")
        }
    }
}
